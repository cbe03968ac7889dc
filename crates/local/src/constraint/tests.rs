//! The acceptance: every output decoded under a constraint parses and validates,
//! whatever the logits favour. Schemas are drawn at random from the subset; outputs
//! are checked by serde_json and by a validator written apart from the compiler.

use serde_json::{Value, json};

use super::*;
use crate::testing::{self, Rng};

/// An independent validator for the subset (additionalProperties false).
fn valid(v: &Value, s: &Value) -> bool {
    let Some(s) = s.as_object() else {
        return s == &Value::Bool(true);
    };
    if let Some(c) = s.get("const") {
        return v == c;
    }
    if let Some(e) = s.get("enum").and_then(Value::as_array) {
        return e.contains(v);
    }
    if let Some(options) = s
        .get("anyOf")
        .or_else(|| s.get("oneOf"))
        .and_then(Value::as_array)
    {
        return options.iter().any(|o| valid(v, o));
    }
    let types: Vec<&str> = match s.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => return true,
    };
    types.iter().any(|t| match (*t, v) {
        ("null", Value::Null) | ("boolean", Value::Bool(_)) | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => n.is_i64() || n.is_u64(),
        ("string", Value::String(text)) => {
            let n = text.chars().count() as u64;
            s.get("minLength")
                .and_then(Value::as_u64)
                .is_none_or(|m| n >= m)
                && s.get("maxLength")
                    .and_then(Value::as_u64)
                    .is_none_or(|m| n <= m)
        }
        ("array", Value::Array(items)) => {
            let n = items.len() as u64;
            s.get("minItems")
                .and_then(Value::as_u64)
                .is_none_or(|m| n >= m)
                && s.get("maxItems")
                    .and_then(Value::as_u64)
                    .is_none_or(|m| n <= m)
                && items
                    .iter()
                    .all(|i| s.get("items").is_none_or(|is| valid(i, is)))
        }
        ("object", Value::Object(map)) => {
            let props = s.get("properties").and_then(Value::as_object);
            let required = s
                .get("required")
                .and_then(Value::as_array)
                .map_or(&[][..], Vec::as_slice);
            required
                .iter()
                .filter_map(Value::as_str)
                .all(|r| map.contains_key(r))
                && map.iter().all(|(k, val)| {
                    props
                        .and_then(|p| p.get(k))
                        .is_some_and(|ps| valid(val, ps))
                })
        }
        _ => false,
    })
}

/// A random schema from the subset.
fn schema(rng: &mut Rng, depth: u32) -> Value {
    let pick = rng.next_u64() % if depth == 0 { 7 } else { 11 };
    fn r(rng: &mut Rng, n: u64) -> u64 {
        rng.next_u64() % n
    }
    match pick {
        0 => {
            let mut s = json!({"type": "string", "description": "ignored"});
            if r(rng, 2) == 0 {
                s["minLength"] = json!(r(rng, 4));
            }
            if r(rng, 2) == 0 {
                s["maxLength"] = json!(4 + r(rng, 12));
            }
            s
        }
        1 => json!({"type": "integer"}),
        2 => json!({"type": "number"}),
        3 => json!({"type": "boolean"}),
        4 => json!({"enum": ["red", "green", "gr\"ee\\n", 1, 10, 2.5, true, null, "é中🙂"]}),
        5 => json!({"const": "fixed"}),
        6 => json!({"type": ["string", "null"], "maxLength": 8}),
        7 | 8 => {
            let n = 1 + r(rng, 4);
            let mut props = serde_json::Map::new();
            let mut required = Vec::new();
            for i in 0..n {
                let name = ["city", "n", "name\"q", "é", "units", "x_y"]
                    [(i as usize + r(rng, 6) as usize) % 6];
                props.insert(name.to_string(), schema(rng, depth - 1));
                if rng.next_u64().is_multiple_of(2) {
                    required.push(json!(name));
                }
            }
            json!({"type": "object", "properties": props, "required": required})
        }
        9 => {
            let (min, extra) = (r(rng, 3), r(rng, 4));
            json!({"type": "array", "items": schema(rng, depth - 1), "minItems": min, "maxItems": min + extra})
        }
        _ => json!({"anyOf": [schema(rng, depth - 1), {"type": "null"}]}),
    }
}

