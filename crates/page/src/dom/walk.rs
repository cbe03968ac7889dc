//! `walk`: one pass over a live document into a [`Snapshot`]'s text, controls and
//! forms, in document order.
//!
//! The walk goes into open shadow roots (a web component's content, slots filled in
//! their composed order) and, when asked, into same-origin frames; the agent's own
//! widget (`#familiar`, anything marked `data-familiar`) is never read. It keeps its
//! own stack, and stops at [`MAX_DEPTH`] levels and [`MAX_NODES`] elements, so a page
//! built to exhaust it leaves the tools working on what was read. What each element
//! holds is read by [`super::state`]; its name by `name`; a control and a form as the
//! tools list them by [`control`]; what a person operates that has no role, and the
//! popups fields own, by [`operable`].

mod control;
mod operable;

use std::collections::BTreeMap;

use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlInputElement, Node, Window};

use super::state::{appearance, toggle};
use super::{PageDomAdapter, cover, list};
use crate::name::accname::Part;
use crate::name::spoken;
use crate::realm::{self, tagged};
use crate::visibility::{Rect, Sight};
use crate::{
    Block, Control, Form, Hidden, Region, Snapshot, clip, hidden, passes_pointer_on, squash,
};
use operable::{Listed, Near};

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
/// Elements that show a document of their own in a viewport.
const FRAMES: [&str; 4] = ["iframe", "frame", "object", "embed"];
/// Longest accessible name kept.
const NAME_LIMIT: usize = 200;
/// How many runs of text a walk asks the browser about what lies over and behind
/// them (those in the viewport; [`cover`]).
const HIT_TESTS: usize = 2_000;

impl PageDomAdapter {
    /// Walks the whole document anew.
    pub(super) fn walk(&self, window: &Window) -> Result<Snapshot, String> {
        let document = window.document().ok_or("the window has no document")?;
        let body = document.body().ok_or("the page has no body yet")?;
        let origin = (
            window.scroll_x().unwrap_or(0.0),
            window.scroll_y().unwrap_or(0.0),
        );
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
            range: document.create_range().ok(),
            hit_tests: 0,
            frames: Vec::new(),
            read: js_sys::Set::new(&JsValue::UNDEFINED),
            names: Vec::new(),
            form_names: Vec::new(),
            owned: operable::owned_popups(&document),
            focused: operable::focused_field(&document, origin),
            popups: Vec::new(),
            inferred: 0,
        };
        let place = Place {
            region: Region::Other,
            heading: None,
            hidden: false,
            sectioned: false,
            sight: Sight::page(0.0, 0.0),
            origin,
            pointer: false,
            inside: false,
            popup: None,
        };
        walk.run(body.into(), place);
        walk.name_all();
        for root in &walk.roots {
            self.watch.observe(root);
        }
        *self.elements.borrow_mut() = walk.found;
        *self.frames.borrow_mut() = walk.frames;
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
    /// Measures each run of text where it is drawn.
    range: Option<web_sys::Range>,
    hit_tests: usize,
    /// The windows of the frames a person can see.
    frames: Vec<JsValue>,
    /// The text nodes read as the page's text: what a person sees of a name.
    read: js_sys::Set,
    /// The controls' names and the forms', in parts, in order: said once the walk
    /// knows which text a person sees.
    names: Vec<Vec<Part>>,
    form_names: Vec<Vec<Part>>,
    /// The popups fields name (`aria-controls`, `aria-owns`), each with its field.
    owned: Vec<(Element, Element)>,
    /// The field with the keyboard focus, and its box: a popup beside it is its own.
    focused: Option<(Element, Rect)>,
    /// The popups met so far.
    popups: Vec<operable::Popup>,
    /// How many elements with no role were listed.
    inferred: usize,
}

