//! The parser's own cases; the CommonMark spec's examples are in `tests/markdown.rs`.

use super::*;

fn text(s: &str) -> Inline {
    Inline::Text(s.into())
}

fn paragraph(doc: &[Block]) -> &[Inline] {
    match doc {
        [Block::Paragraph(inlines)] => inlines,
        other => panic!("not one paragraph: {other:?}"),
    }
}

#[test]
fn text_the_hand_written_parser_lost_is_kept() {
    assert_eq!(paragraph(&parse("my_var_name")), [text("my_var_name")]);
    assert_eq!(
        parse("# C#"),
        [Block::Heading(1, vec![text("C#")])],
        "a closing # needs a space before it"
    );
    let doc = parse("- one\n\n two");
    assert_eq!(visible_text(&doc), "one\n\ntwo\n");
    let doc = parse("para\n```\nnot a fence\n```");
    assert!(
        matches!(doc.as_slice(), [Block::Paragraph(_), Block::Code { .. }]),
        "{doc:?}"
    );
}

#[test]
fn links_keep_titles_and_parentheses_in_their_urls() {
    let doc = parse(
        r#"[Rust](https://en.wikipedia.org/wiki/Rust_(programming_language) "the language")"#,
    );
    assert_eq!(
        paragraph(&doc),
        [Inline::Link {
            target: Target::Web("https://en.wikipedia.org/wiki/Rust_(programming_language)".into()),
            title: "the language".into(),
            children: vec![text("Rust")],
        }]
    );
}

#[test]
fn only_web_and_mail_links_can_be_followed() {
    let doc = parse(
        "[ok](https://example.com/a?b=1) [bad](javascript:alert(1)) <ada@example.com> [rel](/x)",
    );
    let targets: Vec<&Target> = paragraph(&doc)
        .iter()
        .filter_map(|inline| match inline {
            Inline::Link { target, .. } => Some(target),
            _ => None,
        })
        .collect();
    assert_eq!(
        targets,
        [
            &Target::Web("https://example.com/a?b=1".into()),
            &Target::Refused("javascript:alert(1)".into()),
            &Target::Web("mailto:ada@example.com".into()),
            &Target::Refused("/x".into()),
        ]
    );
    assert_eq!(
        safe_url(" MAILTO:ada@example.com "),
        Some("MAILTO:ada@example.com")
    );
    assert_eq!(safe_url("https://exa mple.com"), None);
    assert_eq!(safe_url("https://x\u{0}.com"), None);
}

#[test]
fn raw_html_stays_text() {
    let doc = parse("<script>alert(1)</script>\n\nsay <b>hi</b>");
    assert_eq!(
        doc,
        [
            Block::Verbatim {
                text: "<script>alert(1)</script>".into(),
                why: Verbatim::Html
            },
            Block::Paragraph(vec![text("say <b>hi</b>")]),
        ]
    );
}

#[test]
fn tables_task_lists_strikethrough_and_bare_urls_follow_github() {
    let doc = parse("| a | b |\n|:--|--:|\n| 1 | ~~2~~ |");
    assert_eq!(
        doc,
        [Block::Table {
            alignments: vec![Alignment::Left, Alignment::Right],
            head: vec![vec![text("a")], vec![text("b")]],
            rows: vec![vec![vec![text("1")], vec![Inline::Strike(vec![text("2")])]]],
        }]
    );
    let Block::List { items, .. } = &parse("- [x] done\n- [ ] to do\n- plain")[0] else {
        panic!("not a list");
    };
    let tasks: Vec<Option<bool>> = items.iter().map(|item| item.task).collect();
    assert_eq!(tasks, [Some(true), Some(false), None]);
    assert_eq!(
        paragraph(&parse("~one~ tilde")),
        [Inline::Strike(vec![text("one")]), text(" tilde")]
    );
    assert_eq!(
        paragraph(&parse("See www.example.com/a_(b), or https://x.org/p?q=1.")),
        [
            text("See "),
            Inline::Link {
                target: Target::Web("http://www.example.com/a_(b)".into()),
                title: String::new(),
                children: vec![text("www.example.com/a_(b)")],
            },
            text(", or "),
            Inline::Link {
                target: Target::Web("https://x.org/p?q=1".into()),
                title: String::new(),
                children: vec![text("https://x.org/p?q=1")],
            },
            text("."),
        ]
    );
    assert_eq!(
        paragraph(&parse("[https://a.org](https://b.org)")),
        [Inline::Link {
            target: Target::Web("https://b.org".into()),
            title: String::new(),
            children: vec![text("https://a.org")],
        }],
        "a link's text is not linked again"
    );
}

