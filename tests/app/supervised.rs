//! A chat turn under the supervisor (`Options::supervisor`): its executor runs as the
//! turn's own run, so an approval inside the plan pauses the whole supervisor until a
//! person answers, and a reload mid-plan resumes where it was without applying any
//! action twice or asking the finished stages again.

use familiar::compose::supervisor::{Level, Status};
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;

use super::*;

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    }
}

const COMPLEX: &str = r#"{"level": "COMPLEX", "reason": "two tasks"}"#;
const PLAN: &str = r#"{"tasks": ["Bump the counter", "Wait for the host"]}"#;
const DONE: &str = r#"{"done": true, "summary": "bumped and waited"}"#;

/// A session whose one agent, `familiar`, answers through `llm` with `bump` (an
/// action that asks first) and the host's `slow`, every chat turn supervised.
fn supervised(
    storage: &Rc<VolatileStorage>,
    llm: Rc<ScriptedModel>,
    counter: &Rc<RefCell<i64>>,
) -> (World, Rc<RefCell<Vec<oneshot::Sender<Value>>>>) {
    let mut tools = ToolRegistry::new();
    let bumps = Rc::clone(counter);
    tools.register_fn("bump", ToolKind::Action, "Bumps.", move |_: NoArgs, _| {
        *bumps.borrow_mut() += 1;
        let value = *bumps.borrow();
        async move { Ok::<_, String>(json!({"counter": value})) }
    });
    tools.set_approval("bump", Approval::Ask);
    let agent = Agent::new("familiar", "Helps", "You help.", llm, Rc::new(tools));
    let mut config = config("t", storage);
    config.options.supervisor = true;
    let session = Session::new(config, Delegate::new(Rc::new(agent)));
    let updates = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&updates);
    session.on(move |u| log.borrow_mut().push(u.clone()));
    let slow = host_slow(&session);
    let world = World {
        session,
        updates,
        counter: Rc::clone(counter),
    };
    (world, slow)
}

fn statuses(updates: &[Update]) -> Vec<Status> {
    updates
        .iter()
        .filter_map(|u| match u {
            Update::Supervisor { status, .. } => Some(status.clone()),
            _ => None,
        })
        .collect()
}

fn saved_keys(storage: &VolatileStorage) -> Vec<String> {
    let keys = storage.keys().into_iter();
    let keys: std::collections::BTreeSet<String> = keys
        .filter(|k| k.starts_with("t.run.") || k.starts_with("t.supervisor."))
        .map(|k| k.split('.').take(2).collect::<Vec<_>>().join("."))
        .collect();
    keys.into_iter().collect()
}

fn dones(updates: &[Update]) -> usize {
    names(updates).iter().filter(|n| **n == "done").count()
}

#[test]
fn an_approval_inside_the_plan_pauses_the_whole_supervisor_until_a_person_answers() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let model = Rc::new(ScriptedModel::new());
    model.push_text(COMPLEX).push_text(PLAN);
    model
        .push_tool_calls(vec![call("c1", "bump")])
        .push_tool_calls(vec![call("c2", "slow")])
        .push_text("Bumped, and waited.")
        .push_text(DONE);
    let (w, slow) = supervised(&storage, Rc::clone(&model), &counter);
    let mut pool = LocalPool::new();
    let sent = spawn_send(&pool, &w.session, "bump, then wait");
    pool.run_until_stalled();

    // Paused inside round 1: nothing applied, nothing decided, the turn waits.
    let pending = w.session.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].call.name, "bump");
    assert!(sent.borrow().is_none());
    assert!(w.session.busy());
    assert_eq!(*w.counter.borrow(), 0);
    assert_eq!(
        statuses(&w.updates.borrow()),
        [
            Status::Analysing,
            Status::Assessed {
                level: Level::Complex,
                reason: "two tasks".into()
            },
            Status::Planning,
            Status::Planned {
                tasks: vec!["Bump the counter".into(), "Wait for the host".into()]
            },
            Status::Executing {
                round: 1,
                max_rounds: 2,
                tasks: 2
            },
        ]
    );
    assert!(names(&w.updates.borrow()).contains(&"approval_needed"));
    assert_eq!(dones(&w.updates.borrow()), 0, "nothing has ended");
    assert_eq!(saved_keys(&storage), ["t.run", "t.supervisor"]);

    // Approved: the executor bumps, asks the host, and the supervisor decides.
    w.session.approve(&pending[0].call.id, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(*w.counter.borrow(), 1);
    slow.borrow_mut()
        .pop()
        .unwrap()
        .send(json!({"done": "yes"}))
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&sent), "Bumped, and waited.");
    assert_eq!(model.remaining(), 0);
    let all = statuses(&w.updates.borrow());
    assert_eq!(
        all[5..],
        [
            Status::Deciding { round: 1 },
            Status::Decided {
                done: true,
                summary: "bumped and waited".into()
            }
        ]
    );
    assert_eq!(dones(&w.updates.borrow()), 1, "one end, the supervisor's");
    assert!(saved_keys(&storage).is_empty(), "nothing is left to resume");
    // The executor got the whole plan.
    let brief = model.requests()[2].messages.last().unwrap().content.clone();
    assert!(
        brief.contains("1. Bump the counter\n2. Wait for the host"),
        "{brief}"
    );
    let turn = &w.session.conversation().interactions[0];
    assert_eq!(
        turn.outcome().map(Outcome::text),
        Some("Bumped, and waited.")
    );
}

