//! Structs read field by field from a [`Value`]'s object, without serde's derived
//! visitor. The derive writes, for every struct, a field enum with its own visitor,
//! a loop that matches each key, checks it against duplicates and deserializes its
//! value inline, and one missing-field error per field: 1–10 KB of wasm per struct,
//! most of the reading code of the lean runtime. `#[derive(Read)]` writes the struct's
//! `Deserialize` as one call per field to [`Fields::take`], which is compiled once per
//! field *type* and shared by every struct with a field of that type. `Serialize`
//! stays derived, so what is written does not change.
//!
//! It reads what the derive reads, with the same defaults: a missing `Option` is
//! `None`, a missing field with `= default` is its type's default, any other missing
//! field is refused as ``missing field `name` ``, unknown fields are ignored. Read
//! through [`Reader`] (every read in the crate), an error keeps its whole path
//! (`history[2].call.id`); through another deserializer, the path inside the struct
//! leads its message. New types derive [`Read`](crate::Read), which writes the same
//! calls from the type's `#[serde(...)]` attributes, rather than serde's
//! `Deserialize`; it is held to serde's derive by the tests below and in
//! `tests/derive.rs`.

use std::cell::RefCell;
use std::fmt;

use serde::de::{self, DeserializeOwned, Deserializer, Visitor};
use serde_json::{Map, Value};

use crate::error::ReadError;
use crate::read::{Reader, unexpected};

/// A struct's object, its fields taken out one by one; the first that did not read
/// is kept as the struct's error.
pub struct Fields {
    object: Map<String, Value>,
    error: Option<ReadError>,
}

impl Fields {
    /// The object `deserializer` holds; refuses anything else as serde's derive does
    /// (`invalid type: string "a", expected struct Limits`).
    pub fn read<'de, D: Deserializer<'de>>(
        deserializer: D,
        expected: &'static str,
    ) -> Result<Self, D::Error> {
        let value = deserializer.deserialize_newtype_struct(HAND_OVER, TakeValue)?;
        Self::object(value, expected).map_err(de::Error::custom)
    }

    #[inline(never)]
    fn object(value: Value, expected: &'static str) -> Result<Self, ReadError> {
        match value {
            Value::Object(object) => Ok(Self {
                object,
                error: None,
            }),
            other => Err(de::Error::invalid_type(unexpected(&other), &expected)),
        }
    }

    /// The field `key`, read as a `T`; a missing one as serde reads it (`None` for an
    /// `Option`, else refused). `None` when it did not read, the error kept. What does
    /// not depend on `T` is in plain functions: this one is compiled once per type.
    pub fn take<T: DeserializeOwned>(&mut self, key: &'static str) -> Option<T> {
        match self.entry(key) {
            Some(value) => self.kept(T::deserialize(Reader(value)), Some(key)),
            None => self.kept(T::deserialize(Missing(key)), None),
        }
    }

    /// The field `key`, read as a `T`, or `default()` when it is missing.
    pub fn take_or<T: DeserializeOwned>(
        &mut self,
        key: &'static str,
        default: fn() -> T,
    ) -> Option<T> {
        match self.entry(key) {
            Some(value) => self.kept(T::deserialize(Reader(value)), Some(key)),
            None => Some(default()),
        }
    }

    /// The field `key`, read as a `T`, or `default` when it is missing.
    pub fn take_or_value<T: DeserializeOwned>(
        &mut self,
        key: &'static str,
        default: T,
    ) -> Option<T> {
        match self.entry(key) {
            Some(value) => self.kept(T::deserialize(Reader(value)), Some(key)),
            None => Some(default),
        }
    }

    /// The field `key`, read by `read` (serde's `with`); when it is missing, `default()`,
    /// or refused as missing without one.
    pub fn take_with<T>(
        &mut self,
        key: &'static str,
        read: fn(Reader) -> Result<T, ReadError>,
        default: Option<fn() -> T>,
    ) -> Option<T> {
        match (self.entry(key), default) {
            (Some(value), _) => self.kept(read(Reader(value)), Some(key)),
            (None, Some(default)) => Some(default()),
            (None, None) => self.kept(Err(de::Error::missing_field(key)), None),
        }
    }

    /// The fields not taken yet, read as a `T` (serde's `flatten`, for the last field).
    pub fn take_rest<T: DeserializeOwned>(&mut self) -> Option<T> {
        let rest = Value::Object(std::mem::take(&mut self.object));
        self.kept(crate::from_value(rest), None)
    }

    /// What is left of the object, read as a `T` (the body of a newtype variant).
    pub fn rest<T: DeserializeOwned>(self) -> Result<T, ReadError> {
        crate::from_value(Value::Object(self.object))
    }

    /// An internally tagged enum's object (`{"type": "text", …}`): its fields and the
    /// tag's value, which must be a string. Refused as serde's derive refuses it.
    pub fn read_tagged<'de, D: Deserializer<'de>>(
        deserializer: D,
        tag: &'static str,
        expected: &'static str,
    ) -> Result<(Self, String), D::Error> {
        let fields = Self::read(deserializer, expected)?;
        fields.split(tag).map_err(de::Error::custom)
    }

