//! `page_dom`: the page tools' browser side ([`PageDom`]): walks the live document
//! into a [`Snapshot`] — visible text by block, and every interactive element with a
//! number that stays with the element — and performs actions on a numbered element,
//! firing the events page scripts listen for. What counts as hidden, which elements
//! are interactive and what an action may touch are decided in `tool::page`.
//!
//! The agent's own widget (`#familiar`, anything marked `data-familiar`) and the
//! inside of shadow roots are never read. A walk is reused until `page_watch` sees the
//! page change; fields' values and states are read afresh on every snapshot.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use futures::future::LocalBoxFuture;
use js_sys::{Reflect, WeakMap};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Element, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement, Node,
    Window,
};

use super::page_watch::PageWatch;
use crate::tool::page::{
    Act, Appearance, Block, Control, Form, PageDom, Region, Snapshot, clip, hidden, role_of, squash,
};

/// Elements whose content is never page text.
const SKIPPED: [&str; 12] = [
    "script", "style", "noscript", "template", "svg", "iframe", "canvas", "head", "meta", "link",
    "object", "embed",
];
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
/// Longest accessible name kept.
const NAME_LIMIT: usize = 200;

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
}

impl Default for PageDomAdapter {
    fn default() -> Self {
        Self::new()
    }
}

impl PageDomAdapter {
    pub fn new() -> Self {
        Self {
            numbers: WeakMap::new(),
            elements: RefCell::new(BTreeMap::new()),
            next: Cell::new(1),
            watch: PageWatch::start(),
            last: RefCell::new(None),
        }
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
        };
        let place = Place {
            region: Region::Other,
            heading: None,
            hidden: false,
        };
        walk.element(&body, place);
        *self.elements.borrow_mut() = walk.found;
        Ok(Snapshot {
            title: document.title(),
            blocks: walk.blocks,
            controls: walk.controls,
            forms: walk.forms,
            ..Snapshot::default()
        })
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
                let (value, checked, options) = state(element, kind.as_deref());
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

/// One pass over the document.
struct Walk<'a> {
    window: &'a Window,
    adapter: &'a PageDomAdapter,
    blocks: Vec<Block>,
    controls: Vec<Control>,
    forms: Vec<Form>,
    found: BTreeMap<u32, Element>,
    text: String,
}

#[derive(Clone, Copy)]
struct Place {
    region: Region,
    heading: Option<u8>,
    hidden: bool,
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

    fn children(&mut self, parent: &Element, place: Place) {
        let nodes = parent.child_nodes();
        for i in 0..nodes.length() {
            let Some(node) = nodes.item(i) else { continue };
            match node.node_type() {
                Node::TEXT_NODE if !place.hidden => {
                    self.text.push_str(&node.node_value().unwrap_or_default());
                }
                Node::ELEMENT_NODE => {
                    if let Ok(element) = node.dyn_into::<Element>() {
                        self.element(&element, place);
                    }
                }
                _ => {}
            }
        }
    }