#[test]
fn a_supervised_turn_cut_off_mid_plan_resumes_where_it_was_applying_nothing_twice() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let conversation = {
        let model = Rc::new(ScriptedModel::new());
        model.push_text(COMPLEX).push_text(PLAN);
        model
            .push_tool_calls(vec![call("c1", "bump")])
            .push_tool_calls(vec![call("c2", "slow")]);
        let (w, _slow) = supervised(&storage, model, &counter);
        let mut pool = LocalPool::new();
        let _sent = spawn_send(&pool, &w.session, "bump, then wait");
        pool.run_until_stalled();
        let call = w.session.pending()[0].call.id.clone();
        w.session.approve(&call, false).unwrap();
        pool.run_until_stalled();
        assert_eq!(*counter.borrow(), 1);
        assert_eq!(saved_keys(&storage), ["t.run", "t.supervisor"]);
        // The page goes while the host is still to answer.
        w.session.conversation_id()
    };

    // The next page: no analysis, no plan asked again; the round goes on.
    let model = Rc::new(ScriptedModel::new());
    model.push_text("Bumped, and waited.").push_text(DONE);
    let (w, slow) = supervised(&storage, Rc::clone(&model), &counter);
    assert_eq!(
        w.session.restore(),
        [Notice::Interrupted {
            conversation: conversation.clone(),
            turn: 1,
            agent: "familiar".into(),
            refused: None,
        }]
    );
    let mut pool = LocalPool::new();
    let session = w.session.clone();
    let resumed = Rc::new(RefCell::new(None));
    let out = Rc::clone(&resumed);
    pool.spawner()
        .spawn_local(async move { *out.borrow_mut() = Some(session.resume(&conversation).await) })
        .unwrap();
    pool.run_until_stalled();
    slow.borrow_mut()
        .pop()
        .expect("the host is asked again for the look-up it never answered")
        .send(json!({"done": "yes"}))
        .unwrap();
    pool.run_until_stalled();
    let outcome = resumed.borrow_mut().take().unwrap().unwrap();
    assert_eq!(outcome.text(), "Bumped, and waited.");
    assert_eq!(*counter.borrow(), 1, "the bump is not applied again");
    assert_eq!(
        model.remaining(),
        0,
        "only the executor and decider were asked"
    );
    assert_eq!(
        statuses(&w.updates.borrow()),
        [
            Status::Executing {
                round: 1,
                max_rounds: 2,
                tasks: 2
            },
            Status::Deciding { round: 1 },
            Status::Decided {
                done: true,
                summary: "bumped and waited".into()
            }
        ]
    );
    assert!(saved_keys(&storage).is_empty());
    let turns = w.session.conversation().interactions;
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].outcome(), Some(&outcome));
}

#[test]
fn a_reload_between_rounds_asks_only_what_is_left() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    // Round 1 ended and was judged unfinished; the page went as round 2 waited.
    let conversation = {
        let model = Rc::new(ScriptedModel::new());
        model.push_text(COMPLEX).push_text(PLAN);
        model
            .push_text("Nothing done yet.")
            .push_text(r#"{"done": false, "summary": "bump it"}"#)
            .push_tool_calls(vec![call("c1", "bump")]);
        let (w, _slow) = supervised(&storage, model, &counter);
        let mut pool = LocalPool::new();
        let _sent = spawn_send(&pool, &w.session, "bump, then wait");
        pool.run_until_stalled();
        assert_eq!(w.session.pending()[0].call.name, "bump");
        w.session.conversation_id()
    };
    let model = Rc::new(ScriptedModel::new());
    model.push_text("Bumped.").push_text(DONE);
    let (w, _slow) = supervised(&storage, Rc::clone(&model), &counter);
    w.session.restore();
    let mut pool = LocalPool::new();
    let session = w.session.clone();
    let resumed = Rc::new(RefCell::new(None));
    let out = Rc::clone(&resumed);
    pool.spawner()
        .spawn_local(async move { *out.borrow_mut() = Some(session.resume(&conversation).await) })
        .unwrap();
    pool.run_until_stalled();
    // Round 2's approval is asked again (it was never decided), round 1 is not rerun.
    let pending = w.session.pending();
    assert_eq!(pending[0].call.name, "bump");
    w.session.approve(&pending[0].call.id, false).unwrap();
    pool.run_until_stalled();
    let outcome = resumed.borrow_mut().take().unwrap().unwrap();
    assert_eq!(outcome.text(), "Bumped.");
    assert_eq!(*counter.borrow(), 1);
    assert_eq!(model.remaining(), 0);
    let rounds: Vec<u32> = statuses(&w.updates.borrow())
        .iter()
        .filter_map(|s| match s {
            Status::Executing { round, .. } => Some(*round),
            _ => None,
        })
        .collect();
    assert_eq!(rounds, [2]);
}

