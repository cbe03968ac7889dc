//! The "Talk to" control: whom the demo's conversation is with — the assistant, a
//! bundled character, or one loaded at run time ("Load character…", a URL or a file).
//!
//! Choosing never silently starts a new conversation. While the conversation on
//! screen is empty, the choice applies to it at once. Once it has turns, the choice is
//! only proposed: "Start a new conversation" commits it, "Keep this conversation"
//! takes it back. So arrowing through the menu (which fires `change` on every step in
//! Chromium) never leaves a conversation behind.

use leptos::prelude::*;

use super::Chat;
use super::load_character::LoadCharacter;
use crate::demo::characters;

/// The menu entry that opens the loader rather than choosing anyone.
const LOAD: &str = "load-character";

/// The menu and, when a choice waits for it, the confirmation.
#[component]
pub fn TalkTo(
    /// The chat whose conversation the choice applies to.
    chat: Chat,
) -> impl IntoView {
    let choices = RwSignal::new(characters::choices());
    // The key chosen but not yet applied ("" is the assistant).
    let proposed = RwSignal::new(None::<String>);
    let loading = RwSignal::new(false);
    let select = NodeRef::<leptos::html::Select>::new();
    // Where focus goes once a choice is settled: the composer after a new
    // conversation, the menu otherwise (the buttons that were pressed are gone).
    let composer = use_context::<super::ComposerFocus>();
    let back_to_menu = move || {
        if let Some(select) = select.get_untracked() {
            let _ = select.focus();
        }
    };
    let current = move || {
        chat.settings
            .with(|s| s.character.clone().unwrap_or_default())
    };
    let shown = move || proposed.get().unwrap_or_else(current);
    let name = move |key: &str| {
        if key.is_empty() {
            "Familiar".to_owned()
        } else {
            characters::name_of(key).unwrap_or_else(|| key.to_owned())
        }
    };
    let apply = move |key: String, fresh: bool| {
        proposed.set(None);
        let mut settings = chat.settings.get_untracked();
        settings.character = (!key.is_empty()).then_some(key);
        chat.apply_settings(settings);
        if fresh {
            chat.new_conversation();
        }
    };
    let choose = move |key: String| {
        let now = chat
            .settings
            .with_untracked(|s| s.character.clone().unwrap_or_default());
        if key == now {
            proposed.set(None);
        } else if chat.turns.with_untracked(Vec::is_empty) {
            apply(key, false);
        } else {
            proposed.set(Some(key));
        }
    };
    let on_change = move |ev| {
        let key = event_target_value(&ev);
        if key == LOAD {
            loading.set(true);
            // The menu goes back to whom the conversation is with.
            if let Some(select) = select.get_untracked() {
                select.set_value(&proposed.get_untracked().unwrap_or_else(|| {
                    chat.settings
                        .with_untracked(|s| s.character.clone().unwrap_or_default())
                }));
            }
        } else {
            choose(key);
        }
    };
    let on_loaded = Callback::new(move |key: String| {
        choices.set(characters::choices());
        choose(key);
    });
    view! {
        <span class="character-choice">
            <label>
                "Talk to "
                <select class="character-select" node_ref=select prop:value=shown on:change=on_change>
                    <option value="">"Familiar"</option>
                    {move || choices.get().into_iter().map(|(key, label)| {
                        let selected = key.clone();
                        view! { <option value=key selected=move || shown() == selected>{label}</option> }
                    }).collect_view()}
                    <option value=LOAD>"Load character…"</option>
                </select>
            </label>
            <Show when=move || proposed.get().is_some()>
                <span class="talk-to-confirm" role="group" aria-label="Change whom you talk to">
                    <button type="button" class="start-with" on:click=move |_| {
                        if let Some(key) = proposed.get_untracked() {
                            apply(key, true);
                            match composer {
                                Some(composer) => composer.give(),
                                None => back_to_menu(),
                            }
                        }
                    }>
                        {move || format!("Start a new conversation with {}", name(&proposed.get().unwrap_or_default()))}
                    </button>
                    <button type="button" class="keep-talking" on:click=move |_| {
                        proposed.set(None);
                        back_to_menu();
                    }>
                        "Keep this conversation"
                    </button>
                </span>
            </Show>
            <Show when=move || loading.get()>
                <LoadCharacter on_loaded=on_loaded on_close=Callback::new(move |()| {
                    loading.set(false);
                    back_to_menu();
                }) />
            </Show>
        </span>
    }
}
