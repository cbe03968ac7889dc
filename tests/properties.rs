//! Property tests: arbitrary bytes and arbitrary chunkings never panic the decoders, the
//! JSON repair or the PostgREST response reader; valid input decodes the same however it
//! is cut; each class of broken JSON models write repairs to the value meant; and the
//! program's one sort orders like the standard library's.
//!
//! The normal run tries a bounded number of cases; a longer fuzzing run sets
//! `PROPTEST_CASES` (e.g. `PROPTEST_CASES=100000 cargo test --release --test properties`).
#![cfg(not(target_arch = "wasm32"))]
// The standard library's sorts are fine here: tests are not shipped in the wasm.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::disallowed_methods
)]

mod common;

use std::rc::Rc;

use common::ScriptedHttp;
use familiar::base::clock::ManualClock;
use familiar::base::json;
use familiar::llm::openai::ChatStream;
use familiar::llm::openai::sse::{SseDecoder, SseEvent};
use familiar::llm::{ChatResponse, Delta, LlmError};
use familiar::store::postgrest::error_from_body;
use familiar::store::{Insert, PostgrestStore, Rpc, Select, Store, StoreError};
use futures::executor::block_on;
use proptest::prelude::*;
use serde_json::{Value, json};

/// Cases per property: `default` in the normal test run, `PROPTEST_CASES` when set.
fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(default);
    ProptestConfig::with_cases(cases)
}

/// Splits `input` at the given cut points (taken modulo its length).
fn cut<'a>(input: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (input.len() + 1)).collect();
    points.sort_unstable();
    let mut pieces = Vec::new();
    let mut start = 0;
    for point in points.into_iter().chain([input.len()]) {
        pieces.push(&input[start..point]);
        start = point;
    }
    pieces
}

fn sse_events(pieces: &[&[u8]]) -> Vec<SseEvent> {
    let mut decoder = SseDecoder::new();
    pieces.iter().flat_map(|p| decoder.feed(p)).collect()
}

fn chat(pieces: &[&[u8]]) -> (String, Result<ChatResponse, LlmError>) {
    let mut stream = ChatStream::new();
    let mut text = String::new();
    let mut sink = |d| {
        if let Delta::Text { text: t } = d {
            text.push_str(&t);
        }
    };
    let fed = pieces.iter().try_for_each(|p| stream.feed(p, &mut sink));
    let result = fed.and_then(|()| stream.finish(&mut sink));
    (text, result)
}

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-1e9f64..1e9).prop_map(|f| json!(f)),
        ".{0,12}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_ \"']{0,8}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A well-formed stream of content pieces and one tool call, with its expected text.
fn arb_stream() -> impl Strategy<Value = (Vec<u8>, String, String)> {
    (prop::collection::vec(".{0,10}", 1..6), ".{0,20}", prop_oneof!["\n", "\r\n", "\r"]).prop_map(
        |(pieces, args, eol)| {
            let mut out = String::new();
            let mut event = |data: Value| {
                out.push_str(&format!(": keep-alive{eol}data: {data}{eol}{eol}"));
            };
            for piece in &pieces {
                event(json!({"choices": [{"index": 0, "delta": {"content": piece}}]}));
            }
            let (first, second) = args.split_at(args.char_indices().nth(args.chars().count() / 2).map_or(0, |(i, _)| i));
            event(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "id": "c", "function": {"name": "f", "arguments": first}}]}}]}));
            event(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0, "function": {"arguments": second}}]}, "finish_reason": "tool_calls"}]}));
            out.push_str(&format!("data: [DONE]{eol}{eol}"));
            (out.into_bytes(), pieces.concat(), args)
        },
    )
}

