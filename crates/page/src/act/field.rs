//! `field`: typing into a text field (an input, a textarea, a `contenteditable`
//! editor) as a person does: through the field's own `value` setter with the
//! `beforeinput`/`input` events frameworks' value trackers listen for, or the
//! browser's own `insertText` in an editor.

use js_sys::{Function, Object, Reflect};
use wasm_bindgen::JsCast;
use web_sys::{Element, HtmlDocument, HtmlElement, HtmlInputElement, HtmlTextAreaElement};

use super::event::{describe, dispatch, fire, html, init, set};
use crate::realm::{self, tagged};
use crate::{READ_ONLY, squash};

/// A text field: a single-line input, a textarea, or a `contenteditable` element.
pub(super) enum Field<'a> {
    Input(&'a HtmlInputElement),
    Area(&'a HtmlTextAreaElement),
    Editable(&'a HtmlElement),
}

pub(super) fn field(element: &Element) -> Option<Field<'_>> {
    if let Some(input) = tagged::<HtmlInputElement>(element, "input") {
        let kind = input.type_().to_ascii_lowercase();
        let typed = !matches!(
            kind.as_str(),
            "checkbox"
                | "radio"
                | "submit"
                | "button"
                | "reset"
                | "image"
                | "file"
                | "range"
                | "color"
                | "hidden"
        );
        return typed.then_some(Field::Input(input));
    }
    if let Some(area) = tagged::<HtmlTextAreaElement>(element, "textarea") {
        return Some(Field::Area(area));
    }
    realm::html(element)
        .filter(|e| e.is_content_editable())
        .map(Field::Editable)
}

impl Field<'_> {
    pub(super) fn value(&self) -> String {
        match self {
            Field::Input(input) => input.value(),
            Field::Area(area) => area.value(),
            Field::Editable(element) => element.text_content().unwrap_or_default(),
        }
    }

    /// Replaces the field's text with `text` as typing or pasting it would:
    /// `beforeinput` (a listener may refuse it), the value through the prototype's
    /// own setter (a framework's tracker on the element's `value` sees the change as
    /// the browser's), then `input` as an `InputEvent` of `kind`.
    pub(super) fn replace(&self, text: &str, kind: &str, data: &str) -> Result<(), String> {
        let element: &Element = match self {
            Field::Input(input) => input,
            Field::Area(area) => area,
            Field::Editable(editable) => return type_into(editable, text, data),
        };
        if !input_event(element, "beforeinput", kind, data)? {
            return Ok(());
        }
        let class = match self {
            Field::Input(_) => "HTMLInputElement",
            _ => "HTMLTextAreaElement",
        };
        set_value(element, class, text)?;
        input_event(element, "input", kind, data)?;
        Ok(())
    }
}

/// An `InputEvent` of `kind` with `inputType` and `data`; whether none cancelled it.
fn input_event(
    element: &Element,
    kind: &str,
    input_type: &str,
    data: &str,
) -> Result<bool, String> {
    let init = init(true);
    set(&init, "cancelable", kind == "beforeinput");
    set(&init, "inputType", input_type);
    set(&init, "data", data);
    dispatch(element, "InputEvent", kind, &init)
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

/// Types into a `contenteditable` editor: its content selected (`text` replaces it)
/// or the caret at its end (`text` is what it will hold with `added` typed), then
/// the browser's own `insertText`, which editors hear as typing; where the browser
/// refuses, the text set and an `input` event fired.
fn type_into(editable: &HtmlElement, text: &str, added: &str) -> Result<(), String> {
    let document = editable
        .owner_document()
        .ok_or("the element has no document")?;
    let appending = !added.is_empty() && added != text && text.ends_with(added);
    let selection = document.get_selection().ok().flatten();
    if let Some(selection) = &selection {
        let _ = selection.select_all_children(editable);
        if appending {
            let _ = selection.collapse_to_end();
        }
    }
    let insert = if appending { added } else { text };
    // A frame's document is its own window's `HTMLDocument`: told by its method.
    let html: Option<&HtmlDocument> = Reflect::has(&document, &"execCommand".into())
        .unwrap_or(false)
        .then(|| document.unchecked_ref());
    let inserted = match (html, insert.is_empty()) {
        (Some(html), false) => html
            .exec_command_with_show_ui_and_value("insertText", false, insert)
            .unwrap_or(false),
        (Some(html), true) => html.exec_command("delete").unwrap_or(false),
        (None, _) => false,
    };
    // The browser may write spaces as no-break spaces: the same text to a reader.
    let plain = |t: &str| squash(&t.replace('\u{a0}', " "));
    if !inserted || plain(&editable.text_content().unwrap_or_default()) != plain(text) {
        editable.set_text_content(Some(text));
        input_event(editable, "input", "insertText", insert)?;
    }
    Ok(())
}

/// Whether a person could not type into `element`: `readonly`, or `aria-readonly`.
pub(super) fn read_only(element: &Element) -> bool {
    let property = Reflect::get(element, &"readOnly".into()).ok();
    property.and_then(|p| p.as_bool()).unwrap_or(false)
        || element.get_attribute("aria-readonly").as_deref() == Some("true")
}

pub(super) fn fill(element: &Element, text: &str) -> Result<(), String> {
    let field = field(element).ok_or("the element is not a text field")?;
    if read_only(element) {
        return Err(format!(
            "{READ_ONLY}: a person cannot type into it, and its widget would not take \
             what is typed; work it through the widget's own controls: click it to open \
             its calendar or list and pick there, or press arrow keys on it"
        ));
    }
    let _ = html(element)?.focus();
    field.replace(text, "insertText", text)?;
    if !matches!(field, Field::Editable(_)) {
        fire(element, "change")?;
    }
    Ok(())
}
