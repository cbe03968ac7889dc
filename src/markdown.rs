//! Model text as a small markdown tree, for the UI to render as DOM nodes. Only the
//! structures a chat answer needs exist here — paragraphs, headings, lists, quotes,
//! code, emphasis, links, images — and nothing in the input can become HTML: raw
//! HTML is text, and a link keeps its target only when it is `http`, `https` or
//! `mailto`. The renderer creates elements from this tree alone, so the allowed set
//! of elements and attributes is closed by construction.

/// A block of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Block {
    Paragraph(Vec<Inline>),
    /// Level 1–6.
    Heading(u8, Vec<Inline>),
    /// A fenced or indented code block, with its language tag if any.
    Code {
        language: String,
        text: String,
    },
    Quote(Vec<Block>),
    /// Items, each made of blocks; `Some(n)` numbers them from `n`.
    List {
        start: Option<u64>,
        items: Vec<Vec<Block>>,
    },
    Rule,
}

/// A run of text inside a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Inline {
    Text(String),
    Code(String),
    Strong(Vec<Inline>),
    Emphasis(Vec<Inline>),
    Strike(Vec<Inline>),
    /// A link whose target passed [`safe_url`]; an unsafe one is left as its text.
    Link {
        href: String,
        children: Vec<Inline>,
    },
    /// An image; the renderer shows it only when remote images are allowed.
    Image {
        src: String,
        alt: String,
    },
    LineBreak,
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

/// Parses `text` into blocks.
pub fn parse(text: &str) -> Vec<Block> {
    let lines: Vec<&str> = text.lines().collect();
    blocks(&lines, 0)
}

/// Nesting deeper than this (quotes in lists in quotes…) is read as plain text.
const MAX_DEPTH: usize = 16;

fn blocks(lines: &[&str], depth: usize) -> Vec<Block> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(line) = lines.get(i) {
        let trimmed = line.trim_start();
        if trimmed.is_empty() {
            i += 1;
        } else if let Some(fence) = fence_of(trimmed) {
            let language = trimmed.trim_start_matches(fence).trim().to_owned();
            let body: Vec<&str> = lines
                .iter()
                .skip(i + 1)
                .take_while(|l| !l.trim_start().starts_with(fence))
                .copied()
                .collect();
            i += body.len() + 2;
            out.push(Block::Code {
                language,
                text: body.join("\n"),
            });
        } else if let Some((level, rest)) = heading(trimmed) {
            out.push(Block::Heading(level, inlines(rest)));
            i += 1;
        } else if is_rule(trimmed) {
            out.push(Block::Rule);
            i += 1;
        } else if depth < MAX_DEPTH && trimmed.starts_with('>') {
            let quoted: Vec<&str> = lines
                .iter()
                .skip(i)
                .take_while(|l| l.trim_start().starts_with('>'))
                .map(|l| {
                    let l = l.trim_start().trim_start_matches('>');
                    l.strip_prefix(' ').unwrap_or(l)
                })
                .collect();
            i += quoted.len();
            out.push(Block::Quote(blocks(&quoted, depth + 1)));
        } else if depth < MAX_DEPTH && list_marker(line).is_some() {
            let (list, used) = list(lines.get(i..).unwrap_or_default(), depth);
            out.push(list);
            i += used.max(1);
        } else {
            let paragraph: Vec<&str> = lines
                .iter()
                .skip(i)
                .take_while(|l| {
                    let t = l.trim_start();
                    !t.is_empty()
                        && fence_of(t).is_none()
                        && heading(t).is_none()
                        && !t.starts_with('>')
                        && list_marker(l).is_none()
                })
                .copied()
                .collect();
            i += paragraph.len().max(1);
            out.push(Block::Paragraph(paragraph_inlines(&paragraph)));
        }
    }
    out
}

/// The fence a code block opens with, if `line` opens one.
fn fence_of(line: &str) -> Option<&'static str> {
    ["```", "~~~"].into_iter().find(|f| line.starts_with(f))
}

fn heading(line: &str) -> Option<(u8, &str)> {
    let hashes = line.chars().take_while(|c| *c == '#').count();
    let rest = line.get(hashes..)?;
    ((1..=6).contains(&hashes) && (rest.is_empty() || rest.starts_with(' ')))
        .then(|| (hashes as u8, rest.trim().trim_end_matches('#').trim_end()))
}

