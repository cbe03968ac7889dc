//! A person approves exactly what will run. The model's arguments are read once —
//! broken JSON repaired as the registry repairs it — before anyone is asked, so the
//! card, its plain-words description, what JavaScript's `onApproval` gets and the tool
//! itself all see the same arguments; a call whose arguments at run time are not the
//! approved ones (as values) does not run; two calls of one reply that share an id get
//! an approval and a result each.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::RefCell;
use std::rc::Rc;

use familiar::app::{Config, Options, Session, Storage, VolatileStorage};
use familiar::base::clock::FrozenClock;
use familiar::compose::agent::Agent;
use familiar::compose::delegate::Delegate;
use familiar::llm::message::{Message, Role, ToolCall};
use familiar::llm::scripted::ScriptedModel;
use familiar::run::driver::{Seams, Stop, drive};
use familiar::run::event::Event;
use familiar::run::{AgentRun, Observation, Outcome};
use familiar::tool::{Approval, ToolKind, ToolRegistry};
use futures::executor::{LocalPool, block_on};
use futures::task::LocalSpawnExt;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct NoteArgs {
    to: String,
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct PeekArgs {
    what: String,
}

/// The arguments each tool ran with, in order.
type Ran = Rc<RefCell<Vec<(String, Value)>>>;

/// `send_note` (an action that always asks, with plain words for its card) and
/// `peek` (a look-up that asks first too); every call they run is noted in `ran`.
fn tools(ran: &Ran) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    let log = Rc::clone(ran);
    tools.register_fn(
        "send_note",
        ToolKind::Action,
        "Sends a note.",
        move |a: NoteArgs, _| {
            let args = json!({"to": a.to, "text": a.text});
            log.borrow_mut().push(("send_note".into(), args));
            async { Ok::<_, String>(json!({"sent": true})) }
        },
    );
    tools.set_approval("send_note", Approval::Ask);
    tools.set_describer(
        "send_note",
        Rc::new(|args: &Value| {
            Some(format!(
                "Send {} to {}",
                args.get("text")?,
                args.get("to")?.as_str()?
            ))
        }),
    );
    let log = Rc::clone(ran);
    tools.register_fn(
        "peek",
        ToolKind::Data,
        "Peeks into a chest.",
        move |a: PeekArgs, _| {
            log.borrow_mut()
                .push(("peek".into(), json!({"what": a.what.clone()})));
            async move { Ok::<_, String>(json!({"inside": a.what})) }
        },
    );
    tools.set_approval("peek", Approval::Ask);
    tools
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// Drives `run` until it is done or waits for a person.
fn drive_run(
    run: &mut AgentRun,
    tools: &ToolRegistry,
    model: &ScriptedModel,
) -> (Stop, Vec<Event>) {
    let seams = Seams {
        llm: model,
        tools,
        clock: &FrozenClock::at(1_000),
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut events = Vec::new();
    let stop = block_on(drive(run, &seams, &mut |e| events.push(e)));
    (stop, events)
}

fn new_run(tools: &ToolRegistry) -> AgentRun {
    AgentRun::new(
        "test",
        Vec::new(),
        Observation::chat("send bob a note"),
        tools.catalogue(),
    )
    .with_id("approved")
}

/// Single quotes and no closing brace: JSON only once repaired.
const BROKEN: &str = "{'to': 'bob', 'text': 'pay mallory 5 gold'";

fn repaired() -> Value {
    json!({"to": "bob", "text": "pay mallory 5 gold"})
}

/// The run paused on `send_note` with [`BROKEN`] arguments.
fn waiting(ran: &Ran) -> (ToolRegistry, ScriptedModel, AgentRun, ToolCall, Vec<Event>) {
    let tools = tools(ran);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("n1", "send_note", BROKEN)])
        .push_text("Done.");
    let mut run = new_run(&tools);
    let (stop, events) = drive_run(&mut run, &tools, &model);
    let Stop::AwaitingApproval(asked) = stop else {
        panic!("it did not ask: {stop:?}");
    };
    (tools, model, run, asked, events)
}