/// Tokens like a real BPE vocabulary's: every byte, structural runs that straddle
/// JSON's syntax, words, numbers, split UTF-8, plus control and stop tokens.
fn synthetic_vocabulary() -> Vocabulary {
    let mut tokens: Vec<Vec<u8>> = vec![Vec::new(), Vec::new(), Vec::new()]; // eos, im_end, a control
    tokens.extend((0..=255u8).map(|b| vec![b]));
    let runs = [
        "\"}",
        "\",",
        ",\"",
        "\":",
        "\":\"",
        "\"}}",
        "{\"",
        "[{",
        "}]",
        "\\\"",
        "\\\\",
        "\\u",
        "\\ud800",
        "\\n",
        "\"]",
        "[\"",
        "true",
        "false",
        "null",
        "nul",
        "12",
        "0.",
        ".5",
        "-1",
        "-0",
        "00",
        "1e5",
        "name",
        "arguments",
        "{\"name\":\"",
        "\",\"arguments\":{",
        " the",
        "red",
        "green",
        "city",
        "units",
        "é",
        "中",
        "🙂",
        "\u{a0}",
        "\"\"",
        "}}",
        "]]",
        ",",
        "\":{\"",
        "\":[",
        "\":true}",
        "\t",
        "\n\"",
        "fixed",
        "x_y",
    ];
    tokens.extend(runs.iter().map(|r| r.as_bytes().to_vec()));
    tokens.push("中".as_bytes()[..2].to_vec());
    tokens.push("🙂".as_bytes()[1..].to_vec());
    tokens.push(vec![0xED, 0xA0]); // would start a surrogate
    Vocabulary::new(tokens, vec![0, 1])
}

/// Logits that favour something adversarial at every step.
fn logits(rng: &mut Rng, vocab: &Vocabulary, style: u64, step: usize) -> Vec<f32> {
    let mut l: Vec<f32> = (0..vocab.len()).map(|_| rng.float()).collect();
    for (id, bytes) in vocab.tokens.iter().enumerate() {
        let boost = match style {
            0 => 0.0, // random
            1 => {
                bytes
                    .iter()
                    .filter(|&&b| b == b'"' || b == b'}' || b == b'\\')
                    .count() as f32
                    * 3.0
            }
            2 => f32::from(u8::from(bytes.is_empty() || vocab.is_stop(id as u32))) * 10.0,
            3 => {
                f32::from(u8::from(bytes.len() > 1)) * 2.0
                    + f32::from(u8::from(bytes.iter().any(|&b| b >= 0x80))) * 3.0
            }
            4 => f32::from(u8::from(bytes.iter().all(u8::is_ascii_alphanumeric))) * 5.0, // run on forever
            _ => f32::from(u8::from(step % 7 == id % 7)) * 4.0,
        };
        if let Some(x) = l.get_mut(id) {
            *x += boost;
        }
    }
    l
}

/// Decodes greedily under the constraint with a token budget, forcing the completion
/// when it runs low; returns the bytes.
fn decode(
    grammar: &Grammar,
    vocab: &Vocabulary,
    rng: &mut Rng,
    style: u64,
    budget: usize,
) -> Vec<u8> {
    let mut c = Constraint::new(grammar);
    let mut out = Vec::new();
    for step in 0..budget {
        let mut l = logits(rng, vocab, style, step);
        c.mask(vocab, &mut l);
        let best = l
            .iter()
            .enumerate()
            .filter(|(_, x)| x.is_finite())
            .max_by(|a, b| a.1.total_cmp(b.1));
        let Some((id, _)) = best else {
            unreachable!("nothing allowed after {:?}", String::from_utf8_lossy(&out))
        };
        let id = id as u32;
        assert!(
            c.allows(vocab, id),
            "mask allowed {id} but allows() refuses"
        );
        if let Err(e) = c.advance(vocab, id) {
            unreachable!("{e}");
        }
        if vocab.is_stop(id) {
            return out;
        }
        out.extend_from_slice(vocab.tokens.get(id as usize).map_or(&[][..], Vec::as_slice));
    }
    let tail = c.completion();
    assert!(c.advance_bytes(&tail), "completion refused");
    assert!(
        c.is_complete(),
        "completion did not complete: {:?}",
        String::from_utf8_lossy(&out)
    );
    out.extend(tail);
    out
}

