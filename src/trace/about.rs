//! What a [`super::Tracer`] is told about the run it traces: who runs ([`Agent`]), what
//! may leave besides names, ids and times ([`Capture`]), the span its runs hang under
//! ([`Parent`]), and a model call's usage as its provider counted it ([`ModelUsage`]).

use crate::base::json::Read;
use serde::Serialize;

/// The longest captured text (a prompt, arguments, a result), in characters.
pub const MAX_CAPTURED_CHARS: usize = 8192;

/// Who runs, as the spans name it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Agent {
    /// `gen_ai.agent.name`, and the `invoke_agent` span's name.
    #[serde(default)]
    pub name: String,
    /// `gen_ai.agent.id`, when the host gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `gen_ai.provider.name`: `openai` for the proxy, `familiar.rules`, …
    #[serde(default)]
    pub provider: String,
    /// `gen_ai.request.model`, and the `chat` spans' name.
    #[serde(default)]
    pub model: String,
    /// `gen_ai.conversation.id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
}

/// What leaves besides names, ids and times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Capture {
    /// Prompts, answers, tool arguments and results (the conventions' opt-in content
    /// attributes). Off unless the host or the person asks.
    #[serde(default)]
    pub content: bool,
    /// Values that never leave, asked for or not: replaced by [`super::MASKED`] in everything
    /// exported. Not saved with the tracer: given again after a reload
    /// (`createAgent({telemetry: {secrets}})`; the demo has no field for it).
    #[serde(skip)]
    pub secrets: Vec<String>,
}

/// The span a run's spans hang under when it is part of a larger one (a sub-agent, a
/// supervisor stage, a resident's trigger): its trace goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Parent {
    pub trace_id: String,
    pub span_id: String,
}

/// A model call's usage as its provider counted it, for [`Tracer::model_usage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub response_id: Option<String>,
    pub response_model: Option<String>,
    pub finish_reasons: Vec<String>,
}
