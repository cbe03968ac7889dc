//! The one deserializer every typed value is read with: from a [`Value`], naming the
//! path to what was wrong (`rules[0].keywords`). serde_json's own `Value` deserializer
//! would do, but a second reader with `serde_path_to_error` around it for the config
//! checks doubled every type they read, and serde_json's also reads a struct from an
//! array (`[1, "a"]` for `{"id": 1, "name": "a"}`), code compiled for every struct
//! though no one writes that. Messages are serde_json's, word for word.

use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, IntoDeserializer, MapAccess, SeqAccess,
    Unexpected, VariantAccess, Visitor,
};
use serde_json::{Map, Value};

use crate::error::{Described, ReadError, Segment};

// How the reader makes an error stands here, not in `error`: a message may be the one
// `fields` handed over, and `fields` reads through this reader.
impl de::Error for ReadError {
    /// An error made of a message; the one a struct read by [`super::fields`] gave
    /// back, with its path, when the message is its.
    fn custom<T: fmt::Display>(message: T) -> Self {
        let message = message.to_string();
        match crate::fields::refused_as(&message) {
            Some(error) => error,
            None => serde_json::Error::custom(message).into(),
        }
    }

    fn invalid_type(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::custom(format_args!(
            "invalid type: {}, expected {expected}",
            Described(unexpected)
        ))
    }

    fn invalid_value(unexpected: Unexpected<'_>, expected: &dyn de::Expected) -> Self {
        Self::custom(format_args!(
            "invalid value: {}, expected {expected}",
            Described(unexpected)
        ))
    }
}

/// `value` read as a `T`.
pub fn from_value<T: de::DeserializeOwned>(value: Value) -> Result<T, ReadError> {
    T::deserialize(Reader(value))
}

/// A [`Value`] to read from.
pub struct Reader(pub Value);

pub(crate) fn unexpected(value: &Value) -> Unexpected<'_> {
    match value {
        Value::Null => Unexpected::Unit,
        Value::Bool(b) => Unexpected::Bool(*b),
        Value::Number(n) => match (n.as_u64(), n.as_i64(), n.as_f64()) {
            (Some(u), _, _) => Unexpected::Unsigned(u),
            (_, Some(i), _) => Unexpected::Signed(i),
            (_, _, Some(f)) => Unexpected::Float(f),
            _ => Unexpected::Other("number"),
        },
        Value::String(s) => Unexpected::Str(s),
        Value::Array(_) => Unexpected::Seq,
        Value::Object(_) => Unexpected::Map,
    }
}

#[inline(never)]
fn invalid(value: &Value, expected: &dyn de::Expected) -> ReadError {
    de::Error::invalid_type(unexpected(value), expected)
}

// The generic functions below stay small: what does not depend on the visitor (taking
// the entries apart, checking none is left, dropping what is) is a plain function, so
// it is compiled once rather than once per type read.

fn visit_array<'de, V: Visitor<'de>>(array: Vec<Value>, visitor: V) -> Result<V::Value, ReadError> {
    let mut seq = Seq::new(array);
    let value = visitor.visit_seq(&mut seq);
    seq.finish(value)
}

fn visit_object<'de, V: Visitor<'de>>(
    object: Map<String, Value>,
    visitor: V,
) -> Result<V::Value, ReadError> {
    let mut map = Entries::new(object);
    let value = visitor.visit_map(&mut map);
    map.finish(value)
}

/// A number's methods: a number is read as itself, anything else is refused (not
/// through `deserialize_any`, which would compile every `visit_*` of the visitor).
macro_rules! numbers {
    ($($method:ident)*) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
                match self.0 {
                    Value::Number(n) => visit_number(&n, visitor),
                    other => Err(invalid(&other, &visitor)),
                }
            }
        )*
    };
}

