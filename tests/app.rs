//! The session controller, natively: routing, a run per trigger kind, approvals and
//! their scope, updates landing in their own conversation, queued turns, saving and
//! its failures, state kept and restored, a character played, runs resumed after a
//! reload (in `app/durable.rs`). Futures run on a local pool, so a test can act while
//! a run waits.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::RefCell;
use std::rc::Rc;

use familiar::app::{
    Config, Decision, HostTool, Notice, Options, Play, Session, Storage, Update, VolatileStorage,
};
use familiar::base::clock::{Clock, Instant};
use familiar::compose::agent::Agent;
use familiar::compose::delegate::Delegate;
use familiar::llm::rules::RulesModel;
use familiar::llm::{Llm, ToolSpec};
use familiar::run::event::Event;
use familiar::run::{Actor, Boundaries, Observation, Outcome, Subject, Trigger};
use familiar::store::LocalStore;
use familiar::tool::{Approval, NoArgs, ToolKind, ToolRegistry};
use familiar::workflow::Character;
use futures::channel::oneshot;
use futures::executor::LocalPool;
use futures::future::LocalBoxFuture;
use futures::task::LocalSpawnExt;
use serde_json::{Value, json};

#[path = "app/approvals.rs"]
mod approvals;
#[path = "app/durable.rs"]
mod durable;
#[path = "app/edits.rs"]
mod edits;
#[path = "app/memory.rs"]
mod memory;
#[path = "app/queue.rs"]
mod queue;
#[path = "app/saves.rs"]
mod saves;
#[path = "app/schedules.rs"]
mod schedules;
#[path = "app/supervised.rs"]
mod supervised;

const RULES: &str = r#"{
    "fallback": "I am here.",
    "rules": [
        {"keywords": ["time"], "tool": "clock", "answer": "It is {time}."},
        {"keywords": ["bump"], "tool": "bump", "answer": "Bumped to {counter}."},
        {"keywords": ["goblin"], "tool": "spawn", "arguments": {"kind": "goblin"},
         "answer": "A {spawned} appears."},
        {"keywords": ["wait"], "tool": "slow", "answer": "Waited: {done}."}
    ]
}"#;

/// A clock whose time stands still and whose timers never fire: what a host answers
/// in a test is never raced by a timeout.
struct Frozen;

impl Clock for Frozen {
    fn now(&self) -> Instant {
        Instant {
            epoch_ms: 1_000,
            utc_offset_minutes: 0,
        }
    }

    fn sleep(&self, _: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}

fn rules() -> Rc<RulesModel> {
    Rc::new(RulesModel::from_json(RULES).unwrap())
}

struct World {
    session: Session,
    updates: Rc<RefCell<Vec<Update>>>,
    counter: Rc<RefCell<i64>>,
}

/// A session over two agents: `familiar` (clock, bump that asks first) and `@keeper`
/// (the same tools), with `/time` going to `keeper`.
fn world(namespace: &str, storage: Rc<VolatileStorage>) -> World {
    world_with(namespace, storage, rules(), Rc::new(RefCell::new(0)))
}

/// [`world`] with `familiar` answering through `llm` and bumping `counter`.
fn world_with(
    namespace: &str,
    storage: Rc<VolatileStorage>,
    llm: Rc<dyn Llm>,
    counter: Rc<RefCell<i64>>,
) -> World {
    let tools = |counter: &Rc<RefCell<i64>>| {
        let mut tools = ToolRegistry::new();
        tools.register_fn("clock", ToolKind::Data, "The time.", |_: NoArgs, _| async {
            Ok::<_, String>(json!({"time": "noon"}))
        });
        let counter = Rc::clone(counter);
        tools.register_fn("bump", ToolKind::Action, "Bumps.", move |_: NoArgs, _| {
            *counter.borrow_mut() += 1;
            let value = *counter.borrow();
            async move { Ok::<_, String>(json!({"counter": value})) }
        });
        tools.set_approval("bump", Approval::Ask);
        Rc::new(tools)
    };
    let familiar = Agent::new("familiar", "Helps", "You help.", llm, tools(&counter));
    let keeper = Agent::new(
        "keeper",
        "Keeps count",
        "You count.",
        rules(),
        tools(&counter),
    );
    let delegate = Delegate::new(Rc::new(familiar))
        .with_agent(Rc::new(keeper))
        .with_command("time", "keeper");
    let session = Session::new(config(namespace, &storage), delegate);
    let updates = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&updates);
    session.on(move |u| log.borrow_mut().push(u.clone()));
    World {
        session,
        updates,
        counter,
    }
}

