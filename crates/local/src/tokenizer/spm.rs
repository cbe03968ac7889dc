//! SentencePiece as llama.cpp runs it (`tokenizer.ggml.model` "llama": Llama 2,
//! TinyLlama, Gemma 2 and 3, Phi-3): the vocabulary spells a space as `▁` (U+2581),
//! every piece has a score, and the bytes a piece cannot cover fall back to the
//! `<0xNN>` byte tokens.
//!
//! A text's characters are merged pairwise, the pair whose joined text is the
//! highest-scoring piece first (leftmost among equals), until no adjacent pair is a
//! piece: llama.cpp's `llm_tokenizer_spm`, so the ids match its. Where the text is cut
//! around special tokens, and which of them are matched, is the tokenizer's
//! ([`super::Tokenizer::encode_with_specials`]), as for byte-level BPE.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::{BYTE, NORMAL, Tokenizer, USER_DEFINED};

/// How the vocabulary spells a space.
const SPACE: char = '\u{2581}';

/// What a SentencePiece vocabulary adds to the tokenizer's.
#[derive(Debug, Clone)]
pub(super) struct Spm {
    /// Each token's score: the higher, the sooner a pair merges into it.
    pub scores: Vec<f32>,
    /// Whether a text (and the text after each special token) opens with a space, as
    /// SentencePiece's training did (`tokenizer.ggml.add_space_prefix`; Gemma: false).
    pub add_space_prefix: bool,
}

/// The bytes a piece stands for: `▁` is a space, `<0xNN>` its byte, user-defined
/// pieces their text, control and unknown pieces nothing (as llama.cpp prints them).
pub(super) fn piece_bytes(text: &str, kind: i32) -> Vec<u8> {
    match kind {
        NORMAL => text.replace(SPACE, " ").into_bytes(),
        BYTE => byte_of(text).map_or_else(|| text.as_bytes().to_vec(), |b| vec![b]),
        USER_DEFINED => text.as_bytes().to_vec(),
        _ => Vec::new(),
    }
}

/// The byte a `<0xNN>` piece spells.
fn byte_of(text: &str) -> Option<u8> {
    let hex = text.strip_prefix("<0x")?.strip_suffix('>')?;
    if hex.len() != 2 {
        return None;
    }
    u8::from_str_radix(hex, 16).ok()
}

/// The token of each byte: its `<0xNN>` piece, else (ASCII) the piece of that one
/// character, as llama.cpp's `byte_to_token` looks them up.
pub(super) fn byte_tokens(id: impl Fn(&str) -> Option<u32>) -> [Option<u32>; 256] {
    let mut out = [None; 256];
    for (b, slot) in (0u8..=255).zip(out.iter_mut()) {
        *slot = id(&format!("<0x{b:02X}>")).or_else(|| {
            b.is_ascii()
                .then(|| id(char::from(b).encode_utf8(&mut [0; 4])))
                .flatten()
        });
    }
    out
}

/// One symbol of the text being merged: its bytes in the escaped text (`len` 0 once
/// merged into its left neighbour) and its neighbours (`usize::MAX`: none).
#[derive(Clone, Copy)]
struct Symbol {
    start: usize,
    len: usize,
    prev: usize,
    next: usize,
}

/// Two adjacent symbols whose joined text is a piece, with that piece's score.
#[derive(Clone, Copy)]
struct Bigram {
    score: f32,
    left: usize,
    right: usize,
    /// The joined length when pushed: a pair whose sides have changed since is stale.
    size: usize,
}

impl Ord for Bigram {
    /// Higher score first, then leftmost (the max of a `BinaryHeap`).
    fn cmp(&self, other: &Self) -> Ordering {
        self.score
            .total_cmp(&other.score)
            .then_with(|| other.left.cmp(&self.left))
    }
}

impl PartialOrd for Bigram {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Bigram {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Bigram {}

impl Tokenizer {
    /// SentencePiece over one run of plain text (no special tokens in it).
    pub(super) fn encode_pieces(&self, spm: &Spm, text: &str, out: &mut Vec<u32>) {
        if text.is_empty() {
            return;
        }
        let mut escaped = String::with_capacity(text.len() + 3);
        if spm.add_space_prefix {
            escaped.push(SPACE);
        }
        escaped.extend(text.chars().map(|c| if c == ' ' { SPACE } else { c }));
        let mut symbols: Vec<Symbol> = escaped
            .char_indices()
            .enumerate()
            .map(|(i, (start, c))| Symbol {
                start,
                len: c.len_utf8(),
                prev: i.wrapping_sub(1),
                next: i + 1,
            })
            .collect();
        if let Some(last) = symbols.last_mut() {
            last.next = usize::MAX;
        }
        let mut heap = BinaryHeap::with_capacity(symbols.len());
        for i in 1..symbols.len() {
            self.push_bigram(spm, &escaped, &symbols, i - 1, i, &mut heap);
        }
        while let Some(b) = heap.pop() {
            let (Some(l), Some(r)) = (symbols.get(b.left).copied(), symbols.get(b.right).copied())
            else {
                continue;
            };
            // Stale: one side has merged since this pair was pushed.
            if l.len == 0 || r.len == 0 || l.len + r.len != b.size {
                continue;
            }
            if let Some(sym) = symbols.get_mut(b.left) {
                sym.len += r.len;
                sym.next = r.next;
            }
            if let Some(sym) = symbols.get_mut(b.right) {
                sym.len = 0;
            }
            if let Some(sym) = symbols.get_mut(r.next) {
                sym.prev = b.left;
            }
            self.push_bigram(spm, &escaped, &symbols, l.prev, b.left, &mut heap);
            self.push_bigram(spm, &escaped, &symbols, b.left, r.next, &mut heap);
        }
        let mut i = 0;
        while let Some(sym) = symbols.get(i) {
            let piece = escaped.get(sym.start..sym.start + sym.len).unwrap_or("");
            match self.by_text.get(piece) {
                Some(&id) => out.push(id),
                // Bytes with no token of their own are dropped (llama.cpp would abort).
                None => out.extend(
                    piece
                        .bytes()
                        .filter_map(|b| self.byte_tokens[usize::from(b)]),
                ),
            }
            i = sym.next;
        }
    }

    fn push_bigram(
        &self,
        spm: &Spm,
        escaped: &str,
        symbols: &[Symbol],
        left: usize,
        right: usize,
        heap: &mut BinaryHeap<Bigram>,
    ) {
        let (Some(l), Some(r)) = (symbols.get(left), symbols.get(right)) else {
            return;
        };
        let size = l.len + r.len;
        let Some(&id) = escaped
            .get(l.start..l.start + size)
            .and_then(|joined| self.by_text.get(joined))
        else {
            return;
        };
        let score = spm.scores.get(id as usize).copied().unwrap_or(0.0);
        heap.push(Bigram {
            score,
            left,
            right,
            size,
        });
    }
}

#[cfg(test)]
mod tests;
