//! The agent loop end to end, natively: the driver over the real run, registry, ledger
//! and local store, with a scripted model. One test per rule a user relies on.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::cell::Cell;
use std::rc::Rc;

use familiar::base::clock::ManualClock;
use familiar::llm::message::{Message, Role, ToolCall};
use familiar::llm::scripted::ScriptedModel;
use familiar::run::driver::{Seams, Stop, drive, drive_until};
use familiar::run::event::{Decided, Event, Thought};
use familiar::run::{AgentRun, Boundaries, NextStep, Observation, Outcome};
use familiar::store::{LocalStore, Store};
use familiar::tool::ledger::Ledger;
use familiar::tool::{Approval, NoArgs, ToolKind, ToolRegistry};
use futures::executor::block_on;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

#[derive(Deserialize, JsonSchema)]
struct CountArgs {
    by: i64,
}

/// A world of one counter: `read` (data), `bump` (action, unasked), `fail` (data that errors),
/// `hang` (data that never answers, 5 s timeout).
/// When a bench's clock starts: a real date, so a stamp of 0 would mean unknown.
const START_MS: i64 = 1_795_338_000_000;

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
    // The loop's mechanics, not its approvals, are under test here: `bump` runs
    // unasked even after a look-up (actions ask once untrusted by default).
    tools.set_approval("bump", Approval::Auto);
    let store: Rc<dyn Store> = Rc::new(LocalStore::new(familiar::world::schemas().unwrap()));
    tools.with_ledger(Ledger::new(store, "1"));
    Bench {
        tools,
        applied,
        clock: ManualClock::starting_at(START_MS),
    }
}

impl Bench {
    /// When the bench's clock started.
    fn started_ms(&self) -> i64 {
        START_MS
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
            checkpoint: None,
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
    // Each action's record says when it finished (seed 000's action history).
    let stamps: Vec<i64> = run.history().iter().map(|r| r.at_ms).collect();
    assert!(
        stamps.iter().all(|at| *at >= bench.started_ms()) && stamps[0] <= stamps[1],
        "{stamps:?}"
    );
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
        ..Boundaries::default()
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
    // The transcript and the history keep the model's call order: the action that ran
    // first, then the refused one.
    let messages = tool_messages(&run);
    assert_eq!(messages[0], json!({ "counter": 1 }));
    assert!(
        messages[1]["error"]
            .as_str()
            .unwrap()
            .contains("one action per step")
    );
    let tools: Vec<_> = run
        .history()
        .iter()
        .map(|r| (&r.tool, r.result.is_ok()))
        .collect();
    assert_eq!(
        tools,
        [(&"bump".to_owned(), true), (&"bump".to_owned(), false)]
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
fn ask_if_untrusted_runs_on_the_persons_words_alone_and_asks_once_a_tool_was_read() {
    let mut bench = bench();
    bench.tools.set_approval("bump", Approval::AskIfUntrusted);
    // Straight from the person's message: it runs.
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "bump", r#"{"by": 1}"#)])
        .push_text("done");
    let mut run = bench.run("bump by one");
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(
        matches!(stop, Stop::Done(Outcome::Answered { .. })),
        "{stop:?}"
    );
    assert_eq!(bench.applied.get(), 1);
    // After a look-up in an earlier step: it asks.
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("r1", "read", "{}")])
        .push_tool_calls(vec![call("c2", "bump", r#"{"by": 1}"#)])
        .push_text("done");
    let mut run = bench.run("read the page, then bump");
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::AwaitingApproval(call("c2", "bump", r#"{"by": 1}"#))
    );
    // A look-up in the same reply counts too: its result is read before the action.
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("r2", "read", "{}"), call("c3", "bump", "{}")])
        .push_text("done");
    let mut run = bench.run("read and bump");
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(stop, Stop::AwaitingApproval(call("c3", "bump", "{}")));
    assert_eq!(bench.applied.get(), 1, "neither ran unasked");
}

#[test]
fn ask_if_untrusted_counts_a_look_up_the_model_listed_after_the_action() {
    let mut bench = bench();
    bench.tools.set_approval("bump", Approval::AskIfUntrusted);
    // The look-up runs first, whatever the order of the calls: the action then acts
    // on what it read, so it asks.
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "bump", "{}"), call("r1", "read", "{}")])
        .push_text("done");
    let mut run = bench.run("bump and read");
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(stop, Stop::AwaitingApproval(call("c1", "bump", "{}")));
    assert_eq!(bench.applied.get(), 0, "it did not run unasked");
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
    let returned = events
        .iter()
        .filter(|e| matches!(e, Event::Thought(Thought::ToolReturn { .. })))
        .count();
    assert_eq!(returned, 1, "the data call already ran");
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
    // The look-up kept across the reload comes first, the approved action after it.
    let messages = tool_messages(&run);
    assert_eq!(messages, [json!({ "counter": 0 }), json!({ "counter": 3 })]);
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
    let declined = tool_messages(&run)[1]["declined"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        declined.contains("the person declined it (not today)"),
        "{declined}"
    );
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
        checkpoint: None,
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
        checkpoint: None,
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

/// A clock whose timers never fire: timeouts stay out of the way.
struct Frozen;

impl familiar::base::clock::Clock for Frozen {
    fn now(&self) -> familiar::base::clock::Instant {
        familiar::base::clock::Instant {
            epoch_ms: 0,
            utc_offset_minutes: 0,
        }
    }

