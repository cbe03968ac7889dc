use super::*;
use crate::gguf::{self, Value};
use crate::testing::{self, Rng};

/// A vocabulary of every byte plus the tokens `merges` make, with two control tokens.
fn synthetic(merges: &[&str], pre: &str) -> Tokenizer {
    let mut tokens: Vec<String> = vec!["<|im_start|>".into(), "<|im_end|>".into()];
    let mut types = vec![CONTROL, CONTROL];
    for b in 0..=255u8 {
        tokens.push(byte_level::char_of(b).to_string());
        types.push(NORMAL);
    }
    for m in merges {
        let joined = m.replace(' ', "");
        if !tokens.contains(&joined) {
            tokens.push(joined);
            types.push(NORMAL);
        }
    }
    let merges = merges.iter().map(|m| m.to_string()).collect();
    match Tokenizer::from_parts(tokens, types, merges, pre, None, Some(1)) {
        Ok(t) => t,
        Err(e) => unreachable!("synthetic vocabulary: {e}"),
    }
}

const MERGES: &[&str] = &[
    "Ġ t", "h e", "Ġt he", "i n", "Ġ a", "e r", "Ð ¾", "Ġ Ð", "ä ¸", "Ġa n", "o n",
];

const SCRIPTS: &[&str] = &[
    "Crème brûlée, déjà vu, naïve façade — ½ °C",
    "Съешь же ещё этих мягких французских булок",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "我能吞下玻璃而不伤身体。日本語のテキスト、한국어",
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني",
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती",
    "👩‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 👍🏽 thumbs",
    "  lead\t\ttabs\r\n\n\n   trailing   \u{a0}nbsp\u{3000}ideographic ",
    "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3]; // 'quoted' \"dq\"\n}\n",
    "I'm sure they'll've done it; we're 100% in, it's 3.14159 o'clock",
];

#[test]
fn decoding_what_was_encoded_gives_back_the_text_in_every_script() {
    for pre in ["gpt2", "smollm", "llama-bpe", "qwen2"] {
        let tok = synthetic(MERGES, pre);
        for text in SCRIPTS {
            let ids = tok.encode(text);
            assert_eq!(tok.decode(&ids), text.as_bytes(), "{pre}: {text}");
        }
    }
}

#[test]
fn arbitrary_strings_round_trip() {
    let pools: [&[char]; 4] = [
        &[
            'a', 'Z', ' ', '\n', '\t', '\'', 's', '1', '9', '!', '<', '|', '>', '"', '\\',
        ],
        &[
            'é', 'Ж', 'λ', '中', 'ि', 'ह', 'ع', '\u{200D}', '\u{FE0F}', '🙂', '\u{a0}', '٣',
        ],
        &[
            '\r',
            '\u{2028}',
            '\u{0}',
            '\u{7f}',
            '\u{85}',
            '\u{10FFFF}',
            '\u{E000}',
            'ß',
        ],
        &[
            '<', '|', 'i', 'm', '_', 'e', 'n', 'd', '>', 's', 't', 'a', 'r',
        ],
    ];
    let mut rng = Rng(0x5eed);
    let toks: Vec<Tokenizer> = ["gpt2", "smollm", "llama-bpe", "qwen2"]
        .iter()
        .map(|p| synthetic(MERGES, p))
        .collect();
    for _ in 0..400 {
        let len = (rng.next_u64() % 40) as usize;
        let text: String = (0..len)
            .filter_map(|_| {
                let pool = pools[(rng.next_u64() % 4) as usize];
                pool.get((rng.next_u64() % pool.len() as u64) as usize)
                    .copied()
            })
            .collect();
        for tok in &toks {
            assert_eq!(tok.decode(&tok.encode(&text)), text.as_bytes(), "{text:?}");
            assert_eq!(
                tok.decode(&tok.encode_with_specials(&text)),
                text.replace("<|im_start|>", "")
                    .replace("<|im_end|>", "")
                    .as_bytes()
            );
        }
    }
}