impl<'de> Deserializer<'de> for Reader {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => visit_number(&n, visitor),
            Value::String(s) => visitor.visit_string(s),
            Value::Array(array) => visit_array(array, visitor),
            Value::Object(object) => visit_object(object, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Null => visitor.visit_unit(),
            other => Err(invalid(&other, &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        if name == crate::fields::HAND_OVER {
            return crate::fields::hand_over(self.0, visitor);
        }
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Array(array) => visit_array(array, visitor),
            other => Err(invalid(&other, &visitor)),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_map<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Object(object) => visit_object(object, visitor),
            other => Err(invalid(&other, &visitor)),
        }
    }

    /// An object only: a struct is never written as an array.
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        self.deserialize_map(visitor)
    }

    /// Externally tagged: `"unit"` or `{"variant": body}`.
    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::String(variant) => visitor.visit_enum(Variant {
                name: variant,
                body: None,
            }),
            Value::Object(object) => {
                let mut entries = object.into_iter();
                match (entries.next(), entries.next()) {
                    (Some((name, body)), None) => visitor.visit_enum(Variant {
                        name,
                        body: Some(body),
                    }),
                    _ => Err(de::Error::invalid_value(
                        Unexpected::Map,
                        &"map with a single key",
                    )),
                }
            }
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"string or map",
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        visitor.visit_unit()
    }

    fn deserialize_bool<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::Bool(b) => visitor.visit_bool(b),
            other => Err(invalid(&other, &visitor)),
        }
    }

    fn deserialize_string<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            other => Err(invalid(&other, &visitor)),
        }
    }

    fn deserialize_str<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_char<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_identifier<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_string(visitor)
    }

    fn deserialize_bytes<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        match self.0 {
            Value::String(s) => visitor.visit_string(s),
            Value::Array(array) => visit_array(array, visitor),
            other => Err(invalid(&other, &visitor)),
        }
    }

    fn deserialize_byte_buf<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, ReadError> {
        self.deserialize_bytes(visitor)
    }

    numbers! {
        deserialize_i8 deserialize_i16 deserialize_i32 deserialize_i64 deserialize_i128
        deserialize_u8 deserialize_u16 deserialize_u32 deserialize_u64 deserialize_u128
        deserialize_f32 deserialize_f64
    }
}

fn visit_number<'de, V: Visitor<'de>>(
    n: &serde_json::Number,
    visitor: V,
) -> Result<V::Value, ReadError> {
    if let Some(u) = n.as_u64() {
        visitor.visit_u64(u)
    } else if let Some(i) = n.as_i64() {
        visitor.visit_i64(i)
    } else {
        visitor.visit_f64(n.as_f64().unwrap_or(f64::NAN))
    }
}

impl<'de> IntoDeserializer<'de, ReadError> for Reader {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

struct Seq {
    items: std::vec::IntoIter<Value>,
    length: usize,
    index: usize,
}

impl Seq {
    #[inline(never)]
    fn new(array: Vec<Value>) -> Self {
        Self {
            length: array.len(),
            items: array.into_iter(),
            index: 0,
        }
    }

    /// `value`, unless items were left unread.
    fn finish<T>(self, value: Result<T, ReadError>) -> Result<T, ReadError> {
        let value = value?;
        self.check().map(|()| value)
    }

    #[inline(never)]
    fn check(self) -> Result<(), ReadError> {
        match self.items.len() {
            0 => Ok(()),
            _ => Err(de::Error::invalid_length(
                self.length,
                &"fewer elements in array",
            )),
        }
    }

    #[inline(never)]
    fn next_item(&mut self) -> Option<(Reader, usize)> {
        let item = self.items.next()?;
        self.index += 1;
        Some((Reader(item), self.index - 1))
    }
}

impl<'de> SeqAccess<'de> for Seq {
    type Error = ReadError;

    fn next_element_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ReadError> {
        let Some((item, index)) = self.next_item() else {
            return Ok(None);
        };
        match seed.deserialize(item) {
            Ok(value) => Ok(Some(value)),
            Err(error) => Err(error.at(Segment::Index(index))),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.items.len())
    }
}

struct Entries {
    entries: serde_json::map::IntoIter,
    length: usize,
    /// The key just read and its value, not yet read.
    key: String,
    value: Option<Value>,
}

impl Entries {
    #[inline(never)]
    fn new(object: Map<String, Value>) -> Self {
        Self {
            length: object.len(),
            entries: object.into_iter(),
            key: String::new(),
            value: None,
        }
    }