#[derive(Clone, Copy)]
struct Place {
    region: Region,
    heading: Option<u8>,
    hidden: bool,
    /// Inside `article`, `aside`, `main`, `nav` or `section`: a `header` or `footer`
    /// here is that section's own (an app's item count), not the page's banner.
    sectioned: bool,
    /// What the ancestors do to what is drawn here.
    sight: Sight,
    /// Drawn for the pointer (computed `cursor: pointer`), not passed on to the items.
    pointer: bool,
    /// Inside a listed control or a label: nothing here is listed by its cues alone.
    inside: bool,
    /// The popup (of [`Walk::popups`]) this is in.
    popup: Option<usize>,
    /// Where this document's viewport sits in page coordinates (the top page's
    /// scroll, or a frame's place on the page).
    origin: (f64, f64),
}

/// What is left to do in a walk: a node to read at a depth, or the end of a block.
enum Step {
    Node(Node, Place, usize),
    Close(Place),
    /// The end of an element drawn apart from its neighbours (a label, a button).
    Space,
    /// The end of an element listed by its cues alone, at this place among the
    /// controls: it is dropped when it holds controls of its own.
    End(usize),
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
                frame: None,
            });
        }
    }

    /// Says every name gathered, now that the walk knows which text a person sees:
    /// what no one sees only as a short label ([`spoken`]).
    fn name_all(&mut self) {
        let read = &self.read;
        let said = |parts: &Vec<Part>| {
            let seen = |p: &Part| p.seen || p.node.as_ref().is_some_and(|n| read.has(n));
            clip(
                &spoken(parts.iter().map(|p| (p.text.as_str(), seen(p)))),
                NAME_LIMIT,
            )
        };
        for (control, parts) in self.controls.iter_mut().zip(&self.names) {
            control.name = said(parts);
        }
        for (form, parts) in self.forms.iter_mut().zip(&self.form_names) {
            form.name = said(parts);
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
                Step::End(at) => self.end(at),
                Step::Node(node, place, depth) => match node.node_type() {
                    Node::TEXT_NODE if !place.hidden => {
                        let text = node.node_value().unwrap_or_default();
                        if text.trim().is_empty() {
                            self.text.push_str(&text);
                        } else if self.readable(&node, &place) {
                            self.read.add(&node);
                            self.text.push_str(&text);
                        }
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
        if FRAMES.contains(&tag.as_str()) {
            self.frame(element, outer, depth, stack);
            return;
        }
        if SKIPPED.contains(&tag.as_str()) {
            return;
        }
        // Inside a hidden subtree nothing is measured: all of it is hidden, and the
        // browser would compute each element's style anew (a hidden menu of
        // thousands, a chain built to make the walk slow).
        let drawn = (!outer.hidden).then(|| appearance(self.window, element, outer.origin));
        let (seen, sight) = match &drawn {
            None => (None, outer.sight),
            Some(drawn) => match outer.sight.enter(drawn) {
                Ok(sight) => (None, sight),
                Err(why) => (Some(why), outer.sight),
            },
        };
        let hidden = outer.hidden || seen.is_some();
        let role = element.get_attribute("role");
        let pointer = drawn.as_ref().is_some_and(|d| d.pointer);
        let popup = match &drawn {
            Some(drawn) if !hidden && outer.popup.is_none() => self.popup_at(element, drawn),
            _ => None,
        };
        let mut place = Place {
            region: region(&tag, role.as_deref(), outer),
            heading: heading(&tag).or(outer.heading),
            hidden,
            sectioned: outer.sectioned
                || matches!(
                    tag.as_str(),
                    "article" | "aside" | "main" | "nav" | "section"
                ),
            sight,
            origin: outer.origin,
            // A pointer drawn over the whole page (`body { cursor: pointer }`, an old
            // trick for iOS's clicks) is no cue for what it holds.
            pointer: pointer
                && (!passes_pointer_on(&tag) || matches!(tag.as_str(), "html" | "body")),
            inside: outer.inside || tag == "label",
            popup: popup.or(outer.popup),
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
                && (see_through || self.labelled_visibly(element, outer.origin)));
        let near = Near {
            pointer: pointer && !outer.pointer,
            item: outer.popup.is_some_and(|p| self.item(p, element, &tag)),
            outer,
        };
        let listed = self.control(element, &tag, role.as_deref(), operable, near);
        if let Some(listed) = listed {
            place.inside |= listed.encloses();
            if let Listed::Inferred(at) = listed {
                stack.push(Step::End(at));
            }
        }
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

    /// Whether a person could read the run of text `node` where it is drawn: its
    /// size, what clips it, its colour against what is behind it, and what lies
    /// over it.
    fn readable(&mut self, node: &Node, place: &Place) -> bool {
        let Some(range) = &self.range else {
            return true;
        };
        if range.select_node_contents(node).is_err() {
            return true;
        }
        let r = range.get_bounding_client_rect();
        let (x, y) = place.origin;
        let rect = Rect::sized(r.left() + x, r.top() + y, r.width(), r.height());
        let verdict = place.sight.text(rect);
        if !matches!(verdict, None | Some(Hidden::Faint)) || self.hit_tests >= HIT_TESTS {
            return verdict.is_none();
        }
        let Some(parent) = node.parent_element() else {
            return verdict.is_none();
        };
        self.hit_tests += 1;
        match cover::at(self.window, &parent, rect, place.origin) {
            Some(screen) if screen.covered => false,
            Some(cover::Screen {
                backdrop: Some(backdrop),
                ..
            }) => !place.sight.faint_over(backdrop),
            _ => verdict.is_none(),
        }
    }

    /// A frame, `<object>` or `<embed>`: seen or not as any element is; the windows
    /// of those seen are kept (the extension reads only frames their parent sees),
    /// and a same-origin one's document is read in place when this walk reads frames.
    fn frame(&mut self, element: &Element, outer: Place, depth: usize, stack: &mut Vec<Step>) {
        if outer.hidden {
            return;
        }
        let a = appearance(self.window, element, outer.origin);
        let Ok(sight) = outer.sight.enter(&a) else {
            return;
        };
        let view = Reflect::get(element, &"contentWindow".into()).ok();
        let Some(view) = view.filter(JsValue::is_object) else {
            return;
        };
        self.frames.push(view.clone());
        let Some(body) = self.frame_body(element) else {
            return;
        };
        // Its document's viewport is the frame's (inside its border); what its page
        // holds is reached by scrolling it from its top left corner on.
        let origin = (a.left, a.top);
        let scroll = |axis: &str| {
            Reflect::get(&view, &axis.into())
                .ok()
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0)
        };
        let place = Place {
            sight: sight.framed(origin.0 - scroll("scrollX"), origin.1 - scroll("scrollY")),
            origin,
            ..outer
        };
        stack.push(Step::Node(body.into(), place, depth + 1));
    }

    /// What an element shows, in order: its shadow root's nodes for a web component
    /// (an open root, or a closed one where the adapter may open it), the nodes
    /// assigned to a slot, its children otherwise.
    fn content(&mut self, element: &Element) -> Vec<Node> {
        if let Some(root) = element
            .shadow_root()
            .or_else(|| self.adapter.closed_root(element))
        {
            let nodes = list(&root.child_nodes());
            self.roots.push(root.into());
            return nodes;
        }
        if element.tag_name().eq_ignore_ascii_case("slot") {
            let assigned =
                super::call(element, "assignedNodes").and_then(|a| a.dyn_into::<Array>().ok());
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
    fn labelled_visibly(&self, element: &Element, origin: (f64, f64)) -> bool {
        let Some(input) = tagged::<HtmlInputElement>(element, "input") else {
            return false;
        };
        let Some(labels) = input.labels() else {
            return false;
        };
        list(&labels)
            .into_iter()
            .filter_map(realm::into_element)
            .any(|label| hidden(&appearance(self.window, &label, origin)).is_none())
    }
}

/// The agent's own interface, never read as the page.
pub(super) fn ours(element: &Element) -> bool {
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
        Hidden::Transparent | Hidden::ZeroSize | Hidden::OffScreen | Hidden::Clipped
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
