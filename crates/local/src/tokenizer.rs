//! The tokenizers GGUF files name in `tokenizer.ggml.model`, built from the file's
//! vocabulary: "gpt2", byte-level BPE as GPT-2 and its descendants (SmolLM, Llama 3,
//! Qwen 2) tokenize, and "llama", SentencePiece as Llama 2, TinyLlama, Gemma 2 and 3
//! and Phi-3 do ([`spm`]).
//!
//! For BPE a text is cut into words by the model's pre-tokenizer ([`pretokenize`]),
//! then each word's bytes are merged pairwise, lowest merge rank first, into tokens;
//! SentencePiece merges a whole run of text by its pieces' scores. Either way the ids
//! match llama.cpp's for the same file. Special tokens are matched literally only when
//! asked ([`Tokenizer::encode_with_specials`]), so text a user types can never become
//! control markup. The chat template ([`crate::template`]) decides what is markup.
//!
//! A vocabulary larger than any real one ([`MAX_TOKENS`], [`MAX_VOCABULARY_TEXT`]) is
//! refused before it is copied: the tokenizer and the constraint's byte tries built
//! from it cost many times its bytes, and a hostile file must not make the worker run
//! out of memory.

mod bpe;
pub mod byte_level;
mod letters;
pub mod pretokenize;
mod spm;

use std::collections::HashMap;
use std::fmt;

use crate::gguf::{Gguf, Value};
use bpe::{Merge, Scratch, pair};
use pretokenize::Pre;

/// GGUF token types (`tokenizer.ggml.token_type`).
const NORMAL: i32 = 1;
const UNKNOWN: i32 = 2;
const CONTROL: i32 = 3;
const USER_DEFINED: i32 = 4;
const BYTE: i32 = 6;

/// Tokens a vocabulary may have: real ones have 32,000 to 262,144.
pub const MAX_TOKENS: usize = 1 << 20;
/// Bytes of all the tokens' text together: real ones have under 3 MiB. The
/// constraint's tries take a node per byte, so this is what bounds them.
pub const MAX_VOCABULARY_TEXT: usize = 8 << 20;

/// Why a vocabulary could not become a tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenizerError {
    /// A metadata key the tokenizer needs is absent or of the wrong type.
    Missing(&'static str),
    /// `tokenizer.ggml.model` names a kind of tokenizer this crate does not have.
    UnsupportedModel(String),
    /// `tokenizer.ggml.pre` names a pre-tokenizer this crate does not reproduce.
    UnsupportedPre(String),
    /// The vocabulary is empty or its token types or scores do not line up with it.
    BadVocabulary(String),
    /// A merge is not two tokens separated by one space.
    BadMerge { index: usize, text: String },
    /// A special token id (bos, eos) is outside the vocabulary.
    BadId { what: &'static str, id: u32 },
}

impl fmt::Display for TokenizerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenizerError::Missing(key) => write!(f, "the model file has no usable `{key}`"),
            TokenizerError::UnsupportedModel(m) => write!(
                f,
                "tokenizer model {m:?} is not supported; only \"gpt2\" (byte-level BPE) and \"llama\" (SentencePiece)"
            ),
            TokenizerError::UnsupportedPre(p) => write!(
                f,
                "pre-tokenizer {p:?} is not supported; known: \"gpt2\", \"smollm\", \"llama-bpe\", \"qwen2\""
            ),
            TokenizerError::BadVocabulary(why) => write!(f, "bad vocabulary: {why}"),
            TokenizerError::BadMerge { index, text } => {
                write!(
                    f,
                    "merge {index} ({text:?}) is not two tokens separated by a space"
                )
            }
            TokenizerError::BadId { what, id } => {
                write!(f, "the {what} token id {id} is outside the vocabulary")
            }
        }
    }
}

impl std::error::Error for TokenizerError {}