#[test]
fn nesting_past_the_limit_is_kept_as_its_source_text() {
    let limits = Limits {
        max_bytes: 1 << 20,
        max_depth: 4,
    };
    let deep = format!("{}x", "> ".repeat(10));
    let doc = parse_within(&deep, limits);
    assert!(visible_text(&doc).contains("> > > > > > x"), "{doc:?}");
    let stars = format!("{}x{}", "*a ".repeat(10), " a*".repeat(10));
    let shown = visible_text(&parse_within(&stars, limits));
    assert_eq!(shown.matches('a').count(), 20, "{shown}");
    assert!(shown.contains('x'));
}

#[test]
fn list_items_and_table_cells_past_the_limit_are_kept_too() {
    let limits = Limits {
        max_bytes: 1 << 20,
        max_depth: 2,
    };
    let shown = visible_text(&parse_within("- a\n  - b\n    - c", limits));
    assert!(shown.contains('a') && shown.contains("- c"), "{shown}");
    let one_level = Limits {
        max_bytes: 1 << 20,
        max_depth: 1,
    };
    let shown = visible_text(&parse_within("- a\n- b", one_level));
    assert_eq!(shown, "- a\n- b\n\n", "an item too deep is kept as written");
    let shown = visible_text(&parse_within("> | a |\n> |---|\n> | b |", limits));
    assert!(shown.contains('a') && shown.contains('b'), "{shown}");
    let limits = Limits {
        max_bytes: 1 << 20,
        max_depth: 3,
    };
    let shown = visible_text(&parse_within("> | a |\n> |---|\n> | b |", limits));
    assert!(shown.contains('a') && shown.contains('b'), "{shown}");
}

#[test]
fn text_past_the_byte_limit_is_kept_as_written_after_a_line_break() {
    let limits = Limits {
        max_bytes: 12,
        max_depth: 8,
    };
    let doc = parse_within("**one**\n**two**\n**three**", limits);
    assert_eq!(
        doc,
        [
            Block::Paragraph(vec![Inline::Strong(vec![text("one")])]),
            Block::Verbatim {
                text: "**two**\n**three**".into(),
                why: Verbatim::TooLong
            },
        ]
    );
    let one_line = "é".repeat(10);
    let shown = visible_text(&parse_within(&one_line, limits));
    assert_eq!(
        shown.matches('é').count(),
        10,
        "cut at a character boundary"
    );
}

#[test]
fn a_stream_settles_finished_blocks_and_ends_as_the_whole_text_parses() {
    let source = "# Title\n\nFirst *para*.\n\n```rust\nfn main() {}\n```\n\n    indented\n\n- a\n- b\n\nlast";
    let mut stream = Stream::new(Limits::default());
    let mut first_key = None;
    for end in (1..=source.len()).filter(|&end| source.is_char_boundary(end)) {
        stream.update(&source[..end]);
        if end == source.len() {
            break;
        }
        // The title settles once the paragraph after it has a complete line.
        if end > "# Title\n\nFirst *para*.\n".len() {
            let key = stream.blocks().next().map(|(key, _)| *key);
            assert_eq!(
                *first_key.get_or_insert(key.unwrap()),
                key.unwrap(),
                "a settled block keeps its key"
            );
        }
    }
    let streamed: Vec<Block> = stream
        .blocks()
        .map(|(_, block)| (**block).clone())
        .collect();
    assert_eq!(streamed, parse(source));
    assert_eq!(
        stream.unsettled_len(),
        "- a\n- b\n\nlast".len(),
        "only the blocks after the last complete line's block are parsed again"
    );
}

#[test]
fn a_stream_with_a_link_definition_parses_it_across_blocks() {
    let source = "See [the docs].\n\nMore.\n\n[the docs]: https://docs.example\n";
    let mut stream = Stream::new(Limits::default());
    for end in 1..=source.len() {
        stream.update(&source[..end]);
    }
    let streamed: Vec<Block> = stream
        .blocks()
        .map(|(_, block)| (**block).clone())
        .collect();
    assert_eq!(streamed, parse(source));
    assert!(matches!(&paragraph(&streamed[..1])[1], Inline::Link { .. }));
}

#[test]
fn a_stream_given_other_text_starts_over() {
    let mut stream = Stream::new(Limits::default());
    stream.update("one\n\ntwo\n\nthree");
    stream.update("uno\n\ndos");
    let streamed: Vec<Block> = stream
        .blocks()
        .map(|(_, block)| (**block).clone())
        .collect();
    assert_eq!(streamed, parse("uno\n\ndos"));
}
