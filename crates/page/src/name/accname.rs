//! `accname`: an element's accessible name gathered in parts, as accname 1.2 computes
//! it (steps 2A to 2I, with HTML-AAM's native sources: labels, `alt`, a legend, a
//! button's value), read as dom-accessibility-api reads the specification where it is
//! silent (a slot names by its assigned nodes; no CSS generated content), which
//! `e2e/names.test.mjs` holds it to. References (`aria-labelledby`, `<label for>`) stay
//! in the element's own tree, as ids do. Whether a text node's part is seen is the
//! walk's to say, so a part carries its node.

use js_sys::{Array, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Node, Window};

use crate::dom::state::toggle;
use crate::dom::{by_id, call, list};
use crate::{realm, sensitive};

/// How deep a name's parts are looked for, and how many nodes one name reads at most:
/// a page nested deep cannot exhaust the stack, nor a link around a whole page the walk.
const MAX_DEPTH: usize = 32;
const MAX_NODES: usize = 400;
/// Roles that take their name from their content (ARIA's "name from content").
const FROM_CONTENT: [&str; 20] = [
    "button",
    "cell",
    "checkbox",
    "columnheader",
    "gridcell",
    "heading",
    "label",
    "legend",
    "link",
    "menuitem",
    "menuitemcheckbox",
    "menuitemradio",
    "option",
    "radio",
    "row",
    "rowheader",
    "switch",
    "tab",
    "tooltip",
    "treeitem",
];
/// Controls that, inside another's name, give their value rather than their name.
const CONTROLS: [&str; 9] = [
    "button",
    "combobox",
    "listbox",
    "textbox",
    "meter",
    "progressbar",
    "scrollbar",
    "slider",
    "spinbutton",
];

/// A part of a name: its text, whether a person sees it, and the text node it is when
/// it is one (then seen when the walk read that node as the page's text).
pub(crate) struct Part {
    pub text: String,
    pub seen: bool,
    pub node: Option<Node>,
}

/// `element`'s name in parts; when the specification gives it none, what the model may
/// still know it by: its `placeholder`, its `name`, or the row a checkbox ticks.
pub(crate) fn name(window: &Window, element: &Element) -> Vec<Part> {
    let mut names = Names::new(window);
    names.text(element, Cx::default(), 0);
    if !names.said_since(0) {
        names.parts.clear();
        if let Some(hint) = attribute(element, "placeholder").or_else(|| attribute(element, "name"))
        {
            names.push(hint, false);
        } else if let Some(row) = element.parent_element().filter(|_| toggle(element)) {
            names.content(&row, Cx::default(), 1);
        }
    }
    names.parts
}

/// The name of an element listed by its cues alone, with no role to say where its name
/// comes from (a focusable card, a suggestion as a plain list item): as [`name`] gives
/// it (`aria-label`, `title`), else its content, as a button's.
pub(crate) fn content_name(window: &Window, element: &Element) -> Vec<Part> {
    let mut names = Names::new(window);
    names.text(element, Cx::default(), 0);
    if !names.said_since(0) {
        names.parts.clear();
        names.content(element, Cx::default(), 0);
    }
    names.parts
}

/// A form's name in parts: its `aria-label` or `name`, else its first legend or
/// heading, else its `id`.
pub(crate) fn form_name(window: &Window, form: &Element) -> Vec<Part> {
    let mut names = Names::new(window);
    let caption = || {
        form.query_selector("legend, h1, h2, h3, h4, h5, h6")
            .ok()
            .flatten()
    };
    if let Some(label) = attribute(form, "aria-label").or_else(|| attribute(form, "name")) {
        names.push(label, false);
    } else if let Some(caption) = caption() {
        names.content(&caption, Cx::default(), 1);
    }
    if !names.said_since(0) {
        names.push(form.id(), false);
    }
    names.parts
}

