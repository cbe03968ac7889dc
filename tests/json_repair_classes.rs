//! Classes of broken JSON with a generator, as properties: any cut of a valid document
//! repairs to a value consistent with what was cut (or a clear error), and documents
//! written with the breakage models add (Python literals and tuples, digit separators,
//! comments of every style, invisible spaces, unquoted keys, single quotes) repair to
//! the value meant. The corpus (tests/fixtures/json-repair) holds the cases one by one.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use familiar::base::json;
use proptest::prelude::*;
use serde_json::{Map, Value, json};

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        // Quarters: exact in binary, so reading them back cannot round.
        (-4_000_000i64..4_000_000).prop_map(|q| json!(q as f64 / 4.0)),
        "[a-zA-Z0-9 ,.:!?'\"\\\\/{}\\[\\]é✓]{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 40, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec(("[a-z_][a-z0-9_]{0,6}", inner), 0..5)
                .prop_map(|members| Value::Object(members.into_iter().collect())),
        ]
    })
}

fn arb_document() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::collection::vec(arb_value(), 0..5).prop_map(Value::Array),
        prop::collection::vec(("[a-z_][a-z0-9_]{0,6}", arb_value()), 0..5)
            .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
    ]
}

/// Whether `repaired` could be what a document cut off from `original` meant: null
/// for a value lost, a prefix of a string, a number for a number, the keys and items
/// read so far.
fn consistent(repaired: &Value, original: &Value) -> bool {
    match (repaired, original) {
        (Value::Null, _) => true,
        (Value::Bool(a), Value::Bool(b)) => a == b,
        (Value::Number(_), Value::Number(_)) => true,
        (Value::String(a), Value::String(b)) => b.starts_with(a.as_str()),
        (Value::Array(a), Value::Array(b)) => {
            a.len() <= b.len() && a.iter().zip(b).all(|(x, y)| consistent(x, y))
        }
        (Value::Object(a), Value::Object(b)) => a
            .iter()
            .all(|(key, x)| b.get(key).is_some_and(|y| consistent(x, y))),
        _ => false,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn every_cut_of_a_document_repairs_to_a_consistent_value_or_an_error(
        value in arb_document(),
        pretty in any::<bool>(),
    ) {
        let text = if pretty {
            serde_json::to_string_pretty(&value).unwrap()
        } else {
            serde_json::to_string(&value).unwrap()
        };
        for (at, _) in text.char_indices().skip(1) {
            let cut = &text[..at];
            if let Ok(repaired) = json::extract(cut) {
                let repaired: Value = serde_json::from_str(&repaired).unwrap();
                prop_assert!(
                    consistent(&repaired, &value),
                    "{:?} repaired to {} from {}", cut, repaired, text
                );
            }
        }
    }

    #[test]
    fn documents_written_with_model_habits_repair_to_the_value_meant(
        value in arb_document(),
        habits in any::<[bool; 8]>(),
        seed in any::<u64>(),
    ) {
        let mut writer = Writer { habits, seed, out: String::new() };
        writer.value(&value);
        let repaired = json::extract(&writer.out);
        prop_assert!(repaired.is_ok(), "{:?}: {:?}", writer.out, repaired);
        let repaired: Value = serde_json::from_str(&repaired.unwrap()).unwrap();
        prop_assert_eq!(repaired, value, "{}", writer.out);
    }
}

/// Writes a value as a model with some habits would: Python's literals and tuples,
/// digit separators, comments, invisible spaces, unquoted keys, single quotes.
struct Writer {
    habits: [bool; 8],
    seed: u64,
    out: String,
}

impl Writer {
    /// A pseudo-random choice, so one habit is not applied everywhere alike.
    fn roll(&mut self) -> bool {
        self.seed = self
            .seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.seed >> 63 == 1
    }

    fn space(&mut self) {
        const SPACES: [&str; 4] = ["\u{200b}", "\u{a0}", "\u{feff}", " "];
        const COMMENTS: [&str; 3] = ["/* note */", "// note\n", "# note\n"];
        if self.habits[0] && self.roll() {
            let at = (self.seed % 4) as usize;
            self.out.push_str(SPACES[at]);
        }
        if self.habits[1] && self.roll() {
            let at = (self.seed % 3) as usize;
            self.out.push_str(COMMENTS[at]);
        }
    }

    fn value(&mut self, value: &Value) {
        self.space();
        match value {
            Value::Null if self.habits[2] => self.out.push_str("None"),
            Value::Bool(true) if self.habits[2] => self.out.push_str("True"),
            Value::Bool(false) if self.habits[2] => self.out.push_str("False"),
            Value::Number(n) if self.habits[3] && n.as_i64().is_some_and(|n| n.abs() >= 1000) => {
                self.out.push_str(&separated(&n.to_string()));
            }
            Value::String(s) if self.habits[4] && !s.contains(['\'', '"', '\\']) => {
                self.out.push('\'');
                self.out.push_str(s);
                self.out.push('\'');
            }
            Value::Array(items) => {
                let tuple = self.habits[5] && items.len() >= 2 && !self.out.is_empty();
                self.out.push(if tuple { '(' } else { '[' });
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(", ");
                    }
                    self.value(item);
                }
                self.space();
                self.out.push(if tuple { ')' } else { ']' });
            }
            Value::Object(members) => {
                self.out.push('{');
                for (i, (key, item)) in members.iter().enumerate() {
                    if i > 0 {
                        self.out.push(',');
                    }
                    self.space();
                    if self.habits[6] && self.roll() {
                        self.out.push_str(key);
                    } else {
                        self.out.push_str(&serde_json::to_string(key).unwrap());
                    }
                    self.out.push_str(": ");
                    self.value(item);
                }
                self.space();
                self.out.push('}');
            }
            other => self.out.push_str(&other.to_string()),
        }
        self.space();
    }
}

