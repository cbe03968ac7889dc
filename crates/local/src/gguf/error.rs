//! `error`: why a file could not be read, in words for the person.

use std::fmt;

use super::value::MAX_DEPTH;

/// Why a file could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufError {
    NotGguf,
    UnsupportedVersion(u32),
    /// The file ends (or a size points) past its length while reading `what`.
    Truncated {
        what: &'static str,
        at: u64,
    },
    UnknownValueType(u32),
    UnsupportedTensorType(u32),
    BadString {
        at: u64,
    },
    BadAlignment(u64),
    BadTensor {
        name: String,
        reason: &'static str,
    },
    DuplicateTensor(String),
    /// Decoding `what` would take the header past [`Limits::header_memory`].
    TooLarge {
        what: &'static str,
        at: u64,
        limit: usize,
    },
    /// Arrays nested deeper than any real file's.
    TooDeep {
        at: u64,
    },
    /// More tensors than [`Limits::tensors`].
    TooManyTensors {
        count: u64,
        limit: usize,
    },
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufError::NotGguf => write!(f, "not a GGUF file (no GGUF magic)"),
            GgufError::UnsupportedVersion(v) => {
                write!(f, "GGUF version {v} is not supported (2 and 3 are)")
            }
            GgufError::Truncated { what, at } => {
                write!(
                    f,
                    "GGUF file truncated or garbled: {what} at byte {at} runs past the end"
                )
            }
            GgufError::UnknownValueType(t) => write!(f, "unknown GGUF metadata value type {t}"),
            GgufError::UnsupportedTensorType(t) => write!(
                f,
                "tensor type {t} ({}) is not supported (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K are)",
                ggml_type_name(*t)
            ),
            GgufError::BadString { at } => write!(f, "GGUF string at byte {at} is not UTF-8"),
            GgufError::BadAlignment(a) => write!(f, "general.alignment {a} is not a power of two"),
            GgufError::BadTensor { name, reason } => write!(f, "tensor {name}: {reason}"),
            GgufError::DuplicateTensor(name) => write!(f, "tensor {name} appears twice"),
            GgufError::TooLarge { what, at, limit } => write!(
                f,
                "GGUF header too large: {what} at byte {at} would take it past {} MiB of memory",
                limit >> 20
            ),
            GgufError::TooDeep { at } => write!(
                f,
                "GGUF array at byte {at} is nested more than {MAX_DEPTH} deep"
            ),
            GgufError::TooManyTensors { count, limit } => write!(
                f,
                "GGUF file lists {count} tensors, more than the {limit} this reader accepts"
            ),
        }
    }
}

impl std::error::Error for GgufError {}

fn ggml_type_name(id: u32) -> &'static str {
    const NAMES: [&str; 31] = [
        "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K",
        "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL",
        "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16",
    ];
    NAMES.get(id as usize).copied().unwrap_or("unknown")
}