#[test]
fn every_output_under_a_random_schema_parses_and_validates_whatever_the_logits() {
    let vocab = synthetic_vocabulary();
    let mut rng = Rng(29);
    for case in 0..120 {
        let s = schema(&mut rng, 3);
        let grammar = match Grammar::json(&s) {
            Ok(g) => g,
            Err(e) => unreachable!("{s}: {e}"),
        };
        let style = case % 6;
        let budget = [8, 40, 200][(case / 6 % 3) as usize];
        let out = decode(&grammar, &vocab, &mut rng, style, budget);
        if case % 10 == 0 {
            println!("{s}\n  -> {}", String::from_utf8_lossy(&out));
        }
        let parsed: Result<Value, _> = serde_json::from_slice(&out);
        let Ok(v) = parsed else {
            unreachable!("{s}: {:?} does not parse", String::from_utf8_lossy(&out))
        };
        assert!(valid(&v, &s), "{s}: {v} does not validate");
    }
}

#[test]
fn the_mask_agrees_with_allows_token_by_token() {
    let vocab = synthetic_vocabulary();
    let mut rng = Rng(7);
    for _ in 0..20 {
        let s = schema(&mut rng, 2);
        let Ok(grammar) = Grammar::json(&s) else {
            unreachable!()
        };
        let mut c = Constraint::new(&grammar);
        for step in 0..30 {
            let mut l = vec![0.0; vocab.len()];
            c.mask(&vocab, &mut l);
            for id in 0..vocab.len() as u32 {
                assert_eq!(
                    l[id as usize].is_finite(),
                    c.allows(&vocab, id),
                    "token {id}"
                );
            }
            let mut pick = logits(&mut rng, &vocab, step % 6, step as usize);
            c.mask(&vocab, &mut pick);
            let Some((id, _)) = pick
                .iter()
                .enumerate()
                .filter(|x| x.1.is_finite())
                .max_by(|a, b| a.1.total_cmp(b.1))
            else {
                unreachable!()
            };
            if vocab.is_stop(id as u32) {
                break;
            }
            assert!(c.advance(&vocab, id as u32).is_ok());
        }
    }
}

#[test]
fn a_tool_call_names_a_tool_and_its_arguments_match_that_tools_schema() {
    let weather = json!({"type": "object", "properties": {"city": {"type": "string", "maxLength": 12}, "units": {"enum": ["c", "f"]}}, "required": ["city"]});
    let search = json!({"type": "object", "properties": {"query": {"type": "string"}, "n": {"type": "integer"}}, "required": ["query", "n"]});
    let tools = [("get_weather", &weather), ("search", &search)];
    let Ok(grammar) = Grammar::tool_call(&tools) else {
        unreachable!()
    };
    let vocab = synthetic_vocabulary();
    let mut rng = Rng(3);
    for case in 0..30 {
        let out = decode(
            &grammar,
            &vocab,
            &mut rng,
            case % 6,
            [5, 30, 120][case as usize % 3],
        );
        let Ok(v) = serde_json::from_slice::<Value>(&out) else {
            unreachable!("{:?}", String::from_utf8_lossy(&out))
        };
        let name = v["name"].as_str().unwrap_or_default();
        let (_, schema) = tools.iter().find(|(n, _)| *n == name).copied().unzip();
        assert!(schema.is_some_and(|s| valid(&v["arguments"], s)), "{v}");
        assert_eq!(v.as_object().map(|o| o.len()), Some(2), "{v}");
    }
}

