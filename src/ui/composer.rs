//! The composer: Enter sends, Shift+Enter adds a line; while a run is in flight the
//! Send button becomes Stop. Typing `/` or `@` at the start offers the delegate's
//! commands and agents as a combobox (the WAI-ARIA pattern): arrows move through the
//! options, Enter or Tab takes the highlighted one, Escape or a click elsewhere closes
//! the list, and the caret never leaves the message box.
//!
//! Focus never falls to the page: the message box takes it on load, after Send, and
//! when a run ends (or starts) while a button of the composer had it — Send and
//! Stop replace each other, and a removed button would leave focus nowhere.

use leptos::ev::KeyboardEvent;
use leptos::html::Textarea;
use leptos::prelude::*;
use wasm_bindgen::JsCast;

use crate::compose::delegate::begins_route;

/// A completion the composer offers: what to insert and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub insert: String,
    pub description: String,
}

/// The id of the list of completions (`aria-controls`), and of its options.
const LIST_ID: &str = "familiar-completions";

fn option_id(index: usize) -> String {
    format!("{LIST_ID}-{index}")
}

/// The completions that continue what is typed.
fn matching(typed: &str, all: &[Completion]) -> Vec<Completion> {
    all.iter()
        .filter(|c| crate::compose::delegate::continues(typed, &c.insert))
        .cloned()
        .collect()
}

/// True when focus is nowhere in particular: on the page's body (where a removed
/// element leaves it), or on no element at all.
fn focus_is_lost() -> bool {
    let Some(document) = web_sys::window().and_then(|w| w.document()) else {
        return false;
    };
    match (document.active_element(), document.body()) {
        (None, _) => true,
        (Some(active), Some(body)) => active == *body.unchecked_ref::<web_sys::Element>(),
        (Some(_), None) => false,
    }
}