    /// `value`, unless entries were left unread.
    fn finish<T>(self, value: Result<T, ReadError>) -> Result<T, ReadError> {
        let value = value?;
        self.check().map(|()| value)
    }

    #[inline(never)]
    fn check(self) -> Result<(), ReadError> {
        match self.entries.len() {
            0 => Ok(()),
            _ => Err(de::Error::invalid_length(
                self.length,
                &"fewer elements in map",
            )),
        }
    }

    /// The next key, its value kept for [`MapAccess::next_value_seed`].
    #[inline(never)]
    fn next_key(&mut self) -> Option<de::value::StrDeserializer<'_, ReadError>> {
        let (key, value) = self.entries.next()?;
        self.key = key;
        self.value = Some(value);
        Some(self.key.as_str().into_deserializer())
    }

    #[inline(never)]
    fn next_value(&mut self) -> Result<Reader, ReadError> {
        match self.value.take() {
            Some(value) => Ok(Reader(value)),
            None => Err(de::Error::custom("value is missing")),
        }
    }

    #[inline(never)]
    fn at_key(&self, error: ReadError) -> ReadError {
        error.at(Segment::Key(self.key.clone()))
    }
}

impl<'de> MapAccess<'de> for Entries {
    type Error = ReadError;

    fn next_key_seed<S: DeserializeSeed<'de>>(
        &mut self,
        seed: S,
    ) -> Result<Option<S::Value>, ReadError> {
        let read = match self.next_key() {
            Some(key) => seed.deserialize(key),
            None => return Ok(None),
        };
        // A key refused (unknown, say) is named in the path, as for its value.
        read.map(Some).map_err(|e| self.at_key(e))
    }

    fn next_value_seed<S: DeserializeSeed<'de>>(&mut self, seed: S) -> Result<S::Value, ReadError> {
        let value = self.next_value()?;
        seed.deserialize(value).map_err(|e| self.at_key(e))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

struct Variant {
    name: String,
    body: Option<Value>,
}

impl<'de> EnumAccess<'de> for Variant {
    type Error = ReadError;
    type Variant = Body;

    fn variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<(S::Value, Body), ReadError> {
        let variant = seed.deserialize(Reader(Value::String(self.name.clone())))?;
        Ok((
            variant,
            Body {
                name: self.name,
                value: self.body,
            },
        ))
    }
}

/// An externally tagged variant's body (none for `"unit"`).
pub struct Body {
    name: String,
    value: Option<Value>,
}

impl Body {
    fn value(self, expected: &'static str) -> Result<(Value, String), ReadError> {
        match self.value {
            Some(value) => Ok((value, self.name)),
            None => Err(de::Error::invalid_type(Unexpected::UnitVariant, &expected)),
        }
    }
}

impl<'de> VariantAccess<'de> for Body {
    type Error = ReadError;

    fn unit_variant(self) -> Result<(), ReadError> {
        match self.value {
            None | Some(Value::Null) => Ok(()),
            Some(other) => Err(de::Error::invalid_type(unexpected(&other), &"unit")),
        }
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(self, seed: S) -> Result<S::Value, ReadError> {
        match self.value {
            Some(value) => seed
                .deserialize(Reader(value))
                .map_err(|e| e.at(Segment::Key(self.name))),
            None => Err(de::Error::invalid_type(
                Unexpected::UnitVariant,
                &"newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(
        self,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let (value, name) = self.value("tuple variant")?;
        match value {
            Value::Array(array) => visit_array(array, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"tuple variant",
            )),
        }
        .map_err(|e| e.at(Segment::Key(name)))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, ReadError> {
        let (value, name) = self.value("struct variant")?;
        match value {
            Value::Object(object) => visit_object(object, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"struct variant",
            )),
        }
        .map_err(|e| e.at(Segment::Key(name)))
    }
}

#[cfg(test)]
mod tests;
