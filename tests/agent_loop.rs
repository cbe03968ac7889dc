//! The agent loop end to end, natively: the driver over the real run, registry, ledger
//! and local store, with a scripted model. One test per rule a user relies on.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::Cell;
use std::rc::Rc;

use familiar::clock::ManualClock;
use familiar::driver::{Seams, Stop, drive, drive_until};
use familiar::event::{Event, Thought};
use familiar::ledger::Ledger;
use familiar::message::{Message, Role, ToolCall};
use familiar::run::{AgentRun, Boundaries, NextStep, Observation, Outcome};
use familiar::scripted::ScriptedModel;
use familiar::store::{LocalStore, Store};
use familiar::tool::{Approval, NoArgs, ToolKind, ToolRegistry};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    by: i64,
}

/// A world of one counter: `read` (data), `bump` (action), `fail` (data that errors),
/// `hang` (data that never answers, 5 s timeout).
struct Bench {
    tools: ToolRegistry,
    applied: Rc<Cell<i64>>,
    clock: ManualClock,
}

fn bench() -> Bench {
    let applied = Rc::new(Cell::new(0));
    let mut tools = ToolRegistry::new();
    let counter = Rc::clone(&applied);
    tools.register_fn(
        "read",
        ToolKind::Data,
        "Reads the counter.",
        move |_: NoArgs, _| {
            let value = counter.get();
            async move { Ok::<_, String>(json!({ "counter": value })) }
        },
    );
    let counter = Rc::clone(&applied);
    tools.register_fn(
        "bump",
        ToolKind::Action,
        "Adds to the counter.",
        move |a: CountArgs, _| {
            counter.set(counter.get() + a.by);
            let value = counter.get();
            async move { Ok::<_, String>(json!({ "counter": value })) }
        },
    );
    tools.register_fn(
        "fail",
        ToolKind::Data,
        "Always fails.",
        |_: NoArgs, _| async { Err::<Value, _>("the well is dry") },
    );
    tools.register_fn(
        "hang",
        ToolKind::Data,
        "Never answers.",
        |_: NoArgs, _| async { futures::future::pending::<Result<Value, String>>().await },
    );
    tools.set_timeout("hang", 5_000);
    let store: Rc<dyn Store> = Rc::new(LocalStore::new(familiar::world::schemas().unwrap()));
    tools.with_ledger(Ledger::new(store, "1"));
    Bench {
        tools,
        applied,
        clock: ManualClock::starting_at(0),
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

impl Bench {
    fn run(&self, input: &str) -> AgentRun {
        AgentRun::new(
            "test",
            Vec::new(),
            Observation::chat(input),
            self.tools.catalogue(),
        )
        .with_id("test-run")
    }

    fn drive(&self, run: &mut AgentRun, model: &ScriptedModel) -> (Stop, Vec<Event>) {
        let seams = Seams {
            llm: model,
            tools: &self.tools,
            clock: &self.clock,
            host: None,
        };
        let mut events = Vec::new();
        let stop = block_on(drive(run, &seams, &mut |e| events.push(e)));
        (stop, events)
    }
}

/// The results the model was shown, in order.
fn tool_messages(run: &AgentRun) -> Vec<Value> {
    run.messages()
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| serde_json::from_str(&m.content).unwrap())
        .collect()
}

#[test]
fn at_the_cap_a_tools_off_call_answers_and_the_transcript_is_kept() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "bump", r#"{"by": 1}"#)])
        .push_tool_calls(vec![call("c2", "bump", r#"{"by": 1}"#)])
        .push_text("I ran out of steps; the counter is at 2.");
    let mut run = bench.run("count to ten").with_max_iterations(2);
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::CapReached {
            text: "I ran out of steps; the counter is at 2.".into()
        })
    );
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[2].tools.is_empty(), "the last call has tools off");
    assert_eq!(run.iterations(), 2);
    assert_eq!(run.history().len(), 2);
    // user, (assistant, tool) × 2, final assistant.
    assert_eq!(run.messages().len(), 6);
    let saved: AgentRun = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    assert_eq!(saved.messages(), run.messages());
}