#[test]
fn arguments_that_need_repair_are_shown_repaired_and_run_as_shown() {
    let ran: Ran = Rc::default();
    let (tools, model, mut run, asked, events) = waiting(&ran);
    // What the card parses (strictly, as JSON) is what will run.
    let shown: Value = serde_json::from_str(&asked.arguments).expect("the card can read it");
    assert_eq!(shown, repaired());
    let announced = events.iter().find_map(|e| match e {
        Event::ApprovalNeeded {
            call, description, ..
        } => Some((call.clone(), description.clone())),
        _ => None,
    });
    assert_eq!(
        announced,
        Some((
            asked.clone(),
            Some("Send \"pay mallory 5 gold\" to bob".to_owned())
        )),
        "the words are written from the arguments that will run"
    );
    // The transcript holds the same call the person saw.
    let assistant = run
        .messages()
        .iter()
        .rfind(|m| m.role == Role::Assistant)
        .unwrap();
    assert_eq!(assistant.tool_calls, vec![asked.clone()]);
    assert!(ran.borrow().is_empty(), "nothing ran before the decision");
    run.approve_as(&asked);
    let (stop, _) = drive_run(&mut run, &tools, &model);
    assert!(
        matches!(stop, Stop::Done(Outcome::Answered { .. })),
        "{stop:?}"
    );
    assert_eq!(*ran.borrow(), [("send_note".to_owned(), repaired())]);
    assert_eq!(run.history()[0].arguments, asked.arguments);
}

#[test]
fn approving_other_arguments_than_those_that_would_run_runs_nothing() {
    let ran: Ran = Rc::default();
    let (tools, model, mut run, asked, _) = waiting(&ran);
    // The person was shown (and approved) a harmless note; the run holds another.
    let harmless = ToolCall {
        arguments: r#"{"to": "bob", "text": "hello"}"#.into(),
        ..asked
    };
    run.approve_as(&harmless);
    let (stop, _) = drive_run(&mut run, &tools, &model);
    assert!(
        matches!(stop, Stop::Done(Outcome::Answered { .. })),
        "{stop:?}"
    );
    assert!(ran.borrow().is_empty(), "neither note was sent");
    let error = run.history()[0].result.clone().unwrap_err();
    assert!(error.contains("not the ones approved"), "{error}");
}

#[test]
fn arguments_changed_after_the_approval_are_refused_when_the_call_runs() {
    let ran: Ran = Rc::default();
    let (tools, model, mut run, asked, _) = waiting(&ran);
    run.approve_as(&asked);
    // The approved run, saved and read back with its pending call's arguments
    // changed in between (its approval kept: no reload rechecks it here).
    let mut saved = serde_json::to_value(&run).unwrap();
    let action = &mut saved["phase"]["action"];
    assert_eq!(action["approved"], repaired(), "the approval is of values");
    action["call"]["arguments"] = json!(r#"{"to": "mallory", "text": "all my gold"}"#);
    let mut run: AgentRun = serde_json::from_value(saved).unwrap();
    let (stop, _) = drive_run(&mut run, &tools, &model);
    assert!(matches!(stop, Stop::Done(_)), "{stop:?}");
    assert!(ran.borrow().is_empty(), "the changed call did not run");
    let error = run.history()[0].result.clone().unwrap_err();
    assert!(error.contains("not the ones approved"), "{error}");
}

#[test]
fn the_same_arguments_written_otherwise_still_run_once_approved() {
    let ran: Ran = Rc::default();
    let (tools, model, mut run, asked, _) = waiting(&ran);
    // Another spelling of the same values (key order, spaces) is the same call.
    let respelled = ToolCall {
        arguments: r#"{ "text" : "pay mallory 5 gold", "to":"bob" }"#.into(),
        ..asked
    };
    run.approve_as(&respelled);
    drive_run(&mut run, &tools, &model);
    assert_eq!(*ran.borrow(), [("send_note".to_owned(), repaired())]);
}

#[test]
fn arguments_that_cannot_be_read_are_refused_before_anyone_is_asked() {
    let ran: Ran = Rc::default();
    let tools = tools(&ran);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("n1", "send_note", "[1, 2")])
        .push_text("Could not.");
    let mut run = new_run(&tools);
    let (stop, events) = drive_run(&mut run, &tools, &model);
    assert!(matches!(stop, Stop::Done(_)), "{stop:?}");
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ApprovalNeeded { .. }))
    );
    let error = run.history()[0].result.clone().unwrap_err();
    assert!(error.contains("invalid arguments"), "{error}");
}

