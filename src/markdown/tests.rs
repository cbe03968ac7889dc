//! The parser's own cases; the CommonMark spec's examples are in `tests/markdown.rs`.

use super::*;

fn text(s: &str) -> Inline {
    Inline::Text(s.into())
}
