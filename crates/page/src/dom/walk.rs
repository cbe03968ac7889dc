//! `walk`: one pass over a live document into a [`Snapshot`]'s text, controls and
//! forms, in document order.
//!
//! The walk goes into open shadow roots (a web component's content, slots filled in
//! their composed order) and, when asked, into same-origin frames; the agent's own
//! widget (`#familiar`, anything marked `data-familiar`) is never read. It keeps its
//! own stack, and stops at [`MAX_DEPTH`] levels and [`MAX_NODES`] elements, so a page
//! built to exhaust it leaves the tools working on what was read. What each element
//! holds is read by [`super::state`]; its name by `name`.

use std::collections::BTreeMap;

use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlInputElement, Node, Window};

use super::state::{appearance, disabled, state, toggle};
use super::{PageDomAdapter, list};
use crate::realm::{self, tagged};
use crate::{
    Block, Control, Form, Hidden, Region, Snapshot, clip, hidden, role_of, sensitive, squash,
};

/// Elements whose content is never page text.
const SKIPPED: [&str; 12] = [
    "script", "style", "noscript", "template", "svg", "iframe", "canvas", "head", "meta", "link",
    "object", "embed",
];
/// How deep a walk goes: deeper content is not read (HTML's own parser nests no
/// deeper than 512).
pub const MAX_DEPTH: usize = 512;
/// How many elements a walk visits before it stops reading.
pub const MAX_NODES: usize = 30_000;
/// Elements that start a block of text of their own.
const BLOCKS: [&str; 36] = [
    "address",
    "article",
    "aside",
    "blockquote",
    "body",
    "dd",
    "details",
    "dialog",
    "div",
    "dl",
    "dt",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "header",
    "hr",
    "legend",
    "li",
    "main",
    "nav",
    "ol",
    "p",
    "pre",
    "section",
    "table",
    "td",
    "th",
    "ul",
];
/// Inline elements a page draws apart from the text around them: their words are
/// not run into their neighbours'.
const APART: [&str; 6] = ["label", "button", "input", "select", "textarea", "img"];
/// Longest accessible name kept.
const NAME_LIMIT: usize = 200;

impl PageDomAdapter {
    /// Walks the whole document anew.
    pub(super) fn walk(&self, window: &Window) -> Result<Snapshot, String> {
        let document = window.document().ok_or("the window has no document")?;
        let body = document.body().ok_or("the page has no body yet")?;
        let mut walk = Walk {
            window,
            adapter: self,
            blocks: Vec::new(),
            controls: Vec::new(),
            forms: Vec::new(),
            found: BTreeMap::new(),
            text: String::new(),
            roots: Vec::new(),
            visited: 0,
            truncated: false,
        };
        let place = Place {
            region: Region::Other,
            heading: None,
            hidden: false,
            sectioned: false,
        };
        walk.run(body.into(), place);
        for root in &walk.roots {
            self.watch.observe(root);
        }
        *self.elements.borrow_mut() = walk.found;
        Ok(Snapshot {
            title: document.title(),
            blocks: walk.blocks,
            controls: walk.controls,
            forms: walk.forms,
            truncated: walk.truncated,
            ..Snapshot::default()
        })
    }
}

/// One pass over the document.
struct Walk<'a> {
    window: &'a Window,
    adapter: &'a PageDomAdapter,
    blocks: Vec<Block>,
    controls: Vec<Control>,
    forms: Vec<Form>,
    found: BTreeMap<u32, Element>,
    text: String,
    /// The shadow roots and frames' documents read, for the watch to observe: their
    /// changes do not reach the document's observer.
    roots: Vec<Node>,
    visited: usize,
    truncated: bool,
}

#[derive(Clone, Copy)]
struct Place {
    region: Region,
    heading: Option<u8>,
    hidden: bool,
    /// Inside `article`, `aside`, `main`, `nav` or `section`: a `header` or `footer`
    /// here is that section's own (an app's item count), not the page's banner.
    sectioned: bool,
}

/// What is left to do in a walk: a node to read at a depth, or the end of a block.
enum Step {
    Node(Node, Place, usize),
    Close(Place),
    /// The end of an element drawn apart from its neighbours (a label, a button).
    Space,
}

