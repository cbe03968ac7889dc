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

/// Drives a fresh run on `input`, reviewed once and with its goal guessed first, with
/// `model`; the stop and the events.
fn reviewed_and_guessed(
    bench: &Bench,
    input: &str,
    model: &dyn familiar::llm::Llm,
) -> (Stop, Vec<Event>) {
    let mut run = bench.run(input).with_reflection(1).with_goal_guess();
    let seams = Seams {
        llm: model,
        tools: &bench.tools,
        clock: &bench.clock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut events = Vec::new();
    let stop = block_on(drive(&mut run, &seams, &mut |e| events.push(e)));
    (stop, events)
}

#[test]
fn the_rules_model_reviews_and_guesses_goals_in_one_call_each_with_no_error() {
    use familiar::llm::rules::RulesModel;
    use familiar::run::event::Thought;
    use familiar::run::{Purpose, Verdict};
    let bench = bench();
    let rules = RulesModel::from_json(
        r#"{"fallback": "I can read the counter.", "rules": [
            {"keywords": ["counter"], "tool": "read", "answer": "It reads {counter}."},
            {"keywords": ["bump"], "tool": "bump", "arguments": {"by": 1},
             "answer": "Bumped to {counter}."},
            {"keywords": ["well"], "tool": "fail", "answer": "{water}"}]}"#,
    )
    .unwrap();
    let questions = [
        ("What does the counter say?", "It reads 0."),
        ("bump it", "Bumped to 1."),
        (
            "Is there water in the well?",
            "I tried fail, but it failed: `fail` failed: the well is dry",
        ),
        ("hello", "I can read the counter."),
        (
            "The counter and the well?",
            "It reads 1. I tried fail, but it failed: `fail` failed: the well is dry",
        ),
    ];
    for (question, expected) in questions {
        let (stop, events) = reviewed_and_guessed(&bench, question, &rules);
        assert_eq!(
            stop,
            Stop::Done(Outcome::Answered {
                text: expected.into()
            }),
            "{question}"
        );
        let errors: Vec<_> = events
            .iter()
            .filter(|e| matches!(e, Event::Thought(Thought::Error { .. })))
            .collect();
        assert!(errors.is_empty(), "{question}: {errors:?}");
        let side_calls: Vec<_> = events
            .iter()
            .filter_map(|e| match e {
                Event::StepStarted(p @ (Purpose::GuessGoal | Purpose::Reflect { .. })) => Some(*p),
                _ => None,
            })
            .collect();
        assert_eq!(
            side_calls,
            [Purpose::GuessGoal, Purpose::Reflect { round: 1 }],
            "{question}: one call each, no re-asks"
        );
        let goal = events.iter().find_map(|e| match e {
            Event::GoalGuessed { goal } => Some(goal.clone()),
            _ => None,
        });
        assert_eq!(
            goal,
            Some(format!("What the request asks: “{question}”")),
            "{question}"
        );
        let review = events.iter().find_map(|e| match e {
            Event::Reflection(review) => Some(review.clone()),
            _ => None,
        });
        let review = review.unwrap_or_else(|| panic!("{question}: no review"));
        assert_eq!(review.verdict, Verdict::Finished, "{question}");
        let failed = expected.contains("failed");
        assert_eq!(
            review.feedback.contains("Failed: fail."),
            failed,
            "{}",
            review.feedback
        );
    }
}

#[test]
fn the_offline_world_policy_answers_a_review_and_a_goal_guess_in_their_shape() {
    use familiar::base::json::parse;
    use familiar::llm::message::Message;
    use familiar::llm::{ChatRequest, ResponseFormat, ToolChoice};
    use familiar::run::{GoalGuess, Review};
    let asked = |format: ResponseFormat, messages: Vec<Message>| ChatRequest {
        messages: messages.into(),
        tool_choice: ToolChoice::None,
        response_format: Some(format),
        ..ChatRequest::default()
    };
    let guess = familiar::world::policy::respond(&asked(
        ResponseFormat::for_contract::<GoalGuess>(),
        vec![
            Message::user("Say hello to Mira"),
            Message::user("The goal?"),
        ],
    ));
    assert_eq!(
        parse::<GoalGuess>(&guess.text).unwrap().goal,
        "What the request asks: “Say hello to Mira”"
    );
    let review = familiar::world::policy::respond(&asked(
        ResponseFormat::for_contract::<Review>(),
        vec![
            Message::user("Say hello to Mira"),
            Message::assistant("Hello, Mira.", Vec::new()),
            Message::user("Review it."),
        ],
    ));
    assert_eq!(
        parse::<Review>(&review.text).unwrap().verdict,
        familiar::run::Verdict::Finished
    );
}
