//! Settings → Model → "Find servers on this machine": looks for Ollama and LM Studio
//! on their usual ports and for the loopback address typed in the proxy URL field,
//! says what answered and what did not (nothing listening, a server refusing this
//! page, a server with no model), and lists each server's models, those known to call
//! tools well marked ★. Choosing one fills the proxy's address and model and empties
//! its extra header: a server on this machine needs no key.

use leptos::prelude::*;

use crate::app::model_servers::{Finding, Place, finding, from_afar, places, said};

/// How long a place may take to answer a try: a server on this machine answers at
/// once; the wait covers a busy one.
const PATIENCE_MS: u32 = 2_000;

/// What was found at one place.
struct Found {
    place: Place,
    finding: Finding,
    /// The finding in words.
    said: String,
}

/// The button, what it found, and the models to choose from. Choosing writes
/// `proxy_url`, `proxy_model` and `header`, and clears `window`: a window typed for
/// another model does not hold for this one (the server is asked, or the person types
/// it again).
pub(super) fn view(
    proxy_url: RwSignal<String>,
    proxy_model: RwSignal<String>,
    header: RwSignal<String>,
    window: RwSignal<String>,
) -> impl IntoView {
    let looking = RwSignal::new(false);
    let found = RwSignal::new(Vec::<Found>::new());
    let note = RwSignal::new(None::<String>);
    let find = move |_| {
        if looking.get_untracked() {
            return;
        }
        looking.set(true);
        found.set(Vec::new());
        note.set(None);
        let origin = crate::web::probe::page_origin();
        let places = places(&proxy_url.get_untracked());
        leptos::task::spawn_local(async move {
            // One after another: on this machine a closed port answers at once.
            let mut all = Vec::new();
            for place in places {
                let finding = finding(crate::web::probe::reach(&place, PATIENCE_MS).await);
                let said = said(&place, &finding, &origin);
                all.push(Found {
                    place,
                    finding,
                    said,
                });
            }
            let silent = all.iter().any(|f| f.finding == Finding::Nothing);
            let _ = note.try_set(silent.then(|| from_afar(&origin)).flatten().map(Into::into));
            let _ = found.try_set(all);
            let _ = looking.try_set(false);
        });
    };
    let choose = move |base: String, id: String| {
        let said = format!("Chosen: {id} at {base}, with no key. Save to use it.");
        proxy_url.set(base);
        proxy_model.set(id);
        header.set(String::new());
        window.set(String::new());
        note.set(Some(said));
    };
    view! {
        <div class="servers">
            <p class="field-hint">"Ollama, LM Studio or llama.cpp on this machine need no key: Find looks at their usual ports, and at the Proxy URL below when it is on this machine."</p>
            <button type="button" class="find-servers" aria-busy=move || looking.get().to_string() on:click=find>"Find servers on this machine"</button>
            <div class="servers-found" role="status">
                {move || looking.get().then_some(view! { <p>"Looking on this machine…"</p> })}
                {move || found.with(|all| all.iter().map(|f| found_view(f, choose)).collect_view())}
                {move || note.get().map(|n| view! { <p class="servers-note">{n}</p> })}
            </div>
        </div>
    }
}

/// One place's finding: its sentence, and its models as buttons that `choose` one.
fn found_view<C: Fn(String, String) + Copy + 'static>(
    found: &Found,
    choose: C,
) -> impl IntoView + use<C> {
    let models = match &found.finding {
        Finding::Models(models) => models
            .iter()
            .map(|m| {
                let (base, id) = (found.place.base.clone(), m.id.clone());
                let shown = if m.tools { format!("★ {id}") } else { id.clone() };
                view! { <li><button type="button" class="server-model" on:click=move |_| choose(base.clone(), id.clone())>{shown}</button></li> }
            })
            .collect_view(),
        _ => Vec::new(),
    };
    view! {
        <p class="server-said">{found.said.clone()}</p>
        <ul class="server-models">{models}</ul>
    }
}
