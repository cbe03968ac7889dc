//! Property tests: arbitrary bytes and arbitrary chunkings never panic the decoders or
//! the JSON repair, valid input decodes the same however it is cut, and the program's
//! one sort orders like the standard library's.
#![cfg(not(target_arch = "wasm32"))]
// The standard library's sorts are fine here: tests are not shipped in the wasm.
#![allow(
    clippy::unwrap_used,
    clippy::indexing_slicing,
    clippy::disallowed_methods
)]

use familiar::json;
use familiar::llm::{ChatResponse, Delta, LlmError};
use familiar::openai::ChatStream;
use familiar::sse::{SseDecoder, SseEvent};
use proptest::prelude::*;
use serde_json::{Value, json};

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
    #![proptest_config(ProptestConfig::with_cases(512))]

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
        if let Ok(text) = json::extract(&input) {
            prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "{:?} -> {:?}", input, text);
        }
    }

    #[test]
    fn repair_of_json_like_noise_never_returns_invalid_json(input in "[{}\\[\\],:\"' a-z0-9TrueFalsNn.+\\-/*\\\\\n]{0,80}") {
        if let Ok(text) = json::extract(&input) {
            prop_assert!(serde_json::from_str::<Value>(&text).is_ok(), "{:?} -> {:?}", input, text);
        }
    }

    #[test]
    fn valid_json_is_returned_unchanged(value in arb_json(), pretty in any::<bool>()) {
        let text = if pretty { serde_json::to_string_pretty(&value) } else { serde_json::to_string(&value) }.unwrap();
        prop_assert_eq!(json::extract(&text).unwrap(), text.as_str());
    }

    #[test]
    fn truncated_json_repairs_to_valid_json_or_is_refused(value in arb_json(), at in any::<usize>()) {
        let text = serde_json::to_string(&value).unwrap();
        let at = (0..=at % (text.len() + 1)).rev().find(|&i| text.is_char_boundary(i)).unwrap();
        if let Ok(repaired) = json::extract(&text[..at]) {
            prop_assert!(serde_json::from_str::<Value>(&repaired).is_ok(), "{:?}", repaired);
        }
    }
}

proptest! {
    #[test]
    fn the_one_sort_orders_like_the_standard_library(
        items in proptest::collection::vec((0u8..8, any::<u16>()), 0..200),
    ) {
        let mut ours = items.clone();
        let mut std = items;
        familiar::sort::sort_by(&mut ours, |a, b| a.0.cmp(&b.0));
        std.sort_by_key(|a| a.0);
        prop_assert_eq!(ours, std);
    }
}
