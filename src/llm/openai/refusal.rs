//! A refused request in plain words: the error bodies of the providers people reach
//! directly or through a proxy, each read to its message, and a refusal of the
//! request's tools told apart from every other error (the model cannot call tools;
//! no retry or other address helps).
//!
//! The shapes read: OpenAI's (and Groq's, OpenRouter's, LiteLLM's, llama.cpp's)
//! `{error: {message, type, code}}`; Anthropic's `{type: "error", error: {type,
//! message}}`; Gemini's `{error: {code, message, status}}`, also as a one-element
//! array; Ollama's `{error: "…"}`; and a body that is not JSON, kept as its first
//! 300 characters.

use serde_json::Value;

use super::stream::error_message;
use crate::llm::LlmError;

/// The error a refused request (`status`, its body `text`) is.
pub(crate) fn read_refusal(status: u16, text: &str) -> LlmError {
    let json = serde_json::from_str::<Value>(text).ok();
    // Gemini answers some errors as a one-element array.
    let json = match json {
        Some(Value::Array(mut items)) if !items.is_empty() => Some(items.swap_remove(0)),
        other => other,
    };
    let message = match &json {
        Some(json) => with_code(json.get("error").unwrap_or(json)),
        None => text.trim().chars().take(300).collect(),
    };
    if refuses_tools(status, &message) {
        return LlmError::NoTools(message);
    }
    LlmError::Status { status, message }
}

/// Whether a refusal says the model (or every route to it) takes no tools: Ollama's
/// "does not support tools", OpenRouter's "No endpoints found that support tool use",
/// Groq's and vLLM's "tool calling is not supported", llama.cpp's "tools param requires
/// --jinja flag".
fn refuses_tools(status: u16, message: &str) -> bool {
    let words = message.to_ascii_lowercase();
    let about_tools = ["tool", "function call", "function_call"]
        .iter()
        .any(|w| words.contains(w));
    let refused = [
        "not support",
        "unsupported",
        "no endpoints found that support",
        "requires --jinja",
    ]
    .iter()
    .any(|w| words.contains(w));
    status >= 400 && about_tools && refused
}

/// An error object's message, with its `code`, `type` or `status` when that says what
/// the message does not: the request was too long (`context_length_exceeded`, which
/// the window reads), or the account has no quota (`insufficient_quota`,
/// `RESOURCE_EXHAUSTED`).
fn with_code(error: &Value) -> String {
    let message = error_message(error);
    let said = ["context", "quota", "exhausted", "billing"];
    let code = ["code", "type", "status"]
        .iter()
        .filter_map(|key| error.get(key).and_then(Value::as_str))
        .find(|code| {
            let lower = code.to_ascii_lowercase();
            said.iter().any(|w| lower.contains(w)) && !message.contains(code)
        });
    match code {
        Some(code) => format!("{message} [{code}]"),
        None => message,
    }
}

/// Whether a 429's message says the account is out of quota or credit (waiting does
/// not help), rather than asking for a slower pace.
pub(crate) fn out_of_quota(message: &str) -> bool {
    let words = message.to_ascii_lowercase();
    ["quota", "exhausted", "billing", "credit", "insufficient"]
        .iter()
        .any(|w| words.contains(w))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn said(status: u16, body: &str) -> String {
        read_refusal(status, body).to_string()
    }

    #[test]
    fn each_providers_error_shape_is_read_to_its_message() {
        let openai = r#"{"error":{"message":"Incorrect API key provided: sk-ab***cd.","type":"invalid_request_error","code":"invalid_api_key"}}"#;
        assert_eq!(
            read_refusal(401, openai),
            LlmError::Status {
                status: 401,
                message: "Incorrect API key provided: sk-ab***cd.".into()
            }
        );
        let anthropic = r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#;
        assert!(said(401, anthropic).ends_with("(HTTP 401): invalid x-api-key"));
        let gemini = r#"[{"error":{"code":400,"message":"API key not valid. Please pass a valid API key.","status":"INVALID_ARGUMENT"}}]"#;
        assert!(
            said(400, gemini)
                .ends_with("(HTTP 400): API key not valid. Please pass a valid API key.")
        );
        let gemini_object = r#"{"error":{"code":429,"message":"You exceeded your current quota.","status":"RESOURCE_EXHAUSTED"}}"#;
        assert!(
            said(429, gemini_object)
                .ends_with("(HTTP 429): You exceeded your current quota. [RESOURCE_EXHAUSTED]"),
            "{}",
            said(429, gemini_object)
        );
        let ollama = r#"{"error":"model \"llama9\" not found, try pulling it first"}"#;
        assert!(
            said(404, ollama)
                .ends_with(r#"(HTTP 404): model "llama9" not found, try pulling it first"#)
        );
        let html = "<html><body>502 Bad Gateway</body></html>";
        assert!(said(502, html).ends_with(html));
    }

    #[test]
    fn statuses_say_what_to_check() {
        let key = said(401, r#"{"error":{"message":"bad key"}}"#);
        assert!(
            key.contains("refused access") && key.contains("key"),
            "{key}"
        );
        let quota = said(
            429,
            r#"{"error":{"message":"You exceeded your current quota","type":"insufficient_quota"}}"#,
        );
        assert!(quota.contains("no quota or credit left"), "{quota}");
        let rate = said(
            429,
            r#"{"error":{"message":"Rate limit reached for requests"}}"#,
        );
        assert!(rate.contains("wait a moment"), "{rate}");
        let missing = said(
            404,
            r#"{"error":{"message":"The model `gpt-9` does not exist"}}"#,
        );
        assert!(
            missing.contains("check the address and the model name"),
            "{missing}"
        );
    }

    #[test]
    fn a_refusal_of_the_tools_is_told_apart_from_other_errors() {
        for (status, body) in [
            (
                400,
                r#"{"error":{"message":"registry.ollama.ai/library/gemma:2b does not support tools","type":"api_error"}}"#,
            ),
            (400, r#"{"error":"gemma:2b does not support tools"}"#),
            (
                404,
                r#"{"error":{"message":"No endpoints found that support tool use. To learn more about provider routing, visit: https://openrouter.ai/docs/provider-routing","code":404}}"#,
            ),
            (
                400,
                r#"{"error":{"message":"`tool calling` is not supported with this model","type":"invalid_request_error"}}"#,
            ),
            (
                500,
                r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#,
            ),
        ] {
            let error = read_refusal(status, body);
            assert_eq!(error.kind(), "no_tools", "{body}");
            assert!(
                error.to_string().starts_with("the model cannot call tools"),
                "{error}"
            );
        }
        // Errors that name tools but are about something else stay what they are.
        for body in [
            r#"{"error":{"message":"Invalid 'tools[0].function.name': string too long"}}"#,
            r#"{"error":{"message":"Incorrect API key provided"}}"#,
        ] {
            assert_eq!(read_refusal(400, body).kind(), "status", "{body}");
        }
        let outage = r#"{"error":{"message":"tool calling is not available right now"}}"#;
        assert_eq!(read_refusal(503, outage).kind(), "status");
    }
}
