//! The one way Familiar reads typed values from JSON: through a [`serde_json::Value`]
//! and [`Reader`], so every type carries one deserializer however many kinds of input
//! it is read from, and an error names its whole path (`history[2].call.id`).
//! [`read_fields!`] and [`read_variants!`] write a struct's or an internally tagged
//! enum's `Deserialize` as one shared call per field instead of serde's derived
//! visitor (1–10 KB of wasm per type). Its own crate so that every crate of the
//! workspace whose types cross into the page's wasm reads them the same way (the root
//! crate's `base::json`, the page reader's snapshot in `crates/page`).

pub mod fields;
mod read;
pub mod tagged;

pub use read::{ReadError, Reader, from_value};