    #[inline(never)]
    fn split(mut self, tag: &'static str) -> Result<(Self, String), ReadError> {
        match self.object.remove(tag) {
            Some(Value::String(variant)) => Ok((self, variant)),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(&other),
                &"variant identifier",
            )),
            None => Err(de::Error::missing_field(tag)),
        }
    }

    #[inline(never)]
    fn entry(&mut self, key: &str) -> Option<Value> {
        self.object.remove(key)
    }

    /// The value read, or `None` with its error kept (at `key`, when it had one).
    fn kept<T>(&mut self, read: Result<T, ReadError>, key: Option<&'static str>) -> Option<T> {
        match read {
            Ok(value) => Some(value),
            Err(error) => {
                self.fail(error, key);
                None
            }
        }
    }

    /// The field `alias` read as `key` when there is no `key`.
    #[inline(never)]
    pub fn alias(&mut self, alias: &'static str, key: &'static str) {
        if !self.object.contains_key(key)
            && let Some(value) = self.object.remove(alias)
        {
            self.object.insert(key.to_owned(), value);
        }
    }

    /// Refuses a field not among `known`, as `#[serde(deny_unknown_fields)]` does.
    #[inline(never)]
    pub fn deny_unknown(&self, known: &'static [&'static str]) -> Result<(), ReadError> {
        match self
            .object
            .keys()
            .find(|key| !known.contains(&key.as_str()))
        {
            Some(key) => Err(
                ReadError::from(<serde_json::Error as de::Error>::unknown_field(key, known))
                    .at_key(key),
            ),
            None => Ok(()),
        }
    }

    #[inline(never)]
    fn fail(&mut self, error: ReadError, key: Option<&'static str>) {
        if self.error.is_none() {
            self.error = Some(match key {
                Some(key) => error.at_key(key),
                None => error,
            });
        }
    }

    /// Why a field did not read.
    #[inline(never)]
    pub fn error(&mut self) -> ReadError {
        self.error
            .take()
            .unwrap_or_else(|| de::Error::custom("a field did not read"))
    }

    /// A field's error in any deserializer's error type. To [`Reader`], whose error
    /// type it already is, it goes back whole, its path kept as a path
    /// ([`ReadError::custom`] takes it from [`REFUSED`]); any other deserializer gets
    /// the path inside the struct in the message.
    #[inline(never)]
    pub fn refused<E: de::Error>(error: ReadError) -> E {
        let message = Located(&error).to_string();
        REFUSED.with(|slot| *slot.borrow_mut() = Some((message.clone(), error)));
        E::custom(message)
    }
}

/// An error with its path before the message, when it has one.
struct Located<'a>(&'a ReadError);

impl fmt::Display for Located<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.path().as_str() {
            "." => self.0.fmt(f),
            path => write!(f, "{path}: {}", self.0),
        }
    }
}

thread_local! {
    /// The error [`Fields::refused`] last gave, with its message: when
    /// [`ReadError::custom`] is then called with that message, it is that error.
    static REFUSED: RefCell<Option<(String, ReadError)>> = const { RefCell::new(None) };
}

/// The error [`Fields::refused`] gave as `message`, if it was the last.
pub(crate) fn refused_as(message: &str) -> Option<ReadError> {
    let (said, error) = REFUSED.with(|slot| slot.borrow_mut().take())?;
    (said == message).then_some(error)
}

/// The name under which [`Reader`] hands its [`Value`] over whole rather than visit
/// it: a struct read by [`Fields`] takes the object it was given without copying it.
/// Any other deserializer reads the value as serde does.
pub(crate) const HAND_OVER: &str = "$familiar::json::Value";

thread_local! {
    /// The value [`Reader`] hands over, until [`TakeValue`] takes it.
    static HANDED: RefCell<Option<Value>> = const { RefCell::new(None) };
}

/// Called by [`Reader`] for a newtype struct named [`HAND_OVER`].
pub(crate) fn hand_over<'de, V: Visitor<'de>>(
    value: Value,
    visitor: V,
) -> Result<V::Value, ReadError> {
    HANDED.with(|slot| *slot.borrow_mut() = Some(value));
    visitor.visit_unit()
}

/// A value, taken from [`Reader`]'s hand or read from any other deserializer.
struct TakeValue;

impl<'de> Visitor<'de> for TakeValue {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(HANDED
            .with(|slot| slot.borrow_mut().take())
            .unwrap_or(Value::Null))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Value, D::Error> {
        serde::Deserialize::deserialize(deserializer)
    }
}

