//! Assembles an OpenAI-compatible chat-completions SSE stream into deltas and a
//! [`ChatResponse`].
//!
//! Pure: bytes in, deltas to a sink, a typed result at the end. Handles `[DONE]`
//! (nothing after it counts), error objects on a 200 stream, tool-call argument
//! fragments keyed by index (names arriving late, parallel calls, empty chunks), usage
//! chunks, `reasoning_content` and inline `<think>` reasoning. A stream that ends
//! before a finish reason is an error, never a silently short answer.

use crate::base::json::Read;
use serde_json::Value;

use super::think::ThinkSplitter;
use crate::llm::message::ToolCall;
use crate::llm::openai::sse::{SseDecoder, SseEvent};
use crate::llm::{ChatResponse, Delta, DeltaSink, FinishReason, LlmError, Served, Usage};

#[derive(Debug, Read)]
struct Chunk {
    /// The provider's id for the response, repeated on each chunk.
    id: Option<String>,
    /// The model that answered, as the provider names it.
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<WireUsage>,
    error: Option<Value>,
}

#[derive(Debug, Read)]
struct Choice {
    #[serde(default)]
    delta: WireDelta,
    finish_reason: Option<String>,
}

#[derive(Debug, Default, Read)]
struct WireDelta {
    content: Option<String>,
    #[serde(alias = "reasoning")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireToolCall>,
}

#[derive(Debug, Read)]
struct WireToolCall {
    #[serde(default)]
    index: usize,
    id: Option<String>,
    #[serde(default)]
    function: WireFunction,
}

#[derive(Debug, Default, Read)]
struct WireFunction {
    name: Option<String>,
    arguments: Option<String>,
}

#[derive(Debug, Read)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u32,
    #[serde(default)]
    completion_tokens: u32,
}

#[derive(Debug, Default, Clone)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The most bytes one answer may take, streamed or whole: past them the answer is
/// refused, so a server cannot grow the page's memory without end (an endless line,
/// an endless tool argument).
pub const MAX_ANSWER_BYTES: usize = 8 << 20;

/// The state of one streamed response.
#[derive(Debug, Default)]
pub struct ChatStream {
    decoder: SseDecoder,
    received: usize,
    think: ThinkSplitter,
    text: String,
    reasoning: String,
    calls: Vec<PartialCall>,
    finish: Option<FinishReason>,
    usage: Option<Usage>,
    served: Served,
    done: bool,
    failed: Option<LlmError>,
}

/// The error of an answer past [`MAX_ANSWER_BYTES`].
pub fn too_large() -> LlmError {
    LlmError::Malformed(format!(
        "the answer passed {} MiB and was refused",
        MAX_ANSWER_BYTES >> 20
    ))
}

impl ChatStream {
    pub fn new() -> Self {
        Self::default()
    }

    /// True once any output (text, reasoning or a tool call) has been delivered:
    /// from then on a failed request must not be retried.
    pub fn has_output(&self) -> bool {
        !self.text.is_empty() || !self.reasoning.is_empty() || !self.calls.is_empty()
    }