/// Where a part of the name is looked for: inside a label, inside what
/// `aria-labelledby` names, inside another element's name.
#[derive(Clone, Copy, Default)]
struct Cx {
    label: bool,
    referenced: bool,
    recursion: bool,
}

struct Names<'a> {
    window: &'a Window,
    parts: Vec<Part>,
    /// Elements whose labels are being read: met again inside one, they say nothing.
    consulted: Vec<Element>,
    visited: usize,
}

impl Names<'_> {
    fn new(window: &Window) -> Names<'_> {
        Names {
            window,
            parts: Vec::new(),
            consulted: Vec::new(),
            visited: 0,
        }
    }

    fn push(&mut self, text: String, seen: bool) {
        self.parts.push(Part {
            text,
            seen,
            node: None,
        });
    }

    /// Whether the parts from `start` on say anything.
    fn said_since(&self, start: usize) -> bool {
        let parts = self.parts.get(start..).unwrap_or_default();
        parts.iter().any(|p| !p.text.trim().is_empty())
    }

    /// Steps 2A to 2I for `node`.
    fn text(&mut self, node: &Node, cx: Cx, depth: usize) {
        if depth > MAX_DEPTH || self.visited >= MAX_NODES {
            return;
        }
        self.visited += 1;
        let Some(e) = realm::element(node) else {
            if node.node_type() == Node::TEXT_NODE {
                let text = node.node_value().unwrap_or_default();
                self.parts.push(Part {
                    text,
                    seen: false,
                    node: Some(node.clone()),
                });
            }
            return;
        };
        // 2A: a hidden part says nothing, unless aria-labelledby names it. The element
        // named is named even when hidden (the walk says whether a person sees it).
        if self.consulted.contains(e) || (depth > 0 && !cx.referenced && self.hidden(e)) {
            return;
        }
        let tag = e.local_name();
        // 2B
        let targets: Vec<Element> = match e.get_attribute("aria-labelledby") {
            Some(ids) if !cx.referenced => ids
                .split_whitespace()
                .filter_map(|id| by_id(e, id))
                .collect(),
            _ => Vec::new(),
        };
        if !targets.is_empty() {
            let cx = Cx {
                referenced: true,
                recursion: false,
                ..cx
            };
            for (i, target) in targets.iter().enumerate() {
                if i > 0 {
                    self.push(" ".into(), true);
                }
                self.text(target, cx, depth + 1);
            }
            return;
        }
        let role = role(e, &tag);
        let embedded = cx.recursion && CONTROLS.contains(&role.as_str());
        if !embedded {
            // 2C, then 2D: the host language's own sources.
            if let Some(label) = attribute(e, "aria-label") {
                self.push(label, false);
                return;
            }
            if !matches!(role.as_str(), "presentation" | "none")
                && self.native(e, &tag, &role, depth)
            {
                return;
            }
        }
        if role == "menu" {
            return;
        }
        // 2E: a control inside a label or another's name gives its value.
        if (embedded || cx.label || cx.referenced) && self.value(e, &tag, &role, cx, depth) {
            return;
        }
        // 2F: the content, for the roles named by it and whatever is referenced.
        let start = self.parts.len();
        if FROM_CONTENT.contains(&role.as_str()) || cx.referenced || tag == "caption" {
            self.content(e, cx, depth);
            if self.said_since(start) {
                return;
            }
            self.parts.truncate(start);
        }
        if cx.recursion {
            self.content(e, cx, depth);
            return;
        }
        // 2I
        if let Some(title) = attribute(e, "title") {
            self.push(title, false);
        }
    }

    /// 2D, HTML-AAM: an element's name by the host language; whether it gave one.
    fn native(&mut self, e: &Element, tag: &str, role: &str, depth: usize) -> bool {
        let kind = input_type(e, tag);
        // What the browser draws on a button input; what an image stands for.
        let drawn = matches!(kind.as_str(), "button" | "submit" | "reset");
        let own = match (tag, kind.as_str()) {
            ("svg", _) => Some(
                e.query_selector(":scope > title")
                    .ok()
                    .flatten()
                    .and_then(|t| t.text_content())
                    .unwrap_or_default(),
            ),
            ("img" | "area", _) => attribute(e, "alt"),
            (_, "submit") => attribute(e, "value").or(Some("Submit".into())),
            (_, "reset") => attribute(e, "value").or(Some("Reset".into())),
            (_, "button") => attribute(e, "value"),
            (_, "image") => attribute(e, "alt")
                .or_else(|| attribute(e, "title"))
                .or(Some("Submit Query".into())),
            _ => None,
        };
        if let Some(own) = own {
            self.push(own, drawn);
            return true;
        }
        let labels = Reflect::get(e, &"labels".into())
            .ok()
            .filter(JsValue::is_object);
        let labels = labels.map(|l| list(l.unchecked_ref())).unwrap_or_default();
        if !labels.is_empty() {
            self.consulted.push(e.clone());
            let cx = Cx {
                label: true,
                referenced: false,
                recursion: true,
            };
            for label in &labels {
                let start = self.parts.len();
                self.push(" ".into(), true);
                self.text(label, cx, depth + 1);
                if !self.said_since(start) {
                    self.parts.truncate(start);
                }
            }
            return true;
        }
        let start = self.parts.len();
        if role == "button" {
            self.content(e, Cx::default(), depth);
        }
        self.said_since(start) || {
            self.parts.truncate(start);
            false
        }
    }

    /// 2E: a control's value as a part of another's name; whether `e` is such a control.
    fn value(&mut self, e: &Element, tag: &str, role: &str, cx: Cx, depth: usize) -> bool {
        match role {
            "combobox" | "listbox" => {
                let chosen = if tag == "select" {
                    "option:checked"
                } else {
                    "[aria-selected=true]"
                };
                let chosen = e
                    .query_selector_all(chosen)
                    .map(|l| list(&l))
                    .unwrap_or_default();
                if chosen.is_empty() && tag == "input" {
                    self.field(e);
                }
                let cx = Cx {
                    label: cx.label,
                    referenced: false,
                    recursion: true,
                };
                for (i, option) in chosen.iter().enumerate() {
                    if i > 0 {
                        self.push(" ".into(), true);
                    }
                    self.text(option, cx, depth + 1);
                }
            }
            "meter" | "progressbar" | "scrollbar" | "slider" | "spinbutton" => {
                let value = ["aria-valuetext", "aria-valuenow", "value"]
                    .iter()
                    .find_map(|a| e.get_attribute(a));
                self.push(value.unwrap_or_default(), true);
            }
            "textbox" if matches!(tag, "input" | "textarea") => self.field(e),
            "textbox" => self.push(e.text_content().unwrap_or_default(), true),
            _ => return false,
        }
        true
    }

    /// A field's value, as it is drawn in the field; never a sensitive field's.
    fn field(&mut self, e: &Element) {
        let attr = |a: &str| e.get_attribute(a);
        let words = e.id() + " " + &attr("name").unwrap_or_default();
        if sensitive(
            attr("type").as_deref(),
            attr("autocomplete").as_deref(),
            &words,
        )
        .is_none()
        {
            let value = Reflect::get(e, &"value".into())
                .ok()
                .and_then(|v| v.as_string());
            self.push(value.unwrap_or_default(), true);
        }
    }

    /// 2F: the names of what `e` shows, in order (a slot shows the nodes assigned to
    /// it), apart where a child is not inline.
    fn content(&mut self, e: &Element, cx: Cx, depth: usize) {
        let assigned = (e.local_name() == "slot")
            .then(|| call(e, "assignedNodes")?.dyn_into::<Array>().ok())
            .flatten()
            .filter(|a| a.length() > 0);
        let children = match assigned {
            Some(nodes) => nodes.iter().map(JsCast::unchecked_into::<Node>).collect(),
            None => list(&e.child_nodes()),
        };
        let cx = Cx {
            label: cx.label,
            referenced: false,
            recursion: true,
        };
        for child in children {
            let apart =
                realm::element(&child).is_some_and(|c| self.style(c, "display") != "inline");
            if apart {
                self.push(" ".into(), true);
            }
            self.text(&child, cx, depth + 1);
            if apart {
                self.push(" ".into(), true);
            }
        }
    }

    /// Hidden as the name computation counts it: `hidden`, `aria-hidden`, not displayed
    /// or not visible.
    fn hidden(&self, e: &Element) -> bool {
        e.has_attribute("hidden")
            || e.get_attribute("aria-hidden").as_deref() == Some("true")
            || self.style(e, "display") == "none"
            || self.style(e, "visibility") == "hidden"
    }

    fn style(&self, e: &Element, property: &str) -> String {
        let style = self.window.get_computed_style(e).ok().flatten();
        style
            .and_then(|s| s.get_property_value(property).ok())
            .unwrap_or_default()
    }
}

