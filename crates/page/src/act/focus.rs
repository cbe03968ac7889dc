//! `focus`: where the keyboard focus moves: to what a press lands on, or on to the
//! next element Tab reaches.

use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlElement};

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
