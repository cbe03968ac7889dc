//! The top bar's secondary buttons (History, Guild, World, Settings, the Inspector)
//! and, where the pane is narrow, the menu that holds them.
//!
//! Wide, the buttons sit in the bar and the menu's own button is hidden; at 900 px and
//! less (main.css, the same breakpoint as the inspector's panel) they go into a menu
//! that a disclosure button opens: `aria-expanded` and `aria-controls` say so, Tab or
//! the arrow keys walk its items, Escape closes it and gives focus back to its button,
//! and choosing an item, or leaving the menu, closes it. CSS decides which layout is on
//! screen; [`TopMenu`] only keeps the menu's open state. A panel opened from the
//! menu gives focus back to the menu's button when it closes ([`focus_back`]): its own
//! button is inside the closed menu then.

use leptos::prelude::*;
use wasm_bindgen::JsCast;

/// The id of the menu's list, which its button controls.
pub(super) const MENU_ID: &str = "familiar-menu";
/// The id of the menu's button, where focus goes back when a panel's own is hidden.
const BUTTON_ID: &str = "familiar-menu-button";

/// The menu's open state, its button and its list of items. The list is the App's own
/// element, which hands its events here: its buttons stay in the App's view, not behind
/// a component's `Children` box (that cost 2.8 KB gzip more).
#[derive(Clone, Copy)]
pub(super) struct TopMenu {
    open: RwSignal<bool>,
    button: NodeRef<leptos::html::Button>,
    /// The element holding the items.
    pub(super) list: NodeRef<leptos::html::Div>,
}

impl TopMenu {
    /// Closed.
    pub(super) fn new() -> Self {
        Self {
            open: RwSignal::new(false),
            button: NodeRef::new(),
            list: NodeRef::new(),
        }
    }

    /// Whether the menu is open (tracked).
    pub(super) fn is_open(self) -> bool {
        self.open.get()
    }

    /// Closes the menu and gives focus back to its button.
    fn close(self) {
        self.open.set(false);
        if let Some(button) = self.button.get_untracked() {
            let _ = button.focus();
        }
    }

    /// A key in the menu's button or its items: ArrowDown on the button opens it at its
    /// first item; open, the arrows, Home and End move among the items and Escape
    /// closes it.
    pub(super) fn keydown(self, ev: &leptos::ev::KeyboardEvent) {
        let on_button = on_button(ev, self.button);
        if !self.open.get_untracked() || ev.default_prevented() {
            if ev.key() == "ArrowDown" && on_button {
                ev.prevent_default();
                self.open.set(true);
                request_animation_frame(move || step(self.list, &Move::First));
            }
            return;
        }
        let to = match ev.key().as_str() {
            "Escape" => {
                ev.prevent_default();
                self.close();
                return;
            }
            "ArrowDown" if on_button => Move::First,
            "ArrowDown" => Move::Next,
            "ArrowUp" => Move::Previous,
            "Home" => Move::First,
            "End" => Move::Last,
            _ => return,
        };
        ev.prevent_default();
        step(self.list, &to);
    }

    /// Focus leaving the button and its items (Tab past the last, a click elsewhere)
    /// closes the menu; `ev` is heard on the element holding both.
    pub(super) fn focusout(self, ev: &leptos::ev::FocusEvent) {
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
            self.open.set(false);
        }
    }

    /// A click in the list: a choice closes the menu (its own handler has run).
    pub(super) fn clicked(self, ev: &leptos::ev::MouseEvent) {
        let chosen = ev
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .and_then(|t| t.closest("button").ok().flatten());
        let Some(chosen) = chosen else {
            return;
        };
        self.open.set(false);
        // A choice that opens a panel moves focus into it; one that closes its own
        // panel (History or World pressed while open) leaves focus on an item now
        // hidden, which the browser drops to the body: it goes back to the menu's button.
        request_animation_frame(move || {
            let closed = chosen.get_attribute("aria-expanded").as_deref() == Some("false");
            let active = web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.active_element());
            let lost =
                active.is_none_or(|a| a == chosen || a.tag_name().eq_ignore_ascii_case("body"));
            if closed
                && lost
                && let Some(button) = self.button.get_untracked()
            {
                let _ = button.focus();
            }
        });
    }
}

/// The button that opens and closes `menu`, whose list has the id [`MENU_ID`].
#[component]
pub(super) fn MenuButton(
    /// The menu it opens.
    menu: TopMenu,
) -> impl IntoView {
    view! {
        <button
            node_ref=menu.button
            id=BUTTON_ID
            type="button"
            class="top-menu-button"
            aria-controls=MENU_ID
            aria-expanded=move || menu.open.get().to_string()
            on:click=move |_| menu.open.update(|o| *o = !*o)
        >
            "Menu"<span aria-hidden="true">" ▾"</span>
        </button>
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
