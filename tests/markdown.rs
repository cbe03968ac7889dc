//! Markdown against the CommonMark spec's own examples (tests/fixtures/commonmark,
//! with its README for source, license and exclusions), and fuzz-style properties:
//! the parser never panics, never drops a character, and a streamed answer parses
//! to the same blocks as the whole text. The properties run 256 cases each; a longer
//! run: `PROPTEST_CASES=20000 cargo test --release --test markdown`.
#![cfg(not(target_arch = "wasm32"))]
// The standard library's sorts are fine here: tests are not shipped in the wasm.
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::disallowed_methods
)]

use familiar::base::markdown::{
    Alignment, Block, Inline, Limits, Stream, Target, parse, parse_within, visible_text,
};
use proptest::prelude::*;
use serde::Deserialize;

#[derive(Deserialize)]
struct Example {
    number: u32,
    section: String,
    markdown: String,
    html: String,
}

const SPEC: &str = include_str!("fixtures/commonmark/spec-0.31.2.json");
const EXCLUSIONS: &str = include_str!("fixtures/commonmark/exclusions.tsv");

/// Example numbers left out, each with its reason (one `number<TAB>reason` a line).
fn exclusions() -> Vec<(u32, String)> {
    EXCLUSIONS
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let (number, reason) = line.split_once('\t').unwrap();
            (number.trim().parse().unwrap(), reason.trim().to_owned())
        })
        .collect()
}

#[test]
fn every_counted_commonmark_spec_example_renders_as_the_spec_says() {
    let examples: Vec<Example> = serde_json::from_str(SPEC).unwrap();
    assert_eq!(examples.len(), 652, "the fixture holds the whole spec");
    let excluded = exclusions();
    for (number, reason) in &excluded {
        assert!(
            !reason.is_empty(),
            "example {number} is excluded without a reason"
        );
    }
    let mut failed = Vec::new();
    let mut counted = 0;
    for example in &examples {
        if excluded.iter().any(|(n, _)| *n == example.number) {
            continue;
        }
        counted += 1;
        let ours = normalize(&to_html(&parse(&example.markdown)));
        let spec = normalize(&example.html);
        if ours != spec {
            failed.push(example.number);
            if std::env::var_os("SPEC_VERBOSE").is_some() {
                eprintln!(
                    "example {} ({}):\n{:?}\nspec: {spec}\nours: {ours}\n",
                    example.number, example.section, example.markdown
                );
            }
        }
    }
    let passed = counted - failed.len();
    let rate = passed as f64 * 100.0 / counted as f64;
    println!(
        "CommonMark 0.31.2: {passed} of {counted} examples pass ({rate:.1}%); {} excluded; failing: {failed:?}",
        excluded.len()
    );
    // The floor is where the code is: every example not excluded (with its reason)
    // passes, so one regression fails the suite.
    assert!(
        failed.is_empty(),
        "{rate:.1}% of the spec's examples pass; failing: {failed:?}"
    );
    let floor = figure("tests/markdown.rs commonmark examples counted");
    assert!(
        counted >= floor,
        "only {counted} examples are counted, below {floor}"
    );
}

/// The floor tests/counts.txt records as `figure {name} N`: the ratchet guards it there,
/// so it falls only with a reason line (scripts/counts.py).
fn figure(name: &str) -> usize {
    include_str!("counts.txt")
        .lines()
        .find_map(|line| {
            let rest = line.strip_prefix("figure ")?.strip_prefix(name)?;
            rest.trim().parse().ok()
        })
        .unwrap_or_else(|| panic!("tests/counts.txt has no `figure {name} N` line"))
}

// --- Our tree as the spec's HTML, for comparison only (the UI builds DOM nodes). ---

fn to_html(blocks: &[Block]) -> String {
    let mut out = String::new();
    blocks.iter().for_each(|b| block_html(b, &mut out));
    out
}

