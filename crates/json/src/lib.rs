//! The one way Familiar reads typed values from JSON: through a [`serde_json::Value`]
//! and [`Reader`], so every type carries one deserializer however many kinds of input
//! it is read from, and an error names its whole path (`history[2].call.id`).
//! `#[derive(Read)]` (crates/json-derive) writes a struct's or an internally tagged
//! enum's `Deserialize` as one shared call per field ([`fields::Fields`]) instead of
//! serde's derived visitor (1–10 KB of wasm per type), from the same `#[serde(...)]`
//! attributes its `Serialize` derive reads, and `#[derive(SchemaText)]` ([`schema`])
//! its JSON Schema as text at compile time. Its own crate so that every crate of the
//! workspace whose types cross into the page's wasm reads them the same way (the root
//! crate's `base::json`, the page reader's snapshot in `crates/page`).

// The derive's code names this crate `::familiar_json`, in this crate's own tests too.
extern crate self as familiar_json;

mod error;
pub mod fields;
mod read;
pub mod schema;
pub mod tagged;

pub use error::ReadError;
pub use familiar_json_derive::{Read, SchemaText};
pub use read::{Reader, from_value};
pub use schema::SchemaText;
