//! Loading a character file at run time, from a URL or a file on the person's
//! machine: the file is checked as a whole, and its problems are shown to its author
//! with their paths (`workflows.drink_order.states[0].triggers.intent_pattern: unknown
//! field…`), as are the sections kept but not used. A file that loads is kept in the
//! page (see [`crate::demo::characters`]) and chosen.

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::demo::characters;
use crate::workflow::{Character, LoadError};

/// The loader's form and what it found.
#[component]
pub fn LoadCharacter(
    /// Called with the key of a character that loaded.
    on_loaded: Callback<String>,
    /// Closes the loader.
    on_close: Callback<()>,
) -> impl IntoView {
    let url = RwSignal::new(String::new());
    let status = RwSignal::new(String::new());
    let problems = RwSignal::new(Vec::<LoadError>::new());
    let notes = RwSignal::new(Vec::<String>::new());
    let take = move |read: Result<String, String>, source: String| {
        problems.set(Vec::new());
        notes.set(Vec::new());
        let text = match read {
            Ok(text) => text,
            Err(why) => return status.set(why),
        };
        match Character::from_json(&text) {
            Ok(character) => {
                let key = characters::remember(&character, &source, &text);
                status.set(format!("Loaded {} from {source}.", character.identity.name));
                notes.set(character.notes.iter().map(ToString::to_string).collect());
                on_loaded.run(key);
            }
            Err(errors) => {
                status.set(format!(
                    "{source} was not loaded; fix these and load it again:"
                ));
                problems.set(errors);
            }
        }
    };
    let from_url = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        let source = url.get_untracked().trim().to_owned();
        if source.is_empty() {
            return status.set("Give the character file's URL.".into());
        }
        status.set(format!("Loading {source}…"));
        spawn_local(async move {
            take(
                crate::web::character_file::fetch_text(&source).await,
                source,
            )
        });
    };
    let from_file = move |ev: leptos::ev::Event| {
        let input: web_sys::HtmlInputElement = event_target(&ev);
        let Some(file) = input.files().and_then(|files| files.get(0)) else {
            return;
        };
        let source = file.name();
        status.set(format!("Reading {source}…"));
        spawn_local(
            async move { take(crate::web::character_file::read_file(&file).await, source) },
        );
    };
    // Opened, the loader takes focus in its first field; Escape closes it.
    let first = NodeRef::<leptos::html::Input>::new();
    first.on_load(|input| {
        let _ = input.focus();
    });
    view! {
        <section
            class="character-loader"
            aria-label="Load a character"
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    ev.prevent_default();
                    on_close.run(());
                }
            }
        >
            <form class="character-url" on:submit=from_url>
                <label>
                    "Character file URL "
                    <input node_ref=first type="text" inputmode="url" name="character-url" placeholder="https://…/character.json or /characters/….json" prop:value=url on:input=move |ev| url.set(event_target_value(&ev)) />
                </label>
                <button type="submit">"Load"</button>
            </form>
            <label class="character-file">
                "or a file "
                <input type="file" accept=".json,application/json" on:change=from_file />
            </label>
            <p class="character-load-status" role="status">{move || status.get()}</p>
            <Show when=move || problems.with(|p| !p.is_empty())>
                <ul class="character-problems">
                    {move || problems.get().into_iter().map(|p| view! {
                        <li><code>{p.path}</code>": "{p.message}</li>
                    }).collect_view()}
                </ul>
            </Show>
            <Show when=move || notes.with(|n| !n.is_empty())>
                <details class="character-notes">
                    <summary>"Kept, not used by the workflows"</summary>
                    <ul>{move || notes.get().into_iter().map(|n| view! { <li>{n}</li> }).collect_view()}</ul>
                </details>
            </Show>
            <button type="button" class="close-loader" on:click=move |_| on_close.run(())>"Close"</button>
        </section>
    }
}