/// `1234567` as `1_234_567`.
fn separated(digits: &str) -> String {
    let (sign, digits) = digits.strip_prefix('-').map_or(("", digits), |d| ("-", d));
    let mut out = String::from(sign);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push('_');
        }
        out.push(c);
    }
    out
}

/// Repairs `text` and reads the result as a value.
fn repaired(text: &str) -> Result<Value, TestCaseError> {
    let repaired =
        json::extract(text).map_err(|e| TestCaseError::fail(format!("{text:?}: {e}")))?;
    Ok(serde_json::from_str(&repaired).unwrap())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// `"the tool said {"k": 1}, then"`: an object written inside a string, its
    /// quotes unescaped, stays text of the string.
    #[test]
    fn a_string_holding_an_object_keeps_it_as_text(
        before in "[a-z][a-z ]{0,10}",
        inner in prop::collection::vec(("[a-z]{1,5}", -999i64..999), 1..3),
        after in "[a-z ,.]{0,10}",
        next in -999i64..999,
    ) {
        let members: Vec<String> =
            inner.iter().map(|(k, n)| format!("\"{k}\": {n}")).collect();
        let text = format!("{before} {{{}}}{after}", members.join(", "));
        let written = format!("{{\"x\": \"{text}\", \"y\": {next}}}");
        prop_assert_eq!(repaired(&written)?, json!({"x": text, "y": next}), "{}", written);
    }

    /// `"text⏎"⏎",`: a line holding only a quote after a string's own end quote line.
    #[test]
    fn a_stray_quote_line_after_a_string_is_dropped(
        items in prop::collection::vec("[a-z][a-z ]{0,9}", 1..5),
    ) {
        let written: Vec<String> = items.iter().map(|s| format!("\"{s}\n\"\n\"")).collect();
        let written = format!("[{}]", written.join(", "));
        prop_assert_eq!(repaired(&written)?, json!(items), "{}", written);
    }

    /// `"[^'"]+x"`: quotes inside a regex's character class are text of the string.
    #[test]
    fn quotes_in_a_character_class_are_text(
        classes in prop::collection::vec(
            ("[a-z]{0,4}", "\\^?", "\"|'\"|\"'", "[+*]?[a-z]{1,4}"),
            1..4,
        ),
        flag in "[a-z]{1,4}",
    ) {
        let pattern: String = classes
            .iter()
            .map(|(lead, not, quotes, tail)| format!("{lead}[{not}{quotes}]{tail}"))
            .collect();
        let written = format!("{{\"re\": \"{pattern}\", \"flag\": \"{flag}\"}}");
        prop_assert_eq!(repaired(&written)?, json!({"re": pattern, "flag": flag}), "{}", written);
    }

    /// `{"a": 1, as asked here is more. "b": 2}`: prose between members is dropped,
    /// and a `# note` before the `}` that closes a nested object ends at that `}`.
    #[test]
    fn prose_between_members_and_notes_before_a_brace_are_dropped(
        members in prop::collection::btree_map("[a-z]{1,6}", arb_value(), 1..5),
        prose in prop::collection::vec("[a-z]{1,8}( [a-z]{1,8}){0,3}\\.?", 4),
        noted in any::<bool>(),
    ) {
        let mut written = String::from("{");
        let mut expected = Map::new();
        for (i, (key, value)) in members.iter().enumerate() {
            if i > 0 {
                written.push_str(", ");
                written.push_str(&prose[i % prose.len()]);
                written.push(' ');
            }
            let value_text = serde_json::to_string(value).unwrap();
            if noted && i + 1 < members.len() {
                written.push_str(&format!("\"{key}\": {{\"v\": {value_text} # {} }}", prose[0]));
                expected.insert(key.clone(), json!({"v": value}));
            } else {
                written.push_str(&format!("\"{key}\": {value_text}"));
                expected.insert(key.clone(), value.clone());
            }
        }
        written.push('}');
        prop_assert_eq!(repaired(&written)?, Value::Object(expected), "{}", written);
    }
}