    fn sleep(&self, _: u64) -> futures::future::LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}

#[test]
fn data_tools_of_one_step_run_concurrently() {
    // `wait` finishes only once `signal` has run: in sequence it would never finish.
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let rx = Rc::new(std::cell::RefCell::new(Some(rx)));
    let tx = Rc::new(std::cell::RefCell::new(Some(tx)));
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "wait",
        ToolKind::Data,
        "Waits for the signal.",
        move |_: NoArgs, _| {
            let rx = rx.borrow_mut().take();
            async move {
                match rx {
                    Some(rx) => rx.await.map(|()| "signalled").map_err(|_| "no signal"),
                    None => Err("already waited"),
                }
            }
        },
    );
    tools.register_fn("signal", ToolKind::Data, "Signals.", move |_: NoArgs, _| {
        let sent = tx.borrow_mut().take().map(|tx| tx.send(()));
        async move { sent.map(|_| "sent").ok_or("already signalled") }
    });
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "wait", "{}"), call("c2", "signal", "{}")])
        .push_text("both ran");
    let mut run = AgentRun::new("t", Vec::new(), Observation::chat("go"), tools.catalogue());
    let seams = Seams {
        llm: &model,
        tools: &tools,
        clock: &Frozen,
        host: None,
        checkpoint: None,
    };
    let stop = block_on(drive(&mut run, &seams, &mut |_| {}));
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "both ran".into()
        })
    );
    assert_eq!(tool_messages(&run), [json!("signalled"), json!("sent")]);
}

/// A host that answers `spawn` calls and never answers anything else.
struct Game {
    requests: std::cell::RefCell<Vec<String>>,
}

impl familiar::run::driver::Host for Game {
    fn call<'a>(
        &'a self,
        request_id: &'a str,
        call: &'a ToolCall,
    ) -> futures::future::LocalBoxFuture<'a, Result<Value, String>> {
        self.requests.borrow_mut().push(request_id.to_owned());
        if call.name == "spawn" {
            Box::pin(async { Ok(json!({"spawned": "goblin"})) })
        } else {
            Box::pin(futures::future::pending())
        }
    }
}

#[test]
fn host_tools_are_awaited_by_request_id_under_their_timeout() {
    let mut tools = ToolRegistry::new();
    let spec = |name: &str| familiar::llm::ToolSpec {
        name: name.into(),
        description: format!("The game's {name}."),
        parameters: json!({"type": "object", "properties": {}}),
    };
    tools.register_host(spec("spawn"), ToolKind::Action, 30_000);
    tools.register_host(spec("look"), ToolKind::Data, 2_000);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "look", "{}")])
        .push_tool_calls(vec![call("c2", "spawn", "{}")])
        .push_text("A goblin appears.");
    let mut run = AgentRun::new(
        "t",
        Vec::new(),
        Observation::chat("spawn"),
        tools.catalogue(),
    )
    .with_id("npc-7");
    let game = Game {
        requests: Default::default(),
    };
    let clock = ManualClock::starting_at(0);
    let seams = Seams {
        llm: &model,
        tools: &tools,
        clock: &clock,
        host: Some(&game),
        checkpoint: None,
    };
    let stop = block_on(drive(&mut run, &seams, &mut |_| {}));
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "A goblin appears.".into()
        })
    );
    let results = tool_messages(&run);
    assert_eq!(
        results[0]["error"],
        "`look` took longer than 2000 ms and was stopped"
    );
    assert_eq!(results[1], json!({"spawned": "goblin"}));
    assert_eq!(
        *game.requests.borrow(),
        ["npc-7/0.1/c1", "npc-7/1/c2"],
        "every call carries its key as request id"
    );
}

