//! A refused request in plain words: the error bodies of the providers people reach
//! directly or through a proxy, each read to its message, and a refusal of the
//! request's tools told apart from every other error (the model cannot call tools;
//! no retry or other address helps). A rate limit is told apart from an account
//! with nothing left to spend, and the wait a body asks for (Gemini's `RetryInfo`)
//! is read for the retry.
//!
//! The shapes read: OpenAI's (and Groq's, OpenRouter's, LiteLLM's, llama.cpp's)
//! `{error: {message, type, code}}`; Anthropic's `{type: "error", error: {type,
//! message}}`; Gemini's `{error: {code, message, status, details}}`, also as a
//! one-element array; Ollama's `{error: "…"}`; and a body that is not JSON, kept as
//! its first 300 characters.

use serde_json::Value;

use super::stream::error_message;
use crate::llm::LlmError;

/// The error a refused request (`status`, its body `text`) is.
pub(crate) fn read_refusal(status: u16, text: &str) -> LlmError {
    let json = body_json(text);
    let message = match &json {
        Some(json) => with_code(json.get("error").unwrap_or(json)),
        None => text.trim().chars().take(300).collect(),
    };
    if refuses_tools(status, &message) {
        return LlmError::NoTools(message);
    }
    LlmError::Status { status, message }
}

/// The body as JSON, a one-element array (as Gemini answers some errors) unwrapped.
fn body_json(text: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(text).ok()? {
        Value::Array(mut items) if !items.is_empty() => Some(items.swap_remove(0)),
        json => Some(json),
    }
}

/// Whether a refusal says the model (or every route to it) takes no tools: Ollama's
/// "does not support tools", OpenRouter's "No endpoints found that support tool use",
/// Groq's and vLLM's "tool calling is not supported", llama.cpp's "tools param requires
/// --jinja flag". Not a refusal of something sent beside the tools (`tool_choice`,
/// which the engine sets to `required`; `parallel_tool_calls`; a JSON
/// `response_format`): the model may call tools without it.
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
    let beside_tools = [
        "tool_choice",
        "tool choice",
        "parallel_tool_calls",
        "response_format",
        "json",
    ]
    .iter()
    .any(|w| words.contains(w));
    status >= 400 && about_tools && refused && !beside_tools
}

/// An error object's message, with its `code`, `type` or `status` when that says what
/// the message does not: the request was too long (`context_length_exceeded`, which
/// the window reads), the account has nothing left (`insufficient_quota`,
/// `billing_not_active`), or a quota is spent for now (Gemini's `RESOURCE_EXHAUSTED`).
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

/// Whether a 429's message (with its code, see `with_code`) says the account has no
/// quota or credit left, so waiting does not help: OpenAI's `insufficient_quota` and
/// `billing_not_active`, OpenRouter's "Insufficient credits", a "credit balance" too
/// low. Not "quota", "exhausted" or "billing" alone: Gemini says "You exceeded your
/// current quota, please check your plan and billing details" (`RESOURCE_EXHAUSTED`)
/// for an ordinary per-minute limit, and OpenAI's rate limits point at billing.
pub(crate) fn out_of_quota(message: &str) -> bool {
    let words = message.to_ascii_lowercase();
    [
        "insufficient_quota",
        "insufficient quota",
        "insufficient credit",
        "insufficient balance",
        "insufficient fund",
        "credit balance",
        "billing_not_active",
        "billing_hard_limit",
    ]
    .iter()
    .any(|w| words.contains(w))
}

/// The wait a refusal's body asks for, in milliseconds: Gemini's
/// `details[{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "30s"}]`
/// (a protobuf duration: seconds, maybe fractional, then `s`).
pub(crate) fn body_wait_ms(text: &str) -> Option<u64> {
    let json = body_json(text)?;
    let details = json.get("error")?.get("details")?.as_array()?;
    let delay = details
        .iter()
        .filter(|detail| {
            detail
                .get("@type")
                .and_then(Value::as_str)
                .is_some_and(|kind| kind.ends_with("google.rpc.RetryInfo"))
        })
        .find_map(|detail| detail.get("retryDelay").and_then(Value::as_str))?;
    let seconds: f64 = delay.trim().strip_suffix('s')?.parse().ok()?;
    (seconds.is_finite() && seconds >= 0.0).then_some((seconds * 1000.0) as u64)
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
        let credits = said(
            402,
            r#"{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/credits","code":402}}"#,
        );
        assert!(credits.contains("no quota or credit left"), "{credits}");
        let missing = said(
            404,
            r#"{"error":{"message":"The model `gpt-9` does not exist"}}"#,
        );
        assert!(
            missing.contains("check the address and the model name"),
            "{missing}"
        );
    }

    /// Gemini's answer to an ordinary per-minute limit, and the wait it asks for.
    const GEMINI_RATE_LIMIT: &str = r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[{"quotaMetric":"generativelanguage.googleapis.com/generate_content_free_tier_requests","quotaId":"GenerateRequestsPerMinutePerProjectPerModel-FreeTier"}]},{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"30s"}]}}"#;

    #[test]
    fn a_rate_limit_is_told_from_an_account_with_nothing_left() {
        let gemini = said(429, GEMINI_RATE_LIMIT);
        assert!(
            gemini.contains("rate-limiting") && !gemini.contains("no quota"),
            "{gemini}"
        );
        for body in [
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","code":"insufficient_quota"}}"#,
            r#"{"error":{"message":"Your account is not active, please check your billing details on our website.","type":"billing_not_active"}}"#,
            r#"{"error":{"message":"Insufficient credits. Add more using https://openrouter.ai/credits","code":429}}"#,
        ] {
            let quota = said(429, body);
            assert!(quota.contains("no quota or credit left"), "{quota}");
        }
        let openai_rate = said(
            429,
            r#"{"error":{"message":"Rate limit reached for gpt-4o on requests per min (RPM): Limit 3. Visit https://platform.openai.com/account/billing to add a payment method.","type":"requests","code":"rate_limit_exceeded"}}"#,
        );
        assert!(openai_rate.contains("rate-limiting"), "{openai_rate}");
    }

    #[test]
    fn the_wait_a_body_asks_for_is_read_from_gemini_retry_info() {
        assert_eq!(body_wait_ms(GEMINI_RATE_LIMIT), Some(30_000));
        let array = r#"[{"error":{"code":429,"status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"1.5s"}]}}]"#;
        assert_eq!(body_wait_ms(array), Some(1_500));
        for body in [
            r#"{"error":{"message":"Rate limit reached for requests"}}"#,
            r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"soon"}]}}"#,
            r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"-3s"}]}}"#,
            r#"{"error":{"details":[{"@type":"type.googleapis.com/google.rpc.Help","retryDelay":"3s"}]}}"#,
            "<html>429 Too Many Requests</html>",
        ] {
            assert_eq!(body_wait_ms(body), None, "{body}");
        }
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
            // Refusals of what is sent beside the tools: the model may still call them.
            r#"{"error":{"message":"tool_choice 'required' is not supported by this model","type":"invalid_request_error"}}"#,
            r#"{"error":{"message":"parallel_tool_calls is not supported with this model","param":"parallel_tool_calls"}}"#,
            r#"{"error":{"message":"response_format json_schema is not supported together with tools"}}"#,
            r#"{"error":{"message":"JSON mode is not supported with function calling"}}"#,
        ] {
            assert_eq!(read_refusal(400, body).kind(), "status", "{body}");
        }
        let outage = r#"{"error":{"message":"tool calling is not available right now"}}"#;
        assert_eq!(read_refusal(503, outage).kind(), "status");
    }
}
