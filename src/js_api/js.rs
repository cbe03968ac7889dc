//! Crossing into JavaScript: values go through JSON (`JSON.stringify` / `parse`),
//! which the bundle already carries, rather than a second serializer; errors become
//! `Error` objects with a message that says what to fix.

use js_sys::JSON;
use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};

/// A JavaScript value as JSON; `undefined` is `null`. Functions, symbols, BigInts and
/// cycles are not JSON and say so.
pub fn to_json(value: &JsValue) -> Result<Value, String> {
    if value.is_undefined() {
        return Ok(Value::Null);
    }
    let text = JSON::stringify(value)
        .map_err(|e| format!("it cannot be written as JSON ({})", message_of(&e)))?;
    let Some(text) = text.as_string() else {
        return Err(format!(
            "a {} is not JSON",
            value.js_typeof().as_string().unwrap_or_default()
        ));
    };
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// A Rust value as a plain JavaScript object.
pub fn to_js(value: &impl Serialize) -> JsValue {
    serde_json::to_string(value)
        .ok()
        .and_then(|text| JSON::parse(&text).ok())
        .unwrap_or(JsValue::NULL)
}

/// The message of a thrown value or a rejection.
pub fn message_of(error: &JsValue) -> String {
    if let Some(error) = error.dyn_ref::<js_sys::Error>() {
        return String::from(error.message());
    }
    if let Some(text) = error.as_string() {
        return text;
    }
    JSON::stringify(error)
        .ok()
        .and_then(|t| t.as_string())
        .unwrap_or_else(|| "an error with no message".into())
}

/// An `Error` to throw or reject with.
pub fn error(message: &str) -> JsValue {
    js_sys::Error::new(message).into()
}

/// A field of a JavaScript object (`undefined` when absent or not an object).
pub fn field(object: &JsValue, name: &str) -> JsValue {
    js_sys::Reflect::get(object, &JsValue::from_str(name)).unwrap_or(JsValue::UNDEFINED)
}

/// Reports a failure that has no caller to return to (a listener that threw).
pub fn console_error(message: &str) {
    web_sys::console::error_1(&JsValue::from_str(&format!("familiar: {message}")));
}

/// A number in [0, 1) from the page's `crypto.getRandomValues` (what run ids and the
/// channel's secret are drawn from: a frame sees some of them, and `Math.random`'s
/// state can be worked out from its outputs); `Math.random` only where there is no
/// `crypto`.
pub fn crypto_random() -> f64 {
    let words = js_sys::Uint32Array::new_with_length(2);
    let crypto = field(&js_sys::global(), "crypto");
    let filled = field(&crypto, "getRandomValues")
        .dyn_into::<js_sys::Function>()
        .and_then(|fill| fill.call1(&crypto, &words));
    if filled.is_err() {
        return js_sys::Math::random();
    }
    // 53 random bits, as many as an f64 in [0, 1) holds.
    let high = u64::from(words.get_index(0) >> 5);
    let low = u64::from(words.get_index(1) >> 6);
    ((high << 26) | low) as f64 / (1u64 << 53) as f64
}
