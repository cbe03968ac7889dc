//! `event`: the events an action raises, built as the browser builds a person's
//! (bubbling, cancelable, crossing shadow roots) and dispatched at an element, and
//! the browser's refusals put into words.

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Event, HtmlElement};

use crate::realm;

/// A fresh event init: `bubbles`, cancelable, crossing shadow roots.
pub(super) fn init(bubbles: bool) -> Object {
    let init = Object::new();
    set(&init, "bubbles", bubbles);
    set(&init, "cancelable", true);
    set(&init, "composed", true);
    init
}

pub(super) fn set(object: &Object, key: &str, value: impl Into<JsValue>) {
    let _ = Reflect::set(object, &key.into(), &value.into());
}

/// Dispatches a new `class` event (`MouseEvent`, `KeyboardEvent`, …) of `kind` at
/// `target`; whether no listener cancelled it.
pub(super) fn dispatch(
    target: &Element,
    class: &str,
    kind: &str,
    init: &Object,
) -> Result<bool, String> {
    let event = new_event(class, kind, init)?;
    target.dispatch_event(&event).map_err(describe)
}

pub(super) fn new_event(class: &str, kind: &str, init: &Object) -> Result<Event, String> {
    let class: Function = Reflect::get(&js_sys::global(), &class.into())
        .map_err(describe)?
        .dyn_into()
        .map_err(describe)?;
    Reflect::construct(&class, &Array::of2(&kind.into(), init))
        .map_err(describe)?
        .dyn_into()
        .map_err(describe)
}

pub(super) fn fire(element: &Element, kind: &str) -> Result<bool, String> {
    dispatch(element, "Event", kind, &init(true))
}

pub(super) fn describe(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "the browser refused".into())
}

pub(super) fn html(element: &Element) -> Result<&HtmlElement, String> {
    realm::html(element).ok_or_else(|| "the element is not an HTML element".to_owned())
}
