//! Approvals in the loop: `ask_if_untrusted` runs on the person's words alone and asks
//! once a tool was read, an approval pauses the run and approving resumes it, a denied
//! action is not applied and the model hears why, and a look-up whose tool asks first
//! waits for a person.

use familiar::run::event::{Decided, Thought};

use super::*;

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