/// An attribute's value, when it says something.
fn attribute(e: &Element, name: &str) -> Option<String> {
    e.get_attribute(name).filter(|v| !v.trim().is_empty())
}

/// An `<input>`'s type, lower case (`""` for any other element).
fn input_type(e: &Element, tag: &str) -> String {
    let kind = (tag == "input").then(|| e.get_attribute("type")).flatten();
    kind.unwrap_or_default().to_ascii_lowercase()
}

/// The role the name computation knows an element by: its first `role` token (a
/// presentational one yields to a name given it), else its tag's.
fn role(e: &Element, tag: &str) -> String {
    let explicit = e.get_attribute("role");
    let explicit = explicit
        .as_deref()
        .and_then(|r| r.split_whitespace().next());
    let named = e.has_attribute("aria-label") || e.has_attribute("aria-labelledby");
    match explicit {
        Some(r) if !(matches!(r, "presentation" | "none") && named) => r.into(),
        _ => implicit_role(e, tag).into(),
    }
}

fn implicit_role(e: &Element, tag: &str) -> &'static str {
    let key = match tag {
        "a" | "area" if !e.has_attribute("href") => "",
        "img" if e.get_attribute("alt").as_deref() == Some("") => "presentation",
        "input" => return lookup(&INPUT_ROLES, &input_type(e, tag)),
        _ => tag,
    };
    lookup(&TAG_ROLES, key)
}