#[test]
fn reflection_can_send_an_answer_back_for_revision_then_accept_it() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_text("The counter is zero.")
        .push_text(r#"{"verdict": "revise", "feedback": "say it as a number"}"#)
        .push_text("The counter is 0.")
        .push_text("Looks fine to me!")
        .push_text(r#"{"verdict": "finished"}"#);
    let mut run = bench.run("what is the counter?").with_reflection(2);
    let (stop, events) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "The counter is 0.".into()
        })
    );
    let reviews: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            Event::Reflection(review) => Some(review.verdict),
            _ => None,
        })
        .collect();
    use familiar::run::Verdict;
    assert_eq!(reviews, [Verdict::Revise, Verdict::Finished]);
    let requests = model.requests();
    assert!(
        requests[1].response_format.is_some(),
        "reviews ask for the contract"
    );
    assert_eq!(
        requests[2].messages.last().unwrap().content,
        "Revise your answer: say it as a number"
    );
    // The invalid review was re-asked with what was wrong.
    assert!(
        requests[4]
            .messages
            .last()
            .unwrap()
            .content
            .contains("could not be used"),
        "{:?}",
        requests[4].messages.last()
    );
}

#[test]
fn reflection_asking_for_more_actions_sends_the_model_back_to_its_tools() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_text("Probably zero.")
        .push_text(r#"{"verdict": "more_actions", "feedback": "read the counter first"}"#)
        .push_tool_calls(vec![call("c1", "read", "{}")])
        .push_text("It is 0.");
    let mut run = bench.run("what is the counter?").with_reflection(1);
    let (stop, _) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "It is 0.".into()
        })
    );
    assert_eq!(run.history()[0].tool, "read");
}

#[test]
fn a_guessed_goal_is_kept_and_checked_against_after_an_action() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_text(r#"{"goal": "the counter reads 2"}"#)
        .push_tool_calls(vec![call("c1", "bump", r#"{"by": 2}"#)])
        .push_text("YES, it reads 2.");
    let mut run = bench.run("make it two").with_goal_guess().with_goal_check();
    let (stop, events) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::GoalComplete {
            text: "It reads 2.".into()
        }),
        "the answer is what the check said besides its verdict"
    );
    assert_eq!(run.goal(), Some("the counter reads 2"));
    let question = model.requests()[2].messages.last().unwrap().content.clone();
    assert!(
        question.starts_with("Original goal: the counter reads 2"),
        "{question}"
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, Event::GoalChecked { complete: true, .. }))
    );
}

#[test]
fn a_goal_check_that_says_no_sends_the_model_back_to_work() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "bump", r#"{"by": 1}"#)])
        .push_text("NO, it should be 2.")
        .push_tool_calls(vec![call("c2", "bump", r#"{"by": 1}"#)])
        .push_text("YES.");
    let mut run = bench.run("make it two").with_goal_check();
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::GoalComplete { .. })));
    assert_eq!(bench.applied.get(), 2);
    assert_eq!(run.iterations(), 2);
}

#[test]
fn results_or_replies_that_come_out_of_turn_change_nothing() {
    let bench = bench();
    let model = ScriptedModel::new();
    model.push_text("done");
    let mut run = bench.run("hi");
    bench.drive(&mut run, &model);
    let before = run.clone();
    run.tools_returned(vec![familiar::run::ToolResult {
        call_id: "c9".into(),
        result: Ok(json!(1)),
        duration_ms: 0,
        at_ms: 0,
    }]);
    run.approve("c9");
    run.deny("c9", "no");
    assert_eq!(run, before);
    assert_eq!(
        run.next_step(),
        NextStep::Done(Outcome::Answered {
            text: "done".into()
        })
    );
}

#[test]
fn a_model_that_only_ever_looks_up_ends_at_the_cap_with_a_tools_off_answer() {
    let bench = bench();
    let model = ScriptedModel::new();
    for i in 0..200 {
        model.push_tool_calls(vec![call(&format!("r{i}"), "read", "{}")]);
    }
    let mut run = bench.run("look forever").with_max_iterations(3);
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(
        matches!(stop, Stop::Done(Outcome::CapReached { .. })),
        "{stop:?}"
    );
    let requests = model.requests();
    // Four free look-ups, then three refused turns that each use up an iteration, then
    // the tools-off answer.
    assert_eq!(requests.len(), 4 + 3 + 1);
    assert!(requests.len() <= run.max_model_turns() as usize);
    assert!(requests.last().unwrap().tools.is_empty());
    let ran = events
        .iter()
        .filter(|e| matches!(e, Event::ToolStarted { .. }))
        .count();
    assert_eq!(ran, 4, "look-ups past the budget are refused, not run");
    let refused = tool_messages(&run)
        .iter()
        .filter(|m| {
            m["error"]
                .as_str()
                .is_some_and(|e| e.contains("look-ups are used up"))
        })
        .count();
    assert_eq!(refused, 3);
}