fn config(namespace: &str, storage: &Rc<VolatileStorage>) -> Config {
    Config {
        namespace: namespace.into(),
        play: None,
        options: Options::default(),
        clock: Rc::new(Frozen),
        storage: Rc::clone(storage) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    }
}

fn solo(namespace: &str) -> World {
    world(namespace, Rc::new(VolatileStorage::new()))
}

/// Spawns `send(text)`; its outcome lands in the returned cell.
fn spawn_send(
    pool: &LocalPool,
    session: &Session,
    text: &str,
) -> Rc<RefCell<Option<Result<Outcome, familiar::app::AppError>>>> {
    let slot = Rc::new(RefCell::new(None));
    let out = Rc::clone(&slot);
    let session = session.clone();
    let text = text.to_owned();
    pool.spawner()
        .spawn_local(async move { *out.borrow_mut() = Some(session.send(&text).await) })
        .unwrap();
    slot
}

/// Spawns `resume(conversation)`; its outcome lands in the returned cell.
fn spawn_resume(
    pool: &LocalPool,
    session: &Session,
    conversation: &str,
) -> Rc<RefCell<Option<Result<Outcome, familiar::app::AppError>>>> {
    let slot = Rc::new(RefCell::new(None));
    let out = Rc::clone(&slot);
    let (session, conversation) = (session.clone(), conversation.to_owned());
    pool.spawner()
        .spawn_local(async move { *out.borrow_mut() = Some(session.resume(&conversation).await) })
        .unwrap();
    slot
}

fn answer(slot: &Rc<RefCell<Option<Result<Outcome, familiar::app::AppError>>>>) -> String {
    match slot.borrow().as_ref() {
        Some(Ok(outcome)) => outcome.text().to_owned(),
        other => panic!("no outcome yet: {other:?}"),
    }
}

/// The inputs of the open conversation's turns, in order.
fn inputs(session: &Session) -> Vec<String> {
    session
        .conversation()
        .interactions
        .iter()
        .map(|i| i.input.clone())
        .collect()
}

fn names(updates: &[Update]) -> Vec<&'static str> {
    updates.iter().map(Update::name).collect()
}

#[test]
fn messages_are_routed_by_command_mention_and_fallback() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let time = spawn_send(&pool, &w.session, "/time what time");
    pool.run_until_stalled();
    assert_eq!(answer(&time), "It is noon.");
    let switched = spawn_send(&pool, &w.session, "@keeper");
    pool.run_until_stalled();
    assert_eq!(answer(&switched), "You are now talking to @keeper.");
    let plain = spawn_send(&pool, &w.session, "hello there");
    pool.run_until_stalled();
    assert_eq!(answer(&plain), "I am here.");
    assert_eq!(w.session.conversation().interactions.len(), 3);
    let routes: Vec<String> = w.session.routes().into_iter().map(|(r, _)| r).collect();
    assert_eq!(routes, ["/time", "@keeper"]);
}

#[test]
fn empty_or_oversized_input_is_refused_with_a_clear_error() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let empty = spawn_send(&pool, &w.session, "   ");
    let huge = spawn_send(&pool, &w.session, &"x".repeat(100_001));
    pool.run_until_stalled();
    assert_eq!(
        empty.borrow().clone().unwrap().unwrap_err().to_string(),
        "the message is empty"
    );
    assert!(
        huge.borrow()
            .clone()
            .unwrap()
            .unwrap_err()
            .to_string()
            .contains("100001")
    );
    assert!(w.session.conversation().interactions.is_empty());
}

fn game_event(text: &str, allowed: Option<Vec<&str>>) -> Observation {
    Observation {
        trigger: Trigger {
            kind: "battle".into(),
            event: "battle.started".into(),
            timestamp: None,
        },
        actor: Actor {
            name: "Grunt".into(),
            ..Actor::default()
        },
        subject: Subject {
            kind: "battle".into(),
            content: text.into(),
            ..Subject::default()
        },
        boundaries: Boundaries {
            allowed_actions: allowed.map(|a| a.into_iter().map(String::from).collect()),
            ..Boundaries::default()
        },
        environment: None,
    }
}

