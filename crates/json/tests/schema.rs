//! `#[derive(SchemaText)]` against schemars' `JsonSchema` derive: each type derives
//! both from one body, one attribute list and one doc comment, and the text written
//! at compile time is the schema schemars derives at run time.

use std::collections::{BTreeMap, BTreeSet};

use familiar_json::SchemaText;
use familiar_json::schema;
use schemars::JsonSchema;
use serde_json::{Value, json};

/// The schema schemars derives for `T`, and ours: as a tool's parameters (without
/// `$schema` and `title`) and whole.
fn alike<T: JsonSchema + schema::SchemaText>() {
    let derived = schemars::schema_for!(T).to_value();
    // Text that does not parse is `null`, which no derived schema equals.
    let ours: Value = serde_json::from_str(&schema::root::<T>()).unwrap_or_default();
    assert_eq!(ours, derived, "{}", T::NAME);
    let mut bare = derived;
    if let Some(object) = bare.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    let ours: Value = serde_json::from_str(&schema::parameters::<T>()).unwrap_or_default();
    assert_eq!(ours, bare, "{}", T::NAME);
}

/// Every number the tools' arguments use, each
/// with its own "format".
#[derive(JsonSchema, SchemaText)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)]
struct Numbers {
    /// Where to start, in characters (the `next_offset` of the previous call).
    #[serde(default)]
    offset: usize,
    element: u32,
    small: u8,
    wide: u16,
    big: u64,
    signed: i64,
    int: i32,
    ratio: f32,
    exact: f64,
    /// true to check, false to uncheck.
    checked: bool,
    #[serde(default)]
    hidden: bool,
    text: String,
}

#[test]
fn numbers_strings_and_booleans_are_written_as_schemars_derives_them() {
    alike::<Numbers>();
}

/// Something owed.
#[derive(serde::Serialize, JsonSchema, SchemaText)]
#[allow(dead_code)]
struct Owed {
    /// The tool, e.g. `reply`.
    tool: String,
    /// What is owed, e.g. "report back".
    note: String,
}

/// What a reflection decided.
#[derive(JsonSchema, SchemaText)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum Verdict {
    /// The answer stands.
    Finished,
    /// Rewrite it.
    Revise,
    MoreActions,
}

#[derive(JsonSchema, SchemaText)]
#[serde(rename_all = "lowercase")]
#[allow(dead_code)]
enum Level {
    Simple,
    Complex,
}

/// Lists, maps, options and other types, by reference.
#[derive(JsonSchema, SchemaText)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[allow(dead_code)]
struct Nested {
    /// The steps left, in order;
    /// replaces the old plan.
    #[serde(default)]
    steps: Option<Vec<Owed>>,
    /// Facts to keep, e.g. {"battle_id": 3}.
    #[serde(default)]
    remember: Option<BTreeMap<String, Value>>,
    owe: Vec<Owed>,
    verdict: Verdict,
    /// How hard it is.
    level: Option<Level>,
    #[serde(rename = "type")]
    kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    note: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    counts: BTreeMap<String, u32>,
    any: Value,
    object: serde_json::Map<String, Value>,
    #[serde(skip)]
    cache: u32,
    max_tokens: Option<u32>,
}

#[test]
fn references_lists_maps_and_options_are_written_as_schemars_derives_them() {
    alike::<Nested>();
    alike::<Owed>();
    alike::<Verdict>();
    alike::<Level>();
}

/// Arguments for a tool that takes none.
#[derive(JsonSchema, SchemaText)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

#[derive(JsonSchema, SchemaText)]
#[allow(dead_code)]
struct Undocumented {
    request: String,
}

#[test]
fn empty_and_undocumented_types_are_written_as_schemars_derives_them() {
    alike::<NoArgs>();
    alike::<Undocumented>();
}

#[test]
fn a_type_referred_to_twice_is_defined_once() {
    let text = schema::parameters::<Nested>();
    assert_eq!(text.matches("\"Owed\":{").count(), 1, "{text}");
    let written: Value = serde_json::from_str(&text).unwrap();
    let defs = written["$defs"]
        .as_object()
        .map(|defs| defs.keys().map(String::as_str).collect::<BTreeSet<_>>());
    assert_eq!(defs, Some(BTreeSet::from(["Level", "Owed", "Verdict"])));
    assert_eq!(
        written["properties"]["steps"]["items"],
        json!({"$ref": "#/$defs/Owed"})
    );
}