#[test]
fn acting_resets_the_look_ups_and_the_model_turns_stay_within_their_bound() {
    let bench = bench();
    let model = ScriptedModel::new();
    for i in 0..200 {
        let calls = if i % 5 == 4 {
            vec![call(&format!("b{i}"), "bump", r#"{"by": 1}"#)]
        } else {
            vec![call(&format!("r{i}"), "read", "{}")]
        };
        model.push_tool_calls(calls);
    }
    let mut run = bench.run("look, then act, forever").with_max_iterations(2);
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::CapReached { .. })));
    assert_eq!(model.requests().len(), run.max_model_turns() as usize);
    assert_eq!(bench.applied.get(), 2);
}

#[test]
fn a_switched_off_or_unknown_data_tool_called_by_name_does_not_run() {
    let mut bench = bench();
    bench.tools.set_approval("read", Approval::Deny);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "read", "{}"), call("c2", "nowhere", "{}")])
        .push_text("I could not look.");
    let mut run = bench.run("read it anyway");
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ToolStarted { .. }))
    );
    let errors: Vec<String> = tool_messages(&run)
        .iter()
        .map(|m| m["error"].as_str().unwrap().to_owned())
        .collect();
    assert!(errors[0].contains("switched off"), "{}", errors[0]);
    assert_eq!(errors[1], "there is no tool named `nowhere`");
}

#[test]
fn the_time_budget_spans_every_step_and_ends_the_run_with_a_clear_error() {
    let bench = bench();
    let model = ScriptedModel::new();
    for i in 0..10 {
        model.push_tool_calls(vec![call(&format!("h{i}"), "hang", "{}")]);
    }
    // Each `hang` call takes its 5 s timeout: the third step finds the budget spent.
    let mut run = bench.run("wait").with_time_budget_ms(10_000);
    let (stop, _) = bench.drive(&mut run, &model);
    let Stop::Done(Outcome::Failed { error }) = stop else {
        panic!("{stop:?}");
    };
    assert_eq!(error, "the run used up its time budget of 10 s");
    assert_eq!(run.time_left_ms(), 0);
    assert_eq!(
        tool_messages(&run).len(),
        2,
        "two steps ran within the budget"
    );
}

#[test]
fn a_model_that_never_answers_is_stopped_by_the_time_budget() {
    let bench = bench();
    let mut run = bench.run("think forever").with_time_budget_ms(60_000);
    let seams = Seams {
        llm: &Thinking,
        tools: &bench.tools,
        clock: &bench.clock,
        host: None,
        checkpoint: None,
    };
    let stop = block_on(drive(&mut run, &seams, &mut |_| {}));
    assert!(
        matches!(&stop, Stop::Done(Outcome::Failed { error }) if error.contains("time budget")),
        "{stop:?}"
    );
    assert_eq!(bench.clock.sleeps(), [60_000]);
}

#[test]
fn a_reply_with_too_many_calls_runs_the_first_sixteen_and_refuses_the_rest() {
    let bench = bench();
    let model = ScriptedModel::new();
    let calls = (0..40)
        .map(|i| call(&format!("r{i}"), "read", "{}"))
        .collect();
    model.push_tool_calls(calls).push_text("Read a lot.");
    let mut run = bench.run("read everything");
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let ran = events
        .iter()
        .filter(|e| matches!(e, Event::ToolStarted { .. }))
        .count();
    assert_eq!(ran, familiar::run::MAX_CALLS_PER_REPLY);
    let messages = tool_messages(&run);
    assert_eq!(messages.len(), 40, "every call gets its answer");
    assert!(
        messages[39]["error"]
            .as_str()
            .unwrap()
            .contains("at most 16 calls per reply")
    );
}

#[test]
fn a_huge_tool_result_reaches_the_model_cut_to_its_start() {
    let mut bench = bench();
    bench.tools.register_fn(
        "dump",
        ToolKind::Data,
        "Returns a lot.",
        |_: NoArgs, _| async { Ok::<_, String>(json!({ "text": "x".repeat(100_000) })) },
    );
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("d1", "dump", "{}")])
        .push_text("That was long.");
    let mut run = bench.run("dump it");
    bench.drive(&mut run, &model);
    let shown = &tool_messages(&run)[0];
    let note = shown["truncated"].as_str().unwrap();
    assert!(note.contains("100011 characters"), "{note}");
    assert_eq!(
        shown["start"].as_str().unwrap().chars().count(),
        familiar::run::MAX_RESULT_CHARS
    );
}

