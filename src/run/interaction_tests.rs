//! The record of a turn, built from its events: the timeline, stops, decisions,
//! budgets and reopening (`super`).

use super::*;
use crate::llm::message::Message;
use crate::run::conversation::MESSAGE_OVERHEAD;

fn call() -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: "current_time".into(),
        arguments: "{}".into(),
    }
}

fn events() -> Vec<Event> {
    vec![
        Event::StepStarted(Purpose::Reason { iteration: 1 }),
        Event::Delta(Delta::Reasoning {
            text: "needs the clock".into(),
        }),
        Event::Thought(Thought::Actions {
            text: String::new(),
            calls: vec![call()],
        }),
        Event::ToolStarted {
            call: call(),
            kind: Some(ToolKind::Data),
            agent: None,
        },
        Event::Thought(Thought::ToolReturn {
            call_id: "call_1".into(),
            tool: "current_time".into(),
            result: Ok(serde_json::json!({"time": "09:05"})),
            duration_ms: 2,
        }),
        Event::StepStarted(Purpose::Reason { iteration: 2 }),
        Event::Delta(Delta::Text {
            text: "It is ".into(),
        }),
        Event::Delta(Delta::Text {
            text: "09:05.".into(),
        }),
    ]
}

#[test]
fn events_build_the_timeline_reason_tool_answer() {
    let mut interaction = Interaction::new(1, "time?");
    for event in events() {
        interaction.apply(&event);
    }
    assert_eq!(interaction.status, Status::Planning);
    assert_eq!(interaction.draft, "It is 09:05.");
    interaction.apply(&Event::Done(Outcome::Answered {
        text: "It is 09:05.".into(),
    }));
    assert_eq!(interaction.status, Status::Completed);
    assert!(interaction.draft.is_empty());
    let [
        Step::Reason {
            reasoning, calls, ..
        },
        Step::ToolCall {
            result,
            duration_ms,
            ..
        },
        Step::Reason { .. },
        Step::Answer { text, .. },
    ] = &interaction.steps[..]
    else {
        panic!("unexpected steps: {:?}", interaction.steps);
    };
    assert_eq!(reasoning, "needs the clock");
    assert_eq!(calls, &["current_time"]);
    assert_eq!(result, &Some(Ok(serde_json::json!({"time": "09:05"}))));
    assert_eq!(duration_ms, &Some(2));
    assert_eq!(text, "It is 09:05.");
}

#[test]
fn a_stop_keeps_the_text_that_streamed_and_says_it_was_stopped() {
    let mut interaction = Interaction::new(1, "tell me a story");
    interaction.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 }));
    interaction.apply(&Event::Delta(Delta::Text {
        text: "Once upon a time".into(),
    }));
    interaction.apply(&Event::Done(Outcome::Aborted {
        reason: "stopped before it finished".into(),
    }));
    assert_eq!(interaction.status, Status::Aborted);
    assert!(interaction.draft.is_empty());
    assert!(matches!(
        interaction.steps.last(),
        Some(Step::Answer { text, outcome: Outcome::Aborted { reason } })
            if text == "Once upon a time" && reason == "stopped before it finished"
    ));
}

#[test]
fn a_budget_stop_is_told_by_its_outcome_not_by_its_words() {
    let words = "Stopped: this conversation's budget of 200 tokens is reached (240 tokens used). \
                 Nothing more was asked of the model.";
    let mut conversation = crate::run::conversation::Conversation::default();
    let held = conversation.begin("held by the budget");
    conversation.apply(
        held,
        &Event::Done(Outcome::BudgetReached {
            reason: words.into(),
        }),
    );
    // A person's stop whose words happen to read like a budget's.
    let stopped = conversation.begin("stopped by a person");
    conversation.apply(
        stopped,
        &Event::Done(Outcome::Aborted {
            reason: words.into(),
        }),
    );
    let [by_budget, by_person] = &conversation.interactions[..] else {
        panic!("two turns: {:?}", conversation.interactions);
    };
    assert!(by_budget.stopped_by_budget());
    assert!(!by_person.stopped_by_budget());
    assert_eq!(
        (by_budget.status, by_person.status),
        (Status::Aborted, Status::Aborted)
    );
    assert_eq!(
        conversation.history(),
        [
            Message::user("held by the budget"),
            Message::assistant(words, Vec::new())
        ],
        "the budget's turn stays in what the model reads next; the person's stop does not"
    );
}