#[test]
fn unknown_tools_invalid_arguments_and_failing_tools_become_errors_the_model_reads() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![
            call("c1", "teleport", "{}"),
            call("c2", "read", r#"{"unexpected": true}"#),
            call("c3", "fail", "{}"),
            call("c4", "bump", r#"{"by": "two"}"#),
        ])
        .push_text("Some tools did not work.");
    let mut run = bench.run("try everything");
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let errors: Vec<String> = tool_messages(&run)
        .iter()
        .map(|m| m["error"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(errors[0], "there is no tool named `teleport`");
    assert!(
        errors[1].starts_with("invalid arguments for `read`"),
        "{}",
        errors[1]
    );
    assert_eq!(errors[2], "`fail` failed: the well is dry");
    assert!(
        errors[3].starts_with("invalid arguments for `bump`"),
        "{}",
        errors[3]
    );
    assert_eq!(bench.applied.get(), 0, "an invalid action is not applied");
    let returns = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Thought(Thought::ToolReturn { result: Err(_), .. })
            )
        })
        .count();
    assert_eq!(returns, 4);
    // The model saw the errors on its next turn.
    let last_request = model.requests().pop().unwrap();
    assert_eq!(
        last_request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count(),
        4
    );
}

#[test]
fn a_tool_that_hangs_past_its_timeout_is_stopped_and_reported() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "hang", "{}"), call("c2", "read", "{}")])
        .push_text("The slow tool timed out.");
    let mut run = bench.run("wait for it");
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let results = tool_messages(&run);
    assert_eq!(
        results[0]["error"],
        "`hang` took longer than 5000 ms and was stopped"
    );
    assert_eq!(
        results[1],
        json!({"counter": 0}),
        "the other call was not held up"
    );
    assert!(bench.clock.sleeps().contains(&5_000));
}

#[test]
fn an_action_outside_the_boundaries_is_refused_and_the_model_replans() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "bump", r#"{"by": 5}"#)])
        .push_text("I may not change the counter here.");
    let mut observation = Observation::chat("bump it");
    observation.boundaries = Boundaries {
        allowed_actions: Some(vec![]),
    };
    let mut run = AgentRun::new("test", Vec::new(), observation, bench.tools.catalogue());
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    assert_eq!(bench.applied.get(), 0);
    let first = &model.requests()[0];
    assert!(
        first.tools.iter().all(|t| t.name != "bump"),
        "actions outside the boundaries are not offered"
    );
    let refusal = &tool_messages(&run)[0]["error"];
    assert!(
        refusal.as_str().unwrap().contains("does not allow it"),
        "{refusal}"
    );
    let replan = &run.messages()[3];
    assert_eq!(replan.role, Role::User);
    assert!(replan.content.contains("failed"), "{}", replan.content);
}

#[test]
fn only_one_action_runs_per_step() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![
            call("c1", "bump", r#"{"by": 1}"#),
            call("c2", "bump", r#"{"by": 10}"#),
        ])
        .push_text("done");
    let mut run = bench.run("bump twice");
    bench.drive(&mut run, &model);
    assert_eq!(bench.applied.get(), 1);
    assert!(
        tool_messages(&run)[0]["error"]
            .as_str()
            .unwrap()
            .contains("one action per step")
    );
}

fn approval_bench() -> (Bench, ScriptedModel, AgentRun) {
    let mut bench = bench();
    bench.tools.set_approval("bump", Approval::Ask);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![
            call("c1", "read", "{}"),
            call("c2", "bump", r#"{"by": 3}"#),
        ])
        .push_text("finished");
    let run = bench.run("bump by three");
    (bench, model, run)
}

#[test]
fn an_approval_pauses_the_run_and_approving_resumes_it() {
    let (bench, model, mut run) = approval_bench();
    let (stop, events) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::AwaitingApproval(call("c2", "bump", r#"{"by": 3}"#))
    );
    assert!(matches!(events.last(), Some(Event::ApprovalNeeded { .. })));
    assert_eq!(bench.applied.get(), 0, "nothing applied while waiting");
    assert_eq!(tool_messages(&run).len(), 1, "the data call already ran");
    // The paused run survives a reload.
    let mut run: AgentRun = serde_json::from_str(&serde_json::to_string(&run).unwrap()).unwrap();
    run.approve("c2");
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "finished".into()
        })
    );
    assert_eq!(bench.applied.get(), 3);
}

#[test]
fn a_denied_action_is_not_applied_and_the_model_hears_why() {
    let (bench, model, mut run) = approval_bench();
    bench.drive(&mut run, &model);
    run.deny("c2", "not today");
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "finished".into()
        })
    );
    assert_eq!(bench.applied.get(), 0);
    let error = tool_messages(&run)[1]["error"].as_str().unwrap().to_owned();
    assert!(error.contains("a person denied it: not today"), "{error}");
}

