//! `act`: does a page action to an element `dom` found, as a person would, with the
//! events a person's hand raises and the defaults a browser does for them that
//! synthetic events do not: a click (pointer and mouse events around it), a double
//! click, hovering, a key (keydown, keypress, keyup with `key`, `code` and `keyCode`;
//! Enter submits a field's form, Space and Enter click a button, Tab moves the focus,
//! characters type), typing through the field's own `value` setter with the
//! `beforeinput`/`input` events frameworks' value trackers listen for (React, Vue,
//! Svelte) or the browser's own `insertText` in a `contenteditable` editor, choosing an
//! option of a `<select>` or of an ARIA listbox, checking, submitting a form,
//! scrolling to it, outlining it, the focus leaving it as a person moves on. A
//! read-only field is not typed into: its widget's own controls are the way in.
//! Whether the element may be acted on (and whether it is a field only the person
//! types into) is decided before, in `familiar::tool::page`.
//!
//! The parts: [`event`] builds and dispatches the events, [`pointer`] moves and presses
//! the pointer, [`focus`] moves the focus as a press or Tab does, [`field`] types,
//! [`keyboard`] presses keys, [`form`] submits, [`choose`] picks an option.

mod choose;
mod event;
mod field;
mod focus;
mod form;
mod keyboard;
mod pointer;

use web_sys::{Element, HtmlInputElement};

use crate::Act;
use crate::realm::tagged;
use choose::choose;
use event::html;
use field::fill;
use focus::leave;
use form::{form_of, submit};
use keyboard::press;
use pointer::{click, double_click, hover};

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
        Act::Leave => leave(target),
    }
    Ok(())
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
