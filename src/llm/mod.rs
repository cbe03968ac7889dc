//! The `Llm` seam: one chat request in, a stream of deltas out, then the full response.
//!
//! Every model — the OpenAI-compatible client, the rules model, the scripted test
//! model — implements [`Llm`], so nothing above this seam can tell them apart. Wire
//! formats and transport belong to the implementations.

#[cfg(feature = "builtin")]
pub mod builtin;
pub mod contract;
pub mod local;
pub mod message;
pub mod openai;
pub mod rules;
pub mod scripted;
pub mod usage;
pub mod weights;
pub mod window;

use crate::base::json::Read;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};

use crate::llm::message::{Message, ToolCall};

/// A tool as the model sees it: name, purpose and a JSON Schema for its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: serde_json::Value,
}

/// Whether the model may, must or must not call tools.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoice {
    #[default]
    Auto,
    /// Tools off: the model must answer in text.
    None,
    Required,
}

/// Everything a model needs for one turn. The transcript and the tools are shared,
/// not copied: a run asks its model many times over the same growing transcript.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct ChatRequest {
    pub system: Rc<str>,
    pub messages: Rc<Vec<Message>>,
    pub tools: Rc<[ToolSpec]>,
    pub tool_choice: ToolChoice,
    /// Asks for output in this shape (OpenAI `response_format`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_format: Option<ResponseFormat>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u32>,
}

impl ChatRequest {
    /// The tools the model may call in this request: none when tools are off.
    pub fn offered_tools(&self) -> &[ToolSpec] {
        match self.tool_choice {
            ToolChoice::None => &[],
            ToolChoice::Auto | ToolChoice::Required => &self.tools,
        }
    }
}

/// A required shape for the model's text: a named JSON Schema.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ResponseFormat {
    pub name: String,
    pub schema: serde_json::Value,
}

impl ResponseFormat {
    /// The JSON Schema of a typed contract.
    pub fn for_contract<T: crate::base::json::Contract>() -> Self {
        let name: String = T::schema_name()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
            .collect();
        Self {
            name,
            schema: T::schema(),
        }
    }
}

/// A piece of a response, delivered as it is generated.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    /// Answer text.
    Text { text: String },
    /// The model's visible reasoning, kept apart from the answer.
    Reasoning { text: String },
    /// A fragment of the tool call at `index`; name and id arrive with the first one.
    ToolCall {
        index: usize,
        id: Option<String>,
        name: Option<String>,
        arguments: String,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FinishReason {
    Stop,
    ToolCalls,
    Length,
    ContentFilter,
}

/// Token counts, when the model reports them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Read)]
pub struct Usage {
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

/// Who answered a model call, as its provider says: the provider's id for the
/// response and the model that served it (which may name a version or a route the
/// request did not). OpenTelemetry's `gen_ai.response.id` and `gen_ai.response.model`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Read)]
pub struct Served {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The whole of one model turn, assembled from its deltas.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ChatResponse {
    pub text: String,
    pub reasoning: String,
    pub tool_calls: Vec<ToolCall>,
    pub finish: FinishReason,
    pub usage: Option<Usage>,
    /// Who answered, when the provider said (a model in the page says nothing).
    #[serde(default)]
    pub served: Served,
}

impl ChatResponse {
    /// A whole answer of `text` and `tool_calls`, no reasoning, no usage reported: it
    /// finished with its calls when it made any, else it stopped.
    pub fn from_calls(text: String, tool_calls: Vec<ToolCall>) -> Self {
        let finish = if tool_calls.is_empty() {
            FinishReason::Stop
        } else {
            FinishReason::ToolCalls
        };
        Self {
            text,
            reasoning: String::new(),
            tool_calls,
            finish,
            usage: None,
            served: Served::default(),
        }
    }
}

/// What can go wrong talking to a model, in words a user can act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    #[error("the model could not be reached: {0}")]
    Unreachable(String),
    #[error("the model did not answer within {after_ms} ms")]
    Timeout { after_ms: u64 },
    #[error("{}", status_words(*status, message))]
    Status { status: u16, message: String },
    #[error("the model answered with an error: {0}")]
    Provider(String),
    #[error("the model's answer could not be read: {0}")]
    Malformed(String),
    #[error("the model's answer was cut short: {0}")]
    Incomplete(String),
    #[error("the model call was aborted")]
    Aborted,
    /// The model, or every route the server has to it, takes no tools: no retry or
    /// wait helps, another model does.
    #[error(
        "the model cannot call tools, which this assistant needs to act ({0}): choose a model \
         that can call tools, or a server that serves this one with them"
    )]
    NoTools(String),
}