/// A byte-level BPE or SentencePiece tokenizer.
#[derive(Debug, Clone)]
pub struct Tokenizer {
    /// Each token's text as the vocabulary spells it (for exact lookups).
    texts: Vec<String>,
    /// Each token's bytes (empty for control tokens).
    bytes: Vec<Vec<u8>>,
    types: Vec<i32>,
    by_text: HashMap<String, u32>,
    /// The token of each single byte, where the vocabulary has one.
    byte_tokens: [Option<u32>; 256],
    /// Merges by their pair of tokens, `left << 32 | right`.
    merges: HashMap<u64, Merge>,
    pre: Pre,
    /// Llama 3 looks a whole word up before merging (llama.cpp's `ignore_merges`).
    whole_words: bool,
    /// Tokens matched literally in any text (user-defined).
    literals: Vec<u32>,
    /// Control tokens, matched only in markup.
    controls: Vec<u32>,
    bos: Option<u32>,
    eos: Option<u32>,
    /// Whether a prompt opens with `bos` (`tokenizer.ggml.add_bos_token`).
    add_bos: bool,
    /// SentencePiece's scores and space prefix (`None`: byte-level BPE).
    spm: Option<spm::Spm>,
    /// Special tokens eat the whitespace after them ([`Tokenizer::strips_after`]).
    rstrip_specials: bool,
}