#[test]
fn the_lowest_ranked_merge_applies_first_and_leftmost_among_equals() {
    // "b c" outranks "a b": "abc" becomes a + bc, then "abc" by "a bc".
    let tok = synthetic(&["b c", "a b", "a bc"], "gpt2");
    let abc = tok.token_id("abc");
    assert!(abc.is_some());
    assert_eq!(tok.encode("abc"), vec![abc.unwrap_or(0)]);
    // "aaa": the leftmost "a a" merges, leaving the last "a" alone.
    let tok = synthetic(&["a a"], "gpt2");
    let (aa, a) = (tok.token_id("aa"), tok.token_id("a"));
    assert_eq!(
        tok.encode("aaa").into_iter().map(Some).collect::<Vec<_>>(),
        vec![aa, a]
    );
}

#[test]
fn typed_markup_stays_text_unless_encoded_as_markup() {
    let tok = synthetic(MERGES, "smollm");
    let text = "hi<|im_end|>there";
    let end = tok.token_id("<|im_end|>");
    assert!(end.is_some() && tok.is_control(end.unwrap_or(0)));
    assert!(!tok.encode(text).iter().any(|&id| tok.is_control(id)));
    let marked = tok.encode_with_specials(text);
    assert_eq!(marked.iter().filter(|&&id| tok.is_control(id)).count(), 1);
    assert!(marked.contains(&end.unwrap_or(u32::MAX)));
    assert!(tok.token_bytes(end.unwrap_or(0)).is_empty());
}

#[test]
fn bad_parts_are_refused_with_a_reason() {
    let tokens = || vec!["a".to_string(), "b".to_string()];
    let err =
        |r: Result<Tokenizer, TokenizerError>| r.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(
        err(Tokenizer::from_parts(
            tokens(),
            vec![],
            vec![],
            "deepseek-coder",
            None,
            None
        ))
        .contains("deepseek-coder")
    );
    assert!(
        err(Tokenizer::from_parts(
            tokens(),
            vec![],
            vec!["ab".into()],
            "gpt2",
            None,
            None
        ))
        .contains("merge 0")
    );
    assert!(
        err(Tokenizer::from_parts(
            tokens(),
            vec![1],
            vec![],
            "gpt2",
            None,
            None
        ))
        .contains("1 token types for 2")
    );
    assert!(
        err(Tokenizer::from_parts(
            tokens(),
            vec![],
            vec![],
            "gpt2",
            None,
            Some(2)
        ))
        .contains("eos token id 2")
    );
    assert!(
        err(Tokenizer::from_parts(
            vec![],
            vec![],
            vec![],
            "gpt2",
            None,
            None
        ))
        .contains("0 tokens")
    );
}

fn gguf_with(model: &str, pre: Option<&str>) -> Result<gguf::Gguf, gguf::GgufError> {
    let strings =
        |v: &[&str]| Value::Array(v.iter().map(|s| Value::String(s.to_string())).collect());
    let mut meta = vec![
        ("tokenizer.ggml.model", Value::String(model.into())),
        ("tokenizer.ggml.tokens", strings(&["a", "b", "ab", "<s>"])),
        ("tokenizer.ggml.merges", strings(&["a b"])),
        (
            "tokenizer.ggml.token_type",
            Value::Array(vec![
                Value::I32(1),
                Value::I32(1),
                Value::I32(1),
                Value::I32(3),
            ]),
        ),
        ("tokenizer.ggml.eos_token_id", Value::U32(3)),
    ];
    if let Some(p) = pre {
        meta.push(("tokenizer.ggml.pre", Value::String(p.into())));
    }
    gguf::Gguf::parse(gguf::write(&meta, &[]))
}

#[test]
fn a_gguf_vocabulary_becomes_a_tokenizer_and_unknown_kinds_are_named() {
    let g = gguf_with("gpt2", None);
    let tok = g
        .as_ref()
        .map_err(|e| e.to_string())
        .and_then(|g| Tokenizer::from_gguf(g).map_err(|e| e.to_string()));
    assert_eq!(tok.as_ref().map(|t| t.encode("abba")), Ok(vec![2, 1, 0]));
    assert_eq!(
        tok.as_ref()
            .map(|t| (t.eos(), t.is_control(3), t.vocab_size())),
        Ok((Some(3), true, 4))
    );
    let refusal = |model, pre| match gguf_with(model, pre) {
        Ok(g) => Tokenizer::from_gguf(&g)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default(),
        Err(e) => e.to_string(),
    };
    assert!(refusal("bert", None).contains("and \"llama\" (SentencePiece)"));
    let spm = gguf_with("llama", None).map(|g| Tokenizer::from_gguf(&g).map(|t| t.encode("ab")));
    assert_eq!(spm, Ok(Ok(vec![2])));
    assert!(refusal("bert", None).contains("\"bert\""));
    assert!(refusal("gpt2", Some("falcon")).contains("\"falcon\""));
}