#[test]
fn a_plan_the_model_cannot_give_fails_the_turn_saying_why_and_leaves_nothing_to_resume() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let model = Rc::new(ScriptedModel::new());
    model.push_text(COMPLEX);
    for _ in 0..3 {
        model.push_text("First I would think about it.");
    }
    let (w, _slow) = supervised(&storage, Rc::clone(&model), &counter);
    let mut pool = LocalPool::new();
    let sent = spawn_send(&pool, &w.session, "bump, then wait");
    pool.run_until_stalled();
    let outcome = sent.borrow_mut().take().unwrap().unwrap();
    let Outcome::Failed { error } = &outcome else {
        panic!("not failed: {outcome:?}");
    };
    assert!(
        error.starts_with("the supervisor could not go on"),
        "{error}"
    );
    assert_eq!(model.remaining(), 0, "re-asked, then refused");
    assert_eq!(*counter.borrow(), 0, "nothing was executed");
    assert_eq!(dones(&w.updates.borrow()), 1);
    assert!(saved_keys(&storage).is_empty());
    assert!(w.session.restore().is_empty(), "nothing to resume");
}

#[test]
fn stopping_a_supervised_turn_at_its_approval_ends_it_aborted_with_nothing_applied() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let model = Rc::new(ScriptedModel::new());
    model.push_text(COMPLEX).push_text(PLAN);
    model.push_tool_calls(vec![call("c1", "bump")]);
    let (w, _slow) = supervised(&storage, Rc::clone(&model), &counter);
    let mut pool = LocalPool::new();
    let sent = spawn_send(&pool, &w.session, "bump, then wait");
    pool.run_until_stalled();
    assert_eq!(w.session.pending().len(), 1);
    w.session.abort();
    pool.run_until_stalled();
    let outcome = sent.borrow_mut().take().unwrap().unwrap();
    assert!(matches!(outcome, Outcome::Aborted { .. }), "{outcome:?}");
    assert_eq!(*counter.borrow(), 0);
    assert!(w.session.pending().is_empty());
    assert!(!w.session.busy());
    assert_eq!(dones(&w.updates.borrow()), 1, "the turn ends once");
    assert!(
        !statuses(&w.updates.borrow())
            .iter()
            .any(|s| matches!(s, Status::Deciding { .. })),
        "a stopped round is not judged"
    );
    assert!(saved_keys(&storage).is_empty());
}

#[test]
fn the_scene_the_environment_perceived_reaches_every_executor_round_of_a_simple_request() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let model = Rc::new(ScriptedModel::new());
    model
        .push_text(r#"{"level": "SIMPLE", "reason": "one dialog"}"#)
        .push_text(r#"{"tasks": ["Create the dialog"]}"#)
        .push_text("Tried.")
        .push_text(r#"{"done": false, "summary": "the dialog is missing"}"#)
        .push_text("Created dialog node for Elena.")
        .push_text(DONE);
    let (w, _slow) = supervised(&storage, Rc::clone(&model), &counter);
    w.session.set_environment(Some(Rc::new(
        |_: &Observation| -> LocalBoxFuture<'static, _> {
            Box::pin(async {
                familiar::app::Perceived {
                    text: "current_scene_id: 5".into(),
                    ..familiar::app::Perceived::default()
                }
            })
        },
    )));
    let mut pool = LocalPool::new();
    let sent = spawn_send(
        &pool,
        &w.session,
        "Create a dialog where Elena greets the player",
    );
    pool.run_until_stalled();
    assert_eq!(answer(&sent), "Created dialog node for Elena.");
    let asked = model.requests();
    let first_of = |i: usize| asked[i].messages[0].content.clone();
    let scene = "ENVIRONMENT (what you perceive now): current_scene_id: 5";
    // Both executor rounds start from the scene; the analyst, planner and decider
    // read the request alone.
    assert_eq!(first_of(2), scene);
    assert_eq!(first_of(4), scene);
    for stage in [0, 1, 3, 5] {
        assert!(
            !first_of(stage).contains("current_scene_id"),
            "{}",
            first_of(stage)
        );
    }
    assert_eq!(
        statuses(&w.updates.borrow()).last(),
        Some(&Status::Decided {
            done: true,
            summary: "bumped and waited".into()
        })
    );
}
