//! `act`: does a page action to an element `dom` found, as a person would, with the
//! events a person's hand raises and the defaults a browser does for them that
//! synthetic events do not: a click (pointer and mouse events around it), a double
//! click, hovering, a key (keydown, keypress, keyup with `key`, `code` and `keyCode`;
//! Enter submits a field's form, Space and Enter click a button, Tab moves the focus,
//! characters type), typing through the field's own `value` setter with the
//! `beforeinput`/`input` events frameworks' value trackers listen for (React, Vue,
//! Svelte) or the browser's own `insertText` in a `contenteditable` editor, choosing an
//! option of a `<select>` or of an ARIA listbox, checking, submitting a form,
//! scrolling to it, outlining it. Whether the element may be acted on (and whether it
//! is a field only the person types into) is decided before, in `familiar::tool::page`.

use std::cell::RefCell;

use js_sys::{Array, Function, Object, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{
    Element, Event, HtmlDocument, HtmlElement, HtmlFormElement, HtmlInputElement,
    HtmlSelectElement, HtmlTextAreaElement,
};

use crate::dom::state::{appearance, options};
use crate::realm::{self, tagged};
use crate::{Act, Key, hidden, squash};

thread_local! {
    /// The element the pointer was last moved over: it hears the pointer leave.
    static HOVERED: RefCell<Option<Element>> = const { RefCell::new(None) };
}

/// Elements the keyboard's Tab reaches (those with a negative `tabindex` are left out).
const FOCUSABLE: &str = "a[href], button, input:not([type=hidden]), select, textarea, summary, \
                         [tabindex], [contenteditable]:not([contenteditable=false])";

/// Does `act` to `target`.
pub(super) fn perform(target: &Element, act: &Act) -> Result<(), String> {
    match act {
        Act::Click => click(target)?,
        Act::DoubleClick => double_click(target)?,
        Act::Hover => hover(target)?,
        Act::Fill(text) => fill(target, text)?,
        Act::Select(option) => choose(target, option)?,
        Act::Check(wanted) => {
            let input = tagged::<HtmlInputElement>(target, "input")
                .ok_or_else(|| "the element is not a checkbox".to_owned())?;
            if input.checked() != *wanted {
                click(target)?;
            }
        }
        Act::Press(name) => {
            let key = crate::key(name)
                .ok_or_else(|| format!("\"{name}\" is not a key the page actions know"))?;
            press(target, &key)?;
        }
        Act::Submit => submit(&form_of(target).ok_or("the element is not in a form")?)?,
        Act::ScrollTo => target.scroll_into_view(),
        Act::Highlight => highlight(target)?,
    }
    Ok(())
}

/// A fresh event init: `bubbles`, cancelable, crossing shadow roots.
fn init(bubbles: bool) -> Object {
    let init = Object::new();
    set(&init, "bubbles", bubbles);
    set(&init, "cancelable", true);
    set(&init, "composed", true);
    init
}

fn set(object: &Object, key: &str, value: impl Into<JsValue>) {
    let _ = Reflect::set(object, &key.into(), &value.into());
}

/// Dispatches a new `class` event (`MouseEvent`, `KeyboardEvent`, …) of `kind` at
/// `target`; whether no listener cancelled it.
fn dispatch(target: &Element, class: &str, kind: &str, init: &Object) -> Result<bool, String> {
    let event = new_event(class, kind, init)?;
    target.dispatch_event(&event).map_err(describe)
}

fn new_event(class: &str, kind: &str, init: &Object) -> Result<Event, String> {
    let class: Function = Reflect::get(&js_sys::global(), &class.into())
        .map_err(describe)?
        .dyn_into()
        .map_err(describe)?;
    Reflect::construct(&class, &Array::of2(&kind.into(), init))
        .map_err(describe)?
        .dyn_into()
        .map_err(describe)
}

fn fire(element: &Element, kind: &str) -> Result<bool, String> {
    dispatch(element, "Event", kind, &init(true))
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

/// A press focuses the nearest focusable element around the pointer, or none.
fn focus_from_pointer(target: &Element) {
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

fn click(target: &Element) -> Result<(), String> {
    press_pointer(target, 1)?;
    match realm::html(target) {
        Some(element) => element.click(),
        None => {
            mouse(target, "click", 1)?;
        }
    }
    Ok(())
}

fn double_click(target: &Element) -> Result<(), String> {
    for detail in [1, 2] {
        press_pointer(target, detail)?;
        mouse(target, "click", detail)?;
    }
    mouse(target, "dblclick", 2)?;
    Ok(())
}

/// The pointer moved onto `target` from wherever it was: the last hovered element
/// hears it leave, `target` and each ancestor it newly entered hear it enter.
fn hover(target: &Element) -> Result<(), String> {
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

/// A text field: a single-line input, a textarea, or a `contenteditable` element.
enum Field<'a> {
    Input(&'a HtmlInputElement),
    Area(&'a HtmlTextAreaElement),
    Editable(&'a HtmlElement),
}

fn field(element: &Element) -> Option<Field<'_>> {
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
    fn value(&self) -> String {
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
    fn replace(&self, text: &str, kind: &str, data: &str) -> Result<(), String> {
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

fn describe(value: JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| "the browser refused".into())
}

fn html(element: &Element) -> Result<&HtmlElement, String> {
    realm::html(element).ok_or_else(|| "the element is not an HTML element".to_owned())
}

fn fill(element: &Element, text: &str) -> Result<(), String> {
    let field = field(element).ok_or("the element is not a text field")?;
    let _ = html(element)?.focus();
    field.replace(text, "insertText", text)?;
    if !matches!(field, Field::Editable(_)) {
        fire(element, "change")?;
    }
    Ok(())
}

/// A keyboard event of `kind` for `key`, with the legacy `keyCode`, `which` and
/// `charCode` apps still read.
fn keyboard(target: &Element, kind: &str, key: &Key) -> Result<bool, String> {
    let init = init(true);
    set(&init, "key", key.key.as_str());
    set(&init, "code", key.code.as_str());
    set(&init, "view", js_sys::global());
    let event = new_event("KeyboardEvent", kind, &init)?;
    let char_code = if kind == "keypress" { key.key_code } else { 0 };
    let key_code = if kind == "keypress" && key.types {
        key.key.chars().next().map_or(key.key_code, u32::from)
    } else {
        key.key_code
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
fn press(target: &Element, key: &Key) -> Result<(), String> {
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
        ("Enter", Some(Field::Area(_))) => {
            let value = field.as_ref().map(Field::value).unwrap_or_default();
            field.as_ref().map_or(Ok(()), |f| {
                f.replace(&format!("{value}\n"), "insertLineBreak", "")
            })?;
        }
        ("Enter", None) if clickable(target, "Enter") => click(target)?,
        ("Escape", _) => close_dialog(target)?,
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

/// Enter in a form's field: its default button clicked (a disabled one submits
/// nothing), or the form submitted as that button would.
fn implicit_submission(form: &HtmlFormElement) -> Result<(), String> {
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

fn submit(form: &HtmlFormElement) -> Result<(), String> {
    form.request_submit().map_err(describe)
}

/// The form `element` is, or belongs to.
fn form_of(element: &Element) -> Option<HtmlFormElement> {
    if let Some(form) = tagged::<HtmlFormElement>(element, "form") {
        return Some(form.clone());
    }
    let owner = Reflect::get(element, &"form".into()).ok();
    owner
        .filter(JsValue::is_object)
        .map(JsCast::unchecked_into::<HtmlFormElement>)
        .or_else(|| Some(element.closest("form").ok()??.unchecked_into()))
}

/// Tab: the focus moves to the next element the keyboard reaches, in document order.
fn focus_next(from: &Element) {
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

fn choose(element: &Element, wanted: &str) -> Result<(), String> {
    let Some(select) = tagged::<HtmlSelectElement>(element, "select") else {
        return choose_shown(element, wanted);
    };
    let wanted = wanted.trim().to_lowercase();
    let (_, option) = options(select)
        .into_iter()
        .find(|(text, _)| text.to_lowercase() == wanted)
        .ok_or_else(|| format!("the list has no option \"{wanted}\""))?;
    option.set_selected(true);
    fire(element, "input")?;
    fire(element, "change")?;
    Ok(())
}

/// Chooses an option of an ARIA list (not a `<select>`) by clicking it: among the
/// options shown inside it, in the lists it controls or owns (`aria-controls`,
/// `aria-owns`), else in any list shown on the page. A closed list is opened first,
/// by a click, by the page tool, which then asks again.
fn choose_shown(element: &Element, wanted: &str) -> Result<(), String> {
    let shown = shown_options(element);
    let wanted = squash(wanted).to_lowercase();
    let found = shown.iter().find(|(text, _)| text.to_lowercase() == wanted);
    match found {
        Some((_, option)) => click(option),
        None if shown.is_empty() => Err(format!(
            "no option \"{wanted}\" is shown: the list shows no options"
        )),
        None => {
            let texts: Vec<&str> = shown.iter().take(20).map(|(t, _)| t.as_str()).collect();
            Err(format!(
                "no option \"{wanted}\" is shown; the options shown: {}",
                texts.join(" | ")
            ))
        }
    }
}

/// The visible `role=option` elements that belong to `list`, with their text.
fn shown_options(list: &Element) -> Vec<(String, Element)> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let document = list.owner_document();
    let referenced = ["aria-controls", "aria-owns"]
        .into_iter()
        .filter_map(|a| list.get_attribute(a))
        .flat_map(|ids| {
            ids.split_whitespace()
                .filter_map(|id| document.as_ref()?.get_element_by_id(id))
                .collect::<Vec<_>>()
        });
    let scopes: Vec<Element> = std::iter::once(list.clone()).chain(referenced).collect();
    let visible = |e: &Element| hidden(&appearance(&window, e)).is_none();
    let collect = |scope: &Element| -> Vec<(String, Element)> {
        let mut found = Vec::new();
        if scope.get_attribute("role").as_deref() == Some("option") {
            found.push(scope.clone());
        }
        if let Ok(all) = scope.query_selector_all("[role=option]") {
            found.extend((0..all.length()).filter_map(|i| realm::into_element(all.item(i)?)));
        }
        found
            .into_iter()
            .filter(|o| visible(o))
            .map(|o| (option_text(&o), o))
            .collect()
    };
    let owned: Vec<(String, Element)> = scopes.iter().flat_map(collect).collect();
    if !owned.is_empty() {
        return owned;
    }
    let body = document.and_then(|d| d.body());
    body.map(|b| collect(&b)).unwrap_or_default()
}

fn option_text(option: &Element) -> String {
    let label = option
        .get_attribute("aria-label")
        .filter(|l| !l.trim().is_empty());
    squash(&label.unwrap_or_else(|| option.text_content().unwrap_or_default()))
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