/// The message box under the conversation.
#[component]
pub fn Composer(
    /// True while a run is in flight: Send turns into Stop.
    #[prop(into)]
    busy: Signal<bool>,
    /// Called with the message text when the user sends it; false keeps the text in
    /// the box (the send asks for a confirmation first, or was refused).
    on_send: impl Fn(String) -> bool + 'static,
    /// Called when the user presses Stop.
    #[prop(optional)]
    on_stop: Option<Callback<()>>,
    /// `/command` and `@agent` completions, read when the message starts with one.
    #[prop(into, optional)]
    completions: Signal<Vec<Completion>>,
    /// What the empty message box suggests (whom it speaks to).
    #[prop(into, optional)]
    placeholder: Option<Signal<String>>,
    /// The last message sent, brought back by ↑ in an empty message box to be edited.
    #[prop(optional)]
    recall: Option<Callback<(), Option<String>>>,
    /// The message box, for views that give focus back to it.
    #[prop(optional)]
    input: Option<NodeRef<Textarea>>,
) -> impl IntoView {
    let input = input.unwrap_or_default();
    let (typed, set_typed) = signal(String::new());
    // The highlighted option, if any; `None` until the arrows pick one.
    let (active, set_active) = signal(None::<usize>);
    let (dismissed, set_dismissed) = signal(false);
    let send = std::rc::Rc::new(move || {
        if let Some(textarea) = input.get() {
            let text = textarea.value();
            if !text.trim().is_empty() && !busy.get_untracked() {
                if on_send(text) {
                    textarea.set_value("");
                    set_typed.set(String::new());
                }
                let _ = textarea.focus();
            }
        }
    });
    // Whether one of the composer's buttons had focus last: when Send becomes Stop
    // (or back) under it, focus goes to the message box instead of the page.
    let button_focused = StoredValue::new(false);
    Effect::new(move |before: Option<bool>| {
        let now = busy.get();
        if before.is_some_and(|b| b != now) && button_focused.get_value() {
            request_animation_frame(move || {
                if focus_is_lost()
                    && let Some(textarea) = input.get_untracked()
                {
                    let _ = textarea.focus();
                }
            });
        }
        now
    });
    input.on_load(|textarea| {
        // On load the message box has focus, unless something else took it first.
        request_animation_frame(move || {
            if focus_is_lost() {
                let _ = textarea.focus();
            }
        });
    });
    let empty = move || typed.with(|t| t.trim().is_empty());
    // The completions are read only once a route is begun: listing them builds the
    // chat's controller, which start-up leaves until after the first frame.
    let matches = Memo::new(move |_| {
        typed.with(|t| match begins_route(t) {
            true => completions.with(|all| matching(t, all)),
            false => Vec::new(),
        })
    });
    let open = move || !dismissed.get() && matches.with(|m| !m.is_empty());
    let complete = move |insert: &str| {
        if let Some(textarea) = input.get() {
            let text = format!("{insert} ");
            textarea.set_value(&text);
            set_typed.set(text);
            set_active.set(None);
            let _ = textarea.focus();
        }
    };
    let on_key = {
        let send = send.clone();
        move |ev: KeyboardEvent| {
            let count = matches.with_untracked(Vec::len);
            let listed = !dismissed.get_untracked() && count > 0;
            let chosen = active
                .get_untracked()
                .and_then(|i| matches.with_untracked(|m| m.get(i).cloned()));
            match ev.key().as_str() {
                "ArrowDown" | "ArrowUp" if listed => {
                    ev.prevent_default();
                    let down = ev.key() == "ArrowDown";
                    set_active.set(Some(match active.get_untracked() {
                        None if down => 0,
                        None => count - 1,
                        Some(i) if down => (i + 1) % count,
                        Some(i) => (i + count - 1) % count,
                    }));
                }
                "ArrowUp" if typed.with_untracked(String::is_empty) => {
                    let last = recall.and_then(|recall| recall.run(()));
                    if let (Some(last), Some(textarea)) = (last, input.get_untracked()) {
                        ev.prevent_default();
                        textarea.set_value(&last);
                        set_typed.set(last);
                        set_dismissed.set(true);
                    }
                }
                "Escape" if listed => {
                    ev.prevent_default();
                    set_dismissed.set(true);
                    set_active.set(None);
                }
                "Tab" if listed && !ev.shift_key() => {
                    ev.prevent_default();
                    let pick = chosen.or_else(|| matches.with_untracked(|m| m.first().cloned()));
                    if let Some(pick) = pick {
                        complete(&pick.insert);
                    }
                }
                "Enter" if !ev.shift_key() && !ev.is_composing() => {
                    ev.prevent_default();
                    match chosen.filter(|_| listed) {
                        Some(pick) => complete(&pick.insert),
                        // A bare `/` or `@` is the start of a command, not a message.
                        None if listed && typed.with_untracked(|t| t.trim().len() == 1) => {}
                        None => send(),
                    }
                }
                _ => {}
            }
        }
    };
    let stop = move |_| {
        if let Some(on_stop) = on_stop {
            on_stop.run(());
        }
    };
    view! {
        <form
            class="composer"
            on:submit=move |ev| {
                ev.prevent_default();
                send();
            }
            on:focusout=move |ev| {
                // Focus leaving the composer (a click or Tab elsewhere) closes the list.
                let inside = ev
                    .related_target()
                    .and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Node>(t).ok())
                    .zip(ev.current_target().and_then(|t| wasm_bindgen::JsCast::dyn_into::<web_sys::Node>(t).ok()))
                    .is_some_and(|(to, form)| form.contains(Some(&to)));
                if !inside {
                    set_dismissed.set(true);
                    set_active.set(None);
                }
            }
        >
            <Show when=open>
                <ul class="completions" id=LIST_ID role="listbox" aria-label="Commands and agents">
                    {move || matches.get().into_iter().enumerate().map(|(index, c)| {
                        let insert = c.insert.clone();
                        let selected = move || active.get() == Some(index);
                        view! {
                            <li
                                id=option_id(index)
                                role="option"
                                class="completion"
                                class:completion-active=selected
                                aria-selected=move || selected().to_string()
                                // Pressing keeps focus in the message box; the click takes it.
                                on:mousedown=|ev| ev.prevent_default()
                                on:click=move |_| complete(&insert)
                            >
                                <span class="completion-insert">{c.insert}</span>
                                <span class="completion-description">{c.description}</span>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </Show>
            <textarea
                node_ref=input
                class="composer-input"
                rows="2"
                placeholder=move || placeholder.map_or_else(|| "Ask something — “What time is it?”".to_owned(), |p| p.get())
                aria-label="Message"
                role="combobox"
                aria-autocomplete="list"
                aria-controls=LIST_ID
                aria-expanded=move || open().to_string()
                aria-activedescendant=move || active.get().filter(|_| open()).map(option_id)
                on:keydown=on_key
                on:input=move |ev| {
                    set_typed.set(event_target_value(&ev));
                    set_dismissed.set(false);
                    set_active.set(None);
                }
            ></textarea>
            <Show
                when=move || busy.get()
                fallback=move || view! {
                    <button
                        type="submit"
                        class="composer-send"
                        disabled=empty
                        on:focus=move |_| button_focused.set_value(true)
                        on:blur=move |ev| button_focused.set_value(ev.related_target().is_none())
                    >"Send"</button>
                }
            >
                <button
                    type="button"
                    class="composer-stop"
                    on:click=stop
                    on:focus=move |_| button_focused.set_value(true)
                    on:blur=move |ev| button_focused.set_value(ev.related_target().is_none())
                >"Stop"</button>
            </Show>
        </form>
    }
}
