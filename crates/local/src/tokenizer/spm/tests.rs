use super::super::tests::CORPUS;
use super::super::*;
use crate::gguf::{self, Value};
use crate::testing::{self, Rng};

/// A vocabulary of `<unk>`, `<s>`, `</s>`, the 256 byte tokens, a control token, the
/// letters `a`–`e`, `▁`, and `pieces` with their scores.
fn vocabulary(pieces: &[(&str, f32)], add_space_prefix: bool) -> Tokenizer {
    let mut tokens: Vec<String> = vec!["<unk>".into(), "<s>".into(), "</s>".into()];
    let mut types = vec![UNKNOWN, CONTROL, CONTROL];
    for b in 0..=255u8 {
        tokens.push(format!("<0x{b:02X}>"));
        types.push(BYTE);
    }
    tokens.push("<start_of_turn>".into());
    types.push(CONTROL);
    for c in ["a", "b", "c", "d", "e", "\u{2581}"] {
        tokens.push(c.into());
        types.push(NORMAL);
    }
    let mut scores = vec![-100.0; tokens.len()];
    for (p, s) in pieces {
        tokens.push(p.to_string());
        types.push(NORMAL);
        scores.push(*s);
    }
    match Tokenizer::from_pieces(tokens, types, scores, add_space_prefix, Some(1), Some(2)) {
        Ok(t) => t,
        Err(e) => unreachable!("test vocabulary: {e}"),
    }
}

fn ids(tok: &Tokenizer, pieces: &[&str]) -> Vec<u32> {
    pieces.iter().filter_map(|p| tok.token_id(p)).collect()
}

#[test]
fn the_highest_scoring_piece_merges_first_and_leftmost_among_equals() {
    // "bc" outscores "ab": "abc" becomes a + bc, then "abc" from "a bc".
    let tok = vocabulary(&[("ab", -2.0), ("bc", -1.0), ("abc", -3.0)], false);
    assert_eq!(tok.encode("abc"), ids(&tok, &["abc"]));
    let tok = vocabulary(&[("ab", -2.0), ("bc", -1.0)], false);
    assert_eq!(tok.encode("abc"), ids(&tok, &["a", "bc"]));
    // Equal scores: the leftmost pair merges, leaving the last "a" alone.
    let tok = vocabulary(&[("aa", -1.0)], false);
    assert_eq!(tok.encode("aaa"), ids(&tok, &["aa", "a"]));
}

#[test]
fn spaces_become_the_pieces_mark_and_the_text_opens_with_one_when_the_file_says() {
    let tok = vocabulary(&[("\u{2581}a", -1.0)], true);
    assert_eq!(tok.encode("a a"), ids(&tok, &["\u{2581}a", "\u{2581}a"]));
    assert_eq!(tok.decode(&tok.encode("a a")), b"a a");
    let gemma = vocabulary(&[("\u{2581}a", -1.0)], false);
    assert_eq!(gemma.encode("a a"), ids(&gemma, &["a", "\u{2581}a"]));
    assert!(tok.encode("").is_empty());
}

#[test]
fn what_the_vocabulary_lacks_falls_back_to_bytes_that_decode_one_at_a_time() {
    let tok = vocabulary(&[], false);
    let ids = tok.encode("é🙂");
    assert_eq!(ids.len(), 6);
    assert!(
        ids.iter()
            .all(|&id| tok.types.get(id as usize) == Some(&BYTE))
    );
    // A stream sees partial characters, token by token, that join into the text.
    let streamed: Vec<u8> = ids
        .iter()
        .flat_map(|&id| tok.token_bytes(id).to_vec())
        .collect();
    assert_eq!(streamed, "é🙂".as_bytes());
    assert!(std::str::from_utf8(tok.token_bytes(ids[0])).is_err());
}

#[test]
fn markup_matches_control_and_unknown_tokens_and_plain_text_does_not() {
    let tok = vocabulary(&[], true);
    let turn = tok.token_id("<start_of_turn>").unwrap_or(u32::MAX);
    assert!(!tok.encode("<start_of_turn>a").contains(&turn));
    let marked = tok.encode_with_specials("<start_of_turn>a<unk>");
    let mut want = vec![turn];
    want.extend(ids(&tok, &["\u{2581}", "a", "<unk>"]));
    assert_eq!(marked, want);
    assert!(tok.token_bytes(turn).is_empty());
}

#[test]
fn scores_or_types_that_do_not_line_up_with_the_tokens_are_refused() {
    let tokens = || vec!["a".to_string(), "b".to_string()];
    let err = |r: Result<Tokenizer, TokenizerError>| r.err().map(|e| e.to_string());
    let scores = Tokenizer::from_pieces(tokens(), vec![], vec![0.0], true, None, None);
    assert_eq!(
        err(scores),
        Some("bad vocabulary: 1 scores for 2 tokens".into())
    );
    let types = Tokenizer::from_pieces(tokens(), vec![1, 1, 1], vec![], true, None, None);
    assert_eq!(
        err(types),
        Some("bad vocabulary: 3 token types for 2 tokens".into())
    );
}

