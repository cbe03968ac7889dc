//! `pulldown-cmark`'s events folded into the [`Block`] tree, with a stack rather than
//! recursion. The tree keeps every character: raw HTML becomes text, and an element
//! that would open deeper than the depth limit is kept as its source text.

use std::ops::Range;

use pulldown_cmark::{CodeBlockKind, Event, LinkType, Options, Parser, Tag};

use super::{Alignment, Block, Inline, Item, Target, Verbatim, autolink};

/// A parsed document: its top-level blocks, where each starts in the source, and
/// whether the source defines link references (which reach across blocks).
pub(super) struct Parsed {
    pub(super) blocks: Vec<Block>,
    pub(super) starts: Vec<usize>,
    pub(super) has_definitions: bool,
}

/// Parses `text` with elements nested at most `max_depth` deep.
pub(super) fn parse(text: &str, max_depth: usize) -> Parsed {
    let options =
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TASKLISTS;
    let parser = Parser::new_ext(text, options).into_offset_iter();
    let has_definitions = parser.reference_definitions().iter().next().is_some();
    let mut builder = Builder {
        source: text,
        max_depth,
        root: Frame::new(Kind::Root, 0..text.len()),
        stack: Vec::new(),
        skipping: 0,
        starts: Vec::new(),
    };
    for (event, range) in parser {
        builder.event(event, range);
    }
    builder.finish();
    Parsed {
        blocks: builder.root.blocks,
        starts: builder.starts,
        has_definitions,
    }
}

/// What an open element will become when it closes.
enum Kind {
    Root,
    Paragraph,
    Heading(u8),
    Quote,
    List(Option<u64>),
    Item,
    Code(String),
    Html,
    Table(Vec<Alignment>),
    /// The table's header row or a body row.
    Row,
    Cell,
    Emphasis,
    Strong,
    Strike,
    Link(Target, String),
    Image(Target, String),
    /// An element this tree has no place for: its content joins its parent's.
    Other,
}

/// An open element and what it has gathered so far.
struct Frame {
    kind: Kind,
    start: usize,
    end: usize,
    /// In a table row: where its last cell ends in the source.
    cells_end: usize,
    blocks: Vec<Block>,
    inlines: Vec<Inline>,
    items: Vec<Item>,
    cells: Vec<Vec<Inline>>,
    rows: Vec<Vec<Vec<Inline>>>,
    text: String,
    task: Option<bool>,
}

impl Frame {
    fn new(kind: Kind, range: Range<usize>) -> Self {
        Frame {
            kind,
            start: range.start,
            end: range.end,
            cells_end: range.start,
            blocks: Vec::new(),
            inlines: Vec::new(),
            items: Vec::new(),
            cells: Vec::new(),
            rows: Vec::new(),
            text: String::new(),
            task: None,
        }
    }

    /// Text gathered verbatim rather than as inlines (code, raw HTML).
    fn gathers_text(&self) -> bool {
        matches!(self.kind, Kind::Code(_) | Kind::Html)
    }

    fn push_inline(&mut self, inline: Inline) {
        if self.gathers_text() {
            push_source_text(&inline, &mut self.text);
            return;
        }
        if let (Inline::Text(more), Some(Inline::Text(text))) = (&inline, self.inlines.last_mut()) {
            text.push_str(more);
            return;
        }
        self.inlines.push(inline);
    }

    /// Adds a block, first closing the loose text before it (a tight list item's text).
    fn push_block(&mut self, block: Block) {
        self.flush_plain();
        self.blocks.push(block);
    }

    fn flush_plain(&mut self) {
        if !self.inlines.is_empty() {
            let inlines = std::mem::take(&mut self.inlines);
            self.blocks.push(Block::Plain(autolink::linkify(inlines)));
        }
    }
}

/// Text as the source would show it, for an inline met where only text belongs.
fn push_source_text(inline: &Inline, out: &mut String) {
    match inline {
        Inline::Text(text) | Inline::Code(text) => out.push_str(text),
        Inline::SoftBreak | Inline::HardBreak => out.push('\n'),
        _ => {}
    }
}

