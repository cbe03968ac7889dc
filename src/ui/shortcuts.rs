//! The demo page's keyboard shortcuts, wherever focus is: a new conversation, back
//! to the message box, and the latest answer read whole (a long answer is announced
//! cut, `chat::announce`). ↑ in an empty message box, the composer's own, brings the
//! last message back to edit.
//!
//! Alt+Shift with a letter, read by its key position (`code`), so a layout that types
//! another character with Alt still works; none is a browser's own.

use leptos::ev;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use super::{Chat, ComposerFocus};

/// A new conversation.
pub const NEW: &str = "Alt+Shift+N";
/// Said after an announcement that was cut.
pub const READ_REST: &str = "The whole answer is the last message; Alt+Shift+A goes to it.";

/// Listens for the shortcuts while the calling component lives.
pub fn install(chat: Chat, composer: ComposerFocus) {
    let handle = window_event_listener(ev::keydown, move |event| {
        if event.default_prevented() || event.is_composing() {
            return;
        }
        let alt_shift =
            event.alt_key() && event.shift_key() && !event.ctrl_key() && !event.meta_key();
        match event.code().as_str() {
            "KeyN" if alt_shift => {
                event.prevent_default();
                chat.new_conversation();
                composer.give();
            }
            "KeyA" if alt_shift => {
                event.prevent_default();
                focus_latest_answer();
            }
            "Escape" if event.shift_key() => {
                event.prevent_default();
                composer.give();
            }
            _ => {}
        }
    });
    on_cleanup(move || handle.remove());
}

/// Moves focus to the newest answer (each is focusable from script, not by Tab).
fn focus_latest_answer() {
    let answer = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| {
            d.query_selector(".turn:last-child .message-assistant")
                .ok()
                .flatten()
        })
        .and_then(|node| node.dyn_into::<web_sys::HtmlElement>().ok());
    if let Some(answer) = answer {
        let _ = answer.focus();
    }
}
