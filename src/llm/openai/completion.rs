//! A whole (non-streamed) chat completion: what a server sends when asked not to
//! stream, or when it ignores `stream: true`.

use crate::base::json::Read;

use super::stream::{error_message, finish_reason};
use super::think::ThinkSplitter;
use crate::llm::message::ToolCall;
use crate::llm::{ChatResponse, Delta, FinishReason, LlmError, Served, Usage};

#[derive(Read)]
struct Completion {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    choices: Vec<Choice>,
    usage: Option<Usage>,
    error: Option<serde_json::Value>,
}

#[derive(Read)]
struct Choice {
    message: WireMessage,
    finish_reason: Option<String>,
}

#[derive(Read)]
struct WireMessage {
    content: Option<String>,
    #[serde(alias = "reasoning")]
    reasoning_content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<WireCall>,
}

#[derive(Read)]
struct WireCall {
    id: Option<String>,
    function: WireFunction,
}

#[derive(Read)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

/// Reads a `chat.completion` body into a response.
pub fn parse_completion(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let not_completion = |e: &dyn std::fmt::Display| {
        LlmError::Malformed(format!("the response is not a chat completion ({e})"))
    };
    let body = std::str::from_utf8(body).map_err(|e| not_completion(&e))?;
    let completion: Completion =
        crate::base::json::from_text(body).map_err(|e| not_completion(&e))?;
    if let Some(error) = completion.error {
        return Err(LlmError::Provider(error_message(&error)));
    }
    let choice = completion
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::Malformed("the response has no choices".into()))?;
    let mut splitter = ThinkSplitter::default();
    let mut deltas = splitter.push(&choice.message.content.unwrap_or_default());
    deltas.extend(splitter.finish());
    let mut reasoning = choice.message.reasoning_content.unwrap_or_default();
    let mut text = String::new();
    for delta in deltas {
        match delta {
            Delta::Text { text: t } => text.push_str(&t),
            Delta::Reasoning { text: t } => reasoning.push_str(&t),
            Delta::ToolCall { .. } => {}
        }
    }
    let tool_calls = choice
        .message
        .tool_calls
        .into_iter()
        .enumerate()
        .map(|(index, call)| ToolCall {
            id: call.id.unwrap_or_else(|| format!("call_{index}")).into(),
            name: call.function.name.into(),
            arguments: call.function.arguments.into(),
        })
        .collect::<Vec<_>>();
    let finish = match choice.finish_reason.as_deref() {
        Some(reason) => finish_reason(reason),
        None if tool_calls.is_empty() => FinishReason::Stop,
        None => FinishReason::ToolCalls,
    };
    Ok(ChatResponse {
        text,
        reasoning,
        tool_calls,
        finish,
        usage: completion.usage,
        served: Served {
            id: completion.id.filter(|s| !s.trim().is_empty()),
            model: completion.model.filter(|s| !s.trim().is_empty()),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_whole_completion_with_tool_calls_and_inline_reasoning_is_read() {
        let body = br#"{"id":"chatcmpl-1","object":"chat.completion","model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,
            "message":{"role":"assistant","content":"<think>need weather</think>Checking.",
            "tool_calls":[{"id":"call_9","type":"function",
            "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},
            "finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}"#;
        let response = parse_completion(body).unwrap();
        assert_eq!(response.text, "Checking.");
        assert_eq!(response.reasoning, "need weather");
        assert_eq!(response.tool_calls[0].name, "get_weather");
        assert_eq!(response.finish, FinishReason::ToolCalls);
        assert_eq!(response.usage.map(|u| u.completion_tokens), Some(4));
        assert_eq!(
            response.served,
            Served {
                id: Some("chatcmpl-1".into()),
                model: Some("gpt-4o-mini-2024-07-18".into())
            },
            "who answered, as the provider said"
        );
    }

    #[test]
    fn errors_and_empty_bodies_are_typed() {
        assert_eq!(
            parse_completion(br#"{"error":{"message":"bad model"}}"#),
            Err(LlmError::Provider("bad model".into()))
        );
        assert!(matches!(
            parse_completion(br#"{"choices":[]}"#),
            Err(LlmError::Malformed(_))
        ));
        assert!(matches!(
            parse_completion(b"<html>"),
            Err(LlmError::Malformed(_))
        ));
    }
}
