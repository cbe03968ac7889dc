//! What a screen reader hears when a run ends: the answer once, as the words a reader
//! sees (no `*`, `#` or link targets), cut at a word past [`LIMIT`] characters with
//! a pointer to the whole answer (a shortcut moves focus to it, `super::super::shortcuts`).
//!
//! A live region speaks a change, so the same text twice (a Retry that answers
//! alike) would be silent: the region is emptied first and filled a moment later.

use leptos::prelude::*;

use super::Chat;
use crate::base::markdown::{Block, Inline, parse};

/// The longest announcement, in characters, before it is cut.
pub const LIMIT: usize = 280;

/// How long the live region stays empty between two announcements, so that the
/// second is a change even when it repeats the first.
const GAP_MS: u64 = 120;

/// `markdown` as plain words, cut to [`LIMIT`] characters at a word; `rest` is said
/// after a cut.
pub fn spoken(markdown: &str, rest: &str) -> String {
    let mut text = String::new();
    for block in parse(markdown) {
        block_words(&block, &mut text);
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = String::new();
    for word in &words {
        if out.chars().count() + word.chars().count() + 1 > LIMIT {
            out.push_str("… ");
            out.push_str(rest);
            return out;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
    }
    out
}

fn block_words(block: &Block, out: &mut String) {
    match block {
        Block::Paragraph(inlines) | Block::Plain(inlines) | Block::Heading(_, inlines) => {
            inline_words(inlines, out);
        }
        Block::Code { text, .. } | Block::Verbatim { text, .. } => out.push_str(text),
        Block::Quote(blocks) => blocks.iter().for_each(|b| block_words(b, out)),
        Block::List { items, .. } => items
            .iter()
            .flat_map(|item| &item.blocks)
            .for_each(|b| block_words(b, out)),
        Block::Table { head, rows, .. } => {
            head.iter().chain(rows.iter().flatten()).for_each(|cell| {
                inline_words(cell, out);
                out.push(' ');
            })
        }
        Block::Rule => {}
    }
    out.push(' ');
}

fn inline_words(inlines: &[Inline], out: &mut String) {
    for inline in inlines {
        match inline {
            Inline::Text(text) | Inline::Code(text) => out.push_str(text),
            Inline::Strong(c) | Inline::Emphasis(c) | Inline::Strike(c) => inline_words(c, out),
            Inline::Link { children, .. } => inline_words(children, out),
            Inline::Image { alt, .. } => out.push_str(alt),
            Inline::SoftBreak | Inline::HardBreak => out.push(' '),
        }
    }
}

/// Says `text` in `region` (a polite live region's text), even when it is what the
/// region said last.
pub fn announce(region: RwSignal<String>, text: String) {
    region.set(String::new());
    set_timeout(
        move || {
            region.try_set(text);
        },
        std::time::Duration::from_millis(GAP_MS),
    );
}

impl Chat {
    /// Tells a screen reader `text` (a "Copied", say), through the answers' live region.
    pub fn say(&self, text: &str) {
        announce(self.announcement, text.to_owned());
    }
}