impl LlmError {
    /// A stable, machine-readable name for the kind of error.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Unreachable(_) => "unreachable",
            Self::Timeout { .. } => "timeout",
            Self::Status { .. } => "status",
            Self::Provider(_) => "provider",
            Self::Malformed(_) => "malformed",
            Self::Incomplete(_) => "incomplete",
            Self::Aborted => "aborted",
            Self::NoTools(_) => "no_tools",
        }
    }
}

/// What an account with no quota or credit left is told (a 402, or a 429 that says so).
const NOTHING_LEFT: &str = "the account behind the key has no quota or credit left (add some at \
                            the provider, or use another key)";

/// An HTTP error status, said with what to do about it.
fn status_words(status: u16, message: &str) -> String {
    let what = match status {
        400 | 422 => "the model's server rejected the request",
        401 => "the model's server refused access: check the key or token in the settings",
        402 => NOTHING_LEFT,
        403 => {
            "the model's server refused access: the key or token may not open this model, \
             or the server refuses this origin"
        }
        404 => {
            "the model's server has no such endpoint or model (check the address and the model \
             name)"
        }
        408 => "the model's server timed out",
        429 if openai::out_of_quota(message) => NOTHING_LEFT,
        429 => "the model's server is rate-limiting requests (wait a moment and retry)",
        500..=599 => "the model's server or its provider failed",
        _ => "the model's server answered with an unexpected status",
    };
    if message.is_empty() {
        format!("{what} (HTTP {status})")
    } else {
        format!("{what} (HTTP {status}): {message}")
    }
}

/// Receives deltas while a response streams.
pub type DeltaSink<'a> = dyn FnMut(Delta) + 'a;

/// A chat model.
pub trait Llm {
    /// Runs one turn: streams deltas to `sink`, then returns the full response.
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>>;

    /// The room this model gives a request, as far as it knows now (configured, told
    /// by its server, learned from a refusal); `None` for a model with no window to
    /// fit (the rules model, scripts).
    fn context_window(&self) -> LocalBoxFuture<'_, Option<window::ContextWindow>> {
        Box::pin(async { None })
    }

    /// The model's name as its price is looked up (`usage::Prices`): the proxy's
    /// model, or `rules`, `local`, `builtin` for those that run in the page.
    fn model(&self) -> Option<&str> {
        None
    }
}

/// Emits a finished response as the deltas a streaming client would have produced:
/// reasoning, the text word by word, then each tool call whole. For models that
/// compute their answer at once (rules, scripts) but must stream like the real thing.
pub fn replay_as_deltas(response: &ChatResponse, sink: &mut DeltaSink<'_>) {
    if !response.reasoning.is_empty() {
        sink(Delta::Reasoning {
            text: response.reasoning.clone(),
        });
    }
    for piece in response.text.split_inclusive(' ') {
        sink(Delta::Text {
            text: piece.to_owned(),
        });
    }
    for (index, call) in response.tool_calls.iter().enumerate() {
        sink(Delta::ToolCall {
            index,
            id: Some(call.id.to_string()),
            name: Some(call.name.to_string()),
            arguments: call.arguments.to_string(),
        });
    }
}
