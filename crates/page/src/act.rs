//! `act`: does a page action to an element `dom` found, as a person would —
//! a click, typing through the field's own `value` setter, choosing an option,
//! checking, scrolling to it, outlining it — and fires the `input` and `change` events
//! page scripts listen for. Whether the element may be acted on is decided before, in
//! `familiar::tool::page`.

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Element, Event, EventInit, HtmlElement, HtmlInputElement, HtmlSelectElement,
    HtmlTextAreaElement,
};

use crate::Act;
use crate::dom::options;

/// Does `act` to `target`.
pub(super) fn perform(target: &Element, act: &Act) -> Result<(), String> {
    match act {
        Act::Click => html(target)?.click(),
        Act::Fill(text) => fill(target, text)?,
        Act::Select(option) => choose(target, option)?,
        Act::Check(wanted) => {
            let input = target
                .dyn_ref::<HtmlInputElement>()
                .ok_or_else(|| "the element is not a checkbox".to_owned())?;
            if input.checked() != *wanted {
                input.click();
            }
        }
        Act::ScrollTo => target.scroll_into_view(),
        Act::Highlight => highlight(target)?,
    }
    Ok(())
}

fn fire(element: &Element, kind: &str) -> Result<(), String> {
    let init = EventInit::new();
    init.set_bubbles(true);
    let event = Event::new_with_event_init_dict(kind, &init).map_err(describe)?;
    element.dispatch_event(&event).map_err(describe)?;
    Ok(())
}

/// Sets a field's value through the prototype's own setter, as typing does, so a
/// framework that wraps the element's `value` (React) sees the change.
fn set_value(element: &Element, class: &str, value: &str) -> Result<(), String> {
    let class = Reflect::get(&js_sys::global(), &class.into()).map_err(describe)?;
    let prototype = Reflect::get(&class, &"prototype".into()).map_err(describe)?;
    let prototype: Object = prototype.dyn_into().map_err(describe)?;
    let descriptor = Object::get_own_property_descriptor(&prototype, &"value".into());
    let setter: Function = Reflect::get(&descriptor, &"set".into())
        .map_err(describe)?
        .dyn_into()
        .map_err(describe)?;
    setter.call1(element, &value.into()).map_err(describe)?;
    Ok(())
}

fn describe(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "the browser refused".into())
}

fn html(element: &Element) -> Result<&HtmlElement, String> {
    element
        .dyn_ref::<HtmlElement>()
        .ok_or_else(|| "the element is not an HTML element".to_owned())
}

fn fill(element: &Element, text: &str) -> Result<(), String> {
    let _ = html(element)?.focus();
    if element.is_instance_of::<HtmlInputElement>() {
        set_value(element, "HTMLInputElement", text)?;
    } else if element.is_instance_of::<HtmlTextAreaElement>() {
        set_value(element, "HTMLTextAreaElement", text)?;
    } else {
        element.set_text_content(Some(text));
    }
    fire(element, "input")?;
    fire(element, "change")
}

fn choose(element: &Element, wanted: &str) -> Result<(), String> {
    let select = element
        .dyn_ref::<HtmlSelectElement>()
        .ok_or_else(|| "the element is not a list".to_owned())?;
    let wanted = wanted.trim().to_lowercase();
    let (_, option) = options(select)
        .into_iter()
        .find(|(text, _)| text.to_lowercase() == wanted)
        .ok_or_else(|| format!("the list has no option \"{wanted}\""))?;
    option.set_selected(true);
    fire(element, "input")?;
    fire(element, "change")
}

fn highlight(element: &Element) -> Result<(), String> {
    let style = html(element)?.style();
    let _ = style.set_property("outline", "3px solid #f5a623");
    let _ = style.set_property("outline-offset", "2px");
    element.scroll_into_view();
    gloo_timers::callback::Timeout::new(3_000, move || {
        let _ = style.remove_property("outline");
        let _ = style.remove_property("outline-offset");
    })
    .forget();
    Ok(())
}