fn block_html(block: &Block, out: &mut String) {
    match block {
        Block::Paragraph(inlines) => {
            out.push_str("<p>");
            inlines_html(inlines, out);
            out.push_str("</p>\n");
        }
        Block::Plain(inlines) => inlines_html(inlines, out),
        Block::Heading(level, inlines) => {
            out.push_str(&format!("<h{level}>"));
            inlines_html(inlines, out);
            out.push_str(&format!("</h{level}>\n"));
        }
        Block::Code { info, text } => {
            match info.split_whitespace().next() {
                None => out.push_str("<pre><code>"),
                Some(language) => out.push_str(&format!(
                    r#"<pre><code class="language-{}">"#,
                    escape(language)
                )),
            }
            out.push_str(&escape(text));
            out.push_str("</code></pre>\n");
        }
        Block::Quote(blocks) => {
            out.push_str("<blockquote>\n");
            blocks.iter().for_each(|b| block_html(b, out));
            out.push_str("</blockquote>\n");
        }
        Block::List { start, items } => {
            match start {
                Some(1) => out.push_str("<ol>\n"),
                Some(n) => out.push_str(&format!(r#"<ol start="{n}">"#)),
                None => out.push_str("<ul>\n"),
            }
            for item in items {
                out.push_str("<li>");
                if let Some(done) = item.task {
                    let checked = if done { r#" checked="""# } else { "" };
                    out.push_str(&format!(r#"<input disabled="" type="checkbox"{checked}/>"#));
                }
                item.blocks.iter().for_each(|b| block_html(b, out));
                out.push_str("</li>\n");
            }
            out.push_str(if start.is_some() {
                "</ol>\n"
            } else {
                "</ul>\n"
            });
        }
        Block::Table {
            alignments,
            head,
            rows,
        } => {
            out.push_str("<table><thead><tr>");
            for (cell, align) in head.iter().zip(alignments) {
                cell_html("th", cell, *align, out);
            }
            out.push_str("</tr></thead><tbody>");
            for row in rows {
                out.push_str("<tr>");
                for (cell, align) in row.iter().zip(alignments) {
                    cell_html("td", cell, *align, out);
                }
                out.push_str("</tr>");
            }
            out.push_str("</tbody></table>\n");
        }
        Block::Rule => out.push_str("<hr />\n"),
        Block::Verbatim { text, why } => {
            let why = format!("{why:?}");
            out.push_str(&format!(r#"<p class="{why}">{}</p>"#, escape(text)));
        }
    }
}

fn cell_html(tag: &str, cell: &[Inline], align: Alignment, out: &mut String) {
    match align {
        Alignment::None => out.push_str(&format!("<{tag}>")),
        other => {
            let align = format!("{other:?}").to_lowercase();
            out.push_str(&format!(r#"<{tag} style="text-align: {align}">"#));
        }
    }
    inlines_html(cell, out);
    out.push_str(&format!("</{tag}>"));
}

fn inlines_html(inlines: &[Inline], out: &mut String) {
    for inline in inlines {
        match inline {
            Inline::Text(text) => out.push_str(&escape(text)),
            Inline::Code(text) => out.push_str(&format!("<code>{}</code>", escape(text))),
            Inline::Strong(c) => wrap("strong", c, out),
            Inline::Emphasis(c) => wrap("em", c, out),
            Inline::Strike(c) => wrap("del", c, out),
            Inline::Link {
                target,
                title,
                children,
            } => {
                // A refused target is kept in the tree (the UI shows it as text): the
                // spec's HTML is compared with what was parsed, not with what is shown.
                let (Target::Web(url) | Target::Refused(url)) = target;
                out.push_str(&format!(r#"<a href="{}"{}>"#, href(url), title_attr(title)));
                inlines_html(children, out);
                out.push_str("</a>");
            }
            Inline::Image { target, title, alt } => {
                let (Target::Web(url) | Target::Refused(url)) = target;
                out.push_str(&format!(
                    r#"<img src="{}" alt="{}"{} />"#,
                    href(url),
                    escape(alt),
                    title_attr(title)
                ));
            }
            Inline::SoftBreak => out.push('\n'),
            Inline::HardBreak => out.push_str("<br />\n"),
        }
    }
}

fn wrap(tag: &str, children: &[Inline], out: &mut String) {
    out.push_str(&format!("<{tag}>"));
    inlines_html(children, out);
    out.push_str(&format!("</{tag}>"));
}

fn title_attr(title: &str) -> String {
    if title.is_empty() {
        String::new()
    } else {
        format!(r#" title="{}""#, escape(title))
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A URL percent-encoded as the spec's reference renderer writes it.
fn href(url: &str) -> String {
    let mut out = String::new();
    let bytes = url.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let is_escape = b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit);
        if b.is_ascii_alphanumeric() || b"-_.!~*'();/?:@&=+$,#".contains(&b) || is_escape {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    escape(&out)
}

// --- A normalizer in the manner of the spec's `normalize.py`. ---

enum Token {
    Start(String, Vec<(String, String)>),
    End(String),
    Text(String),
}

const BLOCK_TAGS: &[&str] = &[
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "hr",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
];

/// `html` with its whitespace collapsed (except in `<pre>`) and dropped next to block
/// tags, attributes sorted, void tags unclosed and text entities decoded.
fn normalize(html: &str) -> String {
    let tokens = tokenize(html);
    let is_block = |token: Option<&Token>| match token {
        Some(Token::Start(name, _) | Token::End(name)) => BLOCK_TAGS.contains(&name.as_str()),
        _ => false,
    };
    let mut out = String::new();
    let mut in_pre = 0usize;
    for (i, token) in tokens.iter().enumerate() {
        match token {
            Token::Start(name, attrs) => {
                in_pre += usize::from(name == "pre");
                out.push('<');
                out.push_str(name);
                for (key, value) in attrs {
                    out.push_str(&format!(r#" {key}="{}""#, escape(value)));
                }
                out.push('>');
            }
            Token::End(name) => {
                in_pre = in_pre.saturating_sub(usize::from(name == "pre"));
                out.push_str(&format!("</{name}>"));
            }
            Token::Text(text) if in_pre > 0 => out.push_str(&escape(text)),
            Token::Text(text) => {
                let mut collapsed = text.split_whitespace().collect::<Vec<_>>().join(" ");
                if text.starts_with(char::is_whitespace)
                    && !is_block(i.checked_sub(1).and_then(|p| tokens.get(p)))
                {
                    collapsed.insert(0, ' ');
                }
                if text.ends_with(char::is_whitespace)
                    && !is_block(tokens.get(i + 1))
                    && !collapsed.trim().is_empty()
                {
                    collapsed.push(' ');
                }
                if collapsed.trim().is_empty()
                    && (is_block(i.checked_sub(1).and_then(|p| tokens.get(p)))
                        || is_block(tokens.get(i + 1)))
                {
                    continue;
                }
                out.push_str(&escape(&collapsed));
            }
        }
    }
    out
}

fn tokenize(html: &str) -> Vec<Token> {
    let mut tokens = Vec::new();
    let mut rest = html;
    while !rest.is_empty() {
        let tag_end = rest.strip_prefix('<').and_then(|_| rest.find('>'));
        match tag_end {
            Some(end) if rest[1..].starts_with(|c: char| c.is_ascii_alphabetic() || c == '/') => {
                tokens.push(tag(&rest[1..end]));
                rest = &rest[end + 1..];
            }
            _ => {
                let first = rest.chars().next().map_or(1, char::len_utf8);
                let end = rest[first..].find('<').map_or(rest.len(), |i| i + first);
                let text = decode(&rest[..end]);
                match tokens.last_mut() {
                    Some(Token::Text(previous)) => previous.push_str(&text),
                    _ => tokens.push(Token::Text(text)),
                }
                rest = &rest[end..];
            }
        }
    }
    tokens
}

fn tag(inside: &str) -> Token {
    if let Some(name) = inside.strip_prefix('/') {
        return Token::End(name.trim().to_lowercase());
    }
    let inside = inside.trim_end_matches('/').trim();
    let name_end = inside.find(char::is_whitespace).unwrap_or(inside.len());
    let name = inside[..name_end].to_lowercase();
    let mut attrs = Vec::new();
    let mut rest = inside[name_end..].trim_start();
    while !rest.is_empty() {
        let key_end = rest.find(['=', ' ']).unwrap_or(rest.len());
        let key = rest[..key_end].to_lowercase();
        rest = &rest[key_end..];
        let value = if let Some(after) = rest.strip_prefix("=\"") {
            let close = after.find('"').unwrap_or(after.len());
            let value = decode(&after[..close]);
            rest = after.get(close + 1..).unwrap_or("");
            value
        } else if let Some(after) = rest.strip_prefix('=') {
            let close = after.find(char::is_whitespace).unwrap_or(after.len());
            rest = &after[close..];
            decode(&after[..close])
        } else {
            rest = rest.get(1..).unwrap_or("");
            String::new()
        };
        attrs.push((key, value));
        rest = rest.trim_start();
    }
    attrs.sort();
    Token::Start(name, attrs)
}

/// Decodes the entities the spec's HTML writes.
fn decode(text: &str) -> String {
    text.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&amp;", "&")
}

// --- Our own cases, beyond the spec. ---

/// Source made mostly of markdown's own characters, so the parser meets every
/// construct, half-open ones included. A link reference definition is markup whose
/// text shows only where it is used, so the one here has no letters and no title.
fn markdownish() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("*"),
        Just("_"),
        Just("~"),
        Just("`"),
        Just("#"),
        Just(">"),
        Just("-"),
        Just("+"),
        Just("="),
        Just("|"),
        Just("["),
        Just("]"),
        Just("("),
        Just(")"),
        Just("!"),
        Just("<"),
        Just(">"),
        Just("\\"),
        Just(" "),
        Just("  "),
        Just("\n"),
        Just("\n\n"),
        Just("\t"),
        Just("    "),
        Just("1."),
        Just("2)"),
        Just("```"),
        Just("- [ ] "),
        Just("| a | b |\n|---|:-:|\n"),
        Just("https://ex.com/p_(q)"),
        Just("www.a.org"),
        Just("\n\n[1]: /2\n\n"),
        Just("[1]"),
        Just("a"),
        Just("b"),
        Just("é"),
        Just("日本"),
        Just("\u{1F600}"),
        Just("bc"),
        Just("\""),
        Just("'"),
    ];
    prop::collection::vec(piece, 0..80).prop_map(|pieces| pieces.concat())
}

/// How many times each character that is never markup occurs in `text`.
fn letters(text: &str) -> std::collections::BTreeMap<char, usize> {
    let mut counts = std::collections::BTreeMap::new();
    for c in text.chars().filter(|c| c.is_alphabetic()) {
        *counts.entry(c).or_insert(0) += 1;
    }
    counts
}

proptest! {
    #[test]
    fn the_parser_never_panics_and_never_drops_a_character(source in markdownish()) {
        let limits = Limits { max_bytes: 120, max_depth: 3 };
        for doc in [parse(&source), parse_within(&source, limits)] {
            let shown = letters(&visible_text(&doc));
            for (c, count) in letters(&source) {
                let got = shown.get(&c).copied().unwrap_or(0);
                prop_assert!(got >= count, "{c:?}: {got} of {count} in {source:?} → {doc:?}");
            }
        }
    }

    #[test]
    fn a_streamed_answer_parses_to_the_same_blocks_as_the_whole_text(
        source in markdownish(),
        cuts in prop::collection::vec(0usize..400, 0..30),
    ) {
        let limits = Limits { max_bytes: 200, max_depth: 3 };
        let mut points: Vec<usize> = cuts
            .into_iter()
            .map(|cut| cut % (source.len() + 1))
            .filter(|&cut| source.is_char_boundary(cut))
            .collect();
        points.sort_unstable();
        let mut stream = Stream::new(limits);
        for point in points.into_iter().chain([source.len()]) {
            stream.update(&source[..point]);
        }
        let streamed: Vec<Block> = stream.blocks().map(|(_, block)| (**block).clone()).collect();
        prop_assert_eq!(streamed, parse_within(&source, limits));
    }
}
