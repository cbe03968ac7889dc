//! `keyboard`: a key pressed on an element (keydown, keypress, keyup with `key`, `code`
//! and `keyCode`) and what the browser does for it: Enter submits a field's form,
//! Space and Enter click a button, Tab moves the focus, Escape closes a dialog,
//! characters type (not into a read-only field).

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::Element;

use super::event::{describe, fire, html, init, new_event, set};
use super::field::{Field, field, read_only};
use super::focus::focus_next;
use super::form::implicit_submission;
use super::pointer::click;
use crate::Key;

/// A keyboard event of `kind` for `key`, with the legacy `keyCode`, `which` and
/// `charCode` apps still read.
fn keyboard(target: &Element, kind: &str, key: &Key) -> Result<bool, String> {
    let init = init(true);
    set(&init, "key", key.key.as_str());
    set(&init, "code", key.code.as_str());
    set(&init, "view", js_sys::global());
    let event = new_event("KeyboardEvent", kind, &init)?;
    let (key_code, char_code) = if kind == "keypress" {
        (key.char_code(), key.char_code())
    } else {
        (key.key_code, 0)
    };
    for (name, value) in [
        ("keyCode", key_code),
        ("which", key_code),
        ("charCode", char_code),
    ] {
        let descriptor = Object::new();
        set(&descriptor, "value", value);
        let _ = Reflect::define_property(&event, &name.into(), &descriptor);
    }
    target.dispatch_event(&event).map_err(describe)
}

/// A key pressed on `target`, now focused: keydown, keypress for a key that types,
/// the browser's default unless a listener prevented it, keyup where the focus is.
pub(super) fn press(target: &Element, key: &Key) -> Result<(), String> {
    let _ = html(target)?.focus();
    let mut go = keyboard(target, "keydown", key)?;
    if go && key.types {
        go = keyboard(target, "keypress", key)?;
    }
    if go {
        key_default(target, key)?;
    }
    let focused = target.owner_document().and_then(|d| d.active_element());
    keyboard(focused.as_ref().unwrap_or(target), "keyup", key)?;
    // A button takes Space on its release.
    if go && key.key == " " && field(target).is_none() && clickable(target, " ") {
        click(target)?;
    }
    Ok(())
}

/// What a browser does for `key` on `target` after an uncancelled keydown.
fn key_default(target: &Element, key: &Key) -> Result<(), String> {
    let field = field(target);
    match (key.key.as_str(), &field) {
        ("Tab", _) => focus_next(target),
        ("Enter", Some(Field::Input(input))) => {
            if let Some(form) = input.form() {
                implicit_submission(&form)?;
            }
        }
        ("Enter", None) if clickable(target, "Enter") => click(target)?,
        ("Escape", _) => close_dialog(target)?,
        // A read-only field takes no typing (its widget hears the key all the same).
        (_, Some(_)) if read_only(target) => {}
        ("Enter", Some(Field::Area(_))) => {
            let value = field.as_ref().map(Field::value).unwrap_or_default();
            field.as_ref().map_or(Ok(()), |f| {
                f.replace(&format!("{value}\n"), "insertLineBreak", "")
            })?;
        }
        ("Backspace", Some(field)) => {
            let mut value = field.value();
            value.pop();
            field.replace(&value, "deleteContentBackward", "")?;
        }
        (typed, Some(field)) if key.types && typed != "Enter" => {
            let value = format!("{}{typed}", field.value());
            field.replace(&value, "insertText", typed)?;
        }
        _ => {}
    }
    Ok(())
}

/// Escape in an open `<dialog>`: the browser's close request (its `cancel` event,
/// which a listener may refuse, then the dialog closed), which a synthetic key does
/// not make.
fn close_dialog(target: &Element) -> Result<(), String> {
    let Some(dialog) = target.closest("dialog[open]").ok().flatten() else {
        return Ok(());
    };
    let request = Reflect::get(&dialog, &"requestClose".into()).ok();
    if let Some(request) = request.filter(JsValue::is_function) {
        request
            .unchecked_into::<Function>()
            .call0(&dialog)
            .map_err(describe)?;
        return Ok(());
    }
    if fire(&dialog, "cancel")? {
        let close: Function = Reflect::get(&dialog, &"close".into())
            .map_err(describe)?
            .dyn_into()
            .map_err(describe)?;
        close.call0(&dialog).map_err(describe)?;
    }
    Ok(())
}

/// A native button (or, for Enter, a link; for Space, a checkbox or radio): what
/// the key clicks.
fn clickable(element: &Element, key: &str) -> bool {
    let buttons = "button, summary, input[type=submit], input[type=button], \
                   input[type=reset], input[type=image]";
    let also = if key == " " {
        "input[type=checkbox], input[type=radio]"
    } else {
        "a[href]"
    };
    element
        .matches(&format!("{buttons}, {also}"))
        .unwrap_or(false)
}
