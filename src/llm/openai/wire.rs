//! The chat-completions request body, as OpenAI-compatible servers read it.

use serde_json::{Map, Value, json};

use super::proxy::ModelSettings;
use crate::llm::message::{Message, Role};
use crate::llm::{ChatRequest, ToolChoice};

/// The JSON body of a chat-completions request.
pub fn request_body(settings: &ModelSettings, request: &ChatRequest) -> Value {
    let mut messages = Vec::with_capacity(request.messages.len() + 1);
    // System messages that open the transcript (pinned facts) join the system prompt:
    // some servers' templates (llama-cpp-python's function calling) repeat every tool
    // schema in each system message.
    let leading = request
        .messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .count();
    let (opening, rest) = request.messages.split_at(leading);
    let system: Vec<&str> = std::iter::once(&*request.system)
        .chain(opening.iter().map(|m| m.content.as_str()))
        .filter(|s| !s.is_empty())
        .collect();
    if !system.is_empty() {
        messages.push(json!({"role": "system", "content": system.join("\n\n")}));
    }
    messages.extend(rest.iter().map(message));
    let mut body = Map::new();
    body.insert("model".into(), json!(settings.model));
    body.insert("messages".into(), Value::Array(messages));
    body.insert("stream".into(), json!(settings.stream));
    if settings.stream {
        body.insert("stream_options".into(), json!({"include_usage": true}));
    }
    if !request.tools.is_empty() {
        let tools: Vec<Value> = request
            .tools
            .iter()
            .map(|tool| {
                json!({"type": "function", "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                }})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
        let choice = match request.tool_choice {
            ToolChoice::Auto => "auto",
            ToolChoice::None => "none",
            ToolChoice::Required => "required",
        };
        body.insert("tool_choice".into(), json!(choice));
    }
    if let Some(format) = &request.response_format {
        body.insert(
            "response_format".into(),
            json!({"type": "json_schema", "json_schema": {"name": format.name, "schema": format.schema}}),
        );
    }
    if let Some(t) = request.temperature.or(settings.temperature) {
        body.insert("temperature".into(), json!(t));
    }
    // The lower of the request's cap (a run's reasoning call, its goal question) and
    // the model's own.
    let cap = match (request.max_tokens, settings.max_tokens) {
        (Some(asked), Some(own)) => Some(asked.min(own)),
        (asked, own) => asked.or(own),
    };
    if let Some(n) = cap {
        body.insert("max_tokens".into(), json!(n));
    }
    Value::Object(body)
}

fn message(message: &Message) -> Value {
    let role = match message.role {
        Role::System => "system",
        Role::User => "user",
        Role::Assistant => "assistant",
        Role::Tool => "tool",
    };
    let mut out = Map::new();
    out.insert("role".into(), json!(role));
    out.insert("content".into(), json!(message.content));
    if !message.tool_calls.is_empty() {
        let calls = message
            .tool_calls
            .iter()
            .map(|call| {
                json!({"id": call.id, "type": "function",
                       "function": {"name": call.name, "arguments": call.arguments}})
            })
            .collect();
        // Content stays a string (possibly empty) rather than null: OpenAI accepts
        // both, but llama-cpp-python and other servers reject a null content.
        out.insert("tool_calls".into(), calls);
    }
    if let Some(id) = &message.tool_call_id {
        out.insert("tool_call_id".into(), json!(id));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::ToolCall;
    use crate::llm::{ResponseFormat, ToolSpec};

    #[test]
    fn a_tool_round_trip_is_written_as_openai_expects() {
        let call = ToolCall {
            id: "call_1".into(),
            name: "current_time".into(),
            arguments: "{}".into(),
        };
        let request = ChatRequest {
            system: "be brief".into(),
            messages: vec![
                Message::user("time?"),
                Message::assistant("", vec![call]),
                Message::tool("call_1", r#"{"time":"09:05"}"#),
            ]
            .into(),
            tools: vec![ToolSpec {
                name: "current_time".into(),
                description: "now".into(),
                parameters: json!({"type": "object", "properties": {}}),
            }]
            .into(),
            temperature: Some(0.0),
            ..ChatRequest::default()
        };
        let body = request_body(&ModelSettings::new("http://x/v1", "m"), &request);
        assert_eq!(
            body,
            json!({
                "model": "m",
                "stream": true,
                "stream_options": {"include_usage": true},
                "messages": [
                    {"role": "system", "content": "be brief"},
                    {"role": "user", "content": "time?"},
                    {"role": "assistant", "content": "", "tool_calls": [
                        {"id": "call_1", "type": "function",
                         "function": {"name": "current_time", "arguments": "{}"}}]},
                    {"role": "tool", "content": "{\"time\":\"09:05\"}", "tool_call_id": "call_1"},
                ],
                "tools": [{"type": "function", "function": {
                    "name": "current_time", "description": "now",
                    "parameters": {"type": "object", "properties": {}}}}],
                "tool_choice": "auto",
                "temperature": 0.0,
            })
        );
    }

    #[test]
    fn pinned_facts_join_the_system_prompt_so_the_tools_are_listed_once() {
        let request = ChatRequest {
            system: "be brief".into(),
            messages: vec![
                Message::system("Pinned memory:\n- ale"),
                Message::user("hi"),
            ]
            .into(),
            ..ChatRequest::default()
        };
        let body = request_body(&ModelSettings::new("http://x/v1", "m"), &request);
        assert_eq!(
            body["messages"],
            json!([
                {"role": "system", "content": "be brief\n\nPinned memory:\n- ale"},
                {"role": "user", "content": "hi"},
            ])
        );
    }

    #[test]
    fn no_tools_means_no_tool_fields_and_a_schema_becomes_a_response_format() {
        let request = ChatRequest {
            messages: vec![Message::user("judge")].into(),
            response_format: Some(ResponseFormat {
                name: "Verdict".into(),
                schema: json!({"type": "object"}),
            }),
            ..ChatRequest::default()
        };
        let mut settings = ModelSettings::new("http://x/v1", "m");
        settings.max_tokens = Some(64);
        let body = request_body(&settings, &request);
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        assert_eq!(
            body["response_format"],
            json!({"type": "json_schema", "json_schema": {"name": "Verdict", "schema": {"type": "object"}}})
        );
        assert_eq!(body["max_tokens"], 64);
    }

    #[test]
    fn the_lower_of_the_requests_and_the_models_answer_cap_is_sent() {
        let mut settings = ModelSettings::new("http://x/v1", "m");
        let capped = |tokens: Option<u32>, settings: &ModelSettings| {
            let request = ChatRequest {
                max_tokens: tokens,
                ..ChatRequest::default()
            };
            request_body(settings, &request).get("max_tokens").cloned()
        };
        assert_eq!(capped(Some(2_000), &settings), Some(json!(2_000)));
        assert_eq!(capped(None, &settings), None);
        settings.max_tokens = Some(512);
        assert_eq!(capped(Some(2_000), &settings), Some(json!(512)));
        assert_eq!(capped(Some(100), &settings), Some(json!(100)));
        assert_eq!(capped(None, &settings), Some(json!(512)));
    }
}