/// A host tool `spawn` whose handler records its calls and answers at once.
fn host_spawn(session: &Session, kind: ToolKind) -> Rc<RefCell<Vec<(String, Value)>>> {
    let calls = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&calls);
    let tool = HostTool {
        spec: ToolSpec {
            name: "spawn".into(),
            description: "Spawns a monster.".into(),
            parameters: json!({"type": "object", "properties": {"kind": {"type": "string"}},
                               "required": ["kind"]}),
        },
        kind,
        approval: Approval::Auto,
        timeout_ms: 5_000,
        author: None,
    };
    session
        .host_tools()
        .register(
            tool,
            Rc::new(move |id: &str, args: Value| -> LocalBoxFuture<'static, _> {
                log.borrow_mut().push((id.to_owned(), args.clone()));
                Box::pin(async move { Ok(json!({"spawned": args["kind"]})) })
            }),
        )
        .unwrap();
    calls
}

#[test]
fn a_game_event_runs_the_loop_with_its_boundaries_and_a_host_tool() {
    let w = solo("t");
    let calls = host_spawn(&w.session, ToolKind::Action);
    let mut pool = LocalPool::new();
    let session = w.session.clone();
    let outcome = Rc::new(RefCell::new(None));
    let out = Rc::clone(&outcome);
    pool.spawner()
        .spawn_local(async move {
            let event = game_event("A goblin attacks", Some(vec!["spawn"]));
            *out.borrow_mut() = Some(session.trigger(event).await.unwrap());
        })
        .unwrap();
    pool.run_until_stalled();
    // The seed's loop: act, then ask whether the goal is complete.
    let outcome = outcome.borrow().clone().unwrap();
    assert!(
        matches!(outcome, Outcome::GoalComplete { .. }),
        "{outcome:?}"
    );
    assert_eq!(calls.borrow().len(), 1);
    assert_eq!(calls.borrow()[0].1, json!({"kind": "goblin"}));
    let updates = w.updates.borrow();
    assert!(names(&updates).contains(&"goal_checked"));
    let conversation = w.session.conversation_id();
    assert!(updates.iter().all(|u| {
        u.turn()
            .is_none_or(|(c, turn)| c == conversation && turn == 1)
    }));

    // The same event where the trigger does not allow `spawn`: refused, not run.
    drop(updates);
    let session = w.session.clone();
    pool.spawner()
        .spawn_local(async move {
            session
                .trigger(game_event("A goblin attacks", Some(vec![])))
                .await
                .unwrap();
        })
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        calls.borrow().len(),
        1,
        "an action outside the boundaries never runs"
    );
}

#[test]
fn an_event_without_a_kind_is_refused() {
    let w = solo("t");
    let mut event = game_event("x", None);
    event.trigger.kind = " ".into();
    let error = futures::executor::block_on(w.session.trigger(event)).unwrap_err();
    assert!(error.to_string().contains("needs a kind"));
}

#[test]
fn an_approval_pauses_the_turn_until_a_person_approves() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    assert!(bumped.borrow().is_none(), "waiting for a person");
    let pending = w.session.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].agent, "familiar");
    assert_eq!(*w.counter.borrow(), 0);
    assert!(names(&w.updates.borrow()).contains(&"approval_needed"));
    w.session.approve(&pending[0].call.id, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&bumped), "Bumped to 1.");
    assert!(w.session.pending().is_empty());
    assert!(w.session.approve("nope", false).is_err());
}

#[test]
fn a_denial_is_heard_by_the_model_and_nothing_is_applied() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let call = w.session.pending()[0].call.id.clone();
    w.session.deny(&call, "not today").unwrap();
    pool.run_until_stalled();
    assert!(bumped.borrow().is_some());
    assert_eq!(*w.counter.borrow(), 0);
    let turn = &w.session.conversation().interactions[0];
    let text = serde_json::to_string(turn).unwrap();
    assert!(text.contains("not today"), "{text}");
}

