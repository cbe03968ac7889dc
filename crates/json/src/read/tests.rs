//! The reader held to serde_json's own `Value` deserializer: the same values, the
//! same messages, with the path to what was wrong.

use serde::Deserialize;
use serde_json::json;

use super::*;

#[derive(Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rule {
    keywords: Vec<String>,
    weight: Option<u8>,
}

#[derive(Debug, PartialEq, Deserialize)]
enum Shape {
    Dot,
    Line(u32),
    Box { side: u32 },
}

#[derive(Debug, PartialEq, Deserialize)]
struct File {
    rules: Vec<Rule>,
    shape: Option<Shape>,
    pair: Option<(u64, i64)>,
}

/// Ours and serde_json's, each as `Ok(Debug)` or `Err(message)`.
fn both(value: Value) -> (Result<String, String>, Result<String, String>) {
    let ours = from_value::<File>(value.clone());
    let theirs = serde_json::from_value::<File>(value);
    (
        ours.map(|f| format!("{f:?}")).map_err(|e| e.to_string()),
        theirs.map(|f| format!("{f:?}")).map_err(|e| e.to_string()),
    )
}

#[test]
fn reads_and_refuses_as_serde_json_does_in_the_same_words() {
    let inputs = [
        json!({"rules": [{"keywords": ["a"]}], "shape": "Dot", "pair": [1, -2]}),
        json!({"rules": [{"keywords": ["a"], "weight": 3}], "shape": {"Line": 4}}),
        json!({"rules": [], "shape": {"Box": {"side": 2}}, "extra": true}),
        json!({"rules": [{"keywords": "a"}]}),
        json!({"rules": [{"keywords": [1]}]}),
        json!({"rules": [{"keywords": [], "weight": 300}]}),
        json!({"rules": [{"keywords": [], "weight": -1}]}),
        json!({"rules": [{"keywords": [], "weight": 1.5}]}),
        json!({"rules": [{"keywords": [], "colour": 1}]}),
        json!({"rules": [{}]}),
        json!({"rules": null}),
        json!({"shape": "Dot"}),
        json!({"rules": [], "shape": "Square"}),
        json!({"rules": [], "shape": {"Dot": null}}),
        json!({"rules": [], "shape": {"Line": "4"}}),
        json!({"rules": [], "shape": {"Box": 1}}),
        json!({"rules": [], "shape": "Line"}),
        json!({"rules": [], "shape": {"Dot": 1, "Line": 2}}),
        json!({"rules": [], "pair": [1]}),
        json!({"rules": [], "pair": [1, 2, 3]}),
        json!("rules"),
        json!(null),
    ];
    for input in inputs {
        let (ours, theirs) = both(input.clone());
        assert_eq!(ours, theirs, "{input}");
    }
}

#[test]
fn a_struct_is_an_object_never_an_array() {
    // serde_json reads `[["a"], 1]` as a `Rule`; nothing writes one so.
    let refused = from_value::<Rule>(json!([["a"], 1])).map_err(|e| e.to_string());
    assert_eq!(
        refused,
        Err("invalid type: sequence, expected struct Rule".into())
    );
}

#[test]
fn an_error_names_the_path_to_the_value_as_serde_path_to_error_does() {
    let path = |value: Value| from_value::<File>(value).err().map(|e| e.path());
    assert_eq!(
        path(json!({"rules": [{"keywords": [1]}]})).as_deref(),
        Some("rules[0].keywords[0]")
    );
    assert_eq!(
        path(json!({"rules": [{"keywords": [], "colour": 1}]})).as_deref(),
        Some("rules[0].colour")
    );
    assert_eq!(path(json!({"rules": [{}]})).as_deref(), Some("rules[0]"));
    assert_eq!(
        path(json!({"rules": [], "shape": {"Box": {"side": "2"}}})).as_deref(),
        Some("shape.Box.side")
    );
    assert_eq!(path(json!(null)).as_deref(), Some("."));
}