#[test]
fn a_declined_call_is_a_decision_on_its_approval_step_not_a_failed_tool() {
    let mut interaction = Interaction::new(1, "forget the ale");
    let forget = ToolCall {
        id: "c1".into(),
        name: "forget".into(),
        arguments: "{}".into(),
    };
    interaction.apply(&Event::ApprovalNeeded {
        call: forget.clone(),
        description: None,
        agent: None,
    });
    interaction.apply(&Event::Decided {
        call_id: "c1".into(),
        decision: Decided::Denied {
            reason: "the user said no".into(),
        },
    });
    interaction.apply(&Event::Thought(Thought::ToolReturn {
        call_id: "c1".into(),
        tool: "forget".into(),
        result: Err("`forget` was not run: the person declined it".into()),
        duration_ms: 0,
    }));
    assert_eq!(
        interaction.steps,
        [Step::Approval {
            call: forget,
            description: None,
            decision: Some(Decided::Denied {
                reason: "the user said no".into()
            }),
            agent: None,
        }]
    );
}

#[test]
fn history_keeps_answered_exchanges_and_skips_failures() {
    let mut conversation = Conversation::default();
    let first = conversation.begin("hi");
    conversation.apply(
        first,
        &Event::Done(Outcome::Answered {
            text: "hello".into(),
        }),
    );
    let second = conversation.begin("time?");
    conversation.apply(second, &Event::Done(Outcome::Failed { error: "x".into() }));
    assert_eq!((first, second), (1, 2));
    assert_eq!(
        conversation.history(),
        vec![Message::user("hi"), Message::assistant("hello", Vec::new())]
    );
}

#[test]
fn a_conversation_round_trips_through_json() {
    let mut conversation = Conversation::default();
    let id = conversation.begin("time?");
    for event in events() {
        conversation.apply(id, &event);
    }
    let json = serde_json::to_string(&conversation).unwrap();
    assert_eq!(
        serde_json::from_str::<Conversation>(&json).unwrap(),
        conversation
    );
}

#[test]
fn the_context_keeps_pinned_facts_and_the_newest_turns_that_fit() {
    let mut conversation = Conversation {
        pinned: vec!["The player is called Ada.".into()],
        ..Conversation::default()
    };
    for n in 1..=5 {
        let id = conversation.begin(format!("question {n} {}", "x".repeat(40)));
        conversation.apply(
            id,
            &Event::Done(Outcome::Answered {
                text: format!("answer {n}"),
            }),
        );
    }
    let all = conversation.context(usize::MAX);
    assert_eq!(all.len(), 11);
    // An exchange costs (13 + 4) + (2 + 4) = 23 estimated tokens, the pinned
    // notes theirs: room for two exchanges and change.
    let pinned = estimate_tokens(&all[0].content) + MESSAGE_OVERHEAD;
    let budget = pinned + 2 * 23 + 10;
    let kept = conversation.context(budget);
    assert_eq!(kept[0].role, crate::llm::message::Role::User);
    assert!(kept[0].content.contains(r#"["The player is called Ada."]"#));
    let kept: Vec<&str> = kept[1..].iter().map(|m| m.content.as_str()).collect();
    assert_eq!(kept.len(), 4);
    assert!(kept[0].starts_with("question 4"));
    assert_eq!(kept[3], "answer 5");
    assert_eq!(
        conversation.context(5).len(),
        1,
        "pinned memory is never trimmed"
    );
}
