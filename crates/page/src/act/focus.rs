//! `focus`: where the keyboard focus moves: to what a press lands on, on to the
//! next element Tab reaches, or out of a field a person moves on from.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement, Node, ShadowRoot};

use crate::realm;

/// Elements the keyboard's Tab reaches (those with a negative `tabindex` are left out).
const FOCUSABLE: &str = "a[href], button, input:not([type=hidden]), select, textarea, summary, \
                         [tabindex], [contenteditable]:not([contenteditable=false])";

/// A press focuses the nearest focusable element around the pointer, or none.
pub(super) fn focus_from_pointer(target: &Element) {
    let focusable = target.closest(FOCUSABLE).ok().flatten();
    match focusable.as_ref().and_then(realm::html) {
        Some(element) => {
            let _ = element.focus();
        }
        None => {
            let active = target.owner_document().and_then(|d| d.active_element());
            if let Some(active) = active.as_ref().and_then(realm::html) {
                let _ = active.blur();
            }
        }
    }
}

/// Tab: the focus moves to the next element the keyboard reaches, in document order.
pub(super) fn focus_next(from: &Element) {
    let Some(document) = from.owner_document() else {
        return;
    };
    let Ok(all) = document.query_selector_all(FOCUSABLE) else {
        return;
    };
    let reachable: Vec<HtmlElement> = (0..all.length())
        .filter_map(|i| realm::html(realm::element(&all.item(i)?)?).cloned())
        .filter(|e| e == from.unchecked_ref::<HtmlElement>() || reachable(e))
        .collect();
    let at = reachable
        .iter()
        .position(|e| e.unchecked_ref::<Element>() == from);
    let next = at.map_or(0, |i| i + 1);
    if let Some(next) = reachable.get(next).or(reachable.first()) {
        let _ = next.focus();
    }
}

fn reachable(element: &HtmlElement) -> bool {
    let rect = element.get_bounding_client_rect();
    element.tab_index() >= 0
        && !element.matches(":disabled").unwrap_or(false)
        && rect.width() > 0.0
        && rect.height() > 0.0
}

/// A person moving on from `element`: the focus leaves it (or what inside its shadow
/// root holds it) for the document, and its `blur` and `focusout` handlers run. An
/// element that does not hold the focus is left as it is, and so is a field tied to
/// a popup (suggestions, a list: `aria-autocomplete`, `aria-haspopup`, an open
/// `aria-expanded`, a `list`): the next step picks from it, and a blur closes it.
pub(super) fn leave(element: &Element) {
    let popup = "[aria-autocomplete]:not([aria-autocomplete=none]), \
                 [aria-haspopup]:not([aria-haspopup=false]), [aria-expanded=true], [list]";
    if element.matches(popup).unwrap_or(false) {
        return;
    }
    let Some(mut active) = element.owner_document().and_then(|d| d.active_element()) else {
        return;
    };
    while let Some(inner) = active.shadow_root().and_then(|r| r.active_element()) {
        active = inner;
    }
    let mut at = Some(active.clone());
    while let Some(node) = at {
        if &node == element {
            if let Some(active) = realm::html(&active) {
                let _ = active.blur();
            }
            return;
        }
        // Up through the shadow root's host, as the focus crosses it.
        at = node.parent_element().or_else(|| {
            let root = node.get_root_node();
            (root.node_type() == Node::DOCUMENT_FRAGMENT_NODE)
                .then(|| root.unchecked_into::<ShadowRoot>().host())
        });
    }
}
