//! Reflection and the guessed goal: a reflection can send an answer back for revision
//! or the model back to its tools, and a goal guessed at the start is checked after an
//! action, a no sending the model back to work.

use super::*;

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