impl Walk<'_> {
    fn flush(&mut self, place: Place) {
        let text = squash(&self.text);
        self.text.clear();
        if !text.is_empty() {
            self.blocks.push(Block {
                heading: place.heading,
                text,
                region: place.region,
            });
        }
    }

    /// Reads `start` and everything under it in document order, with a stack of its
    /// own: a page nested a hundred thousand deep cannot exhaust the wasm stack.
    fn run(&mut self, start: Node, place: Place) {
        let mut stack = vec![Step::Node(start, place, 0)];
        while let Some(step) = stack.pop() {
            match step {
                Step::Close(place) => self.flush(place),
                Step::Space => self.text.push(' '),
                Step::Node(node, place, depth) => match node.node_type() {
                    Node::TEXT_NODE if !place.hidden => {
                        self.text.push_str(&node.node_value().unwrap_or_default());
                    }
                    Node::ELEMENT_NODE => {
                        if depth >= MAX_DEPTH || self.visited >= MAX_NODES {
                            self.truncated = true;
                            continue;
                        }
                        self.visited += 1;
                        if let Some(element) = realm::into_element(node) {
                            self.element(&element, place, depth, &mut stack);
                        }
                    }
                    _ => {}
                },
            }
        }
        self.flush(place);
    }

    /// Reads one element and schedules its content on `stack`.
    fn element(&mut self, element: &Element, outer: Place, depth: usize, stack: &mut Vec<Step>) {
        let tag = element.tag_name().to_ascii_lowercase();
        if tag == "br" {
            self.text.push(' ');
            return;
        }
        if ours(element) {
            return;
        }
        if tag == "iframe" || tag == "frame" {
            // A frame a person cannot see (transparent, a pixel wide, off-screen)
            // shows nothing: its text is not the page's to read.
            let unseen = outer.hidden || hidden(&appearance(self.window, element)).is_some();
            if unseen {
                return;
            }
            if let Some(body) = self.frame_body(element) {
                stack.push(Step::Node(body.into(), outer, depth + 1));
            }
            return;
        }
        if SKIPPED.contains(&tag.as_str()) {
            return;
        }
        // Inside a hidden subtree nothing is measured: all of it is hidden, and the
        // browser would compute each element's style anew (a hidden menu of
        // thousands, a chain built to make the walk slow).
        let seen = if outer.hidden {
            None
        } else {
            hidden(&appearance(self.window, element))
        };
        let hidden = outer.hidden || seen.is_some();
        let role = element.get_attribute("role");
        let place = Place {
            region: region(&tag, role.as_deref(), outer),
            heading: heading(&tag).or(outer.heading),
            hidden,
            sectioned: outer.sectioned
                || matches!(
                    tag.as_str(),
                    "article" | "aside" | "main" | "nav" | "section"
                ),
        };
        if tag == "form" {
            self.form(element, !hidden);
        }
        // A transparent checkbox still takes the clicks that land on it: apps
        // (TodoMVC) draw it with a picture beside it and no label.
        let see_through = seen == Some(Hidden::Transparent) && toggle(element);
        let operable = !hidden
            || (!outer.hidden
                && seen.is_some_and(drawn_elsewhere)
                && (see_through || self.labelled_visibly(element)));
        self.control(element, &tag, role.as_deref(), operable);
        // A field's options and default text are its value, not page text.
        if matches!(tag.as_str(), "select" | "textarea") {
            return;
        }
        let block = BLOCKS.contains(&tag.as_str()) || heading(&tag).is_some();
        if block {
            self.flush(outer);
            stack.push(Step::Close(place));
        } else if APART.contains(&tag.as_str()) {
            // "Full name" then "Email" then "Next", not "Full nameEmailNext".
            self.text.push(' ');
            stack.push(Step::Space);
        }
        for child in self.content(element).into_iter().rev() {
            stack.push(Step::Node(child, place, depth + 1));
        }
    }

    /// What an element shows, in order: its shadow root's nodes for a web component
    /// (an open root), the nodes assigned to a slot, its children otherwise.
    fn content(&mut self, element: &Element) -> Vec<Node> {
        if let Some(root) = element.shadow_root() {
            let nodes = list(&root.child_nodes());
            self.roots.push(root.into());
            return nodes;
        }
        if element.tag_name().eq_ignore_ascii_case("slot") {
            let assigned = Reflect::get(element, &"assignedNodes".into())
                .ok()
                .and_then(|f| f.dyn_into::<js_sys::Function>().ok())
                .and_then(|f| f.call0(element).ok())
                .and_then(|a| a.dyn_into::<Array>().ok());
            if let Some(assigned) = assigned.filter(|a| a.length() > 0) {
                return assigned
                    .iter()
                    .filter(JsValue::is_object)
                    .map(JsCast::unchecked_into::<Node>)
                    .collect();
            }
        }
        list(&element.child_nodes())
    }

    /// A same-origin frame's body, when this walk reads frames.
    fn frame_body(&mut self, frame: &Element) -> Option<web_sys::HtmlElement> {
        if !self.adapter.into_frames {
            return None;
        }
        // Null for another origin's frame (its own content script reads it).
        let document = Reflect::get(frame, &"contentDocument".into()).ok()?;
        if !document.is_object() {
            return None;
        }
        let document = document.unchecked_into::<web_sys::Document>();
        self.roots.push(document.clone().into());
        document.body()
    }

    /// Whether a person sees a label of this field: a checkbox drawn by its label,
    /// with the input itself transparent or shrunk out of sight, is theirs to use.
    fn labelled_visibly(&self, element: &Element) -> bool {
        let Some(input) = tagged::<HtmlInputElement>(element, "input") else {
            return false;
        };
        let Some(labels) = input.labels() else {
            return false;
        };
        list(&labels)
            .into_iter()
            .filter_map(realm::into_element)
            .any(|label| hidden(&appearance(self.window, &label)).is_none())
    }

    fn control(&mut self, element: &Element, tag: &str, role: Option<&str>, visible: bool) {
        let kind = element.get_attribute("type");
        let editable = element
            .get_attribute("contenteditable")
            .is_some_and(|v| v != "false");
        let role = match role_of(tag, kind.as_deref(), role) {
            Some(role) => role,
            None if editable => "textbox",
            None => return,
        };
        if tag == "a" && !element.has_attribute("href") && element.get_attribute("role").is_none() {
            return;
        }
        let id = self.adapter.number(element);
        let name = clip(&crate::name::name(element, tag), NAME_LIMIT);
        let typed = matches!(role, "textbox" | "searchbox" | "spinbutton" | "combobox")
            && (matches!(tag, "input" | "textarea") || editable);
        let secret = typed && {
            let attr = |a: &str| element.get_attribute(a);
            let words = format!(
                "{name} {} {}",
                element.id(),
                attr("name").unwrap_or_default()
            );
            sensitive(kind.as_deref(), attr("autocomplete").as_deref(), &words).is_some()
        };
        let (value, checked, options) = state(element, kind.as_deref(), secret);
        let href = (tag == "a")
            .then(|| Reflect::get(element, &"href".into()).ok()?.as_string())
            .flatten();
        let form = Reflect::get(element, &"form".into())
            .ok()
            .filter(JsValue::is_object)
            .map(|f| self.adapter.number(f.unchecked_ref()));
        self.found.insert(id, element.clone());
        self.controls.push(Control {
            id,
            role: role.into(),
            name,
            value,
            checked,
            disabled: disabled(element),
            visible,
            options,
            href,
            form,
            sensitive: secret,
            focused: false,
            // The extension's panel names the frame's origin when it merges frames.
            frame: None,
        });
    }

    fn form(&mut self, element: &Element, visible: bool) {
        let attr = |name: &str| element.get_attribute(name).map(|v| squash(&v));
        let caption = || {
            let caption = element
                .query_selector("legend, h1, h2, h3, h4, h5, h6")
                .ok()??;
            caption.text_content()
        };
        let name = [
            attr("aria-label"),
            attr("name"),
            caption().map(|c| squash(&c)),
            attr("id"),
        ]
        .into_iter()
        .flatten()
        .find(|n| !n.is_empty())
        .unwrap_or_default();
        let id = self.adapter.number(element);
        self.found.insert(id, element.clone());
        self.forms.push(Form {
            id,
            name: clip(&name, NAME_LIMIT),
            // Attributes, not properties: a field named `action` shadows the property.
            action: attr("action")
                .filter(|a| !a.is_empty())
                .unwrap_or_else(|| "this page".into()),
            method: attr("method").map_or_else(|| "get".into(), |m| m.to_ascii_lowercase()),
            visible,
        });
    }
}

