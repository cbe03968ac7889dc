//! `dom`: the walk of a live document into a [`Snapshot`] — visible text by block, and
//! every interactive element with a number that stays with the element — and acts on a
//! numbered element, firing the events page scripts listen for.
//!
//! The walk goes into open shadow roots (a web component's content, slots filled in
//! their composed order) and, when asked, into same-origin frames; the agent's own
//! widget (`#familiar`, anything marked `data-familiar`) is never read. It keeps its
//! own stack, and stops at [`MAX_DEPTH`] levels and [`MAX_NODES`] elements, so a page
//! built to exhaust it leaves the tools working on what was read. A walk is reused
//! until `watch` sees the page change; fields' values and states are read afresh on
//! every snapshot.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use js_sys::{Array, Reflect, WeakMap};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Element, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement, Node,
    Window,
};

use crate::realm::{self, tagged};
use crate::watch::PageWatch;
use crate::{
    Act, Appearance, Block, Control, Form, Hidden, Region, Snapshot, clip, hidden, mask, role_of,
    sensitive, squash,
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
/// Longest text of a `contenteditable` editor kept as its value.
const EDITABLE_LIMIT: usize = 2_000;

/// The document of this window, read and acted on for the page tools. Numbers are
/// kept in a `WeakMap` on the elements themselves, so an element keeps its number
/// while it lives, and a removed one lets go of it.
pub struct PageDomAdapter {
    numbers: WeakMap,
    /// The elements of the last snapshot, by number: what actions reach.
    elements: RefCell<BTreeMap<u32, Element>>,
    next: Cell<u32>,
    watch: PageWatch,
    /// The last walk, reused while the page has not changed.
    last: RefCell<Option<Snapshot>>,
    /// Whether same-origin frames are read as part of this page (the one-tag build);
    /// the extension reads each frame with a walker of its own.
    into_frames: bool,
}

impl PageDomAdapter {
    /// A walker of this window's document; `into_frames`: read same-origin frames'
    /// documents in place, as part of the page.
    pub fn new(into_frames: bool) -> Self {
        Self {
            numbers: WeakMap::new(),
            elements: RefCell::new(BTreeMap::new()),
            next: Cell::new(1),
            watch: PageWatch::start(),
            last: RefCell::new(None),
            into_frames,
        }
    }

    /// Reads the page as it is now: the last walk with its fields read again while
    /// nothing changed, a new walk otherwise.
    pub fn snapshot(&self) -> Result<Snapshot, String> {
        let window = web_sys::window().ok_or("there is no browser window")?;
        let changed = self.watch.take_changed();
        let mut snapshot = match self.last.borrow_mut().take() {
            Some(last) if !changed && self.all_connected() => self.refresh(last),
            _ => self.walk(&window)?,
        };
        snapshot.selection = selection(&window);
        snapshot.location = location(&window);
        snapshot.version = self.watch.version();
        self.mark_focus(&window, &mut snapshot.controls);
        *self.last.borrow_mut() = Some(snapshot.clone());
        Ok(snapshot)
    }

    /// Does `act` to the element numbered `element` of the last snapshot.
    pub fn perform(&self, element: u32, act: &Act) -> Result<(), String> {
        crate::act::perform(&self.element(element)?, act)
    }

    fn number(&self, element: &Element) -> u32 {
        if let Some(n) = self.numbers.get(element).as_f64() {
            return n as u32;
        }
        let n = self.next.get();
        self.next.set(n + 1);
        self.numbers.set(element, &JsValue::from(n));
        n
    }

    /// Walks the whole document anew.
    fn walk(&self, window: &Window) -> Result<Snapshot, String> {
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

    /// Marks the control that has the keyboard focus (inside shadow roots too).
    fn mark_focus(&self, window: &Window, controls: &mut [Control]) {
        let mut active = window.document().and_then(|d| d.active_element());
        while let Some(inner) = active
            .as_ref()
            .and_then(Element::shadow_root)
            .and_then(|root| root.active_element())
        {
            active = Some(inner);
        }
        let elements = self.elements.borrow();
        for control in controls {
            control.focused = active.is_some() && elements.get(&control.id) == active.as_ref();
        }
    }

    fn all_connected(&self) -> bool {
        self.elements.borrow().values().all(|e| e.is_connected())
    }

    /// The last walk with each field's value, state and enabledness read again: a
    /// page script may set them without any event or mutation.
    fn refresh(&self, mut last: Snapshot) -> Snapshot {
        let elements = self.elements.borrow();
        for control in &mut last.controls {
            if let Some(element) = elements.get(&control.id) {
                let kind = element.get_attribute("type");
                let (value, checked, options) = state(element, kind.as_deref(), control.sensitive);
                control.value = value;
                control.checked = checked;
                control.options = options;
                control.disabled = disabled(element);
            }
        }
        last
    }

    fn element(&self, id: u32) -> Result<Element, String> {
        let element = self.elements.borrow().get(&id).cloned();
        element
            .filter(|e| e.is_connected())
            .ok_or_else(|| format!("element [{id}] is not on the page any more"))
    }
}

/// The addresses of this document's frames a person cannot see: transparent, a pixel
/// wide, off-screen, or inside hidden content (the browser's own `checkVisibility`,
/// which also reads ancestors' opacity). Each frame has a reader of its own in the
/// extension, which cannot tell from inside whether its frame is shown; its parent
/// says so, and what such a frame holds is not read.
pub fn hidden_frames() -> Vec<String> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let Some(frames) = window
        .document()
        .and_then(|d| d.query_selector_all("iframe, frame").ok())
    else {
        return Vec::new();
    };
    list(&frames)
        .into_iter()
        .filter_map(realm::into_element)
        .filter(|frame| !shown(&window, frame))
        .filter_map(|frame| {
            let address = Reflect::get(&frame, &"src".into()).ok()?.as_string()?;
            Some(if address.is_empty() || frame.has_attribute("srcdoc") {
                "about:srcdoc".to_owned()
            } else {
                address
            })
        })
        .collect()
}

/// Whether a person could see `element`: its own box and the browser's judgement of
/// its ancestors (`display`, `visibility`, `opacity`).
fn shown(window: &Window, element: &Element) -> bool {
    if hidden(&appearance(window, element)).is_some() {
        return false;
    }
    let check = Reflect::get(element, &"checkVisibility".into()).ok();
    let Some(check) = check.filter(JsValue::is_function) else {
        return true;
    };
    let options = js_sys::Object::new();
    for option in ["opacityProperty", "visibilityProperty"] {
        let _ = Reflect::set(&options, &option.into(), &true.into());
    }
    check
        .unchecked_into::<js_sys::Function>()
        .call1(element, &options)
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(true)
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

fn disabled(element: &Element) -> bool {
    element.matches(":disabled").unwrap_or(false)
        || element.get_attribute("aria-disabled").as_deref() == Some("true")
}

/// What the person has selected on the page, as the browser renders it.
fn selection(window: &Window) -> String {
    let selected = window.get_selection().ok().flatten();
    let text: String = selected.map(|s| s.to_string().into()).unwrap_or_default();
    squash(&text)
}

/// Origin and path, without the query or fragment (they may carry tokens).
fn location(window: &Window) -> String {
    let location = window.location();
    format!(
        "{}{}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_default()
    )
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

/// Every node of a list, in order.
fn list(nodes: &web_sys::NodeList) -> Vec<Node> {
    (0..nodes.length()).filter_map(|i| nodes.item(i)).collect()
}

/// A checkbox or radio button.
pub(crate) fn toggle(element: &Element) -> bool {
    element
        .matches("input[type=checkbox], input[type=radio]")
        .unwrap_or(false)
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

pub(super) fn appearance(window: &Window, element: &Element) -> Appearance {
    let style = window.get_computed_style(element).ok().flatten();
    let prop = |name: &str| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(name).ok())
            .unwrap_or_default()
    };
    let rect = element.get_bounding_client_rect();
    let font = prop("font-size")
        .trim_end_matches("px")
        .parse::<f64>()
        .unwrap_or(16.0);
    Appearance {
        display_none: prop("display") == "none" || element.has_attribute("hidden"),
        visibility_hidden: matches!(prop("visibility").as_str(), "hidden" | "collapse"),
        aria_hidden: element.get_attribute("aria-hidden").as_deref() == Some("true"),
        transparent: prop("opacity").parse::<f64>().is_ok_and(|o| o <= 0.0),
        left: rect.left() + window.scroll_x().unwrap_or(0.0),
        top: rect.top() + window.scroll_y().unwrap_or(0.0),
        width: rect.width(),
        height: rect.height(),
        clips: prop("overflow-x") != "visible" || prop("overflow-y") != "visible" || font < 1.0,
        boxless: prop("display") == "contents",
    }
}

/// Value, checked state and options of a control. A sensitive field's value is
/// never read out: only how long it is.
fn state(
    element: &Element,
    kind: Option<&str>,
    sensitive: bool,
) -> (Option<String>, Option<bool>, Vec<String>) {
    let text = |value: String| {
        let value = if sensitive { mask(&value) } else { value };
        (Some(value), None, Vec::new())
    };
    if let Some(input) = tagged::<HtmlInputElement>(element, "input") {
        return match kind.map(str::to_ascii_lowercase).as_deref() {
            Some("checkbox" | "radio") => (None, Some(input.checked()), Vec::new()),
            Some("submit" | "button" | "reset" | "image") => (None, None, Vec::new()),
            _ => text(input.value()),
        };
    }
    if let Some(area) = tagged::<HtmlTextAreaElement>(element, "textarea") {
        return text(area.value());
    }
    if element
        .get_attribute("contenteditable")
        .is_some_and(|v| v != "false")
    {
        let content = element.text_content().unwrap_or_default();
        return text(clip(&squash(&content), EDITABLE_LIMIT));
    }
    if let Some(select) = tagged::<HtmlSelectElement>(element, "select") {
        let options = options(select);
        let chosen = usize::try_from(select.selected_index()).ok();
        let value = chosen.and_then(|i| options.get(i).map(|(text, _)| text.clone()));
        return (
            value,
            None,
            options.into_iter().map(|(text, _)| text).collect(),
        );
    }
    let checked = element.get_attribute("aria-checked").map(|v| v == "true");
    (None, checked, Vec::new())
}

pub(super) fn options(select: &HtmlSelectElement) -> Vec<(String, HtmlOptionElement)> {
    let Ok(list) = select.query_selector_all("option") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| {
            let option = realm::into_element(list.item(i)?)?;
            tagged::<HtmlOptionElement>(&option, "option").cloned()
        })
        .map(|o| (squash(&o.text()), o))
        .collect()
}
