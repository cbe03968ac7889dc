//! Hostile vocabularies: more tokens, or more token text, than any real model has.
//! Each is refused by name before the tokenizer copies it, since the tokenizer and
//! the constraint's byte tries built from it cost many times its bytes.

use super::*;
use crate::gguf::{self, Value};

fn refusal(result: Result<Tokenizer, TokenizerError>) -> String {
    match result {
        Err(TokenizerError::BadVocabulary(why)) => why,
        Err(other) => panic!("expected BadVocabulary, got {other:?}"),
        Ok(t) => panic!("built a tokenizer of {} tokens", t.vocab_size()),
    }
}

fn from_gguf(tokens: Vec<String>) -> Result<Tokenizer, TokenizerError> {
    from_gguf_as("gpt2", tokens)
}

fn from_gguf_as(model: &str, tokens: Vec<String>) -> Result<Tokenizer, TokenizerError> {
    let meta = [
        ("tokenizer.ggml.model", Value::String(model.into())),
        (
            "tokenizer.ggml.tokens",
            Value::Array(tokens.into_iter().map(Value::String).collect()),
        ),
        ("tokenizer.ggml.merges", Value::Array(vec![])),
    ];
    let g = gguf::Gguf::parse(gguf::write(&meta, &[])).unwrap();
    Tokenizer::from_gguf(&g)
}

#[test]
fn more_tokens_than_any_vocabulary_has_are_refused() {
    let tokens: Vec<String> = (0..=MAX_TOKENS).map(|i| format!("{i:x}")).collect();
    let why = refusal(Tokenizer::from_parts(
        tokens.clone(),
        vec![],
        vec![],
        "gpt2",
        None,
        None,
    ));
    assert!(why.contains("1048577 tokens"), "{why}");
    let why = refusal(from_gguf(tokens));
    assert!(why.contains("1048577 tokens"), "{why}");
}

#[test]
fn more_token_text_than_any_vocabulary_has_is_refused() {
    // Nine tokens of 1 MiB: a byte trie would take a node for each of their bytes.
    let tokens: Vec<String> = (b'a'..b'a' + 9)
        .map(|c| char::from(c).to_string().repeat(1 << 20))
        .collect();
    let why = refusal(from_gguf(tokens.clone()));
    assert!(why.contains("9 MiB of token text"), "{why}");
    let why = refusal(Tokenizer::from_parts(
        tokens,
        vec![],
        vec![],
        "gpt2",
        None,
        None,
    ));
    assert!(why.contains("more than the 8 MiB"), "{why}");
}

#[test]
fn a_vocabulary_at_the_limits_is_still_a_tokenizer() {
    let tokens: Vec<String> = (0..MAX_TOKENS).map(|i| format!("{i:x}")).collect();
    assert!(from_gguf(tokens).is_ok());
}

#[test]
fn a_sentencepiece_vocabulary_past_the_limits_or_with_bad_scores_is_refused() {
    let tokens: Vec<String> = (0..=MAX_TOKENS).map(|i| format!("{i:x}")).collect();
    let why = refusal(from_gguf_as("llama", tokens));
    assert!(why.contains("1048577 tokens"), "{why}");
    let tokens: Vec<String> = (b'a'..b'a' + 9)
        .map(|c| char::from(c).to_string().repeat(1 << 20))
        .collect();
    let why = refusal(Tokenizer::from_pieces(
        tokens,
        vec![],
        vec![],
        true,
        None,
        None,
    ));
    assert!(why.contains("9 MiB of token text"), "{why}");
    let meta = [
        ("tokenizer.ggml.model", Value::String("llama".into())),
        (
            "tokenizer.ggml.tokens",
            Value::Array(vec![Value::String("a".into())]),
        ),
        (
            "tokenizer.ggml.scores",
            Value::Array(vec![Value::String("high".into())]),
        ),
    ];
    let g = gguf::Gguf::parse(gguf::write(&meta, &[])).unwrap();
    assert_eq!(
        Tokenizer::from_gguf(&g).err(),
        Some(TokenizerError::Missing("tokenizer.ggml.scores"))
    );
}