    /// Feeds a network chunk; deltas go to `sink`. The first error sticks.
    pub fn feed(&mut self, bytes: &[u8], sink: &mut DeltaSink<'_>) -> Result<(), LlmError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        if self.done {
            return Ok(());
        }
        self.received = self.received.saturating_add(bytes.len());
        if self.received > MAX_ANSWER_BYTES {
            let error = too_large();
            self.failed = Some(error.clone());
            return Err(error);
        }
        for event in self.decoder.feed(bytes) {
            if let Err(error) = self.event(&event, sink) {
                self.failed = Some(error.clone());
                return Err(error);
            }
            if self.done {
                break;
            }
        }
        Ok(())
    }

    /// The end of the stream: the assembled response, or why there is none.
    pub fn finish(mut self, sink: &mut DeltaSink<'_>) -> Result<ChatResponse, LlmError> {
        if let Some(error) = self.failed.take() {
            return Err(error);
        }
        for delta in self.think.finish() {
            self.deliver(delta, sink);
        }
        let Some(finish) = self.finish else {
            let why = if self.decoder.has_partial_event() {
                "the stream was cut off in the middle of an event"
            } else {
                "the stream ended before the model said it had finished"
            };
            return Err(LlmError::Incomplete(why.into()));
        };
        let tool_calls = self
            .calls
            .into_iter()
            .enumerate()
            .map(|(index, call)| ToolCall {
                id: if call.id.is_empty() {
                    format!("call_{index}").into()
                } else {
                    call.id.into()
                },
                name: call.name.into(),
                arguments: call.arguments.into(),
            })
            .collect();
        Ok(ChatResponse {
            text: self.text,
            reasoning: self.reasoning,
            tool_calls,
            finish,
            usage: self.usage,
            served: self.served,
        })
    }

    fn event(&mut self, event: &SseEvent, sink: &mut DeltaSink<'_>) -> Result<(), LlmError> {
        let data = event.data.trim();
        if data == "[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk = crate::base::json::from_text(data)
            .map_err(|e| LlmError::Malformed(format!("a stream chunk is not valid JSON ({e})")))?;
        if let Some(error) = chunk.error {
            return Err(LlmError::Provider(error_message(&error)));
        }
        if event.name == "error" {
            return Err(LlmError::Provider(data.to_owned()));
        }
        // The first chunk that names them names them for the response (an empty
        // id, as some servers send on a usage chunk, names nothing).
        let named = |given: Option<String>| given.filter(|s| !s.trim().is_empty());
        if self.served.id.is_none() {
            self.served.id = named(chunk.id);
        }
        if self.served.model.is_none() {
            self.served.model = named(chunk.model);
        }
        if let Some(usage) = chunk.usage {
            self.usage = Some(Usage {
                prompt_tokens: usage.prompt_tokens,
                completion_tokens: usage.completion_tokens,
            });
        }
        for choice in chunk.choices {
            self.choice(choice, sink)?;
        }
        Ok(())
    }

    fn choice(&mut self, choice: Choice, sink: &mut DeltaSink<'_>) -> Result<(), LlmError> {
        if let Some(text) = choice.delta.reasoning_content.filter(|t| !t.is_empty()) {
            self.deliver(Delta::Reasoning { text }, sink);
        }
        if let Some(content) = choice.delta.content {
            for delta in self.think.push(&content) {
                self.deliver(delta, sink);
            }
        }
        for call in choice.delta.tool_calls {
            self.tool_fragment(call, sink)?;
        }
        if let Some(reason) = choice.finish_reason {
            self.finish = Some(finish_reason(&reason));
        }
        Ok(())
    }

    fn tool_fragment(
        &mut self,
        call: WireToolCall,
        sink: &mut DeltaSink<'_>,
    ) -> Result<(), LlmError> {
        // A real stream counts up from 0; an index far beyond what arrived is garbage.
        if call.index > self.calls.len() + 64 {
            return Err(LlmError::Malformed(format!(
                "a tool call fragment has an implausible index {}",
                call.index
            )));
        }
        if self.calls.len() <= call.index {
            self.calls.resize(call.index + 1, PartialCall::default());
        }
        let Some(partial) = self.calls.get_mut(call.index) else {
            return Ok(());
        };
        let id = call.id.filter(|id| !id.is_empty());
        let name = call.function.name.filter(|n| !n.is_empty());
        if let Some(id) = &id {
            partial.id.clone_from(id);
        }
        if let Some(name) = &name {
            // Some servers repeat the whole name in every fragment; others split it.
            if partial.name != *name {
                partial.name.push_str(name);
            }
        }
        let arguments = call.function.arguments.unwrap_or_default();
        partial.arguments.push_str(&arguments);
        if id.is_some() || name.is_some() || !arguments.is_empty() {
            sink(Delta::ToolCall {
                index: call.index,
                id,
                name,
                arguments,
            });
        }
        Ok(())
    }

    fn deliver(&mut self, delta: Delta, sink: &mut DeltaSink<'_>) {
        match &delta {
            Delta::Text { text } => self.text.push_str(text),
            Delta::Reasoning { text } => self.reasoning.push_str(text),
            Delta::ToolCall { .. } => {}
        }
        sink(delta);
    }
}

/// An OpenAI `finish_reason` as ours.
pub(crate) fn finish_reason(reason: &str) -> FinishReason {
    match reason {
        "tool_calls" | "function_call" => FinishReason::ToolCalls,
        "length" => FinishReason::Length,
        "content_filter" => FinishReason::ContentFilter,
        _ => FinishReason::Stop,
    }
}

/// The human part of an OpenAI-style error object (or whatever the server sent).
pub(crate) fn error_message(error: &Value) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str());
    match message {
        Some(message) => message.to_owned(),
        None => error.to_string(),
    }
}
