//! Internally tagged enums (`{"type": "text", "text": "…"}`) read without serde's
//! `Content` buffer. serde's own derive for `#[serde(tag = …)]` buffers the object
//! into a `Content` tree and reads every variant's fields from it, which instantiates
//! each nested type's deserializer once more, for `Content`; in the lean wasm that
//! machinery was about a tenth of the code. [`internally_tagged!`] keeps serde's
//! derived `Serialize` (so what is written does not change) and reads through a
//! [`Value`]: the tag picks the variant and the rest of the object is the variant's
//! body, read by the same deserializer as every other type (`read`).

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, VariantAccess, Visitor};
use serde_json::{Map, Value};

use super::read::{ReadError, Reader, unexpected};

/// Declares an enum written as serde writes `#[serde(tag = $tag)]` and read through
/// [`Retagged`]. Takes the enum as it would be written with serde's attribute, minus
/// the `tag` (given first) and minus `Serialize` and `Deserialize` in its derive.
macro_rules! internally_tagged {
    (
        tag = $tag:literal;
        $(#[doc = $doc:literal])*
        #[derive($($derive:ident),* $(,)?)]
        #[serde($($serde:tt)*)]
        $vis:vis enum $name:ident { $($body:tt)* }
    ) => {
        $(#[doc = $doc])*
        #[derive($($derive,)* ::serde::Serialize)]
        #[serde(tag = $tag, $($serde)*)]
        $vis enum $name { $($body)* }

        const _: () = {
            type Target = $name;

            // The same variants, externally tagged: serde derives their reading as a
            // `remote` of the enum above, so it builds `$name` itself.
            #[derive(::serde::Deserialize)]
            #[serde(remote = "Target", $($serde)*)]
            #[allow(dead_code)]
            enum Mirror { $($body)* }

            impl<'de> ::serde::Deserialize<'de> for $name {
                fn deserialize<D: ::serde::Deserializer<'de>>(
                    deserializer: D,
                ) -> Result<Self, D::Error> {
                    let retagged = $crate::base::json::tagged::Retagged::read(
                        deserializer,
                        $tag,
                        stringify!($name),
                    )?;
                    Mirror::deserialize(retagged).map_err(::serde::de::Error::custom)
                }
            }
        };
    };
}

pub(crate) use internally_tagged;

/// An internally tagged object as an externally tagged enum: the tag's value names
/// the variant, the other fields are its body.
pub struct Retagged {
    tag: Value,
    body: Map<String, Value>,
}

impl Retagged {
    /// Reads the object and takes its `tag` out; refuses what serde's derive refuses
    /// (not an object, no tag), in the same words.
    pub fn read<'de, D: Deserializer<'de>>(
        deserializer: D,
        tag: &'static str,
        name: &'static str,
    ) -> Result<Self, D::Error> {
        let value = <Value as serde::Deserialize>::deserialize(deserializer)?;
        Self::split(value, tag, name).map_err(de::Error::custom)
    }

    fn split(value: Value, tag: &'static str, name: &'static str) -> Result<Self, ReadError> {
        let mut body = match value {
            Value::Object(body) => body,
            other => {
                let expected = format!("internally tagged enum {name}");
                return Err(de::Error::invalid_type(
                    unexpected(&other),
                    &expected.as_str(),
                ));
            }
        };
        let tag = body
            .remove(tag)
            .ok_or_else(|| <ReadError as de::Error>::missing_field(tag))?;
        Ok(Self { tag, body })
    }
}

impl<'de> Deserializer<'de> for Retagged {
    type Error = ReadError;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom(
            "an internally tagged object reads only as an enum",
        ))
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_enum(self)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map struct identifier ignored_any
    }
}

impl<'de> EnumAccess<'de> for Retagged {
    type Error = ReadError;
    type Variant = Body;

    fn variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<(S::Value, Body), Self::Error> {
        let variant = seed.deserialize(Reader(self.tag))?;
        Ok((variant, Body(self.body)))
    }
}

/// A variant's fields: the object without its tag.
pub struct Body(Map<String, Value>);

impl<'de> VariantAccess<'de> for Body {
    type Error = ReadError;