/// The agent's own interface, never read as the page.
fn ours(element: &Element) -> bool {
    element.id() == "familiar" || element.has_attribute("data-familiar")
}

fn heading(tag: &str) -> Option<u8> {
    match tag.as_bytes() {
        [b'h', level @ b'1'..=b'6'] => Some(level - b'0'),
        _ => None,
    }
}

/// Hidden in a way a control's label can stand in for: the input is there to be
/// operated, drawn by something else (a styled label).
fn drawn_elsewhere(why: Hidden) -> bool {
    matches!(
        why,
        Hidden::Transparent | Hidden::ZeroSize | Hidden::OffScreen
    )
}

/// The region an element opens, inside `outer`. A `header` or `footer` is the page's
/// banner or footer only outside every section (ARIA's `banner` and `contentinfo`).
fn region(tag: &str, role: Option<&str>, outer: Place) -> Region {
    let (sectioned, outer) = (outer.sectioned, outer.region);
    if outer == Region::Boilerplate {
        return outer;
    }
    let boilerplate = matches!(tag, "nav" | "aside")
        || (matches!(tag, "header" | "footer") && outer != Region::Main && !sectioned)
        || matches!(
            role,
            Some("navigation" | "banner" | "contentinfo" | "complementary" | "search")
        );
    if boilerplate {
        Region::Boilerplate
    } else if matches!(tag, "main" | "article") || role == Some("main") {
        Region::Main
    } else {
        outer
    }
}