#[test]
fn always_holds_for_its_conversation_and_agent_only() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, true).unwrap();
    pool.run_until_stalled();
    // Same conversation, same agent: no question.
    let again = spawn_send(&pool, &w.session, "bump again");
    pool.run_until_stalled();
    assert_eq!(answer(&again), "Bumped to 2.");
    assert_eq!(
        w.session.always_allowed(),
        [("familiar".to_owned(), "bump".to_owned())],
        "what was allowed is visible"
    );
    // Taken back, it asks again; allowed once more, it goes on as before.
    w.session.ask_again("familiar", "bump");
    assert!(w.session.always_allowed().is_empty());
    let asked = spawn_send(&pool, &w.session, "bump once more");
    pool.run_until_stalled();
    assert!(asked.borrow().is_none(), "waits for a person again");
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, true).unwrap();
    pool.run_until_stalled();
    // Another agent in the same conversation asks.
    let keeper = spawn_send(&pool, &w.session, "@keeper bump");
    pool.run_until_stalled();
    assert!(keeper.borrow().is_none());
    assert_eq!(w.session.pending()[0].agent, "keeper");
    w.session.abort();
    pool.run_until_stalled();
    assert!(matches!(
        keeper.borrow().clone().unwrap().unwrap(),
        Outcome::Aborted { .. }
    ));
    // The same agent in another conversation asks again.
    w.session.new_conversation();
    let elsewhere = spawn_send(&pool, &w.session, "@familiar bump");
    pool.run_until_stalled();
    assert!(elsewhere.borrow().is_none());
    assert_eq!(w.session.pending().len(), 1);
}

#[test]
fn an_approver_in_code_decides_without_a_person() {
    let w = solo("t");
    let asked = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&asked);
    w.session.set_approver(Some(Rc::new(move |pending| {
        log.borrow_mut().push(pending.call.name.clone());
        Box::pin(async {
            Decision::Deny {
                reason: "the game says no".into(),
            }
        })
    })));
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    assert!(bumped.borrow().is_some());
    assert_eq!(*asked.borrow(), ["bump"]);
    assert_eq!(*w.counter.borrow(), 0);
}

/// A host tool `slow` that answers when the test says so.
fn host_slow(session: &Session) -> Rc<RefCell<Vec<oneshot::Sender<Value>>>> {
    let waiting = Rc::new(RefCell::new(Vec::new()));
    let senders = Rc::clone(&waiting);
    let tool = HostTool {
        spec: ToolSpec {
            name: "slow".into(),
            description: "Takes its time.".into(),
            parameters: json!({"type": "object"}),
        },
        kind: ToolKind::Data,
        approval: Approval::Auto,
        timeout_ms: 600_000,
        author: None,
    };
    session
        .host_tools()
        .register(
            tool,
            Rc::new(move |_: &str, _| -> LocalBoxFuture<'static, _> {
                let (tx, rx) = oneshot::channel();
                senders.borrow_mut().push(tx);
                Box::pin(async move { rx.await.map_err(|_| "dropped".to_owned()) })
            }),
        )
        .unwrap();
    waiting
}

#[test]
fn a_run_keeps_writing_into_its_own_conversation_when_another_is_opened() {
    let w = solo("t");
    let waiting = host_slow(&w.session);
    let mut pool = LocalPool::new();
    let first = w.session.conversation_id();
    let slow = spawn_send(&pool, &w.session, "wait for it");
    pool.run_until_stalled();
    let second = w.session.new_conversation();
    let hello = spawn_send(&pool, &w.session, "hello");
    pool.run_until_stalled();
    assert_eq!(
        answer(&hello),
        "I am here.",
        "the other conversation is not blocked"
    );
    waiting
        .borrow_mut()
        .pop()
        .unwrap()
        .send(json!({"done": "yes"}))
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&slow), "Waited: yes.");
    // The open conversation holds only its own turn.
    assert_eq!(w.session.conversation_id(), second);
    let open = w.session.conversation();
    assert_eq!(open.interactions.len(), 1);
    assert_eq!(open.interactions[0].input, "hello");
    // The first got its answer, in memory and in storage.
    w.session.open(&first).unwrap();
    let reopened = w.session.conversation();
    assert_eq!(reopened.interactions.len(), 1);
    assert_eq!(
        reopened.interactions[0].outcome().unwrap().text(),
        "Waited: yes."
    );
    let slow_updates = w
        .updates
        .borrow()
        .iter()
        .filter(|u| u.turn().is_some_and(|(c, _)| c == first))
        .count();
    assert!(slow_updates > 3);
}

