//! The page at a glance: its summary (headings and their leading sentences), its
//! links, its forms with their fields, and what the person has selected — four more
//! look-ups over [`PageDom`], each cut to a limit its description states — and the
//! `/summary` and `/ask_page` commands with the offline model's rules for them.

use std::rc::Rc;

use serde::Serialize;

use super::forms::FormListing;
use super::{PageDom, clip, forms, links, summary};
use crate::llm::rules::Rule;
use crate::tool::{NoArgs, ToolKind, ToolRegistry};

/// The commands the page assistant brings: `/summary` and `/ask_page question`,
/// both for its page agent.
pub const COMMANDS: [&str; 2] = ["summary", "ask_page"];

/// Headings a summary covers at most.
const SUMMARY_LIMIT: usize = 40;
/// Links one call lists at most.
const LINK_LIMIT: usize = 100;
/// Forms one call lists at most, and fields of each.
const FORM_LIMIT: usize = 10;
const FIELD_LIMIT: usize = 40;
/// Characters of the selection one call returns at most.
const SELECTION_LIMIT: usize = 4_000;

#[derive(Debug, Serialize)]
struct Summary {
    from: &'static str,
    title: String,
    /// The outline as text, one heading per line.
    summary: String,
    sections: usize,
}

#[derive(Debug, Serialize)]
struct Links {
    from: &'static str,
    links: Vec<String>,
    total: usize,
}

#[derive(Debug, Serialize)]
struct Forms {
    from: &'static str,
    forms: Vec<FormListing>,
    total: usize,
}

#[derive(Debug, Serialize)]
struct Selection {
    from: &'static str,
    text: String,
    total_chars: usize,
}

/// Registers the four look-ups over `dom`, every result marked with `from`.
pub fn register(registry: &mut ToolRegistry, dom: &Rc<dyn PageDom>, from: &'static str) {
    let page = Rc::clone(dom);
    registry.register_with(
        "page_summary",
        ToolKind::Data,
        format!(
            "An extractive summary of the page: each heading of its main content with \
             the first sentence under it, one per line (at most {SUMMARY_LIMIT} headings); \
             the page authors' words, quoted."
        ),
        NoArgs::parameters(),
        move |_: NoArgs, _| {
            let page = Rc::clone(&page);
            async move {
                let snapshot = page.snapshot().await?;
                let lines = summary(&snapshot, SUMMARY_LIMIT);
                let title = clip(&snapshot.title, 200);
                let summary = match (lines.is_empty(), title.is_empty()) {
                    (true, _) => "The page has no readable text.".to_owned(),
                    (false, true) => lines.join("\n"),
                    (false, false) => format!("“{title}”, in outline:\n{}", lines.join("\n")),
                };
                Ok::<_, String>(Summary {
                    from,
                    title,
                    summary,
                    sections: lines.len(),
                })
            }
        },
    );
    let page = Rc::clone(dom);
    registry.register_with(
        "page_links",
        ToolKind::Data,
        format!(
            "The page's visible links: [number] \"text\" → address, at most {LINK_LIMIT}; \
             the number is the one click takes."
        ),
        NoArgs::parameters(),
        move |_: NoArgs, _| {
            let page = Rc::clone(&page);
            async move {
                let (links, total) = links(&page.snapshot().await?, LINK_LIMIT);
                Ok::<_, String>(Links { from, links, total })
            }
        },
    );
    let page = Rc::clone(dom);
    registry.register_with(
        "page_forms",
        ToolKind::Data,
        format!(
            "The page's visible forms, each with where it is sent and its visible fields \
             and buttons as page_elements lists them (numbers fill, select_option, check \
             and click take): at most {FORM_LIMIT} forms of {FIELD_LIMIT} fields."
        ),
        NoArgs::parameters(),
        move |_: NoArgs, _| {
            let page = Rc::clone(&page);
            async move {
                let (forms, total) = forms(&page.snapshot().await?, FORM_LIMIT, FIELD_LIMIT);
                Ok::<_, String>(Forms { from, forms, total })
            }
        },
    );
    let page = Rc::clone(dom);
    registry.register_with(
        "page_selection",
        ToolKind::Data,
        format!(
            "The text the user has selected on the page (empty when nothing is), at most \
             {SELECTION_LIMIT} characters: what \"this\" often means in their question."
        ),
        NoArgs::parameters(),
        move |_: NoArgs, _| {
            let page = Rc::clone(&page);
            async move {
                let selected = page.snapshot().await?.selection;
                Ok::<_, String>(Selection {
                    from,
                    total_chars: selected.chars().count(),
                    text: clip(&selected, SELECTION_LIMIT),
                })
            }
        },
    );
}

/// The offline model's rules for the page tools: `/summary` (and "summarize", "the
/// outline", "links", "forms", "selection") call a look-up and answer with its text.
/// A host's own rules come first.
pub fn rules() -> Vec<Rule> {
    let rule = |keywords: &[&str], tool: &str, answer: &str| Rule {
        keywords: keywords.iter().map(|k| (*k).to_owned()).collect(),
        tool: tool.into(),
        arguments: serde_json::json!({}),
        answer: answer.into(),
    };
    vec![
        rule(
            &["summary", "summarize", "summarise", "tl;dr"],
            "page_summary",
            "{summary}",
        ),
        rule(
            &["outline", "headings"],
            "page_outline",
            "The page's headings: {headings}",
        ),
        rule(&["links"], "page_links", "The page's links: {links}"),
        rule(
            &["forms", "form"],
            "page_forms",
            "Forms on the page: {total}.",
        ),
        rule(
            &["selection", "selected"],
            "page_selection",
            "You selected: “{text}”",
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::Message;
    use crate::llm::rules::RulesModel;
    use crate::llm::{ChatRequest, ToolSpec};

    #[test]
    fn offline_a_summary_request_calls_page_summary_and_answers_its_text() {
        let model = RulesModel {
            rules: rules(),
            fallback: String::new(),
        };
        let offered: Vec<ToolSpec> = ["page_summary", "page_outline"]
            .iter()
            .map(|name| ToolSpec {
                name: (*name).into(),
                description: String::new(),
                parameters: serde_json::json!({"type": "object"}),
            })
            .collect();
        let request = ChatRequest {
            messages: vec![Message::user("summary")].into(),
            tools: offered.into(),
            ..ChatRequest::default()
        };
        let response = model.respond(&request);
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(response.tool_calls[0].name, "page_summary");
    }
}
