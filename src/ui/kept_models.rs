//! The weights this browser keeps for the local model, in Settings: each file's name
//! and size, and a button that deletes it (its next use downloads it again). What is
//! kept is the browser's Cache Storage, shared by the page's tabs (`web::model_cache`).

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::web::model_cache::{Kept, forget, kept};

/// A file's name, from its address.
fn name_of(url: &str) -> String {
    let path = url.split(['?', '#']).next().unwrap_or(url);
    path.rsplit('/').next().unwrap_or(path).to_owned()
}

/// Bytes in megabytes to a tenth, as a person reads a download's size (in integers:
/// formatting a float brings 12 KB of code into the module).
fn megabytes(bytes: u64) -> String {
    let tenths = bytes.saturating_add(50_000) / 100_000;
    format!("{}.{} MB", tenths / 10, tenths % 10)
}

/// The kept weights, read again whenever `status` changes (a model finished loading).
#[component]
pub fn KeptModels(
    /// What the local model's loading last said: the list is read again when it changes.
    #[prop(into)]
    status: Signal<Option<String>>,
) -> impl IntoView {
    let (files, set_files) = signal(None::<Result<Vec<Kept>, String>>);
    let said = RwSignal::new(String::new());
    let refresh = move || spawn_local(async move { set_files.set(Some(kept().await)) });
    Effect::new(move |_| {
        status.track();
        refresh();
    });
    let delete = move |url: String| {
        spawn_local(async move {
            let name = name_of(&url);
            said.set(match forget(&url).await {
                Ok(true) => format!("Deleted {name}: its next use downloads it again."),
                Ok(false) => format!("{name} was no longer kept."),
                Err(error) => format!("{name} could not be deleted: {error}"),
            });
            refresh();
        });
    };
    let list = move || {
        match files.get() {
        None => view! { <p>"Looking in the browser's cache…"</p> }.into_any(),
        Some(Err(error)) => {
            view! { <p>{format!("The browser's cache cannot be read: {error}")}</p> }.into_any()
        }
        Some(Ok(kept)) if kept.is_empty() => view! {
            <p class="kept-none">"No model's weights are kept here: the first use downloads them."</p>
        }
        .into_any(),
        Some(Ok(kept)) => view! {
            <ul>
                {kept.into_iter().map(|file| {
                    let name = name_of(&file.url);
                    let url = file.url;
                    view! {
                        <li class="kept-model">
                            <span class="kept-name">{name.clone()}</span>" — "{megabytes(file.bytes)}" "
                            <button type="button" class="kept-delete" aria-label=format!("Delete {name}") on:click=move |_| delete(url.clone())>"Delete"</button>
                        </li>
                    }
                }).collect_view()}
            </ul>
        }
        .into_any(),
    }
    };
    view! {
        <section class="kept-models" aria-labelledby="kept-models-heading">
            <h3 id="kept-models-heading">"Models kept in this browser"</h3>
            {list}
            <p class="kept-said" role="status">{move || said.get()}</p>
        </section>
    }
}