#[test]
fn a_run_saved_mid_way_resumes_to_the_same_history_without_applying_twice() {
    let script = || {
        let model = ScriptedModel::new();
        model
            .push_tool_calls(vec![call("c1", "bump", r#"{"by": 2}"#)])
            .push_tool_calls(vec![call("c2", "read", "{}")])
            .push_text("The counter is at 2.");
        model
    };
    // The whole run, uninterrupted, for reference.
    let reference_bench = bench();
    let mut reference = reference_bench.run("bump by two");
    reference_bench.drive(&mut reference, &script());

    // The same run, saved as the action is about to run.
    let bench = bench();
    let model = script();
    let mut run = bench.run("bump by two");
    let seams = Seams {
        llm: &model,
        tools: &bench.tools,
        clock: &bench.clock,
        host: None,
    };
    let NextStep::CallModel(step) = run.next_step() else {
        panic!()
    };
    run.model_responded(block_on(model_reply(&model, &step.request)));
    assert!(matches!(run.next_step(), NextStep::CallTools(_)));
    let saved = serde_json::to_string(&run).unwrap();
    // The first attempt applies the action, then the tab is closed before the result
    // reaches the run.
    let NextStep::CallTools(calls) = run.next_step() else {
        panic!()
    };
    let cx = familiar::tool::CallContext {
        idempotency_key: calls[0].idempotency_key.clone(),
    };
    block_on(bench.tools.call(&calls[0].call, cx)).unwrap();
    assert_eq!(bench.applied.get(), 2);
    // Resumed from the save, the run calls the action again with the same key.
    let mut resumed: AgentRun = serde_json::from_str(&saved).unwrap();
    let stop = block_on(drive(&mut resumed, &seams, &mut |_| {}));
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "The counter is at 2.".into()
        })
    );
    assert_eq!(bench.applied.get(), 2, "the action was not applied twice");
    assert_eq!(resumed.history(), reference.history());
    assert_eq!(resumed.messages(), reference.messages());
}

async fn model_reply(
    model: &ScriptedModel,
    request: &familiar::llm::ChatRequest,
) -> familiar::llm::ChatResponse {
    use familiar::llm::Llm;
    model.chat(request, &mut |_| {}).await.unwrap()
}

/// A model that is still thinking when the person presses stop.
struct Thinking;

impl familiar::llm::Llm for Thinking {
    fn chat<'a>(
        &'a self,
        _: &'a familiar::llm::ChatRequest,
        _: &'a mut familiar::llm::DeltaSink<'_>,
    ) -> futures::future::LocalBoxFuture<
        'a,
        Result<familiar::llm::ChatResponse, familiar::llm::LlmError>,
    > {
        Box::pin(futures::future::pending())
    }
}

#[test]
fn a_cancelled_run_ends_aborted_and_keeps_its_record() {
    let bench = bench();
    let mut run = bench.run("think hard");
    let seams = Seams {
        llm: &Thinking,
        tools: &bench.tools,
        clock: &bench.clock,
        host: None,
    };
    let (stop_tx, stop_rx) = futures::channel::oneshot::channel::<()>();
    let mut events = Vec::new();
    let cancel = async move {
        let _ = stop_rx.await;
    };
    stop_tx.send(()).unwrap();
    let stop = block_on(drive_until(
        &mut run,
        &seams,
        &mut |e| events.push(e),
        cancel,
    ));
    assert!(
        matches!(stop, Stop::Done(Outcome::Aborted { .. })),
        "{stop:?}"
    );
    assert!(matches!(
        events.last(),
        Some(Event::Done(Outcome::Aborted { .. }))
    ));
    assert_eq!(run.messages(), [Message::user("think hard")]);
}

#[test]
fn a_failed_action_replans_with_the_error_in_the_prompt() {
    let mut bench = bench();
    bench.tools.register_fn(
        "spend",
        ToolKind::Action,
        "Spends gold.",
        |_: NoArgs, _| async { Err::<Value, _>("Insufficient gold. Need 10, have 0") },
    );
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "spend", "{}")])
        .push_text("I cannot afford it.");
    let mut run = bench.run("buy");
    bench.drive(&mut run, &model);
    let requests = model.requests();
    let replan = &requests[1].messages.last().unwrap().content;
    assert!(replan.contains("`spend` failed"), "{replan}");
    assert!(
        replan.contains("Insufficient gold. Need 10, have 0"),
        "{replan}"
    );
}
