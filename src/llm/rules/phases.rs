//! The run's optional phases answered by rules: a review of the drafted answer and a
//! guess of the goal, in the JSON their contracts ask for (`run::review`), from the
//! transcript alone. The rules model and the offline world policy both answer them
//! here, so turning a phase on never costs them re-asks and an error step.
//!
//! What a model with no understanding can say honestly is little, and the answers say
//! no more: the goal is the request's own words; the review checks which tool results
//! the draft rests on and which of them failed, and lets the draft stand (a rewrite by
//! the same rules would be the same answer).

use serde_json::Value;

use super::{text_response, tool_name_of_call};
use crate::llm::message::{Message, Role};
use crate::llm::{ChatRequest, ChatResponse};

/// The schema name of the review a reflection asks for (`run::Review`).
const REVIEW: &str = "Review";
/// The schema name of the goal a goal guess asks for (`run::GoalGuess`).
const GOAL_GUESS: &str = "GoalGuess";
/// The longest request quoted whole in a goal, in characters.
const GOAL_WORDS: usize = 200;

/// The answer to `request` when it asks for one of the run's optional phases; `None`
/// for any other request.
pub fn answer(request: &ChatRequest) -> Option<ChatResponse> {
    let messages = &request.messages[..];
    // The phase's own prompt is the last message; the turn is what comes before it.
    let turn = messages.get(..messages.len().checked_sub(1)?)?;
    let (reasoning, answer) = match request.response_format.as_ref()?.name.as_str() {
        REVIEW => (
            "Rules can check only which tool results the answer rests on.",
            review(turn),
        ),
        GOAL_GUESS => ("Taken from the request's own words.", goal(turn)),
        _ => return None,
    };
    Some(text_response(reasoning.to_owned(), answer))
}

/// `text` as a JSON string (written by hand around it: a `json!` value would compile a
/// writer of its own into the page).
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap_or_default()
}

/// `{"goal"}`: what the latest request asks, in its words.
fn goal(turn: &[Message]) -> String {
    let asked = turn
        .iter()
        .rev()
        .find(|m| m.role == Role::User)
        .map_or("", |m| m.content.trim());
    let mut words: String = asked.chars().take(GOAL_WORDS).collect();
    if words.len() < asked.len() {
        words.push('…');
    }
    let goal = format!("What the request asks: “{words}”");
    format!(r#"{{"goal":{}}}"#, quoted(&goal))
}

/// `{"verdict": "finished", "feedback"}`: the tools whose results the draft rests on,
/// and those that failed.
fn review(turn: &[Message]) -> String {
    let mut used = Vec::new();
    let mut failed = Vec::new();
    for result in since_request(turn).iter().filter(|m| m.role == Role::Tool) {
        let tool = result
            .tool_call_id
            .as_deref()
            .and_then(|id| tool_name_of_call(turn, id))
            .unwrap_or("a tool");
        let error =
            serde_json::from_str::<Value>(&result.content).is_ok_and(|v| v.get("error").is_some());
        if error {
            failed.push(tool);
        }
        used.push(tool);
    }
    let mut feedback = if used.is_empty() {
        "No tool was called: the answer is the rules' reply to the request's words.".to_owned()
    } else {
        format!("The answer rests on the results of {}.", used.join(", "))
    };
    if !failed.is_empty() {
        feedback.push_str(&format!(" Failed: {}.", failed.join(", ")));
    }
    format!(
        r#"{{"verdict":"finished","feedback":{}}}"#,
        quoted(&feedback)
    )
}

/// The messages from the latest request on: from the last user message that does not
/// follow a tool result (those are the loop's notes).
fn since_request(turn: &[Message]) -> &[Message] {
    let start = (0..turn.len())
        .rev()
        .find(|&i| {
            turn.get(i).is_some_and(|m| m.role == Role::User)
                && !turn
                    .get(i.wrapping_sub(1))
                    .is_some_and(|m| m.role == Role::Tool)
        })
        .unwrap_or(0);
    turn.get(start..).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::ResponseFormat;
    use crate::llm::message::ToolCall;
    use serde_json::json;

    fn asking(format: &str, messages: Vec<Message>) -> ChatRequest {
        ChatRequest {
            messages: messages.into(),
            response_format: Some(ResponseFormat {
                name: format.into(),
                schema: json!({}),
            }),
            ..ChatRequest::default()
        }
    }

    fn called(id: &str, name: &str) -> Message {
        let call = ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: "{}".into(),
        };
        Message::assistant("", vec![call])
    }

    fn answered(request: &ChatRequest) -> Value {
        serde_json::from_str(&answer(request).unwrap().text).unwrap()
    }

    #[test]
    fn the_goal_is_the_latest_request_in_its_own_words() {
        let request = asking(
            GOAL_GUESS,
            vec![
                Message::user("hello"),
                Message::assistant("Hi.", Vec::new()),
                Message::user(" What time is it?\n"),
                Message::user("Say the goal."),
            ],
        );
        assert_eq!(
            answered(&request),
            json!({"goal": "What the request asks: “What time is it?”"})
        );
        let long = asking(
            GOAL_GUESS,
            vec![Message::user("a".repeat(500)), Message::user("?")],
        );
        let goal = answered(&long)["goal"].as_str().unwrap().to_owned();
        assert!(goal.ends_with("a…”"), "{goal}");
        assert!(goal.chars().count() < GOAL_WORDS + 30, "{goal}");
    }

    #[test]
    fn the_review_names_the_results_of_this_request_and_those_that_failed() {
        let request = asking(
            REVIEW,
            vec![
                Message::user("time?"),
                called("call_1", "current_time"),
                Message::tool("call_1", r#"{"time":"09:05"}"#),
                Message::assistant("It is 09:05.", Vec::new()),
                Message::user("title and time?"),
                called("call_2", "page_title"),
                Message::tool("call_2", r#"{"error":"no document"}"#),
                Message::user("The action `page_title` failed: no document. Adjust your plan."),
                called("call_3", "current_time"),
                Message::tool("call_3", r#"{"time":"09:06"}"#),
                Message::assistant("It is 09:06; the title could not be read.", Vec::new()),
                Message::user("Review your last answer."),
            ],
        );
        assert_eq!(
            answered(&request),
            json!({
                "verdict": "finished",
                "feedback": "The answer rests on the results of page_title, current_time. \
                             Failed: page_title."
            })
        );
        let plain = asking(
            REVIEW,
            vec![
                Message::user("hello"),
                Message::assistant("Hi.", Vec::new()),
                Message::user("Review."),
            ],
        );
        assert_eq!(answered(&plain)["verdict"], "finished");
        assert!(
            answered(&plain)["feedback"]
                .as_str()
                .unwrap()
                .starts_with("No tool was called")
        );
    }

    #[test]
    fn other_requests_are_not_answered_here() {
        let mut request = asking("Complexity", vec![Message::user("hi"), Message::user("?")]);
        assert!(answer(&request).is_none());
        request.response_format = None;
        assert!(answer(&request).is_none());
        assert!(answer(&asking(REVIEW, Vec::new())).is_none());
    }
}
