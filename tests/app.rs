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
use familiar::base::clock::FrozenClock;
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
#[path = "app/events.rs"]
mod events;
#[path = "app/memory.rs"]
mod memory;
#[path = "app/paid.rs"]
mod paid;
#[path = "app/queue.rs"]
mod queue;
#[path = "app/saves.rs"]
mod saves;
#[path = "app/schedules.rs"]
mod schedules;
#[path = "app/storage.rs"]
mod storage;
#[path = "app/sub_agents.rs"]
mod sub_agents;
#[path = "app/supervised.rs"]
mod supervised;
#[cfg(feature = "telemetry")]
#[path = "app/telemetry.rs"]
mod telemetry;
#[path = "app/usage.rs"]
mod usage;
#[cfg(feature = "webmcp")]
#[path = "app/visitor.rs"]
mod visitor;

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
        clock: Rc::new(FrozenClock::at(1_000)),
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
    let routes: Vec<String> = w.session.commands().into_iter().map(|c| c.value).collect();
    assert_eq!(routes, ["/time", "@keeper", "@familiar"]);
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
        consequential: Vec::new(),
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