struct Builder<'a> {
    source: &'a str,
    max_depth: usize,
    root: Frame,
    /// The elements open inside the root, innermost last.
    stack: Vec<Frame>,
    /// Inside an element kept as source text: how many of its elements are open.
    skipping: usize,
    starts: Vec<usize>,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>, range: Range<usize>) {
        if self.skipping > 0 {
            match event {
                Event::Start(_) => self.skipping += 1,
                Event::End(_) => self.skipping -= 1,
                _ => {}
            }
            return;
        }
        match event {
            Event::Start(tag) => self.start(tag, range),
            Event::End(_) => self.end(),
            Event::Text(text) => self.inline(Inline::Text(text.into_string())),
            Event::Code(text) => self.inline(Inline::Code(text.into_string())),
            Event::Html(text) | Event::InlineHtml(text) => {
                self.inline(Inline::Text(text.into_string()));
            }
            Event::SoftBreak => self.inline(Inline::SoftBreak),
            Event::HardBreak => self.inline(Inline::HardBreak),
            Event::Rule => self.block(Block::Rule, range.start),
            Event::TaskListMarker(done) => self.task(done),
            Event::FootnoteReference(_) | Event::InlineMath(_) | Event::DisplayMath(_) => {
                let text = self.source.get(range).unwrap_or_default().to_owned();
                self.inline(Inline::Text(text));
            }
        }
    }

    fn top(&mut self) -> &mut Frame {
        self.stack.last_mut().unwrap_or(&mut self.root)
    }

    fn inline(&mut self, inline: Inline) {
        self.top().push_inline(inline);
    }

    fn block(&mut self, block: Block, start: usize) {
        if self.stack.is_empty() {
            self.starts.push(start);
        }
        self.top().push_block(block);
    }

    fn task(&mut self, done: bool) {
        if let Some(item) = self
            .stack
            .iter_mut()
            .rev()
            .find(|frame| matches!(frame.kind, Kind::Item))
        {
            item.task = Some(done);
        }
    }

    fn start(&mut self, tag: Tag<'_>, range: Range<usize>) {
        if self.stack.len() >= self.max_depth {
            self.too_deep(&tag, range);
            return;
        }
        let kind = match tag {
            Tag::Paragraph => Kind::Paragraph,
            Tag::Heading { level, .. } => Kind::Heading(level as u8),
            Tag::BlockQuote(_) => Kind::Quote,
            Tag::CodeBlock(CodeBlockKind::Fenced(info)) => Kind::Code(info.trim().to_owned()),
            Tag::CodeBlock(CodeBlockKind::Indented) => Kind::Code(String::new()),
            Tag::HtmlBlock => Kind::Html,
            Tag::List(start) => Kind::List(start),
            Tag::Item => Kind::Item,
            Tag::Table(alignments) => Kind::Table(alignments.into_iter().map(alignment).collect()),
            Tag::TableHead | Tag::TableRow => Kind::Row,
            Tag::TableCell => Kind::Cell,
            Tag::Emphasis => Kind::Emphasis,
            Tag::Strong => Kind::Strong,
            Tag::Strikethrough => Kind::Strike,
            Tag::Link {
                link_type,
                dest_url,
                title,
                ..
            } => Kind::Link(target(link_type, &dest_url), title.into_string()),
            Tag::Image {
                link_type,
                dest_url,
                title,
                ..
            } => Kind::Image(target(link_type, &dest_url), title.into_string()),
            _ => Kind::Other,
        };
        self.stack.push(Frame::new(kind, range));
    }

    /// Keeps an element that opens too deep as its source text.
    fn too_deep(&mut self, tag: &Tag<'_>, range: Range<usize>) {
        self.skipping = 1;
        let text = self
            .source
            .get(range.clone())
            .unwrap_or_default()
            .to_owned();
        let inline_tag = matches!(
            tag,
            Tag::Emphasis | Tag::Strong | Tag::Strikethrough | Tag::Link { .. } | Tag::Image { .. }
        );
        let verbatim = |text: String| Block::Verbatim {
            text: text.trim_end_matches('\n').to_owned(),
            why: Verbatim::TooDeep,
        };
        // Kept where the parent gathers its children: a list's items, a table's rows,
        // a row's cells, or its blocks or inlines.
        let parent = self.top();
        match parent.kind {
            Kind::List(_) => parent.items.push(Item {
                task: None,
                blocks: vec![verbatim(text)],
            }),
            Kind::Table(_) => parent.rows.push(vec![vec![Inline::Text(text)]]),
            Kind::Row => {
                parent.cells.push(vec![Inline::Text(text)]);
                parent.cells_end = range.end;
            }
            _ if inline_tag => parent.push_inline(Inline::Text(text)),
            _ => self.block(verbatim(text), range.start),
        }
    }

    fn end(&mut self) {
        let Some(mut frame) = self.stack.pop() else {
            return;
        };
        let start = frame.start;
        match frame.kind {
            Kind::Root => {}
            Kind::Paragraph => {
                let inlines = autolink::linkify(frame.inlines);
                self.block(Block::Paragraph(inlines), start);
            }
            Kind::Heading(level) => {
                let inlines = autolink::linkify(frame.inlines);
                self.block(Block::Heading(level, inlines), start);
            }
            Kind::Quote => {
                frame.flush_plain();
                self.block(Block::Quote(frame.blocks), start);
            }
            Kind::List(first) => {
                let list = Block::List {
                    start: first,
                    items: frame.items,
                };
                self.block(list, start);
            }
            Kind::Item => {
                frame.flush_plain();
                let item = Item {
                    task: frame.task,
                    blocks: frame.blocks,
                };
                self.top().items.push(item);
            }
            Kind::Code(info) => {
                let block = Block::Code {
                    info,
                    text: frame.text,
                };
                self.block(block, start);
            }
            Kind::Html => {
                let text = frame.text.trim_end_matches('\n').to_owned();
                let block = Block::Verbatim {
                    text,
                    why: Verbatim::Html,
                };
                self.block(block, start);
            }
            Kind::Table(alignments) => {
                let mut rows = frame.rows.into_iter();
                let head = rows.next().unwrap_or_default();
                let block = Block::Table {
                    alignments,
                    head,
                    rows: rows.collect(),
                };
                self.block(block, start);
            }
            Kind::Row => {
                let mut cells = frame.cells;
                // GitHub drops the cells past the header's count; they are kept, as written.
                let past = self
                    .source
                    .get(frame.cells_end..frame.end)
                    .unwrap_or_default();
                let past = past
                    .trim()
                    .trim_start_matches('|')
                    .trim_end_matches('|')
                    .trim();
                if !past.is_empty() {
                    cells.push(vec![Inline::Text(past.to_owned())]);
                }
                self.top().rows.push(cells);
            }
            Kind::Cell => {
                let cell = autolink::linkify(frame.inlines);
                let row = self.top();
                row.cells.push(cell);
                row.cells_end = frame.end;
            }
            Kind::Emphasis => {
                let inlines = self.linkify(frame.inlines);
                self.top().push_inline(Inline::Emphasis(inlines));
            }
            Kind::Strong => {
                let inlines = self.linkify(frame.inlines);
                self.top().push_inline(Inline::Strong(inlines));
            }
            Kind::Strike => {
                let inlines = self.linkify(frame.inlines);
                self.top().push_inline(Inline::Strike(inlines));
            }
            Kind::Link(target, title) => {
                let link = Inline::Link {
                    target,
                    title,
                    children: frame.inlines,
                };
                self.top().push_inline(link);
            }
            Kind::Image(target, title) => {
                let mut alt = String::new();
                frame.inlines.iter().for_each(|i| alt_text(i, &mut alt));
                self.top().push_inline(Inline::Image { target, title, alt });
            }
            Kind::Other => self.splice(frame),
        }
    }

    /// Makes links of the bare URLs in `inlines`, unless they are inside a link or an
    /// image already.
    fn linkify(&self, inlines: Vec<Inline>) -> Vec<Inline> {
        let in_link = self
            .stack
            .iter()
            .any(|frame| matches!(frame.kind, Kind::Link(..) | Kind::Image(..)));
        if in_link {
            inlines
        } else {
            autolink::linkify(inlines)
        }
    }

    /// Hands an unknown element's content to its parent.
    fn splice(&mut self, mut frame: Frame) {
        frame.flush_plain();
        let parent = self.top();
        for inline in frame.inlines {
            parent.push_inline(inline);
        }
        for block in frame.blocks {
            parent.push_block(block);
        }
    }

    /// Closes whatever the events left open (they never do).
    fn finish(&mut self) {
        while !self.stack.is_empty() {
            self.end();
        }
        self.root.flush_plain();
    }
}

fn target(link_type: LinkType, url: &str) -> Target {
    if link_type == LinkType::Email {
        Target::of(&format!("mailto:{url}"))
    } else {
        Target::of(url)
    }
}

fn alignment(alignment: pulldown_cmark::Alignment) -> Alignment {
    match alignment {
        pulldown_cmark::Alignment::None => Alignment::None,
        pulldown_cmark::Alignment::Left => Alignment::Left,
        pulldown_cmark::Alignment::Center => Alignment::Center,
        pulldown_cmark::Alignment::Right => Alignment::Right,
    }
}

/// An image's description as plain text.
fn alt_text(inline: &Inline, out: &mut String) {
    match inline {
        Inline::Text(text) | Inline::Code(text) => out.push_str(text),
        Inline::Strong(c) | Inline::Emphasis(c) | Inline::Strike(c) => {
            c.iter().for_each(|i| alt_text(i, out));
        }
        Inline::Link { children, .. } => children.iter().for_each(|i| alt_text(i, out)),
        Inline::Image { alt, .. } => out.push_str(alt),
        Inline::SoftBreak | Inline::HardBreak => out.push(' '),
    }
}