#[test]
fn a_look_up_whose_tool_asks_first_waits_for_a_person() {
    let mut bench = bench();
    bench.tools.set_approval("read", Approval::Ask);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("r1", "read", "{}")])
        .push_text("The counter is 0.")
        .push_tool_calls(vec![call("r2", "read", "{}")])
        .push_text("I was not allowed to look.");
    let mut run = bench.run("read it");
    let (stop, events) = bench.drive(&mut run, &model);
    assert_eq!(stop, Stop::AwaitingApproval(call("r1", "read", "{}")));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ToolStarted { .. }))
    );
    run.approve("r1");
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    assert_eq!(tool_messages(&run), [json!({"counter": 0})]);

    let mut run = bench.run("read it again");
    bench.drive(&mut run, &model);
    run.deny("r2", "private");
    let (stop, events) = bench.drive(&mut run, &model);
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "I was not allowed to look.".into()
        })
    );
    assert!(events.contains(&Event::Decided {
        call_id: "r2".into(),
        decision: Decided::Denied {
            reason: "private".into()
        }
    }));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ToolStarted { .. }))
    );
    let declined = tool_messages(&run)[0]["declined"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(declined.contains("declined it (private)"), "{declined}");
}

#[test]
fn an_action_that_times_out_is_marked_unknown_and_never_applied_again_under_its_key() {
    let mut bench = bench();
    let counter = Rc::clone(&bench.applied);
    bench.tools.register_fn(
        "slow_bump",
        ToolKind::Action,
        "Bumps, then never answers.",
        move |_: NoArgs, _| {
            counter.set(counter.get() + 1);
            futures::future::pending::<Result<Value, String>>()
        },
    );
    bench.tools.set_timeout("slow_bump", 5_000);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("s1", "slow_bump", "{}")])
        .push_text("Not sure it worked.");
    let mut run = bench.run("bump slowly");
    bench.drive(&mut run, &model);
    assert_eq!(bench.applied.get(), 1);
    let error = tool_messages(&run)[0]["error"].as_str().unwrap().to_owned();
    assert!(
        error.contains("whether it took effect is unknown"),
        "{error}"
    );
    // The same call under the same key (a resumed run) is not applied again.
    let key = "test-run/1/s1".to_owned();
    let again = block_on(bench.tools.call(
        &call("s1", "slow_bump", "{}"),
        familiar::tool::CallContext {
            idempotency_key: Some(key),
        },
    ))
    .unwrap();
    assert_eq!(again["outcome"], "unknown");
    assert_eq!(bench.applied.get(), 1);
}

#[test]
fn an_action_stopped_mid_way_is_marked_unknown_and_said_so() {
    use std::cell::RefCell;
    use std::task::{Poll, Waker};
    let mut bench = bench();
    let started = Rc::new(Cell::new(false));
    let waker: Rc<RefCell<Option<Waker>>> = Rc::new(RefCell::new(None));
    let (flag, wake) = (Rc::clone(&started), Rc::clone(&waker));
    let counter = Rc::clone(&bench.applied);
    bench.tools.register_fn(
        "stuck",
        ToolKind::Action,
        "Starts, never ends.",
        move |_: NoArgs, _| {
            counter.set(counter.get() + 1);
            flag.set(true);
            if let Some(waker) = wake.borrow_mut().take() {
                waker.wake();
            }
            futures::future::pending::<Result<Value, String>>()
        },
    );
    let model = ScriptedModel::new();
    model.push_tool_calls(vec![call("k1", "stuck", "{}")]);
    let mut run = bench.run("start it");
    let seams = Seams {
        llm: &model,
        tools: &bench.tools,
        clock: &Frozen,
        host: None,
        checkpoint: None,
    };
    // The person presses Stop once the action is under way.
    let cancel = futures::future::poll_fn(|cx| {
        if started.get() {
            Poll::Ready(())
        } else {
            *waker.borrow_mut() = Some(cx.waker().clone());
            Poll::Pending
        }
    });
    let stop = block_on(drive_until(&mut run, &seams, &mut |_| {}, cancel));
    let Stop::Done(Outcome::Aborted { reason }) = stop else {
        panic!("{stop:?}");
    };
    assert_eq!(
        reason,
        "stopped while `stuck` was running; whether it took effect is unknown"
    );
    let again = block_on(bench.tools.call(
        &call("k1", "stuck", "{}"),
        familiar::tool::CallContext {
            idempotency_key: Some("test-run/1/k1".to_owned()),
        },
    ))
    .unwrap();
    assert_eq!(again["outcome"], "unknown");
    assert_eq!(bench.applied.get(), 1, "a resume does not apply it again");
}