#[test]
fn a_choice_is_exactly_one_of_its_options_even_when_one_prefixes_another() {
    let grammar = Grammar::choice(&["get", "get_weather", "none"]);
    let vocab = synthetic_vocabulary();
    let mut rng = Rng(11);
    for case in 0..30 {
        let out = decode(
            &grammar,
            &vocab,
            &mut rng,
            case % 6,
            [1, 3, 20][case as usize % 3],
        );
        assert!(
            ["get", "get_weather", "none"].contains(&String::from_utf8_lossy(&out).as_ref()),
            "{out:?}"
        );
    }
    let mut c = Constraint::new(&grammar);
    assert!(c.advance_bytes(b"get"));
    assert!(c.is_complete() && c.allows(&vocab, 0));
    assert!(c.advance_bytes(b"_"));
    assert!(!c.is_complete() && !c.allows(&vocab, 0));
    assert_eq!(c.completion(), b"weather");
}

#[test]
fn wrapping_puts_fixed_markup_around_the_value() {
    let Ok(g) = Grammar::json(&json!({"type": "boolean"})) else {
        unreachable!()
    };
    let g = g.wrapped("<tool_call>", "</tool_call>");
    let c = Constraint::new(&g);
    let whole = c.completion();
    assert!(
        whole.starts_with(b"<tool_call>") && whole.ends_with(b"</tool_call>"),
        "{whole:?}"
    );
    let mut c = Constraint::new(&g);
    assert!(!c.advance_bytes(b"true"));
    assert!(c.advance_bytes(b"<tool_call>false</tool_call>") && c.is_complete());
}

#[test]
fn strings_refuse_what_json_or_utf8_forbid() {
    let Ok(g) = Grammar::json(&json!({"type": "string", "maxLength": 3})) else {
        unreachable!()
    };
    let fresh = || Constraint::new(&g);
    for bad in [
        &b"\"\n"[..],
        b"\"\\x",
        b"\"\\ud800",
        b"\"\xed\xa0",
        b"\"\xc0",
        b"\"abcd",
        b"\"\xe4\xb8",
    ] {
        let mut c = fresh();
        let partial_ok = bad == b"\"\xe4\xb8"; // a split character may go on
        assert_eq!(c.advance_bytes(bad), partial_ok, "{bad:?}");
    }
    let mut c = fresh();
    assert!(c.advance_bytes("\"中\\n".as_bytes()) && !c.is_complete());
    assert_eq!(c.completion(), b"\"");
}

/// Whether `grammar` takes `output` whole.
fn takes(grammar: &Grammar, output: &str) -> bool {
    let mut c = Constraint::new(grammar);
    c.advance_bytes(output.as_bytes()) && c.is_complete()
}

#[test]
fn integers_stay_within_their_minimum_and_maximum() {
    let Ok(byte) = Grammar::json(&json!({"type": "integer", "minimum": 0, "maximum": 255})) else {
        unreachable!()
    };
    assert!(takes(&byte, "255") && takes(&byte, "0"));
    assert!(!takes(&byte, "-1") && !takes(&byte, "1000") && !takes(&byte, "1234567890"));
    let Ok(small) = Grammar::json(&json!({"type": "integer", "minimum": 1, "maximum": 10})) else {
        unreachable!()
    };
    assert!(takes(&small, "1") && takes(&small, "10"));
    assert!(!takes(&small, "0") && !takes(&small, "11"));
    let Ok(count) = Grammar::json(&json!({"type": "integer", "minimum": 0})) else {
        unreachable!()
    };
    assert!(takes(&count, "123456") && !takes(&count, "-5"));
    // A completion of a bounded number stays in bounds.
    let mut c = Constraint::new(&small);
    assert!(c.advance_bytes(b"1"));
    assert!(c.is_complete());
}

#[test]
fn a_string_is_never_a_value_its_not_lists() {
    let schema = json!({"type": "string", "not": {"enum": ["move", "say"]}});
    let Ok(g) = Grammar::json(&schema) else {
        unreachable!()
    };
    assert!(!takes(&g, "\"move\"") && !takes(&g, "\"say\""));
    assert!(takes(&g, "\"mover\"") && takes(&g, "\"mo\"") && takes(&g, "\"\""));
    // Completing from a refused content writes past it.
    let mut c = Constraint::new(&g);
    assert!(c.advance_bytes(b"\"say"));
    let mut done = b"\"say".to_vec();
    done.extend(c.completion());
    assert_eq!(done, b"\"say.\"");
}

