//! Model text as a markdown tree, for the UI to render as DOM nodes. Parsing is
//! CommonMark with GitHub's tables, task lists, strikethrough and bare-URL links,
//! done by `pulldown-cmark` (its events become this tree in [`tree`]); nothing in the
//! input can become HTML: raw HTML is kept as text, and a link or image keeps a
//! target the page may follow only when it is `http`, `https` or `mailto`. The
//! renderer creates elements from this tree alone, so the set of elements and
//! attributes is closed by construction.
//!
//! Nothing is lost: text past [`Limits::max_bytes`] and markup nested deeper than
//! [`Limits::max_depth`] are kept as written ([`Block::Verbatim`], [`Inline::Text`]).
//! Streaming text is parsed again only from its last settled block ([`stream`]).

mod autolink;
pub mod stream;
mod tree;

pub use stream::Stream;

/// A block of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Paragraph(Vec<Inline>),
    /// The text of a tight list item: a paragraph shown without paragraph spacing.
    Plain(Vec<Inline>),
    /// Level 1–6.
    Heading(u8, Vec<Inline>),
    /// A fenced or indented code block, with its info string if any (a fence's words
    /// after the backticks: the language first).
    Code {
        info: String,
        text: String,
    },
    Quote(Vec<Block>),
    /// Items, each made of blocks; `Some(n)` numbers them from `n`.
    List {
        start: Option<u64>,
        items: Vec<Item>,
    },
    /// A table: its header cells, then its rows of cells.
    Table {
        alignments: Vec<Alignment>,
        head: Vec<Vec<Inline>>,
        rows: Vec<Vec<Vec<Inline>>>,
    },
    Rule,
    /// Source shown exactly as written, without markdown.
    Verbatim {
        text: String,
        why: Verbatim,
    },
}

/// Why a part of the source is shown as written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verbatim {
    /// Raw HTML: model text is never HTML.
    Html,
    /// Markup nested deeper than [`Limits::max_depth`].
    TooDeep,
    /// The text past [`Limits::max_bytes`].
    TooLong,
}

/// One list item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    /// `Some(done)` for a task list item (`- [x] …`).
    pub task: Option<bool>,
    pub blocks: Vec<Block>,
}

/// How a table column's cells are aligned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Alignment {
    None,
    Left,
    Center,
    Right,
}

/// A run of text inside a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
    Strong(Vec<Inline>),
    Emphasis(Vec<Inline>),
    Strike(Vec<Inline>),
    Link {
        target: Target,
        title: String,
        children: Vec<Inline>,
    },
    /// An image; the renderer shows it only when remote images are allowed.
    Image {
        target: Target,
        title: String,
        alt: String,
    },
    /// A line break in the source that markdown reads as a space.
    SoftBreak,
    /// A line break the source asked for (two spaces or `\` at the line's end).
    HardBreak,
}

/// Where a link or image points, as written, and whether the page may follow it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// An `http`, `https` or `mailto` URL ([`safe_url`]).
    Web(String),
    /// Any other target (`javascript:`, `data:`, a relative path…): shown, never followed.
    Refused(String),
}

impl Target {
    fn of(url: &str) -> Self {
        match safe_url(url) {
            Some(url) => Target::Web(url.to_owned()),
            None => Target::Refused(url.to_owned()),
        }
    }
}

/// The target of a link or image, if it is one the page may follow: `http`, `https`
/// or `mailto`, with no control characters or spaces.
pub fn safe_url(url: &str) -> Option<&str> {
    let url = url.trim();
    let lower = url.to_ascii_lowercase();
    let allowed = ["http://", "https://", "mailto:"]
        .iter()
        .any(|scheme| lower.starts_with(scheme));
    let clean = !url.chars().any(|c| c.is_control() || c.is_whitespace());
    (allowed && clean && url.len() > 7).then_some(url)
}

/// How much the parser takes on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Source past this many bytes (cut at the line break before it) is shown as written.
    pub max_bytes: usize,
    /// Blocks and inlines nested deeper than this are shown as their source text.
    pub max_depth: usize,
}

impl Default for Limits {
    /// 256 KiB (well past the longest answer a model streams) and 32 levels.
    fn default() -> Self {
        Limits {
            max_bytes: 256 * 1024,
            max_depth: 32,
        }
    }
}

impl Limits {
    /// Where the parsed part of `text` ends: all of it when it fits, otherwise just after
    /// the last line break within `max_bytes` (or at the last character boundary there
    /// when the first line alone is too long).
    fn cut(&self, text: &str) -> usize {
        if text.len() <= self.max_bytes {
            return text.len();
        }
        let mut end = self.max_bytes;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let head = text.get(..end).unwrap_or_default();
        head.rfind('\n').map_or(end, |newline| newline + 1)
    }

    /// The block holding the text past the cut, if any.
    fn rest(&self, text: &str, cut: usize) -> Option<Block> {
        text.get(cut..)
            .filter(|rest| !rest.is_empty())
            .map(|rest| Block::Verbatim {
                text: rest.to_owned(),
                why: Verbatim::TooLong,
            })
    }
}

/// Parses `text` into blocks, within the default [`Limits`].
pub fn parse(text: &str) -> Vec<Block> {
    parse_within(text, Limits::default())
}

/// Parses `text` into blocks within `limits`.
pub fn parse_within(text: &str, limits: Limits) -> Vec<Block> {
    let cut = limits.cut(text);
    let mut blocks = tree::parse(text.get(..cut).unwrap_or_default(), limits.max_depth).blocks;
    blocks.extend(limits.rest(text, cut));
    blocks
}

/// The text a reader sees in `blocks`, with link and image targets: what the
/// "nothing is lost" checks compare with the source.
pub fn visible_text(blocks: &[Block]) -> String {
    let mut out = String::new();
    for block in blocks {
        block_text(block, &mut out);
    }
    out
}

fn block_text(block: &Block, out: &mut String) {
    match block {
        Block::Paragraph(inlines) | Block::Plain(inlines) | Block::Heading(_, inlines) => {
            inline_texts(inlines, out);
        }
        Block::Code { info, text } => {
            out.push_str(info);
            out.push(' ');
            out.push_str(text);
        }
        Block::Quote(blocks) => blocks.iter().for_each(|b| block_text(b, out)),
        Block::List { items, .. } => items
            .iter()
            .flat_map(|item| &item.blocks)
            .for_each(|b| block_text(b, out)),
        Block::Table { head, rows, .. } => head
            .iter()
            .chain(rows.iter().flatten())
            .for_each(|cell| inline_texts(cell, out)),
        Block::Rule => {}
        Block::Verbatim { text, .. } => out.push_str(text),
    }
    out.push('\n');
}

fn inline_texts(inlines: &[Inline], out: &mut String) {
    for inline in inlines {
        match inline {
            Inline::Text(text) | Inline::Code(text) => out.push_str(text),
            Inline::Strong(c) | Inline::Emphasis(c) | Inline::Strike(c) => inline_texts(c, out),
            Inline::Link {
                target,
                title,
                children,
            } => {
                inline_texts(children, out);
                push_target(target, title, out);
            }
            Inline::Image { target, title, alt } => {
                out.push_str(alt);
                push_target(target, title, out);
            }
            Inline::SoftBreak | Inline::HardBreak => out.push('\n'),
        }
    }
}

fn push_target(target: &Target, title: &str, out: &mut String) {
    let (Target::Web(url) | Target::Refused(url)) = target;
    out.push(' ');
    out.push_str(url);
    out.push(' ');
    out.push_str(title);
}

#[cfg(test)]
mod tests;