/// The real SmolLM2 tokenizer (a test that asks for it fails without the file).
fn smollm2() -> Tokenizer {
    testing::smollm2_tokenizer()
}

pub(super) const CORPUS: &[&str] = &[
    "Hello world",
    "Hello, world! How are you today?",
    " leading space",
    "trailing spaces   ",
    "multiple   spaces\tand\ttabs",
    "line one\nline two\n\nline four\r\n",
    "The year 2024 had 366 days; π ≈ 3.14159.",
    "I'm sure they'll've done it; we're in. It's John's.",
    "CAPITALS and MiXeD cAsE",
    "email: someone@example.com, url: https://example.org/a?b=c&d=e",
    "Crème brûlée, déjà vu, naïve façade",
    "Съешь же ещё этих мягких французских булок",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία",
    "我能吞下玻璃而不伤身体。",
    "日本語のテキスト、한국어 텍스트",
    "أنا قادر على أكل الزجاج و هذا لا يؤلمني",
    "मैं काँच खा सकता हूँ और मुझे उससे कोई चोट नहीं पहुंचती",
    "👩‍👩‍👧‍👦 family, 🏳️‍🌈 flag, 👍🏽 thumbs",
    "fn main() {\n    let x: Vec<u8> = vec![1, 2, 3];\n}\n",
    "def f(x):\n\treturn x ** 2  # square\n",
    "{\"name\":\"get_weather\",\"arguments\":{\"city\":\"Paris\"}}",
    "<|im_start|>user\nhi<|im_end|>",
    "a\u{a0}b\u{2003}c\u{3000}d",
    "١٢٣ ٤٥٦ and ½ ⅔ Ⅻ",
    "   \n   \n",
    "!!! ??? ... --- ***",
    "naïve café résumé coöperate",
    "Das Fräulein aß Äpfel über der Straße.",
    "x=1;y=2;z=x+y",
    "'s 're 'S",
];

#[test]
fn ids_equal_llama_cpp_on_the_real_vocabulary() {
    let tok = smollm2();
    let python = testing::llama_cpp_python();
    let model = testing::smollm2();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tokenizer_reference.py");
    let reference = reference_ids(&python, script, &model);
    let Ok(reference) = reference else {
        unreachable!("the reference script failed: {reference:?}");
    };
    assert_eq!(reference.len(), CORPUS.len());
    for (text, want) in CORPUS.iter().zip(&reference) {
        assert_eq!(&tok.encode(text), want, "{text:?}");
        assert_eq!(tok.decode(want), text.as_bytes());
    }
}

fn reference_ids(
    python: &std::path::Path,
    script: &str,
    model: &std::path::Path,
) -> Result<Vec<Vec<u32>>, String> {
    use std::io::Write;
    let mut child = std::process::Command::new(python)
        .arg(script)
        .arg(model)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| e.to_string())?;
    let input = serde_json::to_vec(CORPUS).map_err(|e| e.to_string())?;
    child
        .stdin
        .take()
        .ok_or("no stdin")?
        .write_all(&input)
        .map_err(|e| e.to_string())?;
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    serde_json::from_slice(&out.stdout)
        .map_err(|e| format!("{e}: {}", String::from_utf8_lossy(&out.stdout)))
}

#[test]
fn a_long_prompt_encodes_quickly() {
    let tok = smollm2();
    let text: String = CORPUS
        .iter()
        .cycle()
        .take(120)
        .copied()
        .collect::<Vec<_>>()
        .join(" ");
    let start = std::time::Instant::now();
    let ids = tok.encode(&text);
    let took = start.elapsed();
    println!(
        "encoded {} tokens ({} bytes) in {took:?}",
        ids.len(),
        text.len()
    );
    assert!(ids.len() > 2000);
    assert_eq!(tok.decode(&ids), text.as_bytes());
    // Generous for an unoptimised test build; the release figure is in the report.
    assert!(took.as_millis() < 1000, "{took:?}");
}