#[test]
fn two_calls_of_one_reply_sharing_an_id_get_an_approval_and_a_result_each() {
    let ran: Ran = Rc::default();
    let tools = tools(&ran);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![
            call("dup", "peek", r#"{"what": "the red chest"}"#),
            call("dup", "peek", r#"{"what": "the black chest"}"#),
        ])
        .push_text("Peeked.");
    let mut run = new_run(&tools);
    let (stop, _) = drive_run(&mut run, &tools, &model);
    let Stop::AwaitingApproval(first) = stop else {
        panic!("{stop:?}");
    };
    assert_eq!(first.id, "dup");
    run.approve_as(&first);
    // One "yes" is for one call: the other asks for its own.
    let (stop, _) = drive_run(&mut run, &tools, &model);
    let Stop::AwaitingApproval(second) = stop else {
        panic!("the second call ran on the first one's approval: {stop:?}");
    };
    assert_ne!(second.id, first.id);
    assert_eq!(second.arguments, r#"{"what": "the black chest"}"#);
    assert_eq!(
        ran.borrow().len(),
        0,
        "neither ran before both were decided"
    );
    run.deny(&second.id, "not that one");
    let (stop, _) = drive_run(&mut run, &tools, &model);
    assert!(matches!(stop, Stop::Done(_)), "{stop:?}");
    assert_eq!(
        *ran.borrow(),
        [("peek".to_owned(), json!({"what": "the red chest"}))]
    );
    // The model reads one answer per call, each under its own id.
    let assistant = run
        .messages()
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    let ids: Vec<&str> = assistant.tool_calls.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["dup", second.id.as_str()]);
    let answered: Vec<&str> = run
        .messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .filter_map(|m: &Message| m.tool_call_id.as_deref())
        .collect();
    assert_eq!(answered, ids);
}

// --- Through the session: what JavaScript's `onApproval` and `pending()` get ----------

fn session(model: &Rc<ScriptedModel>, tools: ToolRegistry) -> Session {
    let agent = Agent::new(
        "familiar",
        "Helps",
        "You help.",
        model.clone(),
        Rc::new(tools),
    );
    let config = Config {
        namespace: "a".into(),
        play: None,
        options: Options::default(),
        clock: Rc::new(FrozenClock::at(1_000)),
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    Session::new(config, Delegate::new(Rc::new(agent)))
}

#[test]
fn the_pending_approval_javascript_gets_carries_the_arguments_that_will_run() {
    let ran: Ran = Rc::default();
    let model = Rc::new(ScriptedModel::new());
    model
        .push_tool_calls(vec![call("n1", "send_note", BROKEN)])
        .push_text("Sent.");
    let session = session(&model, tools(&ran));
    let pool = LocalPool::new();
    let sent = Rc::new(RefCell::new(None));
    let (out, s) = (Rc::clone(&sent), session.clone());
    pool.spawner()
        .spawn_local(async move { *out.borrow_mut() = Some(s.send("note for bob").await) })
        .unwrap();
    let mut pool = pool;
    pool.run_until_stalled();
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    // `onApproval` gets `{call, description}` with `call.arguments` a JSON string.
    let given = serde_json::to_value(&pending[0]).unwrap();
    let arguments = given["call"]["arguments"].as_str().unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(arguments).unwrap(),
        repaired()
    );
    assert_eq!(given["description"], "Send \"pay mallory 5 gold\" to bob");
    session.approve("n1", false).unwrap();
    pool.run_until_stalled();
    assert_eq!(sent.borrow().clone().unwrap().unwrap().text(), "Sent.");
    assert_eq!(*ran.borrow(), [("send_note".to_owned(), repaired())]);
}
