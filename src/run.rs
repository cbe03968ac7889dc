//! `AgentRun`: the agent loop as a sans-IO, serializable state machine.
//!
//! The run holds the transcript and its position in the observe → reason → act loop;
//! [`AgentRun::next_step`] says what to do next as plain data, and the caller feeds
//! results back. Doing the IO is the driver's job (`driver`). Being plain data, a run
//! can be saved after any step and resumed.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::{ChatRequest, ChatResponse, LlmError, ToolChoice, ToolSpec};
use crate::message::{Message, ToolCall};
use crate::tool::ToolError;

/// How many reason → act rounds a run may take before it must answer.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;

/// What the driver should do next.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// Reason: ask the model.
    CallModel(ChatRequest),
    /// Act: run these tool calls and report their results.
    CallTools(Vec<ToolCall>),
    Done(Outcome),
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered.
    Answered { text: String },
    /// The iteration cap was hit; `text` is the model's final, tools-off answer.
    CapReached { text: String },
    /// The run could not go on.
    Failed { error: String },
}

impl Outcome {
    /// What to show the user.
    pub fn text(&self) -> &str {
        match self {
            Self::Answered { text } | Self::CapReached { text } => text,
            Self::Failed { error } => error,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Phase {
    Reason,
    Act(Vec<ToolCall>),
    Done(Outcome),
}

/// One run of the agent loop, from a trigger to an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentRun {
    system: String,
    messages: Vec<Message>,
    tools: Vec<ToolSpec>,
    iterations: u32,
    max_iterations: u32,
    phase: Phase,
}

impl AgentRun {
    /// Starts a run on `input`, after the earlier `history` of the conversation.
    pub fn new(
        system: impl Into<String>,
        history: Vec<Message>,
        input: impl Into<String>,
        tools: Vec<ToolSpec>,
    ) -> Self {
        let mut messages = history;
        messages.push(Message::user(input));
        Self {
            system: system.into(),
            messages,
            tools,
            iterations: 0,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            phase: Phase::Reason,
        }
    }

    /// Caps the reason → act rounds; a cap of 0 answers at once without tools.
    pub fn with_max_iterations(mut self, max_iterations: u32) -> Self {
        self.max_iterations = max_iterations;
        self
    }

    /// Model calls answered so far.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    pub fn max_iterations(&self) -> u32 {
        self.max_iterations
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    pub fn next_step(&self) -> NextStep {
        match &self.phase {
            Phase::Reason => NextStep::CallModel(self.request()),
            Phase::Act(calls) => NextStep::CallTools(calls.clone()),
            Phase::Done(outcome) => NextStep::Done(outcome.clone()),
        }
    }

    /// At the cap, the model gets one last call with tools off.
    fn at_cap(&self) -> bool {
        self.iterations >= self.max_iterations
    }

    fn request(&self) -> ChatRequest {
        ChatRequest {
            system: self.system.clone(),
            messages: self.messages.clone(),
            tools: self.tools.clone(),
            tool_choice: if self.at_cap() {
                ToolChoice::None
            } else {
                ToolChoice::Auto
            },
            ..ChatRequest::default()
        }
    }

    /// Feeds back the model's response to the last [`NextStep::CallModel`].
    pub fn model_responded(&mut self, response: ChatResponse) {
        let was_final = self.at_cap();
        self.iterations += 1;
        let calls = if was_final {
            Vec::new()
        } else {
            response.tool_calls
        };
        self.messages
            .push(Message::assistant(response.text.clone(), calls.clone()));
        self.phase = if was_final {
            Phase::Done(Outcome::CapReached {
                text: response.text,
            })
        } else if calls.is_empty() {
            Phase::Done(Outcome::Answered {
                text: response.text,
            })
        } else {
            Phase::Act(calls)
        };
    }

    /// The model could not answer: the run fails with the error.
    pub fn model_failed(&mut self, error: &LlmError) {
        self.phase = Phase::Done(Outcome::Failed {
            error: error.to_string(),
        });
    }

    /// Feeds back one result per call of the last [`NextStep::CallTools`], keyed by
    /// call id. Errors go to the model as `{"error": …}` so it can try again.
    pub fn tools_returned(&mut self, results: Vec<(String, Result<Value, ToolError>)>) {
        for (call_id, result) in results {
            let content = match result {
                Ok(value) => value.to_string(),
                Err(error) => serde_json::json!({ "error": error.to_string() }).to_string(),
            };
            self.messages.push(Message::tool(call_id, content));
        }
        self.phase = Phase::Reason;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::FinishReason;

    fn run() -> AgentRun {
        AgentRun::new("be brief", Vec::new(), "time?", Vec::new())
    }

    fn reply(text: &str, calls: &[&str]) -> ChatResponse {
        ChatResponse {
            text: text.into(),
            reasoning: String::new(),
            tool_calls: calls
                .iter()
                .map(|id| ToolCall {
                    id: (*id).into(),
                    name: "t".into(),
                    arguments: "{}".into(),
                })
                .collect(),
            finish: FinishReason::Stop,
            usage: None,
        }
    }

    #[test]
    fn a_run_starts_by_asking_the_model_with_tools_on() {
        let NextStep::CallModel(request) = run().next_step() else {
            panic!("expected a model call");
        };
        assert_eq!(request.system, "be brief");
        assert_eq!(request.messages, vec![Message::user("time?")]);
        assert_eq!(request.tool_choice, ToolChoice::Auto);
    }

    #[test]
    fn tool_calls_are_run_and_their_results_go_back_to_the_model() {
        let mut run = run();
        run.model_responded(reply("", &["a", "b"]));
        let NextStep::CallTools(calls) = run.next_step() else {
            panic!("expected tool calls");
        };
        assert_eq!(calls.len(), 2);
        run.tools_returned(vec![
            ("a".into(), Ok(serde_json::json!({"x": 1}))),
            ("b".into(), Err(ToolError::Unknown("t".into()))),
        ]);
        let NextStep::CallModel(request) = run.next_step() else {
            panic!("expected a model call");
        };
        let tail: Vec<_> = request.messages.iter().rev().take(2).rev().collect();
        assert_eq!(tail[0].content, r#"{"x":1}"#);
        assert_eq!(tail[1].content, r#"{"error":"there is no tool named `t`"}"#);
    }

    #[test]
    fn a_text_reply_ends_the_run_with_the_answer() {
        let mut run = run();
        run.model_responded(reply("It is noon.", &[]));
        assert_eq!(
            run.next_step(),
            NextStep::Done(Outcome::Answered {
                text: "It is noon.".into()
            })
        );
    }

    #[test]
    fn at_the_cap_one_last_tools_off_call_gives_the_final_answer() {
        let mut run = run().with_max_iterations(1);
        run.model_responded(reply("", &["a"]));
        run.tools_returned(vec![("a".into(), Ok(Value::Null))]);
        let NextStep::CallModel(request) = run.next_step() else {
            panic!("expected the final model call");
        };
        assert_eq!(request.tool_choice, ToolChoice::None);
        // A model that calls tools anyway is not obeyed.
        run.model_responded(reply("Out of steps.", &["b"]));
        assert_eq!(
            run.next_step(),
            NextStep::Done(Outcome::CapReached {
                text: "Out of steps.".into()
            })
        );
    }

    #[test]
    fn a_model_failure_ends_the_run_with_the_error() {
        let mut run = run();
        run.model_failed(&LlmError::Unreachable("offline".into()));
        assert_eq!(
            run.next_step(),
            NextStep::Done(Outcome::Failed {
                error: "the model could not be reached: offline".into()
            })
        );
    }

    #[test]
    fn a_run_saved_mid_way_resumes_where_it_stopped() {
        let mut run = run();
        run.model_responded(reply("", &["a"]));
        let saved = serde_json::to_string(&run).unwrap();
        let resumed: AgentRun = serde_json::from_str(&saved).unwrap();
        assert_eq!(resumed, run);
        assert!(matches!(resumed.next_step(), NextStep::CallTools(_)));
    }
}