impl Tokenizer {
    /// The tokenizer a GGUF file describes: `tokenizer.ggml.model` "gpt2" (byte-level
    /// BPE) with a known `tokenizer.ggml.pre` (absent: GPT-2's), or "llama"
    /// (SentencePiece) with its scores and `tokenizer.ggml.add_space_prefix`.
    pub fn from_gguf(g: &Gguf) -> Result<Tokenizer, TokenizerError> {
        let model = g
            .str("tokenizer.ggml.model")
            .ok_or(TokenizerError::Missing("tokenizer.ggml.model"))?;
        if model != "gpt2" && model != "llama" {
            return Err(TokenizerError::UnsupportedModel(model.to_string()));
        }
        let strings = |key: &'static str| {
            g.strings(key)
                .map(|v| v.into_iter().map(str::to_string).collect::<Vec<_>>())
                .ok_or(TokenizerError::Missing(key))
        };
        if let Some(tokens) = g.strings("tokenizer.ggml.tokens") {
            vocabulary_fits(&tokens)?;
        }
        let tokens = strings("tokenizer.ggml.tokens")?;
        let types = match g.ints("tokenizer.ggml.token_type") {
            Some(v) => v
                .into_iter()
                .map(|t| i32::try_from(t).unwrap_or(NORMAL))
                .collect(),
            None => Vec::new(),
        };
        let id = |key| g.u64(key).and_then(|v| u32::try_from(v).ok());
        let flag = |key| match g.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        };
        let (bos, eos) = (
            id("tokenizer.ggml.bos_token_id"),
            id("tokenizer.ggml.eos_token_id"),
        );
        let mut tok = if model == "llama" {
            // F32 scores, or I32 as llama.cpp also takes; absent, all 0.
            let key = "tokenizer.ggml.scores";
            let scores = match (g.get(key), g.floats(key), g.ints(key)) {
                (None, ..) => Vec::new(),
                (_, Some(s), _) => s,
                (_, _, Some(s)) => s.into_iter().map(|s| s as f32).collect(),
                _ => return Err(TokenizerError::Missing(key)),
            };
            // llama.cpp's defaults for SentencePiece: `<s>` is 1 and `</s>` 2.
            let n = tokens.len();
            let default = |id: u32| Some(id).filter(|&id| (id as usize) < n);
            Tokenizer::from_pieces(
                tokens,
                types,
                scores,
                flag("tokenizer.ggml.add_space_prefix").unwrap_or(true),
                bos.or_else(|| default(1)),
                eos.or_else(|| default(2)),
            )?
        } else {
            let pre = g.str("tokenizer.ggml.pre").unwrap_or("gpt2");
            let merges = strings("tokenizer.ggml.merges")?;
            Tokenizer::from_parts(tokens, types, merges, pre, bos, eos)?
        };
        if let Some(add) = flag("tokenizer.ggml.add_bos_token") {
            tok.add_bos = add;
        }
        // llama.cpp knows Phi-3's files by their name (`general.name`).
        let name = g.str("general.name").unwrap_or("").to_lowercase();
        tok.rstrip_specials = name.contains("phi-3") || name.contains("phi3");
        Ok(tok)
    }

    /// A tokenizer from a vocabulary (`tokens`, spelled byte-level), its GGUF token
    /// types (empty: all normal), its merges (`"left right"`, highest priority first)
    /// and the pre-tokenizer's name.
    pub fn from_parts(
        tokens: Vec<String>,
        token_types: Vec<i32>,
        merges: Vec<String>,
        pre: &str,
        bos: Option<u32>,
        eos: Option<u32>,
    ) -> Result<Tokenizer, TokenizerError> {
        let pre_kind = Pre::from_name(Some(pre))
            .ok_or_else(|| TokenizerError::UnsupportedPre(pre.to_string()))?;
        let mut tok = Tokenizer::vocabulary(tokens, token_types, bos, eos, None)?;
        let mut merge_map = HashMap::with_capacity(merges.len());
        for (index, merge) in merges.iter().enumerate() {
            let bad = || TokenizerError::BadMerge {
                index,
                text: merge.clone(),
            };
            let (left, right) = merge.split_once(' ').ok_or_else(bad)?;
            let id = |t: &str| tok.by_text.get(t).copied();
            let (Some(l), Some(r), Some(into)) =
                (id(left), id(right), id(&format!("{left}{right}")))
            else {
                // A merge whose parts or result are not tokens can never apply.
                continue;
            };
            let rank = u32::try_from(index).map_err(|_| bad())?;
            merge_map.entry(pair(l, r)).or_insert(Merge { rank, into });
        }
        tok.merges = merge_map;
        tok.pre = pre_kind;
        // Llama 3 looks whole words up, and its files open a prompt with BOS.
        tok.whole_words = matches!(pre_kind, Pre::Llama3);
        tok.add_bos = tok.whole_words;
        Ok(tok)
    }

    /// A SentencePiece tokenizer from a vocabulary (`tokens`, `▁` for a space), its
    /// GGUF token types (empty: all normal), its scores (empty: all 0, as llama.cpp
    /// takes a file without them) and whether a text opens with a space.
    pub fn from_pieces(
        tokens: Vec<String>,
        token_types: Vec<i32>,
        scores: Vec<f32>,
        add_space_prefix: bool,
        bos: Option<u32>,
        eos: Option<u32>,
    ) -> Result<Tokenizer, TokenizerError> {
        vocabulary_fits(&tokens)?;
        if !scores.is_empty() && scores.len() != tokens.len() {
            return Err(TokenizerError::BadVocabulary(format!(
                "{} scores for {} tokens",
                scores.len(),
                tokens.len()
            )));
        }
        let spm = spm::Spm {
            scores,
            add_space_prefix,
        };
        let mut tok = Tokenizer::vocabulary(tokens, token_types, bos, eos, Some(spm))?;
        tok.add_bos = true;
        Ok(tok)
    }

    /// What both kinds share: the vocabulary checked, its tokens' bytes and lookups.
    fn vocabulary(
        tokens: Vec<String>,
        token_types: Vec<i32>,
        bos: Option<u32>,
        eos: Option<u32>,
        spm: Option<spm::Spm>,
    ) -> Result<Tokenizer, TokenizerError> {
        vocabulary_fits(&tokens)?;
        if tokens.is_empty() || u32::try_from(tokens.len()).is_err() {
            return Err(TokenizerError::BadVocabulary(format!(
                "{} tokens",
                tokens.len()
            )));
        }
        let types = if token_types.is_empty() {
            vec![NORMAL; tokens.len()]
        } else {
            token_types
        };
        if types.len() != tokens.len() {
            return Err(TokenizerError::BadVocabulary(format!(
                "{} token types for {} tokens",
                types.len(),
                tokens.len()
            )));
        }
        for (what, id) in [("bos", bos), ("eos", eos)] {
            if let Some(id) = id.filter(|&id| id as usize >= tokens.len()) {
                return Err(TokenizerError::BadId { what, id });
            }
        }
        let mut by_text = HashMap::with_capacity(tokens.len());
        let mut bytes = Vec::with_capacity(tokens.len());
        let mut byte_tokens = [None; 256];
        for (id, (text, &kind)) in (0u32..).zip(tokens.iter().zip(&types)) {
            by_text.entry(text.clone()).or_insert(id);
            if spm.is_some() {
                bytes.push(spm::piece_bytes(text, kind));
                continue;
            }
            let token_bytes = match kind {
                NORMAL | BYTE => {
                    byte_level::decode(text).unwrap_or_else(|| text.as_bytes().to_vec())
                }
                USER_DEFINED => text.as_bytes().to_vec(),
                _ => Vec::new(),
            };
            if let ([b], NORMAL | BYTE, 1) = (&token_bytes[..], kind, text.chars().count()) {
                byte_tokens[usize::from(*b)].get_or_insert(id);
            }
            bytes.push(token_bytes);
        }
        if spm.is_some() {
            byte_tokens = spm::byte_tokens(|t| by_text.get(t).copied());
        }
        let specials = |kinds: &[i32]| {
            // In vocabulary order: a match takes the longest at each position.
            let ids: Vec<u32> = (0u32..)
                .zip(&types)
                .filter(|&(id, t)| {
                    kinds.contains(t) && tokens.get(id as usize).is_some_and(|s| !s.is_empty())
                })
                .map(|(id, _)| id)
                .collect();
            ids
        };
        let literals = specials(&[USER_DEFINED]);
        // Markup matches unknown tokens (`<unk>`) too, as llama.cpp's special parsing does.
        let controls = specials(&[CONTROL, UNKNOWN]);
        Ok(Tokenizer {
            texts: tokens,
            bytes,
            types,
            by_text,
            byte_tokens,
            merges: HashMap::new(),
            pre: Pre::Gpt2,
            whole_words: false,
            literals,
            controls,
            bos,
            eos,
            add_bos: false,
            spm,
            rstrip_specials: false,
        })
    }

    /// Tokens of plain text: special tokens' text is not matched, so a user typing
    /// `<|im_end|>` gets ordinary tokens (user-defined tokens are, as llama.cpp does).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_split(text, false, &mut out);
        out
    }

    /// Tokens of markup: control tokens (`<|im_start|>`, …) are matched literally.
    pub fn encode_with_specials(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::with_capacity(text.len() / 3 + 1);
        self.encode_split(text, true, &mut out);
        out
    }

    /// The bytes a token stands for (empty for control tokens and unknown ids).
    pub fn token_bytes(&self, id: u32) -> &[u8] {
        self.bytes.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// The bytes of a run of tokens. Where SentencePiece opened the text with a space,
    /// the first token's is dropped, as llama.cpp's `llama_detokenize` does (one
    /// token at a time, [`Tokenizer::token_bytes`], keeps it, as its server streams).
    pub fn decode(&self, ids: &[u32]) -> Vec<u8> {
        let mut out: Vec<u8> = ids
            .iter()
            .flat_map(|&id| self.token_bytes(id).iter().copied())
            .collect();
        let prefixed = self.spm.as_ref().is_some_and(|s| s.add_space_prefix);
        if prefixed && ids.first().map(|&id| self.token_bytes(id).first()) == Some(Some(&b' ')) {
            out.remove(0);
        }
        out
    }

    pub fn vocab_size(&self) -> usize {
        self.texts.len()
    }

    pub fn bos(&self) -> Option<u32> {
        self.bos
    }

    pub fn eos(&self) -> Option<u32> {
        self.eos
    }

    /// Whether the file asks for `bos` before a prompt (`tokenizer.ggml.add_bos_token`;
    /// absent: llama.cpp's default, yes for SentencePiece and Llama 3's BPE).
    pub fn add_bos(&self) -> bool {
        self.add_bos && self.bos.is_some()
    }

    /// Whether this is a SentencePiece vocabulary (`tokenizer.ggml.model` "llama").
    pub fn is_sentencepiece(&self) -> bool {
        self.spm.is_some()
    }

    /// The token whose vocabulary text is exactly `text` (e.g. `"<|im_end|>"`).
    pub fn token_id(&self, text: &str) -> Option<u32> {
        self.by_text.get(text).copied()
    }

    /// A token's text as the vocabulary spells it (`"<|im_end|>"`, `"Ġthe"`).
    pub fn token_text(&self, id: u32) -> Option<&str> {
        self.texts.get(id as usize).map(String::as_str)
    }

    /// Whether a token is control markup (GGUF token type 3).
    pub fn is_control(&self, id: u32) -> bool {
        self.types.get(id as usize) == Some(&CONTROL)
    }

    /// Splits `text` around the tokens matched literally, encoding the rest.
    fn encode_split(&self, text: &str, with_controls: bool, out: &mut Vec<u32>) {
        self.encode_parts_into([(text, with_controls)], out);
    }

    /// Tokens of a text given in parts, each read with control tokens (markup) or
    /// without (content). Plain text running on from one part into the next is one
    /// run, as llama.cpp encodes a whole rendered prompt: SentencePiece opens a run
    /// with its space and merges across where the parts meet.
    pub fn encode_parts<'a>(&self, parts: impl IntoIterator<Item = (&'a str, bool)>) -> Vec<u32> {
        let mut out = Vec::new();
        self.encode_parts_into(parts, &mut out);
        out
    }

    fn encode_parts_into<'a>(
        &self,
        parts: impl IntoIterator<Item = (&'a str, bool)>,
        out: &mut Vec<u32>,
    ) {
        let mut run = String::new();
        // Whitespace after a special token that eats it (Phi-3's), in any part.
        let mut stripping = false;
        for (text, with_controls) in parts {
            let mut plain_from = 0;
            let mut at = 0;
            while at < text.len() {
                if stripping
                    && plain_from == at
                    && text.as_bytes().get(at).is_some_and(|&b| is_c_space(b))
                {
                    at += 1;
                    plain_from = at;
                    continue;
                }
                stripping = false;
                match self.literal_at(text, at, with_controls) {
                    Some((id, len)) => {
                        run.push_str(text.get(plain_from..at).unwrap_or(""));
                        self.encode_plain(&run, out);
                        run.clear();
                        out.push(id);
                        at += len;
                        plain_from = at;
                        stripping = self.strips_after(id);
                    }
                    None => at += 1,
                }
            }
            run.push_str(text.get(plain_from..).unwrap_or(""));
        }
        self.encode_plain(&run, out);
    }

    /// Whether a special token eats the whitespace after it: in a file named Phi-3,
    /// all but `<unk>`, `<s>` and `<|endoftext|>` do, as llama.cpp sets them (their
    /// tokenizer_config's `rstrip`).
    fn strips_after(&self, id: u32) -> bool {
        self.rstrip_specials
            && match self.texts.get(id as usize).map(String::as_str) {
                Some("<unk>" | "<s>" | "<|endoftext|>") | None => false,
                Some("</s>") => true,
                Some(_) => matches!(
                    self.types.get(id as usize),
                    Some(&(CONTROL | USER_DEFINED | UNKNOWN))
                ),
            }
    }

    /// The longest token matched literally at byte `at`, with its length.
    fn literal_at(&self, text: &str, at: usize, with_controls: bool) -> Option<(u32, usize)> {
        if self.literals.is_empty() && !with_controls {
            return None;
        }
        let rest = text.get(at..)?;
        let lists: &[&[u32]] = if with_controls {
            &[&self.literals, &self.controls]
        } else {
            &[&self.literals]
        };
        lists
            .iter()
            .flat_map(|ids| ids.iter())
            .filter_map(|&id| {
                let t = self.texts.get(id as usize)?;
                rest.starts_with(t.as_str()).then_some((id, t.len()))
            })
            .max_by_key(|&(_, len)| len)
    }

    /// BPE over the pre-tokenizer's words of `text`, or SentencePiece over all of it.
    fn encode_plain(&self, text: &str, out: &mut Vec<u32>) {
        if let Some(spm) = &self.spm {
            self.encode_pieces(spm, text, out);
            return;
        }
        let mut scratch = Scratch::default();
        for (from, to) in self.pre.split(text) {
            let word = text.as_bytes().get(from..to).unwrap_or(&[]);
            if let Some(&id) = self
                .whole_words
                .then(|| self.by_text.get(&byte_level::encode(word)))
                .flatten()
            {
                out.push(id);
                continue;
            }
            self.merge_word(word, &mut scratch, out);
        }
    }
}

/// C's `isspace`, which llama.cpp strips with.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0B | 0x0C | b'\r')
}

/// Refuses a vocabulary past [`MAX_TOKENS`] or [`MAX_VOCABULARY_TEXT`].
fn vocabulary_fits<S: AsRef<str>>(tokens: &[S]) -> Result<(), TokenizerError> {
    if tokens.len() > MAX_TOKENS {
        return Err(TokenizerError::BadVocabulary(format!(
            "{} tokens, more than the {MAX_TOKENS} this tokenizer accepts",
            tokens.len()
        )));
    }
    let text = tokens
        .iter()
        .fold(0usize, |sum, t| sum.saturating_add(t.as_ref().len()));
    if text > MAX_VOCABULARY_TEXT {
        return Err(TokenizerError::BadVocabulary(format!(
            "{} MiB of token text, more than the {} MiB this tokenizer accepts",
            text >> 20,
            MAX_VOCABULARY_TEXT >> 20
        )));
    }
    Ok(())
}

#[cfg(test)]
mod hostile;
#[cfg(test)]
mod tests;