    fn element(&mut self, element: &Element, outer: Place) {
        let tag = element.tag_name().to_ascii_lowercase();
        if tag == "br" {
            self.text.push(' ');
            return;
        }
        if SKIPPED.contains(&tag.as_str()) || ours(element) {
            return;
        }
        let hidden = outer.hidden || hidden(&appearance(self.window, element)).is_some();
        let role = element.get_attribute("role");
        let place = Place {
            region: region(&tag, role.as_deref(), outer.region),
            heading: heading(&tag).or(outer.heading),
            hidden,
        };
        if tag == "form" {
            self.form(element, !hidden);
        }
        self.control(element, &tag, role.as_deref(), !hidden);
        // A field's options and default text are its value, not page text.
        if matches!(tag.as_str(), "select" | "textarea") {
            return;
        }
        if BLOCKS.contains(&tag.as_str()) || heading(&tag).is_some() {
            self.flush(outer);
            self.children(element, place);
            self.flush(place);
        } else {
            self.children(element, place);
        }
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
        let (value, checked, options) = state(element, kind.as_deref());
        let href = (tag == "a")
            .then(|| Reflect::get(element, &"href".into()).ok()?.as_string())
            .flatten();
        let form = Reflect::get(element, &"form".into())
            .ok()
            .and_then(|f| f.dyn_into::<Element>().ok())
            .map(|f| self.adapter.number(&f));
        self.found.insert(id, element.clone());
        self.controls.push(Control {
            id,
            role: role.into(),
            name: clip(&name(element, tag), NAME_LIMIT),
            value,
            checked,
            disabled: disabled(element),
            visible,
            options,
            href,
            form,
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
        self.forms.push(Form {
            id: self.adapter.number(element),
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

fn region(tag: &str, role: Option<&str>, outer: Region) -> Region {
    if outer == Region::Boilerplate {
        return outer;
    }
    let boilerplate = matches!(tag, "nav" | "aside")
        || (matches!(tag, "header" | "footer") && outer != Region::Main)
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

fn appearance(window: &Window, element: &Element) -> Appearance {
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
    }
}

/// Value, checked state and options of a control. A password is never read out.
fn state(element: &Element, kind: Option<&str>) -> (Option<String>, Option<bool>, Vec<String>) {
    if let Some(input) = element.dyn_ref::<HtmlInputElement>() {
        return match kind.map(str::to_ascii_lowercase).as_deref() {
            Some("checkbox" | "radio") => (None, Some(input.checked()), Vec::new()),
            Some("submit" | "button" | "reset" | "image") => (None, None, Vec::new()),
            Some("password") => {
                let set = !input.value().is_empty();
                (set.then(|| "(a password is set)".into()), None, Vec::new())
            }
            _ => (Some(input.value()), None, Vec::new()),
        };
    }
    if let Some(area) = element.dyn_ref::<HtmlTextAreaElement>() {
        return (Some(area.value()), None, Vec::new());
    }
    if let Some(select) = element.dyn_ref::<HtmlSelectElement>() {
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
        .filter_map(|i| list.item(i)?.dyn_into::<HtmlOptionElement>().ok())
        .map(|o| (squash(&o.text()), o))
        .collect()
}

/// The element's accessible name: `aria-label`, `aria-labelledby`, its `<label>`,
/// a button's value, its text, `placeholder`, `title`, `alt`, `name`.
fn name(element: &Element, tag: &str) -> String {
    let document = element.owner_document();
    let attr = |name: &str| element.get_attribute(name);
    let text_of = |e: &Element| e.text_content().unwrap_or_default();
    let labelled_by = attr("aria-labelledby").map(|ids| {
        ids.split_whitespace()
            .filter_map(|id| document.as_ref()?.get_element_by_id(id))
            .map(|e| text_of(&e))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let field = matches!(tag, "input" | "select" | "textarea");
    let label = field.then(|| label_of(element)).flatten();
    let button_value = (tag == "input").then(|| attr("value")).flatten();
    let own_text = (!field).then(|| text_of(element));
    [
        attr("aria-label"),
        labelled_by,
        label,
        own_text,
        button_value.filter(|_| role_of(tag, attr("type").as_deref(), None) == Some("button")),
        attr("placeholder"),
        attr("title"),
        attr("alt"),
        attr("name"),
    ]
    .into_iter()
    .flatten()
    .map(|n| squash(&n))
    .find(|n| !n.is_empty())
    .unwrap_or_default()
}

fn label_of(element: &Element) -> Option<String> {
    let id = element.id();
    if !id.is_empty() {
        let labels = element
            .owner_document()?
            .query_selector_all("label[for]")
            .ok()?;
        for i in 0..labels.length() {
            let Some(label) = labels.item(i).and_then(|n| n.dyn_into::<Element>().ok()) else {
                continue;
            };
            if label.get_attribute("for").as_deref() == Some(id.as_str()) {
                return label_text(&label);
            }
        }
    }
    label_text(&element.closest("label").ok().flatten()?)
}

/// A label's own words, without the text of the fields inside it (a list's options).
fn label_text(label: &Element) -> Option<String> {
    let copy: Element = label.clone_node_with_deep(true).ok()?.dyn_into().ok()?;
    let fields = copy.query_selector_all("select, textarea").ok()?;
    for i in 0..fields.length() {
        if let Some(field) = fields.item(i).and_then(|n| n.dyn_into::<Element>().ok()) {
            field.remove();
        }
    }
    copy.text_content()
}

impl PageDom for PageDomAdapter {
    fn snapshot(&self) -> Result<Snapshot, String> {
        let window = web_sys::window().ok_or("there is no browser window")?;
        let changed = self.watch.take_changed();
        let mut snapshot = match self.last.borrow_mut().take() {
            Some(last) if !changed && self.all_connected() => self.refresh(last),
            _ => self.walk(&window)?,
        };
        snapshot.selection = selection(&window);
        snapshot.location = location(&window);
        snapshot.version = self.watch.version();
        *self.last.borrow_mut() = Some(snapshot.clone());
        Ok(snapshot)
    }

    fn perform(&self, element: u32, act: &Act) -> Result<(), String> {
        super::page_act::perform(&self.element(element)?, act)
    }

    fn settle(&self) -> LocalBoxFuture<'static, ()> {
        // Long enough for handlers a click schedules (a timeout, a promise) to run.
        Box::pin(gloo_timers::future::TimeoutFuture::new(50))
    }
}
