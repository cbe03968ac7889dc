//! Markdown as DOM: the parsed tree (`crate::markdown`) walked into elements of a
//! fixed set. Model text only ever becomes text nodes; links get
//! `rel="noopener noreferrer"` and open in a new tab; images from other sites show
//! only when the settings allow them; code blocks get a copy button.

use leptos::prelude::*;

use crate::markdown::{Block, Inline, parse};

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
    view! {
        <div class="markdown">
            {move || text.with(|t| parse(t)).into_iter().map(|b| block(b, remote_images)).collect_view()}
        </div>
    }
}

fn block(node: Block, images: bool) -> AnyView {
    match node {
        Block::Paragraph(children) => view! { <p>{inlines(children, images)}</p> }.into_any(),
        Block::Heading(level, children) => {
            let children = inlines(children, images);
            // Answers sit under the page's own headings: levels start at h3.
            match level {
                1 => view! { <h3>{children}</h3> }.into_any(),
                2 => view! { <h4>{children}</h4> }.into_any(),
                3 => view! { <h5>{children}</h5> }.into_any(),
                _ => view! { <h6>{children}</h6> }.into_any(),
            }
        }
        Block::Code { language, text } => code_block(language, text),
        Block::Quote(blocks) => view! {
            <blockquote>{blocks.into_iter().map(|b| block(b, images)).collect_view()}</blockquote>
        }
        .into_any(),
        Block::List { start, items } => {
            let items = items
                .into_iter()
                .map(|item| view! { <li>{item.into_iter().map(|b| block(b, images)).collect_view()}</li> })
                .collect_view();
            match start {
                Some(start) => view! { <ol start=start.to_string()>{items}</ol> }.into_any(),
                None => view! { <ul>{items}</ul> }.into_any(),
            }
        }
        Block::Rule => view! { <hr /> }.into_any(),
    }
}

fn code_block(language: String, text: String) -> AnyView {
    let copied = RwSignal::new(false);
    let source = text.clone();
    let copy = move |_| {
        super::copy_text(&source);
        copied.set(true);
    };
    let label =
        (!language.is_empty()).then(|| view! { <span class="code-language">{language}</span> });
    view! {
        <div class="code-block">
            <div class="code-toolbar">
                {label}
                <button type="button" class="code-copy" on:click=copy>
                    {move || if copied.get() { "Copied" } else { "Copy" }}
                </button>
            </div>
            <pre><code>{text}</code></pre>
        </div>
    }
    .into_any()
}

fn inlines(children: Vec<Inline>, images: bool) -> AnyView {
    children
        .into_iter()
        .map(|i| inline(i, images))
        .collect_view()
        .into_any()
}

fn inline(inline: Inline, images: bool) -> AnyView {
    match inline {
        Inline::Text(text) => text.into_any(),
        Inline::Code(text) => view! { <code>{text}</code> }.into_any(),
        Inline::Strong(c) => view! { <strong>{inlines(c, images)}</strong> }.into_any(),
        Inline::Emphasis(c) => view! { <em>{inlines(c, images)}</em> }.into_any(),
        Inline::Strike(c) => view! { <del>{inlines(c, images)}</del> }.into_any(),
        Inline::Link { href, children } => view! {
            <a href=href target="_blank" rel="noopener noreferrer">{inlines(children, images)}</a>
        }
        .into_any(),
        Inline::Image { src, alt } if images => view! {
            <img src=src alt=alt loading="lazy" referrerpolicy="no-referrer" />
        }
        .into_any(),
        Inline::Image { alt, .. } => {
            view! { <span class="image-alt">{format!("[image: {alt}]")}</span> }.into_any()
        }
        Inline::LineBreak => view! { <br /> }.into_any(),
    }
}