#[test]
fn unsatisfiable_or_malformed_schemas_are_refused() {
    for s in [
        json!({"type": "string", "minLength": 5, "maxLength": 2}),
        json!({"enum": []}),
        json!({"type": "date"}),
        json!({"anyOf": "x"}),
        json!(42),
    ] {
        assert!(
            matches!(Grammar::json(&s), Err(ConstraintError::Schema(_))),
            "{s}"
        );
    }
    assert_eq!(Grammar::tool_call(&[]).err(), Some(ConstraintError::Empty));
    // Outside the subset but harmless: any value there.
    assert!(Grammar::json(&json!({"$ref": "#/defs/x"})).is_ok());
}

/// The real SmolLM2 vocabulary (a test that asks for it fails without the file).
fn smollm2() -> (crate::tokenizer::Tokenizer, Vocabulary) {
    let tok = testing::smollm2_tokenizer();
    let stops: Vec<u32> = [tok.eos(), tok.token_id("<|im_end|>")]
        .into_iter()
        .flatten()
        .collect();
    let vocab = Vocabulary::from_tokenizer(&tok, &stops);
    (tok, vocab)
}

#[test]
fn outputs_over_the_real_vocabulary_parse_and_validate() {
    let (_, vocab) = smollm2();
    let mut rng = Rng(135);
    for case in 0..24 {
        let s = schema(&mut rng, 3);
        let Ok(grammar) = Grammar::json(&s) else {
            unreachable!("{s}")
        };
        let out = decode(
            &grammar,
            &vocab,
            &mut rng,
            case % 6,
            [10, 60][case as usize % 2],
        );
        let Ok(v) = serde_json::from_slice::<Value>(&out) else {
            unreachable!("{s}: {:?}", String::from_utf8_lossy(&out))
        };
        assert!(valid(&v, &s), "{s}: {v}");
    }
}

/// The fastest of `runs` timings of `f`: the least disturbed by other work on the
/// machine, so two such figures compare fairly on a loaded one.
fn fastest(runs: u32, mut f: impl FnMut()) -> std::time::Duration {
    (0..runs)
        .map(|_| {
            let start = std::time::Instant::now();
            f();
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

#[test]
fn masking_the_real_vocabulary_agrees_with_each_token_and_is_ten_times_faster_than_asking_each() {
    let (_, vocab) = smollm2();
    let schema = json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}, "required": ["city"]});
    let Ok(grammar) = Grammar::json(&schema) else {
        unreachable!()
    };
    // Inside a string most tokens are allowed: the trie walk's worst case. Fast is
    // said as a ratio to asking the grammar token by token on the same machine, not
    // as wall time a loaded machine would miss.
    for (what, prefix) in [
        ("string", &b"{\"city\":\"Par"[..]),
        ("number", b"{\"city\":\"Paris\",\"days\":1"),
        ("key", b"{"),
    ] {
        let mut c = Constraint::new(&grammar);
        assert!(c.advance_bytes(prefix));
        let mut logits = vec![0.0f32; vocab.len()];
        let mask = fastest(10, || c.mask(&vocab, &mut logits));
        let mut each = Vec::new();
        let one_by_one = fastest(3, || {
            each = (0..vocab.len() as u32)
                .map(|id| c.allows(&vocab, id))
                .collect();
        });
        let allowed = logits.iter().filter(|x| x.is_finite()).count();
        println!(
            "mask in a {what}: {mask:?} per call ({one_by_one:?} token by token), {allowed} of {} tokens allowed",
            vocab.len()
        );
        assert!(allowed > 0);
        for (id, allows) in each.iter().enumerate() {
            assert_eq!(logits[id].is_finite(), *allows, "{what}: token {id}");
        }
        assert!(
            mask * 10 <= one_by_one,
            "{what}: the mask took {mask:?}, asking each token {one_by_one:?}"
        );
    }
}
