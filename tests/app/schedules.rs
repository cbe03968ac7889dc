//! Schedules belong to the session: fired as they fall due through `trigger`, never
//! overlapping their own run, skipping or catching up once on missed periods, and
//! kept across a reload.

use super::*;
use familiar::app::Missed;
use familiar::llm::scripted::ScriptedModel;
use std::cell::Cell;

/// A clock the test moves: a sleep ends when the test moves time past it.
#[derive(Default)]
struct Stepped {
    now: Cell<i64>,
    timers: RefCell<Vec<(i64, oneshot::Sender<()>)>>,
}

impl Stepped {
    fn advance(&self, ms: i64) {
        self.now.set(self.now.get() + ms);
        let now = self.now.get();
        let mut timers = self.timers.borrow_mut();
        let (due, later): (Vec<_>, Vec<_>) = timers.drain(..).partition(|(at, _)| *at <= now);
        *timers = later;
        for (_, fire) in due {
            let _ = fire.send(());
        }
    }
}

impl Clock for Stepped {
    fn now(&self) -> Instant {
        Instant {
            epoch_ms: self.now.get(),
            utc_offset_minutes: 0,
        }
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        let (fire, fired) = oneshot::channel();
        let at = self.now.get() + i64::try_from(ms).unwrap();
        self.timers.borrow_mut().push((at, fire));
        Box::pin(async move {
            let _ = fired.await;
        })
    }
}

struct Scheduled {
    session: Session,
    clock: Rc<Stepped>,
    pool: LocalPool,
}

/// A session whose resident `Dotty` answers "Checked." (first waiting for approval of
/// `march` when `asks`), its schedules fired by a spawned `run_schedules`.
fn scheduled(storage: &Rc<VolatileStorage>, asks: bool) -> Scheduled {
    let clock = Rc::new(Stepped::default());
    clock.now.set(1_000_000);
    let model = ScriptedModel::new();
    if asks {
        model.push_tool_calls(vec![familiar::llm::message::ToolCall {
            id: "m1".into(),
            name: "march".into(),
            arguments: "{}".into(),
        }]);
    }
    for _ in 0..20 {
        model.push_text("Checked.");
    }
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "march",
        ToolKind::Action,
        "Marches.",
        |_: NoArgs, _| async { Ok::<_, String>(json!({"marched": true})) },
    );
    tools.set_approval("march", Approval::Ask);
    let dotty = Agent::new(
        "Dotty",
        "",
        "You are Dotty.",
        Rc::new(model) as Rc<dyn Llm>,
        Rc::new(tools),
    )
    .with_own_memory();
    let familiar = Agent::new("familiar", "", "", rules(), Rc::new(ToolRegistry::new()));
    let config = Config {
        clock: Rc::clone(&clock) as Rc<dyn Clock>,
        ..config("sched", storage)
    };
    let session = Session::new(
        config,
        Delegate::new(Rc::new(familiar)).with_agent(Rc::new(dotty)),
    );
    session.restore();
    let pool = LocalPool::new();
    pool.spawner().spawn_local(session.run_schedules()).unwrap();
    Scheduled {
        session,
        clock,
        pool,
    }
}

fn market_check() -> Observation {
    Observation {
        trigger: Trigger {
            kind: "schedule".into(),
            event: "market.check".into(),
            timestamp: None,
        },
        actor: Actor {
            name: "Dotty".into(),
            ..Actor::default()
        },
        subject: Subject {
            content: "Scheduled market check.".into(),
            ..Subject::default()
        },
        boundaries: Boundaries::default(),
        environment: None,
    }
}

impl Scheduled {
    fn advance(&mut self, ms: i64) {
        self.clock.advance(ms);
        self.pool.run_until_stalled();
    }

    /// The turns of Dotty's own conversation.
    fn turns(&self) -> usize {
        let open = self.session.conversation_id();
        let turns = match self.session.open("agent:Dotty") {
            Ok(()) => self.session.conversation().interactions.len(),
            Err(_) => 0,
        };
        let _ = self.session.open(&open);
        turns
    }
}

