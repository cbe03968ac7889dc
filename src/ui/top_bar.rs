//! The top bar's secondary buttons (History, Guild, World, Settings, the Inspector)
//! and, where the pane is narrow, the menu that holds them.
//!
//! Wide, the buttons sit in the bar and the menu's own button is hidden; at 900 px and
//! less (main.css, the same breakpoint as the inspector's panel) they go into a menu
//! that a disclosure button opens: `aria-expanded` and `aria-controls` say so, Tab or
//! the arrow keys walk its items, Escape closes it and gives focus back to its button,
//! and choosing an item, or leaving the menu, closes it. CSS decides which layout is on
//! screen; the component only keeps the menu's open state. A panel opened from the
//! menu gives focus back to the menu's button when it closes ([`focus_back`]): its own
//! button is inside the closed menu then.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The id of the menu, which its button controls.
const MENU_ID: &str = "familiar-menu";
/// The id of the menu's button, where focus goes back when a panel's own is hidden.
const BUTTON_ID: &str = "familiar-menu-button";

/// The menu's button and the secondary buttons, `children`, as its items.
#[component]
pub fn TopMenu(
    /// The secondary buttons, in their order in the bar.
    children: Children,
) -> impl IntoView {
    let open = RwSignal::new(false);
    let button = NodeRef::<leptos::html::Button>::new();
    let menu = NodeRef::<leptos::html::Div>::new();
    let close = move || {
        open.set(false);
        if let Some(button) = button.get_untracked() {
            let _ = button.focus();
        }
    };
    let on_keydown = move |ev: leptos::ev::KeyboardEvent| {
        if !open.get_untracked() || ev.default_prevented() {
            if ev.key() == "ArrowDown" && on_button(&ev, button) {
                ev.prevent_default();
                open.set(true);
                request_animation_frame(move || step(menu, &Move::First));
            }
            return;
        }
        let to = match ev.key().as_str() {
            "Escape" => {
                ev.prevent_default();
                close();
                return;
            }
            "ArrowDown" => Move::Next,
            "ArrowUp" => Move::Previous,
            "Home" => Move::First,
            "End" => Move::Last,
            _ => return,
        };
        ev.prevent_default();
        if on_button(&ev, button) && matches!(to, Move::Next) {
            step(menu, &Move::First);
        } else {
            step(menu, &to);
        }
    };
    // Focus leaving the button and its items (Tab past the last, a click elsewhere)
    // closes the menu.
    let on_focusout = move |ev: leptos::ev::FocusEvent| {
        let inside = ev
            .related_target()
            .and_then(|t| t.dyn_into::<web_sys::Node>().ok())
            .zip(ev.current_target())
            .and_then(|(to, wrap)| {
                wrap.dyn_into::<web_sys::Node>()
                    .ok()
                    .map(|w| w.contains(Some(&to)))
            })
            .unwrap_or(false);
        if !inside {
            open.set(false);
        }
    };
    view! {
        <span class="top-menu-wrap" on:keydown=on_keydown on:focusout=on_focusout>
            <button
                node_ref=button
                id=BUTTON_ID
                type="button"
                class="top-menu-button"
                aria-controls=MENU_ID
                aria-expanded=move || open.get().to_string()
                on:click=move |_| open.update(|o| *o = !*o)
            >
                "Menu"<span aria-hidden="true">" ▾"</span>
            </button>
            // A choice closes the menu (its own handler has run by then).
            <div
                node_ref=menu
                id=MENU_ID
                class="top-menu"
                class:open=move || open.get()
                on:click=move |ev| {
                    let chosen = ev
                        .target()
                        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
                        .is_some_and(|t| t.closest("button").ok().flatten().is_some());
                    if chosen {
                        open.set(false);
                    }
                }
            >
                {children()}
            </div>
        </span>
    }
}

/// Where an arrow key moves focus among the menu's items.
enum Move {
    First,
    Last,
    Next,
    Previous,
}

/// Whether `ev` happened on the menu's button.
fn on_button(ev: &leptos::ev::KeyboardEvent, button: NodeRef<leptos::html::Button>) -> bool {
    let target = ev.target();
    button
        .get_untracked()
        .zip(target)
        .is_some_and(|(b, t)| AsRef::<web_sys::EventTarget>::as_ref(&b) == &t)
}

/// Moves focus among the menu's shown items, wrapping at either end.
fn step(menu: NodeRef<leptos::html::Div>, to: &Move) {
    let Some(menu) = menu.get_untracked() else {
        return;
    };
    let Ok(found) = menu.query_selector_all("button") else {
        return;
    };
    let items: Vec<web_sys::HtmlElement> = (0..found.length())
        .filter_map(|i| found.item(i)?.dyn_into::<web_sys::HtmlElement>().ok())
        .filter(|e| e.offset_parent().is_some())
        .collect();
    let active = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.active_element());
    let at = items
        .iter()
        .position(|e| active.as_ref() == Some(e.as_ref() as &web_sys::Element));
    let last = items.len().saturating_sub(1);
    let index = match (to, at) {
        (Move::First, _) | (Move::Next, None) => 0,
        (Move::Last, _) | (Move::Previous, None) => last,
        (Move::Next, Some(i)) => {
            if i >= last {
                0
            } else {
                i + 1
            }
        }
        (Move::Previous, Some(i)) => i.checked_sub(1).unwrap_or(last),
    };
    if let Some(item) = items.get(index) {
        let _ = item.focus();
    }
}

/// Gives focus back to the button that opened a panel, or, when that button is inside
/// the closed menu (narrow panes), to the menu's button.
pub(super) fn focus_back(button: Option<&web_sys::HtmlElement>) {
    let shown = button.filter(|b| b.offset_parent().is_some()).cloned();
    let target = shown.or_else(|| {
        web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id(BUTTON_ID))
            .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    });
    if let Some(target) = target {
        let _ = target.focus();
    }
}
