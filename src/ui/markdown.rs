//! Markdown as DOM: the parsed tree (`crate::base::markdown`) walked into elements of a
//! fixed set. Model text only ever becomes text nodes; links get
//! `rel="noopener noreferrer"` and open in a new tab; a link the page may not follow
//! is its text; images from other sites show only when the settings allow them; code
//! blocks get a copy button and scroll by keyboard.
//!
//! While an answer streams, only its unsettled last blocks are parsed and built again
//! ([`Stream`]): each block's DOM is keyed, and a settled block keeps its nodes. When
//! the unsettled part is large (a long code block), rebuilding waits for the next
//! animation frame, so a fast stream costs one rebuild per frame rather than per chunk.

use std::sync::Arc;

use leptos::prelude::*;

use crate::base::markdown::{Alignment, Block, Inline, Item, Limits, Stream, Target, Verbatim};

/// Unsettled source longer than this is rebuilt at most once per animation frame.
const FRAME_BYTES: usize = 8 * 1024;

/// Renders `text` as markdown.
#[component]
pub fn Markdown(
    /// The markdown source (model text).
    #[prop(into)]
    text: Signal<String>,
    /// Show images from other sites.
    #[prop(optional)]
    remote_images: bool,
) -> impl IntoView {
    let stream = StoredValue::new(Stream::new(Limits::default()));
    let blocks = RwSignal::new(Vec::new());
    let frame_pending = StoredValue::new(false);
    let rebuild = move || {
        let latest = stream.try_update_value(|stream| {
            text.with_untracked(|text| stream.update(text));
            stream.blocks().cloned().collect::<Vec<_>>()
        });
        if let Some(latest) = latest {
            blocks.try_set(latest);
        }
    };
    rebuild();
    Effect::new(move |ran: Option<()>| {
        text.track();
        if ran.is_none() {
            return;
        }
        let large = stream.with_value(|stream| stream.unsettled_len() > FRAME_BYTES);
        if !large {
            rebuild();
        } else if !frame_pending.get_value() {
            frame_pending.set_value(true);
            request_animation_frame(move || {
                // `Some` hands the value back: the component is gone, nothing to build.
                if frame_pending.try_set_value(false).is_none() {
                    rebuild();
                }
            });
        }
    });
    view! {
        <div class="markdown">
            <For
                each=move || blocks.get()
                key=|(key, _)| *key
                children=move |(_, node): (u64, Arc<Block>)| block(&node, remote_images)
            />
        </div>
    }
}

fn blocks(nodes: &[Block], images: bool) -> AnyView {
    nodes
        .iter()
        .map(|node| block(node, images))
        .collect_view()
        .into_any()
}

fn block(node: &Block, images: bool) -> AnyView {
    match node {
        Block::Paragraph(children) => view! { <p>{inlines(children, images)}</p> }.into_any(),
        Block::Plain(children) => inlines(children, images),
        Block::Heading(level, children) => heading(*level, inlines(children, images)),
        Block::Code { info, text } => code_block(info, text),
        Block::Quote(children) => {
            view! { <blockquote>{blocks(children, images)}</blockquote> }.into_any()
        }
        Block::List { start, items } => list(*start, items, images),
        Block::Table {
            alignments,
            head,
            rows,
        } => table(alignments, head, rows, images),
        Block::Rule => view! { <hr /> }.into_any(),
        Block::Verbatim { text, why } => verbatim(text, *why),
    }
}

/// Answers sit under the page's own headings: levels start at h3.
fn heading(level: u8, children: AnyView) -> AnyView {
    match level {
        1 => view! { <h3>{children}</h3> }.into_any(),
        2 => view! { <h4>{children}</h4> }.into_any(),
        3 => view! { <h5>{children}</h5> }.into_any(),
        _ => view! { <h6>{children}</h6> }.into_any(),
    }
}

fn list(start: Option<u64>, items: &[Item], images: bool) -> AnyView {
    let items = items
        .iter()
        .map(|item| {
            let mark = item.task.map(|done| {
                let (label, sign) = if done {
                    ("done", "☑")
                } else {
                    ("to do", "☐")
                };
                view! { <span class="task-mark" role="img" aria-label=label>{sign}</span> }
            });
            let class = item.task.map(|_| "task");
            view! { <li class=class>{mark}{blocks(&item.blocks, images)}</li> }
        })
        .collect_view();
    match start {
        Some(start) => view! { <ol start=start.to_string()>{items}</ol> }.into_any(),
        None => view! { <ul>{items}</ul> }.into_any(),
    }
}

