//! `name`: an element's accessible name, as the page tools list it: `aria-label`,
//! `aria-labelledby` and `<label for>` looked up in the element's own tree (its shadow
//! root's or its document's), the label around it, a button's value, its text,
//! `placeholder`, `title`, `alt`, `name`, and for a checkbox with no label of its own
//! the row it ticks.

use wasm_bindgen::JsCast;
use web_sys::{Element, Node};

use crate::dom::state::toggle;
use crate::{realm, role_of, squash};

/// The element's accessible name: `aria-label`, `aria-labelledby`, its `<label>`,
/// a button's value, its text, `placeholder`, `title`, `alt`, `name`.
pub(crate) fn name(element: &Element, tag: &str) -> String {
    let attr = |name: &str| element.get_attribute(name);
    let text_of = |e: &Element| e.text_content().unwrap_or_default();
    let labelled_by = attr("aria-labelledby").map(|ids| {
        ids.split_whitespace()
            .filter_map(|id| by_id(element, id))
            .map(|e| text_of(&e))
            .collect::<Vec<_>>()
            .join(" ")
    });
    let field = matches!(tag, "input" | "select" | "textarea");
    let label = field.then(|| label_of(element)).flatten();
    let button_value = (tag == "input").then(|| attr("value")).flatten();
    let own_text = (!field).then(|| text_of(element));
    // A checkbox with no label of its own is named by the row it ticks.
    let row = toggle(element)
        .then(|| element.parent_element().map(|p| text_of(&p)))
        .flatten();
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
        row,
    ]
    .into_iter()
    .flatten()
    .map(|n| squash(&n))
    .find(|n| !n.is_empty())
    .unwrap_or_default()
}

/// The element with `id` in `element`'s own tree: its shadow root's, or its
/// document's (ids are scoped to each).
fn by_id(element: &Element, id: &str) -> Option<Element> {
    let root = element.get_root_node();
    if root.node_type() == Node::DOCUMENT_FRAGMENT_NODE {
        let root: &web_sys::DocumentFragment = root.unchecked_ref();
        return root.get_element_by_id(id);
    }
    element.owner_document()?.get_element_by_id(id)
}

fn label_of(element: &Element) -> Option<String> {
    let id = element.id();
    if !id.is_empty() {
        // In the element's own tree: a shadow root's labels name its fields.
        let root = element.get_root_node();
        let labels = if root.node_type() == Node::DOCUMENT_FRAGMENT_NODE {
            root.unchecked_ref::<web_sys::DocumentFragment>()
                .query_selector_all("label[for]")
        } else {
            element.owner_document()?.query_selector_all("label[for]")
        }
        .ok()?;
        for i in 0..labels.length() {
            let Some(label) = labels.item(i).and_then(realm::into_element) else {
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
    let copy = realm::into_element(label.clone_node_with_deep(true).ok()?)?;
    let fields = copy.query_selector_all("select, textarea").ok()?;
    for i in 0..fields.length() {
        if let Some(field) = fields.item(i).and_then(realm::into_element) {
            field.remove();
        }
    }
    copy.text_content()
}
