//! Panels that open at the top of the page (the World, the Guild, Settings, History):
//! revealing one (focus on its heading, scrolled under the top bar, once it is there:
//! a part whose module is still coming appears later), and going back to where the
//! page was when it closes, by Escape or its button.

use leptos::prelude::*;

/// Opens a panel at its top: once the page has settled (the conversation below it
/// may have followed its own end as the panel pushed it down), the panel's `focus`
/// element takes focus and is scrolled to the top of the window, under the sticky
/// top bar (the page's `scroll-padding-top`).
pub(super) fn reveal(focus: &'static str) {
    if let Some(window) = web_sys::window() {
        let y = window.scroll_y().unwrap_or_default();
        SCROLL_BEFORE.with(|before| {
            if before.get().is_none() {
                before.set(Some(y));
            }
        });
    }
    let document = web_sys::window().and_then(|w| w.document());
    // Where focus was as the panel opened (its button): if the person has moved it by
    // the time the page settles, the panel does not take it back.
    let opener = document
        .as_ref()
        .and_then(web_sys::Document::active_element);
    let Some(document) = document else { return };
    settle(document, focus, opener, FRAMES_TO_APPEAR);
}

/// How many frames a panel's heading is looked for before reveal gives up: a part's
/// module may take a few seconds to come on a slow link.
const FRAMES_TO_APPEAR: u32 = 900;

/// Once `focus` is in the page and two frames have passed (the page has settled
/// around it: the conversation below may follow its own end as the panel pushes it
/// down), focus on it and scroll to it, unless the person has moved focus from
/// `opener` meanwhile; until it is there, look again each frame.
fn settle(
    document: web_sys::Document,
    focus: &'static str,
    opener: Option<web_sys::Element>,
    frames_left: u32,
) {
    request_animation_frame(move || {
        let found = document.query_selector(focus).ok().flatten().is_some();
        if !found {
            if let Some(frames_left) = frames_left.checked_sub(1) {
                settle(document, focus, opener, frames_left);
            }
            return;
        }
        request_animation_frame(move || {
            request_animation_frame(move || {
                let target =
                    document.query_selector(focus).ok().flatten().and_then(|e| {
                        wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok()
                    });
                let Some(target) = target else { return };
                let now = document.active_element();
                let body = document.body().map(web_sys::Element::from);
                let untouched = now.is_none() || now == opener || now == body;
                if untouched {
                    let _ = target.focus();
                }
                target.scroll_into_view_with_bool(true);
            });
        });
    });
}

thread_local! {
    /// Where the page was scrolled before a panel opened at its top: the reader goes
    /// back there (to the conversation's end, say) when the panel closes.
    static SCROLL_BEFORE: std::cell::Cell<Option<f64>> = const { std::cell::Cell::new(None) };
}

/// A panel closed: the page goes back to where it was before one opened.
pub(super) fn restore_scroll() {
    let Some(y) = SCROLL_BEFORE.with(std::cell::Cell::take) else {
        return;
    };
    request_animation_frame(move || {
        if let Some(window) = web_sys::window() {
            window.scroll_to_with_x_and_y(0.0, y);
        }
    });
}

/// Escape inside a panel: `close` it and give focus back to the button that opened it
/// (or to the menu holding that button, on a narrow pane).
pub(super) fn close_on_escape(
    close: impl Fn() + 'static,
    button: NodeRef<leptos::html::Button>,
) -> impl Fn(leptos::ev::KeyboardEvent) + 'static {
    move |ev| {
        if ev.key() == "Escape" && !ev.default_prevented() {
            ev.prevent_default();
            close();
            restore_scroll();
            super::focus_back(button.get_untracked().as_deref());
        }
    }
}