proptest! {
    #![proptest_config(cases(512))]

    #[test]
    fn sse_decoding_never_panics_and_ignores_chunking(
        input in prop::collection::vec(any::<u8>(), 0..512),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        prop_assert_eq!(sse_events(&cut(&input, &cuts)), sse_events(&[&input]));
    }

    #[test]
    fn chat_streams_of_arbitrary_bytes_never_panic_and_ignore_chunking(
        input in prop::collection::vec(any::<u8>(), 0..512),
        cuts in prop::collection::vec(any::<usize>(), 0..12),
    ) {
        prop_assert_eq!(chat(&cut(&input, &cuts)).1, chat(&[&input]).1);
    }

    #[test]
    fn well_formed_streams_decode_alike_at_every_chunking(
        (input, text, args) in arb_stream(),
        cuts in prop::collection::vec(any::<usize>(), 0..16),
    ) {
        let (streamed, response) = chat(&cut(&input, &cuts));
        let response = response.unwrap();
        prop_assert_eq!(&response.text, &text);
        prop_assert_eq!(&streamed, &text);
        prop_assert_eq!(&response.tool_calls[0].arguments, &args);
    }

    #[test]
    fn repair_never_panics_and_never_returns_invalid_json(input in "\\PC{0,200}") {
        assert_repairs_to_json_or_refuses(&input)?;
    }

    #[test]
    fn repair_of_arbitrary_bytes_never_panics(input in prop::collection::vec(any::<u8>(), 0..300)) {
        assert_repairs_to_json_or_refuses(&String::from_utf8_lossy(&input))?;
    }

    #[test]
    fn repair_of_json_like_noise_never_returns_invalid_json(input in "[{}\\[\\],:\"'`“” a-z0-9TrueFalsNn.+\\-/*#\\\\\n\t]{0,80}") {
        assert_repairs_to_json_or_refuses(&input)?;
    }

    #[test]
    fn valid_json_is_returned_unchanged(value in arb_json(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        prop_assert_eq!(json::extract(&text).unwrap(), text.as_str());
        // Parsed alike (serde_json's float parsing is not exact, so not `value`).
        let repaired: Value = serde_json::from_str(&json::repair(&text).unwrap()).unwrap();
        prop_assert_eq!(repaired, serde_json::from_str::<Value>(&text).unwrap());
    }

    #[test]
    fn a_truncated_document_repairs_to_json(value in arb_json(), at in any::<usize>(), pretty in any::<bool>()) {
        let value = if value.is_object() || value.is_array() { value } else { json!([value]) };
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        let at = (1..=at % text.len() + 1).rev().find(|&i| text.is_char_boundary(i)).unwrap();
        let repaired = json::extract(&text[..at]);
        prop_assert!(repaired.is_ok(), "{:?}: {:?}", &text[..at], repaired);
        prop_assert!(serde_json::from_str::<Value>(&repaired.unwrap()).is_ok());
    }

    #[test]
    fn broken_json_as_models_write_it_repairs_to_the_value_meant(value in arb_plain(), style in arb_style()) {
        let mut text = String::new();
        write_broken(&value, &style, &mut text);
        if style.truncated {
            // Cut off where the closing brackets begin.
            text.truncate(text.trim_end_matches([']', '}']).len());
        }
        let repaired = json::extract(&text);
        prop_assert!(repaired.is_ok(), "{:?}: {:?}", text, repaired);
        let repaired: Value = serde_json::from_str(&repaired.unwrap()).unwrap();
        prop_assert_eq!(repaired, value, "{}", text);
    }

    #[test]
    fn newline_delimited_values_are_collected_into_a_list(values in prop::collection::vec(arb_plain(), 2..5), style in arb_style()) {
        let style = Style { truncated: false, ..style };
        let values: Vec<Value> = values.into_iter().map(|v| json!({"item": v})).collect();
        let mut text = String::new();
        for value in &values {
            write_broken(value, &style, &mut text);
            text.push('\n');
        }
        let repaired: Value = serde_json::from_str(&json::extract(&text).unwrap()).unwrap();
        prop_assert_eq!(repaired, Value::Array(values), "{}", text);
    }

    #[test]
    fn postgrest_error_bodies_never_panic(status in 100u16..600, body in arb_json()) {
        let error = error_from_body(status, &body, "people");
        prop_assert!(!error.to_string().is_empty());
    }

    #[test]
    fn postgrest_successes_are_read_or_refused_and_failures_are_errors(
        status in prop_oneof![Just(200u16), Just(201), Just(204), Just(400), Just(401), Just(404), Just(406), Just(409), Just(500), 100u16..600],
        body in prop_oneof![
            prop::collection::vec(any::<u8>(), 0..200),
            arb_json().prop_map(|v| v.to_string().into_bytes()),
        ],
    ) {
        for call in 0..3 {
            let http = Rc::new(ScriptedHttp::default());
            for _ in 0..4 {
                http.push(common::Reply::Respond {
                    status,
                    headers: Vec::new(),
                    chunks: vec![Ok(body.clone())],
                    hang: false,
                });
            }
            let store = PostgrestStore::new("http://127.0.0.1:1/rest/v1", "anon", http.clone(), Rc::new(ManualClock::default()), Box::new(|| 0.5));
            let outcome: Result<(), StoreError> = block_on(async {
                match call {
                    0 => store.select(&Select::from("people")).await.map(drop),
                    1 => store.insert(&Insert { table: "people".into(), rows: common::rows(json!([{"id": 1}])), on_conflict: None, client_key: None, returning: true }).await.map(drop),
                    _ => store.rpc(&Rpc { function: "f".into(), args: serde_json::Map::new() }).await.map(drop),
                }
            });
            if (200..300).contains(&status) {
                // A success is only as good as its body: rows for a select or an insert
                // that asked for them, any JSON (or nothing) for a function. Anything
                // else is an error, never "no rows".
                let readable = if body.iter().all(u8::is_ascii_whitespace) {
                    Some(Value::Null)
                } else {
                    serde_json::from_slice::<Value>(&body).ok()
                };
                let rows = match &readable {
                    Some(Value::Array(items)) => items.iter().all(Value::is_object),
                    Some(Value::Object(_)) => true,
                    _ => false,
                };
                let expected = if call == 2 { readable.is_some() } else { rows };
                prop_assert_eq!(outcome.is_ok(), expected, "{} {:?} {:?}", status, String::from_utf8_lossy(&body), outcome);
            } else {
                prop_assert!(outcome.is_err());
            }
        }
    }
}

fn assert_repairs_to_json_or_refuses(input: &str) -> Result<(), TestCaseError> {
    if let Ok(text) = json::extract(input) {
        prop_assert!(
            serde_json::from_str::<Value>(&text).is_ok(),
            "{:?} -> {:?}",
            input,
            text
        );
    }
    if let Ok(text) = json::repair(input) {
        prop_assert!(
            serde_json::from_str::<Value>(&text).is_ok(),
            "{:?} -> {:?}",
            input,
            text
        );
    }
    Ok(())
}

/// JSON whose strings and keys a model writes plainly (letters, digits, inner spaces),
/// so that every broken spelling below has one meaning.
fn arb_plain() -> impl Strategy<Value = Value> {
    let text = "[a-zA-Z0-9]([a-zA-Z0-9 ]{0,8}[a-zA-Z0-9])?";
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(|n| json!(n)),
        text.prop_map(Value::String),
    ];
    let tree = leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map("[a-z_][a-z_0-9]{0,6}", inner, 0..5)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    });
    prop::collection::btree_map("[a-z_][a-z_0-9]{0,6}", tree, 1..5)
        .prop_map(|m| Value::Object(m.into_iter().collect()))
}