fn is_rule(line: &str) -> bool {
    let mut marks = line.chars().filter(|c| !c.is_whitespace());
    let first = marks.next();
    matches!(first, Some('-' | '*' | '_')) && {
        let rest: Vec<char> = marks.collect();
        rest.len() >= 2 && rest.iter().all(|c| Some(*c) == first)
    }
}

/// The list marker of a line: its indent, the number (for ordered lists), and where
/// the item's text starts.
fn list_marker(line: &str) -> Option<(usize, Option<u64>, usize)> {
    let indent = line.len() - line.trim_start().len();
    let rest = line.get(indent..)?;
    if let Some(after) = rest
        .strip_prefix("- ")
        .or_else(|| rest.strip_prefix("* "))
        .or_else(|| rest.strip_prefix("+ "))
    {
        return Some((indent, None, line.len() - after.len()));
    }
    let digits = rest.chars().take_while(char::is_ascii_digit).count();
    let after = rest.get(digits..)?;
    let after = after
        .strip_prefix(". ")
        .or_else(|| after.strip_prefix(") "))?;
    let number = rest.get(..digits)?.parse().ok()?;
    (digits > 0 && digits <= 9).then_some((indent, Some(number), line.len() - after.len()))
}

/// A list starting at `lines[0]`, and how many lines it took.
fn list(lines: &[&str], depth: usize) -> (Block, usize) {
    let Some((indent, start, _)) = lines.first().and_then(|l| list_marker(l)) else {
        return (Block::Paragraph(Vec::new()), 1);
    };
    let mut items: Vec<Vec<&str>> = Vec::new();
    let mut used = 0;
    for line in lines {
        match list_marker(line) {
            Some((i, number, text)) if i == indent && number.is_some() == start.is_some() => {
                items.push(vec![line.get(text..).unwrap_or("")]);
            }
            _ if line.trim().is_empty() => {
                let next = lines.get(used + 1).copied().unwrap_or("");
                let continues = next.len() - next.trim_start().len() > indent
                    || list_marker(next).is_some_and(|(i, ..)| i == indent);
                if !continues {
                    break;
                }
                if let Some(item) = items.last_mut() {
                    item.push("");
                }
            }
            _ if line.len() - line.trim_start().len() > indent => {
                if let Some(item) = items.last_mut() {
                    item.push(line.get(indent + 2..).unwrap_or(line.trim_start()));
                }
            }
            _ => break,
        }
        used += 1;
    }
    let items = items.iter().map(|item| blocks(item, depth + 1)).collect();
    (Block::List { start, items }, used)
}

fn paragraph_inlines(lines: &[&str]) -> Vec<Inline> {
    let mut out = Vec::new();
    for (n, line) in lines.iter().enumerate() {
        if n > 0 {
            out.push(Inline::LineBreak);
        }
        out.extend(inlines(line.trim()));
    }
    out
}

/// Parses the inline markup of one line.
pub fn inlines(text: &str) -> Vec<Inline> {
    Inlines { text, depth: 0 }.parse()
}

struct Inlines<'a> {
    text: &'a str,
    depth: usize,
}

impl Inlines<'_> {
    fn parse(&self) -> Vec<Inline> {
        let mut out = Vec::new();
        let mut plain = String::new();
        let mut rest = self.text;
        while let Some(c) = rest.chars().next() {
            if let Some((inline, after)) = self.markup(rest) {
                if !plain.is_empty() {
                    out.push(Inline::Text(std::mem::take(&mut plain)));
                }
                out.push(inline);
                rest = after;
            } else {
                plain.push(c);
                rest = rest.get(c.len_utf8()..).unwrap_or("");
            }
        }
        if !plain.is_empty() {
            out.push(Inline::Text(plain));
        }
        out
    }

    fn nested(&self, text: &str) -> Vec<Inline> {
        if self.depth >= MAX_DEPTH {
            return vec![Inline::Text(text.to_owned())];
        }
        Inlines {
            text,
            depth: self.depth + 1,
        }
        .parse()
    }

    /// The markup starting at the front of `text`, and what follows it.
    fn markup<'t>(&self, text: &'t str) -> Option<(Inline, &'t str)> {
        if let Some(rest) = text.strip_prefix('`') {
            let end = rest.find('`')?;
            return Some((
                Inline::Code(rest.get(..end)?.to_owned()),
                rest.get(end + 1..)?,
            ));
        }
        for (marker, wrap) in [
            ("**", Inline::Strong as fn(Vec<Inline>) -> Inline),
            ("__", Inline::Strong),
            ("~~", Inline::Strike),
            ("*", Inline::Emphasis),
            ("_", Inline::Emphasis),
        ] {
            if let Some(rest) = text.strip_prefix(marker) {
                if rest.starts_with(char::is_whitespace) {
                    continue;
                }
                let end = rest.find(marker).filter(|&e| e > 0)?;
                let inner = rest.get(..end)?;
                return Some((wrap(self.nested(inner)), rest.get(end + marker.len()..)?));
            }
        }
        if let Some(rest) = text.strip_prefix("![") {
            let (alt, src, after) = bracketed(rest)?;
            let image = match safe_url(src) {
                Some(src) => Inline::Image {
                    src: src.to_owned(),
                    alt: alt.to_owned(),
                },
                None => Inline::Text(alt.to_owned()),
            };
            return Some((image, after));
        }
        if let Some(rest) = text.strip_prefix('[') {
            let (label, href, after) = bracketed(rest)?;
            let children = self.nested(label);
            let inline = match safe_url(href) {
                Some(href) => Inline::Link {
                    href: href.to_owned(),
                    children,
                },
                None => Inline::Emphasis(children),
            };
            return Some((inline, after));
        }
        None
    }
}