/// Found by `documents_written_with_model_habits_repair_to_the_value_meant` (its seed
/// is kept in the regressions file): a single-quoted `[` followed by invisible spaces
/// around the closing bracket was read as a character class, and the quote as text.
#[test]
fn a_bracket_in_single_quotes_before_invisible_spaces_is_a_string() {
    let written = "{\"aa\": [ '['\u{feff}]\u{200b}}";
    assert_eq!(
        repaired(written).unwrap(),
        json!({"aa": ["["]}),
        "{written}"
    );
    let written = "{\"re\": ['[' \u{200b}], \"b\": 1}";
    assert_eq!(
        repaired(written).unwrap(),
        json!({"re": ["["], "b": 1}),
        "{written}"
    );
}

/// Found by `documents_written_with_model_habits_repair_to_the_value_meant` (its seed
/// is kept in the regressions file): a single-quoted `}{` in a tuple let the split by
/// balanced brackets, which sees only double quotes, cut the text into two values.
#[test]
fn braces_in_single_quotes_do_not_split_the_text_into_several_values() {
    for (written, meant) in [
        (r#"{"a": (null, '}{')}"#, json!({"a": [null, "}{"]})),
        (r#"{"a": ['}{', 1]}"#, json!({"a": ["}{", 1]})),
        (r#"['][', {'b': '}{'}]"#, json!(["][", {"b": "}{"}])),
    ] {
        assert_eq!(repaired(written).unwrap(), meant, "{written}");
    }
    // Values in a row are still their list.
    assert_eq!(
        repaired("{'a': '}'}\n{'b': 2}").unwrap(),
        json!([{"a": "}"}, {"b": 2}])
    );
}

/// Found by the same property: a string `"["` ending right before its list's `]` and a
/// comment (`"["]// note`) was read as a character class holding a quote, and the string
/// ran to the end of the text.
#[test]
fn a_bracket_string_before_its_lists_end_and_a_comment_is_a_string() {
    for comment in ["// note\n", "/* note */", "# note\n"] {
        let written = format!("{{\"a\": [null, \"[\"]{comment}}}");
        assert_eq!(
            repaired(&written).unwrap(),
            json!({"a": [null, "["]}),
            "{written}"
        );
    }
    // Or before the `)` of a tuple.
    let written = r#"[(null, ["["])]"#;
    assert_eq!(
        repaired(written).unwrap(),
        json!([[null, ["["]]]),
        "{written}"
    );
    // A quote in a class followed by more pattern is still text, and so is one before
    // the `)` of a group the text opened.
    let written = r#"{"re": "[^"]+", "b": 1}"#;
    assert_eq!(
        repaired(written).unwrap(),
        json!({"re": "[^\"]+", "b": 1}),
        "{written}"
    );
    let written = r#"{"re": "(['"])", "b": 1}"#;
    assert_eq!(
        repaired(written).unwrap(),
        json!({"re": "(['\"])", "b": 1}),
        "{written}"
    );
}
