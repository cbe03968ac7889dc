//! Internally tagged enums (`{"type": "text", "text": "…"}`) read without serde's
//! derived reader. serde's derive for `#[serde(tag = …)]` buffers the object into a
//! `Content` tree and reads every variant's fields from it, instantiating each nested
//! type's deserializer once more, for `Content`; and even read through an externally
//! tagged mirror, each struct variant keeps a derived visitor of its own (1 KB of wasm
//! apiece). `#[derive(Read)]` on an enum with `#[serde(tag = "…")]` writes its
//! `Deserialize` as a match on the tag, each variant's fields taken as a struct's.
//! `Serialize` stays derived with serde's attribute, so what is written does not
//! change.

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

    /// The same enum through `#[derive(Read)]`, from the same attributes.
    #[derive(Debug, PartialEq, Serialize, crate::Read)]
    #[serde(tag = "kind", rename_all = "snake_case")]
    enum Ours {
        Unit,
        Fields {
            a: u32,
            #[serde(default, skip_serializing_if = "Option::is_none")]
            b: Option<String>,
        },
        Wrapped(Inner),
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
                // The same words; ours also names the field, which serde's derive
                // loses in its buffer (`a: invalid type: …`).
                (Err(ours), Err(derived)) => {
                    let ours = ours.replace("Ours", "Derived");
                    let unnamed = ours.strip_prefix("a: ").unwrap_or(&ours);
                    assert_eq!(unnamed, derived, "{input}");
                }
                _ => panic!("{input}: {ours:?} against serde's {derived:?}"),
            }
        }
    }

    #[test]
    fn through_our_reader_an_error_names_the_field_serdes_derive_loses() {
        let refused = |input: Value| {
            let error = crate::from_value::<Ours>(input).unwrap_err();
            (error.path(), error.to_string())
        };
        let cases = [
            (
                json!({"kind": "fields", "a": "one"}),
                "a",
                "invalid type: string \"one\", expected u32",
            ),
            (
                json!({"kind": "wrapped", "c": 1}),
                "c",
                "invalid type: integer `1`, expected a boolean",
            ),
            (json!({"kind": "wrapped"}), ".", "missing field `c`"),
            (
                json!({"kind": "nope"}),
                ".",
                "unknown variant `nope`, expected one of `unit`, `fields`, `wrapped`",
            ),
            (
                json!({"kind": 1}),
                ".",
                "invalid type: integer `1`, expected variant identifier",
            ),
        ];
        for (input, path, message) in cases {
            assert_eq!(
                refused(input.clone()),
                (path.to_owned(), message.to_owned()),
                "{input}"
            );
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