#[test]
fn a_message_sent_while_a_turn_waits_is_queued_and_answered_after_it() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let bump = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let time = spawn_send(&pool, &w.session, "what time is it");
    pool.run_until_stalled();
    assert!(time.borrow().is_none(), "queued behind the approval");
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&bump), "Bumped to 1.");
    assert_eq!(answer(&time), "It is noon.");
    let inputs = inputs(&w.session);
    assert_eq!(inputs, ["bump it", "what time is it"]);
}

#[test]
fn a_failed_save_is_reported_and_the_list_is_not_advanced() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "hello");
    pool.run_until_stalled();
    assert_eq!(w.session.conversations().len(), 1);
    storage.fill_up();
    w.session.new_conversation();
    let answered = spawn_send(&pool, &w.session, "still here?");
    pool.run_until_stalled();
    assert_eq!(
        answer(&answered),
        "I am here.",
        "the turn itself is not lost"
    );
    let failed: Vec<String> = w
        .updates
        .borrow()
        .iter()
        .filter_map(|u| match u {
            Update::Notice(Notice::SaveFailed { key, error }) => Some(format!("{key}: {error}")),
            _ => None,
        })
        .collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().any(|f| f.contains("t.conversation.")),
        "{failed:?}"
    );
    assert_eq!(
        w.session.conversations().len(),
        1,
        "the list holds only what was saved"
    );
}

#[test]
fn conversations_survive_a_new_session_and_namespaces_do_not_mix() {
    let storage = Rc::new(VolatileStorage::new());
    let a = world("npc1", Rc::clone(&storage));
    let b = world("npc2", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &a.session, "hello from a");
    spawn_send(&pool, &b.session, "hello from b");
    pool.run_until_stalled();
    let again = world("npc1", Rc::clone(&storage));
    assert!(again.session.restore().is_empty());
    let inputs = inputs(&again.session);
    assert_eq!(inputs, ["hello from a"]);
    assert!(storage.keys().iter().any(|k| k.starts_with("npc2.")));
}

#[test]
fn a_deleted_conversation_can_be_taken_back_into_its_place() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "first");
    pool.run_until_stalled();
    let first = w.session.conversation_id();
    w.session.new_conversation();
    spawn_send(&pool, &w.session, "second");
    pool.run_until_stalled();
    let titles = |s: &Session| {
        s.conversations()
            .into_iter()
            .map(|c| c.title)
            .collect::<Vec<_>>()
    };
    assert_eq!(titles(&w.session), ["second", "first"]);

    let deleted = w
        .session
        .delete(&first)
        .expect("a saved conversation comes back");
    assert_eq!(titles(&w.session), ["second"]);
    assert!(storage.load(&format!("t.conversation.{first}")).is_none());
    w.session.undelete(deleted);
    assert_eq!(titles(&w.session), ["second", "first"], "back in its place");
    // Saved again: a new session reads it, turns and all.
    let again = world("t", Rc::clone(&storage));
    again.session.restore();
    again.session.open(&first).unwrap();
    assert_eq!(inputs(&again.session), ["first"]);
}

#[test]
fn corrupt_saved_data_is_kept_aside_and_told() {
    let storage = Rc::new(VolatileStorage::new());
    storage.save("t.current", "\"c1\"").unwrap();
    storage.save("t.conversation.c1", "{broken").unwrap();
    let w = world("t", Rc::clone(&storage));
    let notices = w.session.restore();
    assert!(
        matches!(&notices[..], [Notice::Corrupt { kept_as, .. }] if kept_as == "t.conversation.c1.corrupt")
    );
    assert_eq!(
        storage.load("t.conversation.c1.corrupt").as_deref(),
        Some("{broken")
    );
    assert!(w.session.conversation().interactions.is_empty());
}

#[test]
fn a_corrupt_list_of_loaded_characters_is_kept_aside_and_told_as_the_session_starts() {
    let storage = Rc::new(VolatileStorage::new());
    storage
        .save("t.characters", "[{\"key\":\"loaded:owl")
        .unwrap();
    let w = world("t", Rc::clone(&storage));
    let told = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&told);
    w.session.on(move |update| {
        if let Update::Notice(notice) = update {
            sink.borrow_mut().push(notice.clone());
        }
    });
    let notices = w.session.restore();
    assert!(
        matches!(&notices[..], [Notice::Corrupt { key, kept_as, .. }]
            if key == "t.characters" && kept_as == "t.characters.corrupt"),
        "{notices:?}"
    );
    assert_eq!(*told.borrow(), notices, "the listeners heard it");
    assert_eq!(
        storage.load("t.characters.corrupt").as_deref(),
        Some("[{\"key\":\"loaded:owl")
    );
}