/// One way a model breaks JSON (several at once).
#[derive(Debug, Clone)]
struct Style {
    quotes: (char, char),
    unquoted_keys: bool,
    trailing_commas: bool,
    comments: bool,
    python: bool,
    newlines_for_commas: bool,
    end_quotes_dropped: bool,
    truncated: bool,
}

fn arb_style() -> impl Strategy<Value = Style> {
    (
        prop_oneof![
            Just(('"', '"')),
            Just(('\'', '\'')),
            Just(('“', '”')),
            Just(('`', '`'))
        ],
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(
            |(
                quotes,
                unquoted_keys,
                trailing_commas,
                comments,
                python,
                newlines_for_commas,
                end_quotes_dropped,
                truncated,
            )| Style {
                quotes,
                unquoted_keys,
                trailing_commas,
                comments: comments && !end_quotes_dropped,
                python,
                newlines_for_commas: newlines_for_commas && !end_quotes_dropped,
                end_quotes_dropped,
                truncated,
            },
        )
}

/// Writes `value` broken in the ways `style` says; the intended value stays `value`.
fn write_broken(value: &Value, style: &Style, out: &mut String) {
    let (open, close) = style.quotes;
    let separator = if style.newlines_for_commas {
        "\n  "
    } else {
        ", "
    };
    match value {
        Value::Null => out.push_str(if style.python { "None" } else { "null" }),
        Value::Bool(b) => out.push_str(match (b, style.python) {
            (true, true) => "True",
            (false, true) => "False",
            (true, false) => "true",
            (false, false) => "false",
        }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => {
            out.push(open);
            out.push_str(s);
            out.push(close);
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(separator);
                }
                write_broken(item, style, out);
                let next_is_string = items.get(i + 1).is_some_and(Value::is_string);
                if style.end_quotes_dropped && item.is_string() && next_is_string {
                    out.pop();
                }
            }
            if style.trailing_commas && !items.is_empty() {
                out.push(',');
            }
            out.push(']');
        }
        Value::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push_str(separator);
                }
                if style.comments {
                    out.push_str("/* note */ ");
                }
                if style.unquoted_keys {
                    out.push_str(key);
                } else {
                    out.push(open);
                    out.push_str(key);
                    out.push(close);
                }
                out.push_str(": ");
                write_broken(item, style, out);
                let last = i + 1 == members.len();
                if style.end_quotes_dropped && item.is_string() && !last && !style.unquoted_keys {
                    out.pop();
                }
                if style.comments {
                    out.push_str(" // why\n");
                }
            }
            if style.trailing_commas && !members.is_empty() {
                out.push(',');
            }
            out.push('}');
        }
    }
}

proptest! {
    #![proptest_config(cases(256))]

    #[test]
    fn the_one_sort_orders_like_the_standard_library(
        items in proptest::collection::vec((0u8..8, any::<u16>()), 0..200),
    ) {
        let mut ours = items.clone();
        let mut std = items;
        familiar::base::sort::sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
        std.sort_by_key(|a| a.0);
        prop_assert_eq!(ours, std);
    }
}