fn spm_gguf(extra: Vec<(&'static str, Value)>) -> Result<Tokenizer, TokenizerError> {
    let strings =
        |v: &[&str]| Value::Array(v.iter().map(|s| Value::String(s.to_string())).collect());
    let mut meta = vec![
        ("tokenizer.ggml.model", Value::String("llama".into())),
        (
            "tokenizer.ggml.tokens",
            strings(&["<unk>", "<s>", "</s>", "\u{2581}a", "a"]),
        ),
        (
            "tokenizer.ggml.token_type",
            Value::Array([2, 3, 3, 1, 1].map(Value::I32).to_vec()),
        ),
    ];
    meta.extend(extra);
    let g = gguf::Gguf::parse(gguf::write(&meta, &[]))
        .map_err(|e| TokenizerError::BadVocabulary(e.to_string()))?;
    Tokenizer::from_gguf(&g)
}

#[test]
fn a_gguf_sentencepiece_file_takes_llama_cpps_defaults_and_its_own_settings() {
    let tok = spm_gguf(vec![]);
    let tok = tok.as_ref().map_err(|e| e.to_string());
    assert_eq!(
        tok.map(|t| (
            t.bos(),
            t.eos(),
            t.add_bos(),
            t.is_sentencepiece(),
            t.encode("a")
        )),
        Ok((Some(1), Some(2), true, true, vec![3]))
    );
    let gemma = spm_gguf(vec![
        ("tokenizer.ggml.add_space_prefix", Value::Bool(false)),
        ("tokenizer.ggml.add_bos_token", Value::Bool(false)),
        (
            "tokenizer.ggml.scores",
            Value::Array([0.0, 0.0, 0.0, -1.0, -2.0].map(Value::F32).to_vec()),
        ),
    ]);
    let gemma = gemma.as_ref().map_err(|e| e.to_string());
    assert_eq!(
        gemma.map(|t| (t.add_bos(), t.encode("a"))),
        Ok((false, vec![4]))
    );
    let short = spm_gguf(vec![(
        "tokenizer.ggml.scores",
        Value::Array(vec![Value::F32(0.0)]),
    )]);
    assert_eq!(
        short.err().map(|e| e.to_string()),
        Some("bad vocabulary: 1 scores for 5 tokens".into())
    );
}

/// Strings the SentencePiece reference adds to the shared corpus: markup, the user-
/// defined token, control tokens' text where the plain pieces can spell it.
const MARKUP: &[&str] = &[
    "<start_of_turn>user\nhello world<end_of_turn>\n<start_of_turn>model\n",
    "<s>the quick brown fox</s>",
    "a<tool_call>{\"name\": \"f\"}<tool_call> b",
    "<unk> and <s > and </ s>",
    "<start_of_turn><start_of_turn>  two  <end_of_turn>",
    "<|user|>\n  hello world<|end|>\n<|assistant|>\n",
    "<|endoftext|>  x </s>\t\n y <s>  z <unk>  w <|end|>",
    "",
    " ",
    "\t\ttabs\tand spaces    \n\n\n",
    "naïve café résumé déjà vu über straße größe 中文 日本語 🙂🙃",
];

/// What llama.cpp made of a corpus with the reference vocabulary.
#[derive(serde::Deserialize)]
struct Reference {
    plain: Vec<Vec<u32>>,
    markup: Vec<Vec<u32>>,
    bos: Vec<Vec<u32>>,
    decoded: Vec<Vec<u8>>,
}

/// Writes the reference vocabulary (`add_space_prefix` as given) through the script,
/// which tokenizes `texts` with llama-cpp-python; our tokenizer reads the same file.
fn reference(add_space_prefix: bool, texts: &[&str]) -> (Tokenizer, Reference) {
    reference_named(add_space_prefix, "spm-reference", texts)
}

/// [`reference`] with the file's `general.name`.
fn reference_named(add_space_prefix: bool, name: &str, texts: &[&str]) -> (Tokenizer, Reference) {
    use std::io::Write;
    let python = testing::llama_cpp_python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/tokenizer_reference.py");
    // A file per call: the tests run in parallel in one process.
    static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!(
        "familiar-spm-{}-{call}-{add_space_prefix}.gguf",
        std::process::id()
    ));
    let mut child = std::process::Command::new(&python)
        .arg(script)
        .arg("--spm")
        .arg(&path)
        .arg(add_space_prefix.to_string())
        .arg(name)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{} does not run: {e}", python.display()));
    let input = serde_json::to_vec(texts).unwrap_or_default();
    if let Some(mut stdin) = child.stdin.take() {
        stdin.write_all(&input).unwrap_or_else(|e| panic!("{e}"));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    let reference: Reference = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "the reference script failed ({e}): {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let _ = std::fs::remove_file(&path);
    let g = gguf::Gguf::parse(bytes).unwrap_or_else(|e| panic!("the reference file: {e}"));
    let tok = Tokenizer::from_gguf(&g).unwrap_or_else(|e| panic!("the reference file: {e}"));
    (tok, reference)
}

fn ids_equal_llama_cpp(add_space_prefix: bool, name: &str) {
    let texts: Vec<&str> = CORPUS.iter().chain(MARKUP).copied().collect();
    let (tok, want) = reference_named(add_space_prefix, name, &texts);
    assert_eq!(want.plain.len(), texts.len());
    assert!(tok.is_sentencepiece() && tok.add_bos());
    let bos = tok.bos().into_iter();
    for (i, text) in texts.iter().enumerate() {
        let plain = tok.encode(text);
        assert_eq!(Some(&plain), want.plain.get(i), "plain {text:?}");
        let markup = tok.encode_with_specials(text);
        assert_eq!(Some(&markup), want.markup.get(i), "markup {text:?}");
        let with_bos: Vec<u32> = bos.clone().chain(markup).collect();
        assert_eq!(Some(&with_bos), want.bos.get(i), "bos {text:?}");
        assert_eq!(
            Some(&tok.decode(&plain)),
            want.decoded.get(i),
            "decoded {text:?}"
        );
    }
    for text in CORPUS {
        assert_eq!(tok.decode(&tok.encode(text)), text.as_bytes(), "{text:?}");
    }
}

#[test]
fn ids_equal_llama_cpp_on_a_sentencepiece_vocabulary_with_a_space_prefix_as_llama_2() {
    ids_equal_llama_cpp(true, "spm-reference");
}

#[test]
fn ids_equal_llama_cpp_on_a_sentencepiece_vocabulary_without_one_as_gemma() {
    ids_equal_llama_cpp(false, "spm-reference");
}

#[test]
fn ids_equal_llama_cpp_in_a_file_named_phi_3_whose_special_tokens_eat_the_whitespace_after() {
    ids_equal_llama_cpp(true, "Phi-3-mini-4k-instruct");
}

#[test]
fn arbitrary_strings_round_trip() {
    // Not `▁` itself: typed, it reads as the space the vocabulary spells with it.
    let pool: Vec<char> = "ab cde\n\té中🙂<s>_".chars().collect();
    let pieces = [
        ("\u{2581}a", -1.0),
        ("ab", -1.0),
        ("\u{2581}\u{2581}", -2.0),
        ("abc", -1.5),
        ("\u{2581}ab", -0.5),
    ];
    let toks = [vocabulary(&pieces, true), vocabulary(&pieces, false)];
    let mut rng = Rng(0x59e);
    for _ in 0..400 {
        let len = (rng.next_u64() % 30) as usize;
        let text: String = (0..len)
            .filter_map(|_| {
                pool.get((rng.next_u64() % pool.len() as u64) as usize)
                    .copied()
            })
            .collect();
        for tok in &toks {
            assert_eq!(tok.decode(&tok.encode(&text)), text.as_bytes(), "{text:?}");
        }
    }
}

#[test]
fn a_long_prompt_encodes_quickly() {
    let pieces: Vec<(String, f32)> = (0..2000)
        .map(|i| {
            let word: String = format!("{i:x}")
                .chars()
                .map(|c| char::from(b'a' + (c as u8 % 5)))
                .collect();
            (format!("\u{2581}{word}"), -(i as f32) / 100.0)
        })
        .collect();
    let borrowed: Vec<(&str, f32)> = pieces.iter().map(|(p, s)| (p.as_str(), *s)).collect();
    let tok = vocabulary(&borrowed, true);
    let text = CORPUS
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
    assert_eq!(tok.decode(&ids), text.as_bytes());
    assert!(took.as_millis() < 1000, "{took:?}");
}

#[test]
fn a_rendered_prompt_encodes_as_llama_cpp_encodes_it_whole() {
    use crate::template::{ChatTemplate, Turn};
    const GEMMA: &str = "{{ bos_token }}<start_of_turn>";
    const PHI35: &str = "<|user|>\n' + message['content'] + '<|end|>\n'";
    let turns = [
        ("system", "Answer briefly."),
        ("user", "hello world, how are you today?"),
        ("assistant", " the quick brown fox  "),
        ("user", "naïve café 🙂\tthere"),
    ]
    .map(|(role, content)| Turn { role, content });
    for prefix in [true, false] {
        let (tok, _) = reference(prefix, &[]);
        let templates = [GEMMA, PHI35].map(|src| {
            ChatTemplate::from_source(src, &tok).unwrap_or_else(|e| panic!("{src}: {e}"))
        });
        let rendered: Vec<String> = templates.iter().map(|t| t.render(&turns, true)).collect();
        let texts: Vec<&str> = rendered.iter().map(String::as_str).collect();
        let (tok, want) = reference(prefix, &texts);
        // Gemma's template writes `<s>` itself; Phi-3.5's does not, so the file's
        // add_bos_token opens the prompt with it, as llama.cpp's add_special does.
        let gemma = templates[0].encode(&tok, &turns, true);
        assert_eq!(
            Some(&gemma),
            want.markup.first(),
            "{prefix} {:?}",
            rendered[0]
        );
        let phi = templates[1].encode(&tok, &turns, true);
        assert_eq!(Some(&phi), want.bos.get(1), "{prefix} {:?}", rendered[1]);
    }
}
