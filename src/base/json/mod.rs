//! The strict-JSON discipline for model output: extract the JSON region, repair common
//! breakage, deserialize into the caller's typed [`Contract`] and validate it; the
//! re-ask loop (`contract`) sends a short summary of the failure back to the model.
//! Valid JSON passes through unchanged; nothing invalid is ever returned as valid.

mod extract;
mod repair;
pub mod schema;

pub use familiar_json::{fields, tagged};

use std::borrow::Cow;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use familiar_json::{Read, ReadError, Reader, SchemaText, from_value};
pub use repair::{MAX_DEPTH, repair};

/// Typed data from JSON text, read through a [`Value`] by [`from_value`]. Every type
/// is read from a `Value` and from nothing else, so the bundle carries one deserializer per type
/// rather than one per kind of input (text, bytes, `Value`): serde instantiates a
/// type's whole visitor for each, and each copy costs kilobytes of wasm. The errors
/// say what is wrong, without serde_json's line and column.
pub fn from_text<T: DeserializeOwned>(text: &str) -> serde_json::Result<T> {
    from_value(serde_json::from_str::<Value>(text)?).map_err(ReadError::into_inner)
}

/// JSON bytes (a response body) as a [`Value`], read by the same text parser as
/// [`from_text`]: serde_json's `from_slice` would compile its whole parser a second
/// time, for bytes (12 KB of wasm).
pub fn value_from_bytes(bytes: &[u8]) -> serde_json::Result<Value> {
    match std::str::from_utf8(bytes) {
        Ok(text) => serde_json::from_str(text),
        Err(error) => Err(serde::de::Error::custom(format_args!(
            "invalid UTF-8: {error}"
        ))),
    }
}

/// A value as a [`Value`], written through the one serializer the bundle keeps for
/// every type (compact text) and read back, for the reason [`from_text`] gives.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> serde_json::Result<Value> {
    serde_json::from_str(&serde_json::to_string(value)?)
}

/// Why model text did not yield the JSON asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonError {
    #[error("no JSON object or array was found in the text")]
    NoJson,
    #[error("the JSON is broken beyond repair at character {at}: {reason}")]
    Unrepairable { at: usize, reason: String },
    #[error("the JSON does not match the expected shape: {0}")]
    Invalid(String),
}

/// A typed shape model output must take. The JSON Schema (derived) goes to the model;
/// serde checks types and required fields; [`Contract::validate`] checks the rest.
pub trait Contract: DeserializeOwned + JsonSchema {
    /// Rules the type cannot express (ranges, lengths, cross-field rules).
    fn validate(&self) -> Result<(), String> {
        Ok(())
    }

    /// The JSON Schema the model is given: derived by schemars at run time, unless
    /// the contract gives the text its `SchemaText` derive wrote at compile time
    /// ([`schema::whole`]; a test holds it to the derivation). The lean runtime's
    /// contracts give theirs, so that build does not carry schemars' generator and
    /// the derived schema code (20 KB gzip).
    fn schema() -> Value {
        schemars::schema_for!(Self).to_value()
    }
}

/// Each candidate in `text` ([`extract::candidates`], most likely first), as strict
/// JSON (repaired where needed), with the reason any was refused; lazily, so the first
/// that serves ends the work.
fn repaired_candidates(
    text: &str,
) -> Box<dyn Iterator<Item = Result<Cow<'_, str>, JsonError>> + '_> {
    if is_valid(text) {
        return Box::new(std::iter::once(Ok(Cow::Borrowed(text))));
    }
    Box::new(
        extract::candidates(text)
            .into_iter()
            .filter_map(|candidate| match candidate {
                extract::Candidate::One(region) => Some(repaired_one(region)),
                // Several values: the list of them (a contract that wants one still
                // finds it among the rest); a split whose parts do not all repair is no
                // reading of the text, and says nothing.
                extract::Candidate::Several(values) => values
                    .into_iter()
                    .map(repaired_one)
                    .collect::<Result<Vec<_>, _>>()
                    .ok()
                    .map(|values| Ok(Cow::Owned(format!("[{}]", values.join(","))))),
            }),
    )
}

/// One candidate as strict JSON: itself when valid, else repaired.
fn repaired_one(candidate: &str) -> Result<Cow<'_, str>, JsonError> {
    if is_valid(candidate) {
        Ok(Cow::Borrowed(candidate))
    } else {
        repair(candidate).map(Cow::Owned)
    }
}

fn is_valid(text: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(text).is_ok()
}

/// The first attempt that succeeds; else the error of the first (the most likely
/// candidate's), or `NoJson` when there was nothing to try.
fn first_success<T>(
    attempts: impl IntoIterator<Item = Result<T, JsonError>>,
) -> Result<T, JsonError> {
    let mut first_error = None;
    for attempt in attempts {
        match attempt {
            Ok(value) => return Ok(value),
            Err(error) => {
                first_error.get_or_insert(error);
            }
        }
    }
    Err(first_error.unwrap_or(JsonError::NoJson))
}

/// The most likely JSON in `text`, repaired if needed. Text that is already valid
/// JSON comes back unchanged.
pub fn extract(text: &str) -> Result<Cow<'_, str>, JsonError> {
    first_success(repaired_candidates(text))
}

/// The first candidate in `text` that deserializes into `T` and validates. When none
/// does, the error of the most likely candidate.
pub fn parse<T: Contract>(text: &str) -> Result<T, JsonError> {
    first_success(repaired_candidates(text).map(|candidate| {
        let json = candidate?;
        let value: T = from_text(&json).map_err(|e| JsonError::Invalid(e.to_string()))?;
        value.validate().map_err(JsonError::Invalid)?;
        Ok(value)
    }))
}
