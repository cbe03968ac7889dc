//! `pointer`: the pointer as a person's hand moves it: onto an element (leaving the
//! last one), pressed and released over it, a click and a double click, with the
//! pointer and mouse events around each.

use std::cell::RefCell;

use web_sys::Element;

use super::event::{dispatch, init, set};
use super::focus::focus_from_pointer;
use crate::realm;

thread_local! {
    /// The element the pointer was last moved over: it hears the pointer leave.
    static HOVERED: RefCell<Option<Element>> = const { RefCell::new(None) };
}

/// A pointer or mouse event of `kind` at the middle of `target`.
fn mouse(target: &Element, kind: &str, detail: i32) -> Result<bool, String> {
    let rect = target.get_bounding_client_rect();
    let init = init(!kind.ends_with("enter") && !kind.ends_with("leave"));
    set(&init, "clientX", rect.left() + rect.width() / 2.0);
    set(&init, "clientY", rect.top() + rect.height() / 2.0);
    set(&init, "detail", detail);
    set(&init, "view", js_sys::global());
    set(&init, "buttons", i32::from(kind.ends_with("down")));
    let class = if kind.starts_with("pointer") {
        set(&init, "pointerId", 1);
        set(&init, "pointerType", "mouse");
        set(&init, "isPrimary", true);
        "PointerEvent"
    } else {
        "MouseEvent"
    };
    dispatch(target, class, kind, &init)
}

/// A button pressed and released over `target` (the click itself is the caller's):
/// pointerdown, mousedown, the focus moving to it as a press moves it, pointerup,
/// mouseup.
fn press_pointer(target: &Element, detail: i32) -> Result<(), String> {
    hover(target)?;
    if mouse(target, "pointerdown", detail)? && mouse(target, "mousedown", detail)? {
        focus_from_pointer(target);
    }
    mouse(target, "pointerup", detail)?;
    mouse(target, "mouseup", detail)?;
    Ok(())
}

pub(super) fn click(target: &Element) -> Result<(), String> {
    press_pointer(target, 1)?;
    match realm::html(target) {
        Some(element) => element.click(),
        None => {
            mouse(target, "click", 1)?;
        }
    }
    Ok(())
}

pub(super) fn double_click(target: &Element) -> Result<(), String> {
    for detail in [1, 2] {
        press_pointer(target, detail)?;
        mouse(target, "click", detail)?;
    }
    mouse(target, "dblclick", 2)?;
    Ok(())
}

/// The pointer moved onto `target` from wherever it was: the last hovered element
/// hears it leave, `target` and each ancestor it newly entered hear it enter.
pub(super) fn hover(target: &Element) -> Result<(), String> {
    let previous = HOVERED.with(|h| h.replace(Some(target.clone())));
    if previous.as_ref() == Some(target) {
        mouse(target, "pointermove", 0)?;
        mouse(target, "mousemove", 0)?;
        return Ok(());
    }
    if let Some(left) = previous.filter(|p| p.is_connected()) {
        mouse(&left, "pointerout", 0)?;
        mouse(&left, "mouseout", 0)?;
        for element in chain(&left).iter().filter(|e| !e.contains(Some(target))) {
            mouse(element, "pointerleave", 0)?;
            mouse(element, "mouseleave", 0)?;
        }
    }
    mouse(target, "pointerover", 0)?;
    mouse(target, "mouseover", 0)?;
    // Outermost first, as a pointer coming in from outside the window enters them.
    for element in chain(target).iter().rev() {
        mouse(element, "pointerenter", 0)?;
        mouse(element, "mouseenter", 0)?;
    }
    mouse(target, "pointermove", 0)?;
    mouse(target, "mousemove", 0)?;
    Ok(())
}

/// `element` and its ancestors up to the body, innermost first.
fn chain(element: &Element) -> Vec<Element> {
    let mut out = vec![element.clone()];
    while let Some(parent) = out.last().and_then(|e| e.parent_element()) {
        if parent.tag_name().eq_ignore_ascii_case("html") {
            break;
        }
        out.push(parent);
    }
    out
}
