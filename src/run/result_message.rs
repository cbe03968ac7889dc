//! A tool's result as the model reads it in the transcript: the value, an error, a
//! person's refusal, or the start of a result too long to send whole.

use serde_json::Value;

use super::MAX_RESULT_CHARS;
use crate::tool::ToolError;

/// A person's "no" as the model reads it: `{"declined": …}`, apart from failures, so a
/// model (the rules model too) answers it as a decision to respect, not an error to retry.
pub(super) fn declined_message(result: &Result<Value, ToolError>) -> Option<String> {
    match result {
        Err(error @ ToolError::Declined { .. }) => {
            Some(serde_json::json!({ "declined": error.to_string() }).to_string())
        }
        _ => None,
    }
}

/// A result as the model reads it: the value, or `{"error": …}`; a long one cut to
/// its start, saying so.
pub(super) fn tool_message(result: &Result<Value, String>) -> String {
    // Written straight into a string: `Value`'s `Display` goes through the formatter,
    // several times the cost at every step. Neither can fail (a `Value`'s keys are
    // strings).
    let text = match result {
        Ok(value) => serde_json::to_string(value).unwrap_or_default(),
        Err(error) => {
            let mut text = Vec::with_capacity(error.len() + 12);
            text.extend_from_slice(b"{\"error\":");
            let _ = serde_json::to_writer(&mut text, error);
            text.push(b'}');
            String::from_utf8(text).unwrap_or_default()
        }
    };
    if text.len() <= MAX_RESULT_CHARS {
        return text;
    }
    let total = text.chars().count();
    if total <= MAX_RESULT_CHARS {
        return text;
    }
    let start: String = text.chars().take(MAX_RESULT_CHARS).collect();
    serde_json::json!({
        "truncated": format!(
            "the result is {total} characters; these are the first {MAX_RESULT_CHARS}"
        ),
        "start": start,
    })
    .to_string()
}