#[test]
fn a_schedule_fires_each_period_until_unscheduled() {
    let storage = Rc::new(VolatileStorage::new());
    let mut s = scheduled(&storage, false);
    s.pool.run_until_stalled();
    let id = s
        .session
        .schedule(Some("market"), 2_000, market_check(), Missed::Skip)
        .unwrap();
    assert_eq!(id, "market");
    s.advance(1_999);
    assert_eq!(s.turns(), 0, "not before its period");
    s.advance(1);
    assert_eq!(s.turns(), 1);
    s.advance(2_000);
    assert_eq!(s.turns(), 2);
    assert!(s.session.unschedule("market"));
    assert!(!s.session.unschedule("market"));
    s.advance(10_000);
    assert_eq!(s.turns(), 2, "nothing fires once unscheduled");
}

#[test]
fn a_schedule_never_overlaps_its_own_run() {
    let storage = Rc::new(VolatileStorage::new());
    let mut s = scheduled(&storage, true);
    s.session
        .schedule(Some("march"), 2_000, market_check(), Missed::Skip)
        .unwrap();
    s.advance(2_000);
    assert_eq!(
        s.session.pending().len(),
        1,
        "the first run waits for approval"
    );
    s.advance(2_000);
    s.advance(2_000);
    assert_eq!(
        s.session.pending().len(),
        1,
        "no second run while the first waits"
    );
    assert_eq!(s.turns(), 1);
    let call = s.session.pending()[0].key();
    s.session.decide(&call, Decision::Approve).unwrap();
    s.pool.run_until_stalled();
    assert!(!s.session.busy(), "the first run ended");
    s.advance(2_000);
    assert_eq!(s.turns(), 2, "the next period after it ended fires again");
}

#[test]
fn missed_periods_are_skipped_or_caught_up_once_as_configured() {
    for (missed, fired) in [(Missed::Skip, 0), (Missed::CatchUp, 1)] {
        let storage = Rc::new(VolatileStorage::new());
        let mut s = scheduled(&storage, false);
        s.session
            .schedule(Some("market"), 2_000, market_check(), missed)
            .unwrap();
        // The page was hidden: its timers held back for 7 s, then it ran again.
        s.clock.now.set(s.clock.now.get() + 7_000);
        s.advance(0);
        assert_eq!(s.turns(), fired, "{missed:?}");
        assert_eq!(
            s.session.schedules()[0].next_ms,
            1_008_000,
            "on time from then on"
        );
        s.advance(1_000);
        assert_eq!(s.turns(), fired + 1, "{missed:?}");
    }
}

#[test]
fn schedules_survive_a_reload_and_bad_ones_are_refused() {
    let storage = Rc::new(VolatileStorage::new());
    let s = scheduled(&storage, false);
    s.session
        .schedule(Some("market"), 60_000, market_check(), Missed::CatchUp)
        .unwrap();
    let kept = s.session.schedules();
    let mut again = scheduled(&storage, false);
    assert_eq!(again.session.schedules(), kept);
    again.advance(60_000);
    assert_eq!(again.turns(), 1, "the reloaded schedule fires");

    let too_often = again
        .session
        .schedule(None, 10, market_check(), Missed::Skip)
        .unwrap_err();
    assert!(too_often.to_string().contains("too often"), "{too_often}");
    let mut unnamed = market_check();
    unnamed.trigger.event = " ".into();
    assert!(
        again
            .session
            .schedule(None, 5_000, unnamed, Missed::Skip)
            .is_err()
    );

    storage.save("sched.schedules", "{not json").unwrap();
    let notices = scheduled(&storage, false).session.restore();
    assert!(
        notices
            .iter()
            .any(|n| matches!(n, Notice::Corrupt { key, .. } if key == "sched.schedules")),
        "{notices:?}"
    );
    assert_eq!(
        storage.load("sched.schedules.corrupt").as_deref(),
        Some("{not json")
    );
}