#[test]
fn the_whole_state_saves_and_loads_into_another_session() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "first");
    pool.run_until_stalled();
    w.session.new_conversation();
    spawn_send(&pool, &w.session, "second");
    pool.run_until_stalled();
    let state = w.session.save_state();
    assert_eq!(state.conversations.len(), 2);
    let json = serde_json::to_value(&state).unwrap();
    let other = solo("other");
    other
        .session
        .load_state(serde_json::from_value(json).unwrap())
        .unwrap();
    assert_eq!(other.session.conversations().len(), 2);
    assert_eq!(other.session.conversation().interactions[0].input, "second");
    let mut newer = w.session.save_state();
    newer.version = 99;
    assert!(other.session.load_state(newer).is_err());
}

#[test]
fn a_destroyed_session_refuses_new_turns() {
    let w = solo("t");
    w.session.destroy();
    let error = futures::executor::block_on(w.session.send("hello")).unwrap_err();
    assert_eq!(error.to_string(), "the session was destroyed");
}

#[test]
fn a_played_character_runs_its_workflow_around_the_model() {
    let storage = Rc::new(VolatileStorage::new());
    let world_store = Rc::new(LocalStore::new(familiar::world::schemas().unwrap()));
    let character = Character::from_json(include_str!("../public/characters/dotty.json")).unwrap();
    let mut config = config("t", &storage);
    config.play = Some(Play {
        character: Rc::new(character),
        world: world_store,
        llm: None,
        player: "player".into(),
    });
    let familiar = Agent::new("familiar", "", "", rules(), Rc::new(ToolRegistry::new()));
    let session = Session::new(config, Delegate::new(Rc::new(familiar)));
    let updates = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&updates);
    session.on(move |u| log.borrow_mut().push(u.clone()));
    let mut pool = LocalPool::new();
    let order = spawn_send(&pool, &session, "I'll have a whiskey");
    pool.run_until_stalled();
    assert!(!answer(&order).is_empty());
    let recorded = updates.borrow().iter().find_map(|u| match u {
        Update::TransactionRecorded { transaction, .. } => Some(transaction.clone()),
        _ => None,
    });
    let transaction = recorded.flatten().expect("an order was recorded");
    assert_eq!(transaction.context["drink"], "whiskey");
    let events: Vec<&str> = names(&updates.borrow());
    assert!(events.contains(&"character_prepared"));
    assert!(events.contains(&"done"));
    assert!(matches!(
        updates.borrow().iter().find(|u| u.name() == "done"),
        Some(Update::Event {
            event: Event::Done(_),
            ..
        })
    ));
}

#[test]
fn two_tabs_on_one_conversation_never_overwrite_each_other() {
    let storage = Rc::new(VolatileStorage::new());
    let first = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &first.session, "hello");
    pool.run_until_stalled();
    // A second tab opens the same conversation, then both go on.
    let second = world("t", Rc::clone(&storage));
    second.session.restore();
    assert_eq!(
        second.session.conversation_id(),
        first.session.conversation_id()
    );
    spawn_send(&pool, &second.session, "from the second tab");
    pool.run_until_stalled();
    spawn_send(&pool, &first.session, "from the first tab");
    pool.run_until_stalled();
    let conflicts: Vec<String> = first
        .updates
        .borrow()
        .iter()
        .filter_map(|u| match u {
            Update::Notice(Notice::Conflict { key }) => Some(key.clone()),
            _ => None,
        })
        .collect();
    assert!(!conflicts.is_empty(), "the first tab was told");
    // What is saved is the second tab's version, whole.
    let reader = world("t", Rc::clone(&storage));
    reader.session.restore();
    assert_eq!(inputs(&reader.session), ["hello", "from the second tab"]);
    // The first tab still shows its own turn: nothing is lost from view.
    assert_eq!(inputs(&first.session), ["hello", "from the first tab"]);
}
