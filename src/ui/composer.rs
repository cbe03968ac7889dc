//! The composer: type a message, Enter sends, Shift+Enter adds a line.

use leptos::ev::KeyboardEvent;
use leptos::html::Textarea;
use leptos::prelude::*;

/// The message box under the conversation.
#[component]
pub fn Composer(
    /// True while a run is in flight: sending is disabled.
    #[prop(into)]
    busy: Signal<bool>,
    /// Called with the message text when the user sends it.
    on_send: impl Fn(String) + 'static,
) -> impl IntoView {
    let input = NodeRef::<Textarea>::new();
    let send = move || {
        if let Some(textarea) = input.get() {
            let text = textarea.value();
            if !text.trim().is_empty() && !busy.get_untracked() {
                textarea.set_value("");
                on_send(text);
            }
        }
    };
    let send = std::rc::Rc::new(send);
    let on_key = {
        let send = send.clone();
        move |ev: KeyboardEvent| {
            if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                ev.prevent_default();
                send();
            }
        }
    };
    view! {
        <form class="composer" on:submit=move |ev| {
            ev.prevent_default();
            send();
        }>
            <textarea
                node_ref=input
                class="composer-input"
                rows="2"
                placeholder="Ask something — “What time is it?”"
                aria-label="Message"
                on:keydown=on_key
            ></textarea>
            <button type="submit" class="composer-send" disabled=move || busy.get()>
                "Send"
            </button>
        </form>
    }
}