/// A missing field: `None` to an `Option`, refused as missing to anything else.
struct Missing(&'static str);

impl<'de> Deserializer<'de> for Missing {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, ReadError> {
        Err(de::Error::missing_field(self.0))
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_none()
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map struct enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    use crate::{Read, ReadError, from_value};

    /// The struct as serde's derive reads it.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Derived {
        name: String,
        count: u32,
        note: Option<String>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(rename = "type")]
        kind: String,
        #[serde(skip)]
        cache: u8,
        items: Vec<Inner2>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Inner2 {
        id: u32,
    }

    /// The same through `#[derive(Read)]`, from the same attributes.
    #[derive(Debug, PartialEq, Serialize, Read)]
    struct Ours {
        name: String,
        count: u32,
        note: Option<String>,
        #[serde(default)]
        tags: Vec<String>,
        #[serde(rename = "type")]
        kind: String,
        #[serde(skip)]
        cache: u8,
        items: Vec<Ours2>,
    }

    #[derive(Debug, PartialEq, Serialize, Read)]
    struct Ours2 {
        id: u32,
    }

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct StrictDerived {
        keywords: Vec<String>,
        weight: Option<u8>,
    }

    #[derive(Debug, Read)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Strict {
        keywords: Vec<String>,
        weight: Option<u8>,
    }

    #[test]
    fn unknown_fields_are_refused_when_denied_as_the_derive_refuses_them() {
        for input in [
            json!({"keywords": [], "colour": 1}),
            json!({"keywords": ["a"]}),
        ] {
            let refused = |e: ReadError| (e.path(), e.to_string());
            let ours = from_value::<Strict>(input.clone())
                .map(|_| ())
                .map_err(refused);
            let theirs = from_value::<StrictDerived>(input.clone())
                .map(|_| ())
                .map_err(refused);
            assert_eq!(ours, theirs, "{input}");
        }
    }

    fn both(value: Value) -> (Result<String, String>, Result<String, String>) {
        let ours = from_value::<Ours>(value.clone());
        let theirs = from_value::<Derived>(value);
        let show = |debug: String| debug.replace("Ours2", "Inner2").replace("Ours", "Derived");
        (
            ours.map(|v| show(format!("{v:?}")))
                .map_err(|e| e.to_string()),
            theirs.map(|v| format!("{v:?}")).map_err(|e| e.to_string()),
        )
    }

    #[test]
    fn reads_what_the_derive_reads() {
        let inputs = [
            json!({"name": "a", "count": 1, "type": "t", "items": []}),
            json!({"name": "a", "count": 1, "note": "n", "tags": ["x"], "type": "t", "items": [{"id": 2}], "extra": 1}),
            json!({"name": "a", "count": 1, "note": null, "type": "t", "items": [], "cache": 9}),
        ];
        for input in inputs {
            let (ours, theirs) = both(input.clone());
            assert!(ours.is_ok(), "{input}: {ours:?}");
            assert_eq!(ours, theirs, "{input}");
        }
    }

    #[test]
    fn refuses_what_the_derive_refuses_with_the_same_path_and_words() {
        let inputs = [
            json!({"count": 1, "type": "t", "items": []}),
            json!({"name": "a", "count": "1", "type": "t", "items": []}),
            json!({"name": "a", "count": 1, "type": "t", "items": [{}]}),
            json!({"name": "a", "count": 1, "type": "t", "items": [{"id": 1}, {"id": -1}]}),
            json!({"name": "a", "count": 1, "tags": null, "type": "t", "items": []}),
            json!({"name": "a", "count": 1, "kind": "t", "items": []}),
            json!(["a", 1]),
            json!(null),
        ];
        let refused = |error: ReadError| (error.path(), error.to_string());
        for input in inputs {
            let ours = from_value::<Ours>(input.clone())
                .map(|_| ())
                .map_err(refused);
            let theirs = from_value::<Derived>(input.clone())
                .map(|_| ())
                .map_err(refused);
            assert!(ours.is_err(), "{input}");
            let theirs =
                theirs.map_err(|(path, message)| (path, message.replace("Derived", "Ours")));
            assert_eq!(ours, theirs, "{input}");
        }
    }

    #[test]
    fn a_struct_inside_a_derived_one_keeps_the_whole_path() {
        #[derive(Debug, Deserialize)]
        struct Outer {
            #[allow(dead_code)]
            runs: Vec<Ours2>,
        }
        let error = from_value::<Outer>(json!({"runs": [{"id": 1}, {"id": "x"}]})).unwrap_err();
        assert_eq!(error.path(), "runs[1].id");
        assert_eq!(
            error.to_string(),
            "invalid type: string \"x\", expected u32"
        );
    }

    #[test]
    fn another_deserializer_gets_the_path_in_the_message() {
        let error = serde_json::from_str::<Ours>(
            r#"{"name":"a","count":1,"type":"t","items":[{"id":"x"}]}"#,
        )
        .unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("items[0].id: invalid type: string \"x\", expected u32"),
            "{error}"
        );
    }

    #[test]
    fn reads_from_text_through_serde_json_as_well() {
        let ours: Ours =
            serde_json::from_str(r#"{"name":"a","count":2,"type":"t","items":[{"id":1}]}"#)
                .unwrap();
        assert_eq!(ours.items, vec![Ours2 { id: 1 }]);
        assert_eq!(ours.count, 2);
    }
}
