//! The settings panel: model source, temperature, step cap, reflection, backend. It
//! edits a copy; Save validates and shows each problem next to its field.

use leptos::prelude::*;

use crate::openai::{ModelSettings, temperature_text};
use crate::settings::{Backend, ModelSource, Problem, Settings};

/// The settings form.
#[component]
pub fn SettingsPanel(
    /// The settings in force.
    #[prop(into)]
    current: Signal<Settings>,
    /// Applies settings; returns the problems that stopped them.
    on_save: impl Fn(Settings) -> Vec<Problem> + 'static,
) -> impl IntoView {
    let initial = current.get_untracked();
    let (proxy_url, proxy_model, header) = match &initial.model {
        ModelSource::Proxy(m) => (
            m.base_url.clone(),
            m.model.clone(),
            m.extra_header
                .clone()
                .map(|(k, v)| format!("{k}: {v}"))
                .unwrap_or_default(),
        ),
        ModelSource::Rules => (String::new(), String::new(), String::new()),
    };
    let (supabase_url, anon_key) = match &initial.backend {
        Backend::Supabase { url, anon_key } => (url.clone(), anon_key.clone()),
        Backend::Local => (String::new(), String::new()),
    };
    let use_proxy = RwSignal::new(matches!(initial.model, ModelSource::Proxy(_)));
    let proxy_url = RwSignal::new(proxy_url);
    let proxy_model = RwSignal::new(proxy_model);
    let header = RwSignal::new(header);
    let temperature = RwSignal::new(temperature_text(initial.temperature));
    let cap = RwSignal::new(initial.max_iterations.to_string());
    let reflection = RwSignal::new(initial.reflection);
    let use_supabase = RwSignal::new(matches!(initial.backend, Backend::Supabase { .. }));
    let supabase_url = RwSignal::new(supabase_url);
    let anon_key = RwSignal::new(anon_key);
    let images = RwSignal::new(initial.remote_images);
    let problems = RwSignal::new(Vec::<Problem>::new());
    let saved = RwSignal::new(false);

    let collect = move || -> Result<Settings, Vec<Problem>> {
        let mut found = Vec::new();
        // A field that does not parse is noted in `found` and a valid stand-in takes its
        // place, so the checks below don't report it twice; any problem stops the save.
        let temperature = parse(
            &temperature.get_untracked(),
            "temperature",
            "the temperature must be a number",
            &mut found,
        )
        .unwrap_or(0.0);
        let max_iterations = parse(
            &cap.get_untracked(),
            "max_iterations",
            "the step cap must be a whole number",
            &mut found,
        )
        .unwrap_or(1);
        let model = if use_proxy.get_untracked() {
            let mut settings = ModelSettings::new(
                proxy_url.get_untracked().trim(),
                proxy_model.get_untracked().trim(),
            );
            settings.temperature = Some(temperature);
            let header = header.get_untracked();
            if let Some((name, value)) = header.split_once(':') {
                settings.extra_header = Some((name.trim().to_owned(), value.trim().to_owned()));
            } else if !header.trim().is_empty() {
                found.push(Problem {
                    field: "model",
                    message: "the extra header must look like `Name: value`".into(),
                });
            }
            ModelSource::Proxy(settings)
        } else {
            ModelSource::Rules
        };
        let backend = if use_supabase.get_untracked() {
            Backend::Supabase {
                url: supabase_url.get_untracked(),
                anon_key: anon_key.get_untracked(),
            }
        } else {
            Backend::Local
        };
        let settings = Settings {
            model,
            temperature,
            max_iterations,
            reflection: reflection.get_untracked(),
            backend,
            remote_images: images.get_untracked(),
            character: current.with_untracked(|s| s.character.clone()),
        };
        found.extend(settings.problems());
        if found.is_empty() {
            Ok(settings)
        } else {
            Err(found)
        }
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        saved.set(false);
        let result = collect().map(&on_save);
        match result {
            Ok(found) if found.is_empty() => {
                problems.set(Vec::new());
                saved.set(true);
            }
            Ok(found) | Err(found) => problems.set(found),
        }
    };
    let error = move |field: &'static str| {
        move || {
            problems.with(|p| {
                p.iter()
                    .filter(|p| p.field == field)
                    .map(|p| view! { <p class="field-error" role="alert">{p.message.clone()}</p> })
                    .collect_view()
            })
        }
    };
    view! {
        <form class="settings" aria-label="Settings" on:submit=save>
            <fieldset>
                <legend>"Model"</legend>
                <label><input type="radio" name="model" prop:checked=move || !use_proxy.get() on:change=move |_| use_proxy.set(false) />" Rules model (offline)"</label>
                <label><input type="radio" name="model" class="use-proxy" prop:checked=move || use_proxy.get() on:change=move |_| use_proxy.set(true) />" OpenAI-compatible proxy"</label>
                <div hidden=move || !use_proxy.get()>
                    <label>"Proxy URL"<input class="proxy-url" type="url" bind:value=proxy_url placeholder="https://llm.example.com/v1" /></label>
                    <label>"Model"<input class="proxy-model" bind:value=proxy_model placeholder="gpt-4o-mini" /></label>
                    <label>"Extra header (optional)"<input class="proxy-header" bind:value=header placeholder="X-Proxy-Token: …" /></label>
                </div>
                {error("model")}
                <label>"Temperature"<input class="temperature" inputmode="decimal" bind:value=temperature /></label>
                {error("temperature")}
            </fieldset>
            <fieldset>
                <legend>"Agent"</legend>
                <label>"Step cap"<input class="step-cap" inputmode="numeric" bind:value=cap /></label>
                {error("max_iterations")}
                <label><input type="checkbox" class="reflection" bind:checked=reflection />" Review each answer once (reflection)"</label>
                <label><input type="checkbox" class="remote-images" bind:checked=images />" Show images from other sites"</label>
            </fieldset>
            <fieldset>
                <legend>"World"</legend>
                <label><input type="radio" name="backend" prop:checked=move || !use_supabase.get() on:change=move |_| use_supabase.set(false) />" In this page"</label>
                <label><input type="radio" name="backend" class="use-supabase" prop:checked=move || use_supabase.get() on:change=move |_| use_supabase.set(true) />" Supabase"</label>
                <div hidden=move || !use_supabase.get()>
                    <label>"Project URL"<input class="supabase-url" type="url" bind:value=supabase_url placeholder="https://xyz.supabase.co" /></label>
                    {error("backend.url")}
                    <label>"Anon key"<input class="anon-key" bind:value=anon_key placeholder="the public anon key" /></label>
                    {error("backend.anon_key")}
                </div>
            </fieldset>
            <button type="submit" class="settings-save">"Save"</button>
            <p class="settings-saved" role="status">{move || if saved.get() { "Saved." } else { "" }}</p>
        </form>
    }
}

/// `text` parsed as a `T`, or `None` with `message` noted as `field`'s problem.
fn parse<T: std::str::FromStr>(
    text: &str,
    field: &'static str,
    message: &str,
    found: &mut Vec<Problem>,
) -> Option<T> {
    let parsed = text.trim().parse().ok();
    if parsed.is_none() {
        found.push(Problem {
            field,
            message: message.into(),
        });
    }
    parsed
}