/// `label](target)rest` → (label, target, rest).
fn bracketed(text: &str) -> Option<(&str, &str, &str)> {
    let close = text.find("](")?;
    let label = text.get(..close)?;
    let after = text.get(close + 2..)?;
    let end = after.find(')')?;
    Some((label, after.get(..end)?, after.get(end + 1..)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Inline {
        Inline::Text(s.into())
    }

    #[test]
    fn paragraphs_headings_code_and_rules() {
        let doc = parse(
            "# Title\n\nSome *soft* and **bold** `code`.\nNext line.\n\n```rust\nfn main() {}\n```\n---",
        );
        assert_eq!(
            doc,
            [
                Block::Heading(1, vec![text("Title")]),
                Block::Paragraph(vec![
                    text("Some "),
                    Inline::Emphasis(vec![text("soft")]),
                    text(" and "),
                    Inline::Strong(vec![text("bold")]),
                    text(" "),
                    Inline::Code("code".into()),
                    text("."),
                    Inline::LineBreak,
                    text("Next line."),
                ]),
                Block::Code {
                    language: "rust".into(),
                    text: "fn main() {}".into()
                },
                Block::Rule,
            ]
        );
    }

    #[test]
    fn lists_nest_and_number() {
        let doc = parse("1. one\n2. two\n   - inner\n\n- a\n- b");
        let Block::List { start, items } = &doc[0] else {
            panic!("{doc:?}");
        };
        assert_eq!(*start, Some(1));
        assert_eq!(items.len(), 2);
        assert!(matches!(&items[1][1], Block::List { start: None, .. }));
        assert!(matches!(&doc[1], Block::List { start: None, items } if items.len() == 2));
    }

    #[test]
    fn only_web_and_mail_links_keep_their_target() {
        let doc = inlines(
            "[ok](https://example.com/a?b=1) [bad](javascript:alert(1)) [data](data:text/html,x) ![pic](http://x.org/p.png)",
        );
        assert_eq!(
            doc[0],
            Inline::Link {
                href: "https://example.com/a?b=1".into(),
                children: vec![text("ok")]
            }
        );
        assert!(!format!("{doc:?}").contains("javascript"), "{doc:?}");
        assert!(!format!("{doc:?}").contains("data:"), "{doc:?}");
        assert!(matches!(doc.last(), Some(Inline::Image { .. })));
        assert_eq!(
            safe_url(" MAILTO:ada@example.com "),
            Some("MAILTO:ada@example.com")
        );
        assert_eq!(safe_url("https://exa mple.com"), None);
        assert_eq!(safe_url("https://x\u{0}.com"), None);
    }

    #[test]
    fn raw_html_stays_text() {
        let doc = parse("<script>alert(1)</script>\n<img src=x onerror=alert(1)>");
        assert_eq!(
            doc,
            [Block::Paragraph(vec![
                text("<script>alert(1)</script>"),
                Inline::LineBreak,
                text("<img src=x onerror=alert(1)>"),
            ])]
        );
    }

    #[test]
    fn deep_nesting_and_unclosed_markup_are_safe() {
        let deep = format!("{}x", "> ".repeat(200));
        assert!(!parse(&deep).is_empty());
        let stars = "*".repeat(10_000);
        assert!(!parse(&stars).is_empty());
        assert_eq!(inlines("**open"), [text("**open")]);
        assert_eq!(inlines("a * b"), [text("a * b")]);
    }
}
