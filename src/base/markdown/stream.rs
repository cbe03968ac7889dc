//! Markdown that arrives a few bytes at a time. Parsing the whole answer again on
//! every chunk costs the square of its length over the stream; a [`Stream`] parses
//! again only from the start of the last top-level block that may still change.
//!
//! Why the earlier blocks cannot change: CommonMark decides block structure line by
//! line, and a block closes for good once a later complete line starts another one
//! (a setext underline or a table's delimiter row changes only the block just before
//! it, which is still the last). Two things reach further, and both are handled by
//! parsing everything again: link reference definitions (a definition anywhere
//! changes links anywhere, so a document that has one is never split), and a
//! source that is not the previous one with text appended (each update compares the
//! settled source with the new text's start: a byte comparison at memory speed), or
//! whose parsed part shrank at the size limit.

use std::sync::Arc;

use super::{Block, Limits, tree};

/// A streaming answer's parsed blocks, each with a key that changes exactly when
/// the block may have (the renderer keeps the DOM of a key it has seen).
#[derive(Debug, Default)]
pub struct Stream {
    limits: Limits,
    /// The source the settled blocks were parsed from.
    settled_source: String,
    settled: Vec<(u64, Arc<Block>)>,
    /// The blocks parsed from the rest, keyed afresh on every update.
    tail: Vec<(u64, Arc<Block>)>,
    /// Bytes parsed by the last update: the unsettled rest of the source.
    tail_len: usize,
    /// The length of the source the last update parsed (within the limits).
    parsed_len: usize,
    next_key: u64,
}

impl Stream {
    /// An empty stream parsing within `limits`.
    pub fn new(limits: Limits) -> Self {
        Stream {
            limits,
            ..Stream::default()
        }
    }

    /// Brings the blocks up to date with `text`, the whole source so far.
    pub fn update(&mut self, text: &str) {
        let cut = self.limits.cut(text);
        let parsed_part = text.get(..cut).unwrap_or_default();
        // Past the size limit the parsed part ends at the last line break before it,
        // which may be earlier than what the last update parsed: a line that then
        // closed a settled block (a table's delimiter row splitting a paragraph) is
        // gone, so the settled blocks are parsed again.
        if !parsed_part.starts_with(self.settled_source.as_str())
            || parsed_part.len() < self.parsed_len
        {
            self.unsettle();
        }
        self.parsed_len = parsed_part.len();
        let blocks = loop {
            let from = self.settled_source.len();
            let unsettled = parsed_part.get(from..).unwrap_or_default();
            let parsed = tree::parse(unsettled, self.limits.max_depth);
            self.tail_len = unsettled.len();
            match settled_count(&parsed, unsettled) {
                Some(settle) => {
                    let mut blocks = parsed.blocks.into_iter();
                    for block in blocks.by_ref().take(settle) {
                        let key = self.key();
                        self.settled.push((key, Arc::new(block)));
                    }
                    // The next block's line: a block starts after its indentation.
                    let next = parsed.starts.get(settle).copied().unwrap_or_default();
                    let before = unsettled.get(..next).unwrap_or_default();
                    let end = before.rfind('\n').map_or(0, |newline| newline + 1);
                    let newly_settled = unsettled.get(..end).unwrap_or_default();
                    self.settled_source.push_str(newly_settled);
                    break blocks.collect::<Vec<_>>();
                }
                // A definition in the new text reaches back into the settled part.
                None if from > 0 => self.unsettle(),
                None => break parsed.blocks,
            }
        };
        self.tail.clear();
        for block in blocks.into_iter().chain(self.limits.rest(text, cut)) {
            let key = self.key();
            self.tail.push((key, Arc::new(block)));
        }
    }

    fn unsettle(&mut self) {
        self.settled_source.clear();
        self.settled.clear();
    }

    /// The blocks in order, with their keys.
    pub fn blocks(&self) -> impl Iterator<Item = &(u64, Arc<Block>)> {
        self.settled.iter().chain(&self.tail)
    }

    /// How many source bytes the last update parsed again: what an update costs.
    pub fn unsettled_len(&self) -> usize {
        self.tail_len
    }

    fn key(&mut self) -> u64 {
        self.next_key += 1;
        self.next_key
    }
}

/// How many of the blocks parsed from `text` are settled: all but the last one that
/// starts on a complete line; `None` when `text` defines link references or its
/// blocks' starts are not all known.
fn settled_count(parsed: &tree::Parsed, text: &str) -> Option<usize> {
    if parsed.has_definitions || parsed.starts.len() != parsed.blocks.len() {
        return None;
    }
    let last_line = text.rfind('\n').map_or(0, |newline| newline + 1);
    let on_complete_lines = parsed
        .starts
        .iter()
        .take_while(|&&start| start < last_line)
        .count();
    Some(on_complete_lines.saturating_sub(1))
}