/// A table in a box that scrolls sideways, focusable so the keyboard can scroll it.
fn table(
    alignments: &[Alignment],
    head: &[Vec<Inline>],
    rows: &[Vec<Vec<Inline>>],
    images: bool,
) -> AnyView {
    let class = |column: usize| match alignments.get(column) {
        Some(Alignment::Left) => Some("align-left"),
        Some(Alignment::Center) => Some("align-center"),
        Some(Alignment::Right) => Some("align-right"),
        Some(Alignment::None) | None => None,
    };
    let head = head
        .iter()
        .enumerate()
        .map(|(column, cell)| {
            view! { <th scope="col" class=class(column)>{inlines(cell, images)}</th> }
        })
        .collect_view();
    let rows = rows
        .iter()
        .map(|row| {
            let cells = row
                .iter()
                .enumerate()
                .map(
                    |(column, cell)| view! { <td class=class(column)>{inlines(cell, images)}</td> },
                )
                .collect_view();
            view! { <tr>{cells}</tr> }
        })
        .collect_view();
    view! {
        <div class="table-scroll" tabindex="0" role="group" aria-label="Table">
            <table>
                <thead><tr>{head}</tr></thead>
                <tbody>{rows}</tbody>
            </table>
        </div>
    }
    .into_any()
}

/// A code block; its label is the fence's info string, its name says the language.
fn code_block(info: &str, text: &str) -> AnyView {
    let copied = RwSignal::new(false);
    let source = text.to_owned();
    let copy = move |_| {
        super::copy_text(&source);
        copied.set(true);
    };
    let name = match info.split_whitespace().next() {
        Some(language) => format!("Code: {language}"),
        None => "Code".to_owned(),
    };
    let label =
        (!info.is_empty()).then(|| view! { <span class="code-language">{info.to_owned()}</span> });
    // Focusable with a name, so a long line can be scrolled from the keyboard.
    view! {
        <div class="code-block">
            <div class="code-toolbar">
                {label}
                <button type="button" class="code-copy" on:click=copy>
                    {move || if copied.get() { "Copied" } else { "Copy" }}
                </button>
            </div>
            <pre tabindex="0" role="group" aria-label=name><code>{text.to_owned()}</code></pre>
        </div>
    }
    .into_any()
}

/// Source shown as written; text past the length limit says why it is plain.
fn verbatim(text: &str, why: Verbatim) -> AnyView {
    let note = (why == Verbatim::TooLong).then(|| {
        view! {
            <p class="markdown-note">"The rest of this answer is too long to format; it is shown as written."</p>
        }
    });
    view! {
        {note}
        <p class="markdown-verbatim">{text.to_owned()}</p>
    }
    .into_any()
}

fn inlines(children: &[Inline], images: bool) -> AnyView {
    children
        .iter()
        .map(|i| inline(i, images))
        .collect_view()
        .into_any()
}

fn inline(node: &Inline, images: bool) -> AnyView {
    match node {
        Inline::Text(text) => text.clone().into_any(),
        Inline::Code(text) => view! { <code>{text.clone()}</code> }.into_any(),
        Inline::Strong(c) => view! { <strong>{inlines(c, images)}</strong> }.into_any(),
        Inline::Emphasis(c) => view! { <em>{inlines(c, images)}</em> }.into_any(),
        Inline::Strike(c) => view! { <del>{inlines(c, images)}</del> }.into_any(),
        Inline::Link {
            target: Target::Web(href),
            children,
            ..
        } => view! {
            <a href=href.clone() target="_blank" rel="noopener noreferrer">{inlines(children, images)}</a>
        }
        .into_any(),
        Inline::Link { children, .. } => {
            view! { <span class="link-refused">{inlines(children, images)}</span> }.into_any()
        }
        Inline::Image {
            target: Target::Web(src),
            alt,
            ..
        } if images => view! {
            <img src=src.clone() alt=alt.clone() loading="lazy" referrerpolicy="no-referrer" />
        }
        .into_any(),
        Inline::Image { alt, .. } => {
            view! { <span class="image-alt">{format!("[image: {alt}]")}</span> }.into_any()
        }
        Inline::SoftBreak | Inline::HardBreak => view! { <br /> }.into_any(),
    }
}
