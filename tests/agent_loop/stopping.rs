//! How a run stops short: at the cap a tools-off call answers, a model that only looks
//! up ends there too while acting resets the look-ups, the time budget spans every
//! step, and a cancelled run ends aborted keeping its record.

use familiar::llm::message::Message;
use familiar::run::driver::drive_until;

use super::*;

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
        relay: None,
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
        relay: None,
    };
    let stop = block_on(drive(&mut run, &seams, &mut |_| {}));
    assert!(
        matches!(&stop, Stop::Done(Outcome::Failed { error }) if error.contains("time budget")),
        "{stop:?}"
    );
    assert_eq!(bench.clock.sleeps(), [60_000]);
}
