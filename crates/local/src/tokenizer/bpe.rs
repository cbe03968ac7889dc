//! Byte-level BPE's merging: a word's bytes merged pairwise into tokens, lowest merge
//! rank first (leftmost among equals), over a linked list of symbols with a heap of
//! candidate pairs, as llama.cpp's `llm_tokenizer_bpe` does. The words come from the
//! pre-tokenizer ([`super::pretokenize`]); the merges from the file ([`super::Tokenizer::from_parts`]).

use std::collections::BinaryHeap;

use super::Tokenizer;

/// A merge of two adjacent tokens: its rank (lower merges first) and the result.
#[derive(Debug, Clone, Copy)]
pub(super) struct Merge {
    pub rank: u32,
    pub into: u32,
}

impl Tokenizer {
    /// Merges one word's bytes into tokens, lowest rank first (leftmost among equals),
    /// over a linked list of symbols with a heap of candidate pairs.
    pub(super) fn merge_word(&self, word: &[u8], s: &mut Scratch, out: &mut Vec<u32>) {
        s.symbols.clear();
        s.heap.clear();
        for (i, &b) in word.iter().enumerate() {
            s.symbols.push(Symbol {
                id: self.byte_tokens[usize::from(b)],
                prev: i.wrapping_sub(1),
                next: i + 1,
            });
        }
        for i in 1..s.symbols.len() {
            self.push_pair(s, i - 1, i);
        }
        while let Some(Candidate {
            rank: _,
            left,
            right,
            left_id,
            right_id,
            into,
        }) = s.heap.pop().map(|r| r.0)
        {
            let (Some(l), Some(r)) = (s.symbols.get(left).copied(), s.symbols.get(right).copied())
            else {
                continue;
            };
            // Stale: one side has merged since this pair was pushed.
            if l.next != right || l.id != Some(left_id) || r.id != Some(right_id) {
                continue;
            }
            if let Some(sym) = s.symbols.get_mut(left) {
                sym.id = Some(into);
                sym.next = r.next;
            }
            if let Some(sym) = s.symbols.get_mut(right) {
                sym.id = None;
                sym.next = usize::MAX;
            }
            if let Some(sym) = s.symbols.get_mut(r.next) {
                sym.prev = left;
            }
            if l.prev != usize::MAX {
                self.push_pair(s, l.prev, left);
            }
            if r.next < s.symbols.len() {
                self.push_pair(s, left, r.next);
            }
        }
        let mut i = 0;
        while let Some(sym) = s.symbols.get(i) {
            // A byte with no token of its own is dropped, as llama.cpp drops it.
            out.extend(sym.id);
            i = sym.next;
        }
    }

    fn push_pair(&self, s: &mut Scratch, left: usize, right: usize) {
        let ids = s
            .symbols
            .get(left)
            .and_then(|l| l.id)
            .zip(s.symbols.get(right).and_then(|r| r.id));
        let Some((left_id, right_id)) = ids else {
            return;
        };
        if let Some(m) = self.merges.get(&pair(left_id, right_id)) {
            s.heap.push(std::cmp::Reverse(Candidate {
                rank: m.rank,
                left,
                right,
                left_id,
                right_id,
                into: m.into,
            }));
        }
    }
}

pub(super) fn pair(left: u32, right: u32) -> u64 {
    (u64::from(left) << 32) | u64::from(right)
}

/// One symbol of a word being merged: its token (`None` once merged away, or for a
/// byte the vocabulary lacks) and its neighbours (`usize::MAX`: none before it).
#[derive(Clone, Copy)]
struct Symbol {
    id: Option<u32>,
    prev: usize,
    next: usize,
}

/// A pair that may merge; ordered by rank, then position (leftmost first).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Candidate {
    rank: u32,
    left: usize,
    right: usize,
    left_id: u32,
    right_id: u32,
    into: u32,
}

#[derive(Default)]
pub(super) struct Scratch {
    symbols: Vec<Symbol>,
    heap: BinaryHeap<std::cmp::Reverse<Candidate>>,
}
