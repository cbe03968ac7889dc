//! `wire`: the request and the answer as they cross between the page and the worker:
//! the fields of Familiar's `ChatRequest` a local model reads, the `Delta` and
//! `ChatResponse` it answers with, and why a request could not be answered.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llama::ModelError;

/// One message of the transcript, as Familiar sends it.
#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    pub role: String,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub tool_calls: Vec<ToolCall>,
}

/// A tool call, in a transcript or in the answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    pub arguments: String,
}

/// A tool the model may call.
#[derive(Debug, Clone, Deserialize)]
pub struct Tool {
    pub name: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub parameters: Value,
}

/// A required shape for the answer.
#[derive(Debug, Clone, Deserialize)]
pub struct ResponseFormat {
    pub schema: Value,
}

/// Familiar's `ChatRequest`, the fields a local model reads.
#[derive(Debug, Clone, Deserialize)]
pub struct Request {
    #[serde(default)]
    pub system: String,
    #[serde(default)]
    pub messages: Vec<Message>,
    #[serde(default)]
    pub tools: Vec<Tool>,
    /// `auto`, `none` or `required`.
    #[serde(default)]
    pub tool_choice: Option<String>,
    #[serde(default)]
    pub response_format: Option<ResponseFormat>,
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
}

impl Request {
    /// The tools this request lets the model call.
    pub(super) fn offered(&self) -> &[Tool] {
        match self.tool_choice.as_deref() {
            Some("none") => &[],
            _ => &self.tools,
        }
    }

    pub(super) fn requires_tool(&self) -> bool {
        self.tool_choice.as_deref() == Some("required")
    }
}

/// What the page hears: a delta of the answer, or the end.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// Familiar's `Delta::Text`.
    Text { text: String },
    /// Familiar's `Delta::ToolCall`, whole.
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
    /// Familiar's `ChatResponse`.
    Done {
        text: String,
        reasoning: String,
        tool_calls: Vec<ToolCall>,
        finish: &'static str,
        usage: Usage,
    },
}

/// Token counts of one answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

/// Why a request could not be answered, in words for the person.
#[derive(Debug, Clone, PartialEq)]
pub enum GenerateError {
    /// The request's JSON is not a chat request.
    Request(String),
    /// The prompt does not fit the window; worded as servers word it, so the client
    /// learns the window and trims the conversation.
    TooLong {
        prompt: usize,
        window: usize,
    },
    /// The tools' schemas or the response format could not be compiled.
    Schema(String),
    Model(String),
}

impl std::fmt::Display for GenerateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Request(e) => write!(f, "the request could not be read: {e}"),
            Self::TooLong { prompt, window } => write!(
                f,
                "the prompt is too long: {prompt} tokens in a context window of {window}"
            ),
            Self::Schema(e) => write!(f, "a tool's schema could not be used: {e}"),
            Self::Model(e) => write!(f, "the local model failed: {e}"),
        }
    }
}

impl From<ModelError> for GenerateError {
    fn from(error: ModelError) -> Self {
        Self::Model(error.to_string())
    }
}
