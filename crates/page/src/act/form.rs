//! `form`: submitting a form as a person does: Enter's implicit submission through its
//! default button, or the form's own `requestSubmit`.

use js_sys::Reflect;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, HtmlFormElement};

use super::event::describe;
use super::pointer::click;
use crate::realm::tagged;

/// Enter in a form's field: its default button clicked (a disabled one submits
/// nothing), or the form submitted as that button would.
pub(super) fn implicit_submission(form: &HtmlFormElement) -> Result<(), String> {
    let button = form
        .query_selector(
            "button:not([type]), button[type=submit], input[type=submit], input[type=image]",
        )
        .ok()
        .flatten();
    match button {
        Some(button) if button.matches(":disabled").unwrap_or(false) => Ok(()),
        Some(button) => click(&button),
        None => submit(form),
    }
}

pub(super) fn submit(form: &HtmlFormElement) -> Result<(), String> {
    form.request_submit().map_err(describe)
}

/// The form `element` is, or belongs to.
pub(super) fn form_of(element: &Element) -> Option<HtmlFormElement> {
    if let Some(form) = tagged::<HtmlFormElement>(element, "form") {
        return Some(form.clone());
    }
    let owner = Reflect::get(element, &"form".into()).ok();
    owner
        .filter(JsValue::is_object)
        .map(JsCast::unchecked_into::<HtmlFormElement>)
        .or_else(|| Some(element.closest("form").ok()??.unchecked_into()))
}
