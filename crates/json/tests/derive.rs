//! `#[derive(Read)]` against serde's own derive: each type is written twice from one
//! body and one attribute list, once deriving `Read` and once serde's `Deserialize`,
//! and both read the same inputs. What one reads the other reads (compared as written
//! back by the shared `Serialize`); what one refuses the other refuses, in the same
//! words (and, for structs, at the same path).

use familiar_json::{Read, ReadError, from_value};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// The same type twice: `$ours` deriving `Read`, `$theirs` serde's `Deserialize`.
macro_rules! twins {
    ($(#[$attr:meta])* $kind:ident $ours:ident / $theirs:ident $body:tt) => {
        #[derive(Debug, PartialEq, Serialize, Read)]
        $(#[$attr])*
        $kind $ours $body

        #[derive(Debug, PartialEq, Serialize, Deserialize)]
        $(#[$attr])*
        $kind $theirs $body
    };
}

/// What reading `input` as `T` gave: the value written back, or the error's path and
/// words (the type names made alike).
fn read<T: serde::de::DeserializeOwned + Serialize>(
    input: &Value,
) -> Result<Value, (String, String)> {
    match from_value::<T>(input.clone()) {
        Ok(value) => Ok(serde_json::to_value(&value).map_err(|e| (String::new(), e.to_string()))?),
        Err(error) => Err((error.path(), words(&error))),
    }
}

fn words(error: &ReadError) -> String {
    error.to_string().replace("Theirs", "")
}

/// Both read every input alike; `paths` says whether an error's path is compared too
/// (serde's derive loses it inside an internally tagged enum's buffer).
fn alike<Ours, Theirs>(inputs: &[Value], paths: bool)
where
    Ours: serde::de::DeserializeOwned + Serialize,
    Theirs: serde::de::DeserializeOwned + Serialize,
{
    let mut read_some = false;
    for input in inputs {
        let ours = read::<Ours>(input);
        let theirs = read::<Theirs>(input);
        read_some |= ours.is_ok();
        match (ours, theirs) {
            (Ok(ours), Ok(theirs)) => assert_eq!(ours, theirs, "{input}"),
            (Err(ours), Err(theirs)) if paths => assert_eq!(ours, theirs, "{input}"),
            (Err((_, ours)), Err((_, theirs))) => assert_eq!(ours, theirs, "{input}"),
            (ours, theirs) => assert_eq!(ours, theirs, "{input}: one read it, one refused it"),
        }
    }
    assert!(read_some, "no input read: the inputs test refusals only");
}

fn three() -> u32 {
    3
}

twins! {
    /// The container's `default` from a `Default` that is not each field's: a missing
    /// field is the container default's, unless the field says its own.
    #[serde(default)]
    struct Settled / SettledTheirs {
        model: String,
        temperature: f32,
        #[serde(default)]
        tries: u32,
        #[serde(default = "three")]
        rounds: u32,
        #[serde(skip)]
        cache: u32,
        #[serde(rename = "type")]
        kind: Option<String>,
    }
}

macro_rules! settled_default {
    ($($name:ident),*) => {$(
        impl Default for $name {
            fn default() -> Self {
                Self {
                    model: "rules".into(),
                    temperature: 0.5,
                    tries: 7,
                    rounds: 9,
                    cache: 11,
                    kind: Some("base".into()),
                }
            }
        }
    )*};
}

settled_default!(Settled, SettledTheirs);

#[test]
fn a_containers_default_fills_what_is_missing_as_serdes_derive_does() {
    alike::<Settled, SettledTheirs>(
        &[
            json!({}),
            json!({"model": "m"}),
            json!({"temperature": 1.0, "tries": 2, "rounds": 4, "cache": 5, "type": "t"}),
            json!({"type": null}),
            json!({"model": 1}),
            json!({"rounds": "x"}),
            json!([]),
        ],
        true,
    );
    // And the skipped field is the container default's, not its type's.
    assert_eq!(
        from_value::<Settled>(json!({})).map(|s| s.cache).ok(),
        Some(11)
    );
}

twins! {
    /// Renames, aliases and refused unknown fields; an alias is a known field.
    #[serde(deny_unknown_fields, rename_all = "camelCase")]
    struct Strict / StrictTheirs {
        max_tokens: Option<u32>,
        #[serde(rename = "content", alias = "text", alias = "body")]
        content_text: String,
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<String>,
    }
}

#[test]
fn renames_aliases_and_unknown_fields_read_as_serdes_derive_reads_them() {
    alike::<Strict, StrictTheirs>(
        &[
            json!({"content": "a"}),
            json!({"text": "a", "maxTokens": 3}),
            json!({"body": "a", "toolCalls": ["x"]}),
            json!({"content": "a", "max_tokens": 3}),
            json!({"content": "a", "colour": 1}),
            json!({"maxTokens": 3}),
            json!({"content": 1}),
        ],
        true,
    );
}

#[test]
fn a_field_and_its_alias_both_there_read_the_field_where_serdes_derive_refuses_both() {
    // A provider that sends `reasoning_content` and `reasoning` alike is read, not
    // refused as serde's derive would (`duplicate field`): the shared reader always
    // read it so.
    let strict = from_value::<Strict>(json!({"content": "a", "text": "b"}));
    assert_eq!(strict.ok().map(|s| s.content_text), Some("a".to_owned()));
    let theirs = from_value::<StrictTheirs>(json!({"content": "a", "text": "b"}));
    assert_eq!(
        theirs.err().map(|e| e.to_string()),
        Some("duplicate field `content`".to_owned())
    );
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Resources {
    gold: i64,
    #[serde(default)]
    food: i64,
}

twins! {
    /// A flattened field, declared first, reads the fields the others leave.
    struct Flat / FlatTheirs {
        #[serde(flatten)]
        resources: Resources,
        owner: String,
        tick: u32,
    }
}

#[test]
fn a_flattened_field_reads_the_rest_as_serdes_derive_reads_it() {
    alike::<Flat, FlatTheirs>(
        &[
            json!({"owner": "o", "tick": 1, "gold": 2}),
            json!({"gold": 2, "food": 3, "owner": "o", "tick": 1, "other": true}),
            json!({"owner": "o", "tick": 1}),
            json!({"owner": "o", "gold": 1}),
        ],
        false,
    );
}

/// A value read and written its own way (`with`): a string of digits.
mod digits {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&value.to_string())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

fn doubled<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<u32, D::Error> {
    Ok(u32::deserialize(deserializer)? * 2)
}

twins! {
    struct With / WithTheirs {
        #[serde(with = "digits")]
        id: u64,
        #[serde(with = "digits", default)]
        parent: u64,
        #[serde(deserialize_with = "doubled", default = "three")]
        weight: u32,
    }
}

#[test]
fn fields_read_their_own_way_read_as_serdes_derive_reads_them() {
    alike::<With, WithTheirs>(
        &[
            json!({"id": "12"}),
            json!({"id": "12", "parent": "4", "weight": 5}),
            json!({"id": 12}),
            json!({"id": "x"}),
            json!({"parent": "4"}),
            json!({"id": "1", "weight": "5"}),
        ],
        true,
    );
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Body {
    c: bool,
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
enum Decision {
    Approved,
    Denied { reason: String },
}

twins! {
    /// An internally tagged enum: unit, newtype and struct variants, renamed,
    /// aliased, its fields renamed by the variant, one flattened.
    #[serde(tag = "type", rename_all = "snake_case")]
    enum Tagged / TaggedTheirs {
        Unit,
        #[serde(rename = "body", alias = "wrapped")]
        Wrapped(Body),
        #[serde(rename_all = "camelCase")]
        ToolCall {
            call_id: String,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            description: Option<String>,
            #[serde(with = "digits")]
            at_ms: u64,
        },
        Decided {
            call_id: String,
            #[serde(flatten)]
            decision: Decision,
        },
    }
}

#[test]
fn internally_tagged_enums_read_as_serdes_derive_reads_them() {
    alike::<Tagged, TaggedTheirs>(
        &[
            json!({"type": "unit"}),
            json!({"type": "unit", "extra": 1}),
            json!({"type": "body", "c": true}),
            json!({"type": "wrapped", "c": false}),
            json!({"type": "body"}),
            json!({"type": "tool_call", "callId": "a", "atMs": "5"}),
            json!({"type": "tool_call", "callId": "a", "atMs": "5", "description": "d"}),
            json!({"type": "tool_call", "call_id": "a", "atMs": "5"}),
            json!({"type": "tool_call", "callId": "a", "atMs": 5}),
            json!({"type": "decided", "call_id": "a", "decision": "approved"}),
            json!({"type": "decided", "call_id": "a", "decision": "denied", "reason": "r"}),
            json!({"type": "decided", "call_id": "a", "decision": "denied"}),
            json!({"type": "decided", "call_id": "a"}),
            json!({"type": "Unit"}),
            json!({"type": 1}),
            json!({"c": true}),
            json!("unit"),
        ],
        false,
    );
}

#[test]
fn inside_a_tagged_enum_our_reader_names_the_field_serdes_derive_loses() {
    let error = from_value::<Tagged>(json!({"type": "tool_call", "callId": 1, "atMs": "5"}))
        .err()
        .map(|error| (error.path(), error.to_string()));
    assert_eq!(
        error,
        Some((
            "callId".to_owned(),
            "invalid type: integer `1`, expected a string".to_owned()
        ))
    );
}