/// The role a table gives `key` (`""` when none does): as data, not a `match` of
/// string arms, which costs the page a compare per arm.
fn lookup(table: &[(&str, &'static str)], key: &str) -> &'static str {
    table
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, role)| role)
}

/// Tags' implicit roles, as far as names need them.
const TAG_ROLES: [(&str, &str); 18] = [
    ("button", "button"),
    ("summary", "button"),
    ("a", "link"),
    ("area", "link"),
    ("h1", "heading"),
    ("h2", "heading"),
    ("h3", "heading"),
    ("h4", "heading"),
    ("h5", "heading"),
    ("h6", "heading"),
    ("td", "cell"),
    ("th", "columnheader"),
    ("tr", "row"),
    ("option", "option"),
    ("legend", "legend"),
    ("textarea", "textbox"),
    ("select", "combobox"),
    ("presentation", "presentation"),
];

/// `<input>` types' roles.
const INPUT_ROLES: [(&str, &str); 14] = [
    ("button", "button"),
    ("image", "button"),
    ("reset", "button"),
    ("submit", "button"),
    ("checkbox", "checkbox"),
    ("radio", "radio"),
    ("range", "slider"),
    ("number", "spinbutton"),
    ("search", "searchbox"),
    ("", "textbox"),
    ("email", "textbox"),
    ("tel", "textbox"),
    ("text", "textbox"),
    ("url", "textbox"),
];
