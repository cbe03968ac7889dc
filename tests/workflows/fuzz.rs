//! The loader fuzzed, bounded: arbitrary text, arbitrary JSON, and the seed's file with
//! any part replaced by arbitrary JSON never panic; every problem carries a path into
//! the file; a file that loads plays arbitrary messages without panicking.

use familiar::workflow::{Character, LoadError};
use proptest::prelude::*;
use serde_json::{Value, json};

use super::bar::{Bar, SEED_SCHEMA};

/// Cases per property: `default` in the normal run, `PROPTEST_CASES` when set (as in
/// `tests/properties.rs`), so a long fuzzing run reaches the loader too.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(cases)
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e6f64..1e6).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
        // Strings a pattern or a placeholder might hold.
        prop::sample::select(vec![
            "(",
            "(?<drink>\\w+)",
            "{context.x}",
            "a{99999}",
            "completed"
        ])
        .prop_map(|s| json!(s)),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_]{0,12}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// Every place in `value`, as JSON pointers.
fn pointers(value: &Value, at: String, out: &mut Vec<String>) {
    match value {
        Value::Object(map) => {
            for (key, inner) in map {
                pointers(inner, format!("{at}/{key}"), out);
            }
        }
        Value::Array(items) => {
            for (i, inner) in items.iter().enumerate() {
                pointers(inner, format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
    out.push(at);
}

/// Each problem's path starts at the root or at a top-level key of `file`.
fn assert_located(errors: &[LoadError], file: &Value) {
    assert!(!errors.is_empty(), "a refused file says why");
    for error in errors {
        let top = error.path.split(['.', '[']).next().unwrap_or_default();
        let known = top == "$"
            || file.get(top).is_some()
            || ["identity", "workflows", "offline_reply"].contains(&top);
        assert!(known, "{error} has no path into the file");
        assert!(!error.message.is_empty());
    }
}

proptest! {
    #![proptest_config(cases(300))]

    #[test]
    fn arbitrary_text_never_panics_the_loader(text in ".{0,200}") {
        if let Err(errors) = Character::from_json(&text) {
            assert_located(&errors, &Value::Null);
        }
    }

    #[test]
    fn arbitrary_json_never_panics_the_loader(file in arb_json()) {
        if let Err(errors) = Character::from_json(&file.to_string()) {
            assert_located(&errors, &file);
        }
    }

    #[test]
    fn the_seeds_file_with_any_part_replaced_loads_or_says_where(
        pick in any::<prop::sample::Index>(),
        replacement in arb_json(),
        messages in prop::collection::vec(".{0,40}", 0..4),
    ) {
        let mut file: Value = serde_json::from_str(SEED_SCHEMA).unwrap();
        let mut places = Vec::new();
        pointers(&file, String::new(), &mut places);
        let place = pick.get(&places).clone();
        match file.pointer_mut(&place) {
            Some(slot) => *slot = replacement,
            None => unreachable!("{place} was listed"),
        }
        let text = file.to_string();
        match Character::from_json(&text) {
            Err(errors) => assert_located(&errors, &file),
            Ok(_) => {
                let bar = Bar::new(&text);
                for message in ["I'll have a whiskey", "here you go", "nevermind"]
                    .into_iter()
                    .chain(messages.iter().map(String::as_str))
                {
                    let (prepared, _) = bar.say(message);
                    let _ = bar.character.offline_reply(&prepared);
                }
            }
        }
    }
}
