//! Actions: one per step and only inside the boundaries, a failed one replans with its
//! error, a run saved mid-way resumes without applying it twice, and one that timed out
//! or was stopped mid-way is marked unknown and never applied again under its key.

use familiar::run::Boundaries;
use familiar::run::driver::drive_until;

use super::*;

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
        .map(|r| (r.tool.as_str(), r.result.is_ok()))
        .collect();
    assert_eq!(tools, [("bump", true), ("bump", false)]);
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
        relay: None,
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
        approved: false,
        caller: None,
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
            idempotency_key: Some(key.into()),
            approved: false,
            caller: None,
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
        clock: &FrozenClock::at(0),
        host: None,
        checkpoint: None,
        relay: None,
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
            idempotency_key: Some("test-run/1/k1".into()),
            approved: false,
            caller: None,
        },
    ))
    .unwrap();
    assert_eq!(again["outcome"], "unknown");
    assert_eq!(bench.applied.get(), 1, "a resume does not apply it again");
}