    /// As serde's derive does, a unit variant ignores any other fields.
    fn unit_variant(self) -> Result<(), Self::Error> {
        Ok(())
    }

    fn newtype_variant_seed<S: DeserializeSeed<'de>>(
        self,
        seed: S,
    ) -> Result<S::Value, Self::Error> {
        seed.deserialize(Reader(Value::Object(self.0)))
    }

    fn tuple_variant<V: Visitor<'de>>(self, _: usize, _: V) -> Result<V::Value, Self::Error> {
        Err(de::Error::custom(
            "an internally tagged enum has no tuple variants",
        ))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        Reader(Value::Object(self.0)).deserialize_map(visitor)
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Inner {
        c: bool,
    }

    /// The enum as serde's own derive reads it.
    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Derived {
        Unit,
        Fields {
            a: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            b: Option<String>,
        },
        Wrapped(Inner),
    }

    internally_tagged! {
        tag = "kind";
        /// The same enum through [`internally_tagged!`].
        #[derive(Debug, PartialEq)]
        #[serde(rename_all = "snake_case")]
        enum Ours {
            Unit,
            Fields {
                a: u32,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                b: Option<String>,
            },
            Wrapped(Inner),
        }
    }

    fn read<T: serde::de::DeserializeOwned + Serialize>(input: &Value) -> Result<Value, String> {
        let value: T = serde_json::from_value(input.clone()).map_err(|e| e.to_string())?;
        serde_json::to_value(&value).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_and_refuses_as_serdes_own_derive_does_in_the_same_words() {
        let inputs = [
            json!({"kind": "unit"}),
            json!({"kind": "unit", "other": 1}),
            json!({"kind": "fields", "a": 1}),
            json!({"a": 1, "kind": "fields", "b": "x", "unknown": [1]}),
            json!({"kind": "fields"}),
            json!({"kind": "fields", "a": "one"}),
            json!({"kind": "wrapped", "c": true}),
            json!({"kind": "wrapped"}),
            json!({"kind": "nope"}),
            json!({"a": 1}),
            json!({"kind": 1}),
            json!("unit"),
            json!(null),
        ];
        for input in &inputs {
            let ours = read::<Ours>(input);
            let derived = read::<Derived>(input);
            match (&ours, &derived) {
                (Ok(ours), Ok(derived)) => assert_eq!(ours, derived, "{input}"),
                (Err(ours), Err(derived)) => {
                    assert_eq!(ours.replace("Ours", "Derived"), *derived, "{input}");
                }
                _ => panic!("{input}: {ours:?} against serde's {derived:?}"),
            }
        }
    }

    #[test]
    fn writes_what_serdes_own_derive_writes() {
        let pairs = [
            (
                serde_json::to_string(&Ours::Unit),
                serde_json::to_string(&Derived::Unit),
            ),
            (
                serde_json::to_string(&Ours::Fields {
                    a: 2,
                    b: Some("x".into()),
                }),
                serde_json::to_string(&Derived::Fields {
                    a: 2,
                    b: Some("x".into()),
                }),
            ),
            (
                serde_json::to_string(&Ours::Wrapped(Inner { c: false })),
                serde_json::to_string(&Derived::Wrapped(Inner { c: false })),
            ),
        ];
        for (ours, derived) in pairs {
            assert_eq!(ours.ok(), derived.ok());
        }
    }

    #[test]
    fn a_list_is_refused_though_serde_would_read_the_tag_first_in_it() {
        // serde's derive takes `["fields", 1]` for a tagged object; no version of
        // Familiar ever wrote one.
        assert!(read::<Ours>(&json!(["fields", 1])).is_err());
    }

    #[test]
    fn missing_tags_and_unknown_variants_are_named() {
        let missing = serde_json::from_value::<Ours>(json!({"a": 1})).err();
        assert_eq!(
            missing.map(|e| e.to_string()).as_deref(),
            Some("missing field `kind`")
        );
        let unknown = serde_json::from_value::<Ours>(json!({"kind": "nope"})).err();
        let derived = serde_json::from_value::<Derived>(json!({"kind": "nope"})).err();
        assert_eq!(
            unknown.map(|e| e.to_string()),
            derived.map(|e| e.to_string())
        );
    }
}
