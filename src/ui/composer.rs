//! The composer: Enter sends, Shift+Enter adds a line; while a run is in flight the
//! Send button becomes Stop. Typing `/` or `@` at the start offers the delegate's
//! commands and agents.

use leptos::ev::KeyboardEvent;
use leptos::html::Textarea;
use leptos::prelude::*;

/// A completion the composer offers: what to insert and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    pub insert: String,
    pub description: String,
}

/// The message box under the conversation.
#[component]
pub fn Composer(
    /// True while a run is in flight: Send turns into Stop.
    #[prop(into)]
    busy: Signal<bool>,
    /// Called with the message text when the user sends it.
    on_send: impl Fn(String) + 'static,
    /// Called when the user presses Stop.
    #[prop(optional)]
    on_stop: Option<Callback<()>>,
    /// `/command` and `@agent` completions, read when the message starts with one.
    #[prop(into, optional)]
    completions: Signal<Vec<Completion>>,
) -> impl IntoView {
    let input = NodeRef::<Textarea>::new();
    let (typed, set_typed) = signal(String::new());
    let send = std::rc::Rc::new(move || {
        if let Some(textarea) = input.get() {
            let text = textarea.value();
            if !text.trim().is_empty() && !busy.get_untracked() {
                textarea.set_value("");
                set_typed.set(String::new());
                on_send(text);
            }
        }
    });
    let matches = Memo::new(move |_| {
        typed.with(|t| {
            let word = t.trim_start();
            if !(word.starts_with('/') || word.starts_with('@')) || word.contains(' ') {
                return Vec::new();
            }
            completions.with(|all| {
                all.iter()
                    .filter(|c| c.insert.starts_with(word) && c.insert != word)
                    .cloned()
                    .collect::<Vec<_>>()
            })
        })
    });
    let complete = move |insert: &str| {
        if let Some(textarea) = input.get() {
            let text = format!("{insert} ");
            textarea.set_value(&text);
            set_typed.set(text);
            let _ = textarea.focus();
        }
    };
    let on_key = {
        let send = send.clone();
        move |ev: KeyboardEvent| {
            if ev.key() == "Tab"
                && let Some(first) = matches.with_untracked(|m| m.first().cloned())
            {
                ev.prevent_default();
                complete(&first.insert);
            } else if ev.key() == "Enter" && !ev.shift_key() && !ev.is_composing() {
                ev.prevent_default();
                send();
            }
        }
    };
    let stop = move |_| {
        if let Some(on_stop) = on_stop {
            on_stop.run(());
        }
    };
    view! {
        <form class="composer" on:submit=move |ev| {
            ev.prevent_default();
            send();
        }>
            <Show when=move || matches.with(|m| !m.is_empty())>
                <ul class="completions" role="listbox" aria-label="Commands and agents">
                    {move || matches.get().into_iter().map(|c| {
                        let insert = c.insert.clone();
                        view! {
                            <li role="option">
                                <button type="button" class="completion" on:click=move |_| complete(&insert)>
                                    <span class="completion-insert">{c.insert}</span>
                                    <span class="completion-description">{c.description}</span>
                                </button>
                            </li>
                        }
                    }).collect_view()}
                </ul>
            </Show>
            <textarea
                node_ref=input
                class="composer-input"
                rows="2"
                placeholder="Ask something — “What time is it?”"
                aria-label="Message"
                on:keydown=on_key
                on:input=move |ev| set_typed.set(event_target_value(&ev))
            ></textarea>
            <Show
                when=move || busy.get()
                fallback=|| view! { <button type="submit" class="composer-send">"Send"</button> }
            >
                <button type="button" class="composer-stop" on:click=stop>"Stop"</button>
            </Show>
        </form>
    }
}
