//! The settings panel: model source, temperature, step cap, reflection and goal
//! guessing, backend. It edits a copy; Save validates and shows each problem next to
//! its field (tied to it with `aria-invalid` and `aria-describedby`), and once a save
//! was tried each problem goes away as soon as its field is fixed; a save that fails
//! moves focus to the first field marked. Only the field at fault is marked: a proxy
//! problem is told apart (address, model name, window, header) by the check that
//! failed. Messages quote with “ ” rather than a programmer's backticks. Escape or
//! Close closes the panel. A saved proxy token is not sent to a changed proxy address
//! unless typed again.

use leptos::prelude::*;

use super::account::AccountPanel;
use super::kept_models::KeptModels;
use crate::app::Budgets;
use crate::app::settings::{Backend, FieldProblem, ModelSource, Settings};
use crate::llm::local::{LocalBackend, LocalSettings, SMOLLM2_BYTES, SMOLLM2_NAME};
use crate::llm::openai::{ModelSettings, SettingsError, temperature_text};
use crate::llm::usage::Price;

/// Where the full build serves the test model when `scripts/demo.sh` found it.
const DEFAULT_LOCAL_URL: &str = "models/SmolLM2-135M-Instruct.Q4_1.gguf";

/// What the local model costs, said before anything is downloaded.
fn local_hint() -> String {
    format!(
        "{SMOLLM2_NAME}: a {} MB download the first time, then kept by the browser; it runs \
         in a worker of this tab, about as well as a very small model can.",
        SMOLLM2_BYTES / 1_000_000
    )
}

/// The file the person picked, kept for the worker; its name.
fn pick_weights(ev: &leptos::ev::Event) -> Option<String> {
    let input: web_sys::HtmlInputElement = wasm_bindgen::JsCast::dyn_into(ev.target()?).ok()?;
    let file = input.files()?.get(0)?;
    let name = file.name();
    crate::web::local_model::remember_file(file);
    Some(name)
}

/// How far the weights have come: bytes read and expected (0 when the server did not
/// say), shown as a progress bar while they load.
type Progress = Option<(u64, u64)>;

/// Starts loading `local`'s weights (or finds them loading) and shows it in `status`,
/// as words, and `progress`.
fn follow_loading(
    local: &LocalSettings,
    status: RwSignal<Option<String>>,
    progress: RwSignal<Progress>,
) {
    match crate::web::local_model::worker_for(local, None) {
        Ok(worker) => follow(&worker, status, progress),
        Err(error) => status.set(Some(error)),
    }
}

/// Shows `worker`'s loading in `status` and `progress`, now and at every change.
fn follow(
    worker: &crate::web::local_model::BrowserWorker,
    status: RwSignal<Option<String>>,
    progress: RwSignal<Progress>,
) {
    use crate::web::local_model::LoadStatus;
    worker.on_status(move |s| {
        let _ = progress.try_set(match s {
            LoadStatus::Loading { loaded, total, .. } => Some((*loaded, *total)),
            _ => None,
        });
        let words = match s {
            LoadStatus::Loading {
                loaded,
                total,
                cached,
            } => {
                let from = if *cached {
                    "from the browser's cache"
                } else {
                    "downloading"
                };
                match total {
                    0 => format!("Loading the model, {from}: {} MB", loaded / 1_000_000),
                    t => format!(
                        "Loading the model, {from}: {} of {} MB",
                        loaded / 1_000_000,
                        t / 1_000_000
                    ),
                }
            }
            LoadStatus::Ready {
                cached,
                backend,
                threads,
                adapter,
                note,
                ..
            } => ready_words(
                *cached,
                (*backend, *threads),
                adapter.as_deref(),
                note.as_deref(),
            ),
            LoadStatus::Failed(error) => format!("The local model could not load: {error}"),
            LoadStatus::Cancelled => {
                "Loading stopped. Save again, or ask the agent, to start it over.".to_owned()
            }
        };
        let _ = status.try_set(Some(words));
    });
}

/// The ready model's status: where it runs (the GPU's name on WebGPU, the threads
/// on the CPU when more than one), whether the weights came from the cache, and why
/// auto left WebGPU aside.
fn ready_words(
    cached: bool,
    (backend, threads): (LocalBackend, u64),
    adapter: Option<&str>,
    note: Option<&str>,
) -> String {
    let on = match (backend, adapter) {
        (LocalBackend::WebGpu, Some(adapter)) => format!("on WebGPU ({adapter})"),
        (LocalBackend::WebGpu, None) => "on WebGPU".into(),
        _ if threads > 1 => format!("on the CPU, {threads} threads"),
        _ => "on the CPU".into(),
    };
    let from = if cached {
        " (read from the browser's cache)"
    } else {
        ""
    };
    let why = note.map_or(String::new(), |n| format!(" Not on WebGPU: {n}."));
    format!("The local model is ready {on}{from}.{why}")
}

super::part::part!(
    settings,
    preload,
    pub(super) fn open(chat: super::Chat, on_close: Callback<()>) {
        view! {
        <SettingsPanel current=chat.settings on_save=move |s| chat.apply_settings(s) on_close=on_close />
    }
    .into_any()
    }
);

/// The settings form.
#[component]
pub fn SettingsPanel(
    /// The settings in force.
    #[prop(into)]
    current: Signal<Settings>,
    /// Applies settings; returns the problems that stopped them.
    on_save: impl Fn(Settings) -> Vec<FieldProblem> + 'static,
    /// Closes the panel (Escape, or the Close button).
    #[prop(optional)]
    on_close: Option<Callback<()>>,
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
        ModelSource::Rules | ModelSource::Local(_) => (String::new(), String::new(), String::new()),
    };
    let (local_url, local_window, local_backend) = match &initial.model {
        ModelSource::Local(l) => (
            l.url.clone(),
            l.context_tokens.map(|n| n.to_string()).unwrap_or_default(),
            l.backend,
        ),
        _ => (
            DEFAULT_LOCAL_URL.to_owned(),
            String::new(),
            LocalBackend::Auto,
        ),
    };
    let use_local = RwSignal::new(matches!(initial.model, ModelSource::Local(_)));
    let local_url = RwSignal::new(local_url);
    let local_window = RwSignal::new(local_window);
    let saved_backend = local_backend;
    let local_backend = RwSignal::new(local_backend);
    let local_status = RwSignal::new(None::<String>);
    let local_progress = RwSignal::new(None::<(u64, u64)>);
    // Opened while the saved model loads (or after): its status from where it is.
    if let ModelSource::Local(local) = &initial.model
        && let Some(worker) = crate::web::local_model::running(local)
    {
        follow(&worker, local_status, local_progress);
    }
    let (supabase_url, anon_key) = match &initial.backend {
        Backend::Supabase { url, anon_key } => (url.clone(), anon_key.clone()),
        Backend::Local => (String::new(), String::new()),
    };
    let use_proxy = RwSignal::new(matches!(initial.model, ModelSource::Proxy(_)));
    let proxy_url = RwSignal::new(proxy_url);
    let proxy_model = RwSignal::new(proxy_model);
    let header = RwSignal::new(header);
    // Whether the person typed the extra header since the last save: only then may a
    // saved token go to a changed proxy address.
    let header_typed = RwSignal::new(false);
    let window = RwSignal::new(match &initial.model {
        ModelSource::Proxy(m) => m.context_tokens.map(|n| n.to_string()).unwrap_or_default(),
        ModelSource::Rules | ModelSource::Local(_) => String::new(),
    });
    let temperature = RwSignal::new(temperature_text(initial.temperature));
    let cap = RwSignal::new(initial.max_iterations.to_string());
    let reflection = RwSignal::new(initial.reflection);
    let goal_guess = RwSignal::new(initial.goal_guess);
    let use_supabase = RwSignal::new(matches!(initial.backend, Backend::Supabase { .. }));
    let supabase_url = RwSignal::new(supabase_url);
    let anon_key = RwSignal::new(anon_key);
    let images = RwSignal::new(initial.remote_images);
    let collector = RwSignal::new(initial.collector.clone());
    let collector_headers = RwSignal::new(initial.collector_headers.clone());
    // Whether the person typed the collector's headers since the last save: only then
    // may saved headers go to a changed collector address.
    let headers_typed = RwSignal::new(false);
    let amount = |n: Option<f64>| n.map(|n| n.to_string()).unwrap_or_default();
    let price_in = RwSignal::new(amount(initial.price.map(|p| p.input)));
    let price_out = RwSignal::new(amount(initial.price.map(|p| p.output)));
    let conversation_tokens = RwSignal::new(
        (initial.budgets.conversation.tokens)
            .map(|n| n.to_string())
            .unwrap_or_default(),
    );
    let day_cost = RwSignal::new(amount(initial.budgets.day.cost));
    let problems = RwSignal::new(Vec::<FieldProblem>::new());
    let form = NodeRef::<leptos::html::Form>::new();
    let saved = RwSignal::new(false);
    // After a save was tried, problems follow the fields as they are edited.
    let tried = RwSignal::new(false);

    let collect = move || -> Result<Settings, Vec<FieldProblem>> {
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
            let window = window.get_untracked();
            if !window.trim().is_empty() {
                let message = "the context window must be a whole number of tokens";
                settings.context_tokens = parse(&window, "model.window", message, &mut found);
            }
            let header = header.get_untracked();
            if let Some((name, value)) = header.split_once(':') {
                settings.extra_header = Some((name.trim().to_owned(), value.trim().to_owned()));
            } else if !header.trim().is_empty() {
                found.push(FieldProblem {
                    field: "model.header",
                    message: "the extra header must look like “Name: value”".into(),
                });
            }
            ModelSource::Proxy(settings)
        } else if use_local.get_untracked() {
            let mut local = LocalSettings::new(local_url.get_untracked().trim());
            local.backend = local_backend.get_untracked();
            let window = local_window.get_untracked();
            if !window.trim().is_empty() {
                let message = "the context window must be a whole number of tokens";
                local.context_tokens = parse(&window, "model.local", message, &mut found);
            }
            ModelSource::Local(local)
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
        let (price, budgets) = metering(
            [price_in, price_out, conversation_tokens, day_cost].map(|f| f.get_untracked()),
            &mut found,
        );
        let settings = Settings {
            model,
            temperature,
            max_iterations,
            reflection: reflection.get_untracked(),
            goal_guess: goal_guess.get_untracked(),
            backend,
            remote_images: images.get_untracked(),
            character: current.with_untracked(|s| s.character.clone()),
            collector: collector.get_untracked(),
            collector_headers: collector_headers.get_untracked(),
            price,
            budgets,
        };
        let proxy_field = proxy_field(&settings.model);
        found.extend(settings.problems().into_iter().map(|mut problem| {
            if problem.field == "model" {
                problem.field = proxy_field;
            }
            problem
        }));
        if !header_typed.get_untracked() {
            found.extend(
                current
                    .with_untracked(|before| settings.moved_token(before))
                    .map(|problem| FieldProblem {
                        field: "model.header",
                        ..problem
                    }),
            );
        }
        if !headers_typed.get_untracked() {
            found.extend(current.with_untracked(|before| settings.moved_collector_headers(before)));
        }
        if found.is_empty() {
            Ok(settings)
        } else {
            Err(found)
        }
    };
    Effect::new(move |_| {
        // Read every field, so an edit re-checks them.
        let _ = (
            use_proxy.get(),
            proxy_url.get(),
            proxy_model.get(),
            header.get(),
            window.get(),
            temperature.get(),
            cap.get(),
            use_supabase.get(),
            supabase_url.get(),
            anon_key.get(),
        );
        if tried.get_untracked() {
            problems.set(collect().err().unwrap_or_default());
        }
    });
    // Applied or refused: "Saved." and the model loading, or the first field to fix.
    let on_save = std::rc::Rc::new(on_save);
    let finish = move |result: Result<Vec<FieldProblem>, Vec<FieldProblem>>| match result {
        Ok(found) if found.is_empty() => {
            if let ModelSource::Local(local) = current.get_untracked().model {
                follow_loading(&local, local_status, local_progress);
            }
            problems.set(Vec::new());
            header_typed.set(false);
            headers_typed.set(false);
            saved.set(true);
            // "Saved." in view: the person sees the save was taken.
            request_animation_frame(move || {
                let shown = form
                    .get_untracked()
                    .and_then(|f| f.query_selector(".settings-saved").ok().flatten());
                if let Some(shown) = shown {
                    shown.scroll_into_view_with_bool(false);
                }
            });
        }
        Ok(found) | Err(found) => {
            problems.set(found);
            // The person goes to the first field to fix.
            request_animation_frame(move || {
                let first = form
                    .get_untracked()
                    .and_then(|f| f.query_selector("[aria-invalid='true']").ok().flatten())
                    .and_then(|e| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(e).ok());
                if let Some(first) = first {
                    let _ = first.focus();
                    // In view even when it had focus already (Enter in it saved),
                    // where focusing scrolls nothing.
                    first.scroll_into_view_with_bool(false);
                }
            });
        }
    };
    let save = move |ev: leptos::ev::SubmitEvent| {
        ev.prevent_default();
        saved.set(false);
        tried.set(true);
        let settings = match collect() {
            Ok(settings) => settings,
            Err(found) => return finish(Err(found)),
        };
        // A weights address new to these settings is checked first (a picked file is
        // read by the worker itself).
        let unchecked = match &settings.model {
            ModelSource::Local(local)
                if !local.url.starts_with("file:")
                    && current.with_untracked(|c| c.model != settings.model) =>
            {
                Some(crate::web::local_model::page_address(&local.url))
            }
            _ => None,
        };
        // A Supabase project new to these settings is asked once whether it answers.
        let project = match &settings.backend {
            Backend::Supabase { url, anon_key }
                if current.with_untracked(|c| c.backend != settings.backend) =>
            {
                Some((url.clone(), anon_key.clone()))
            }
            _ => None,
        };
        if unchecked.is_none() && project.is_none() {
            return finish(Ok(on_save(settings)));
        }
        if let Some(url) = &unchecked {
            local_status.set(Some(format!("Checking the weights at {url}…")));
        }
        let on_save = std::rc::Rc::clone(&on_save);
        leptos::task::spawn_local(async move {
            if let Some((url, key)) = project
                && let Err(problem) =
                    crate::store::project::check(&crate::web::Fetch, &url, &key).await
            {
                let (field, message) = match problem {
                    crate::store::project::Problem::Url(m) => ("backend.url", m),
                    crate::store::project::Problem::Key(m) => ("backend.anon_key", m),
                };
                return finish(Err(vec![FieldProblem { field, message }]));
            }
            if let Some(url) = unchecked {
                let checked = crate::llm::weights::check(&crate::web::Fetch, &url).await;
                let _ = local_status.try_set(None);
                if let Err(message) = checked {
                    return finish(Err(vec![FieldProblem {
                        field: "model.local",
                        message,
                    }]));
                }
            }
            finish(Ok(on_save(settings)));
        });
    };
    let error = move |field: &'static str| {
        move || {
            problems.with(|p| {
                p.iter()
                    .filter(|p| p.field == field)
                    .map(|p| {
                        view! {
                            <p class="field-error" id=error_id(field) role="alert">{readable(&p.message)}</p>
                        }
                    })
                    .collect_view()
            })
        }
    };
    let invalid = move |field: &'static str| {
        move || {
            problems
                .with(|p| p.iter().any(|p| p.field == field))
                .to_string()
        }
    };
    // Errors first, then the field's hint: what a screen reader reads with the field.
    let described = move |field: &'static str, hint: &'static str| {
        move || {
            let erred = problems.with(|p| p.iter().any(|p| p.field == field));
            if erred {
                format!("{} {hint}", error_id(field)).trim_end().to_owned()
            } else {
                hint.to_owned()
            }
        }
    };
    let close = move || {
        if let Some(on_close) = on_close {
            on_close.run(());
        }
    };
    // Opened, the panel's heading takes focus, so its first field is a Tab away.
    form.on_load(|form| {
        match form
            .query_selector("#settings-heading")
            .ok()
            .flatten()
            .and_then(|h| wasm_bindgen::JsCast::dyn_into::<web_sys::HtmlElement>(h).ok())
        {
            Some(heading) => {
                let _ = heading.focus();
            }
            None => {
                let _ = form.focus();
            }
        }
    });
    view! {
        <form
            node_ref=form
            class="settings"
            aria-labelledby="settings-heading"
            tabindex="-1"
            novalidate
            on:submit=save
            on:keydown=move |ev| {
                if ev.key() == "Escape" {
                    ev.prevent_default();
                    close();
                }
            }
        >
            <h2 id="settings-heading" tabindex="-1">"Settings"</h2>
            <fieldset>
                <legend>"Model"</legend>
                <label><input type="radio" name="model" prop:checked=move || !use_proxy.get() && !use_local.get() on:change=move |_| { use_proxy.set(false); use_local.set(false); } />" Rules model (offline)"</label>
                <label><input type="radio" name="model" class="use-local" prop:checked=move || use_local.get() on:change=move |_| { use_proxy.set(false); use_local.set(true); } />" Local model, in this tab (no server)"</label>
                <div hidden=move || !use_local.get()>
                    <p class="field-hint" id="hint-local">{local_hint()}</p>
                    <label>"Weights (GGUF) address"<input class="local-url" bind:value=local_url aria-invalid=invalid("model.local") aria-describedby=described("model.local", "hint-local") /></label>
                    <label>"…or a file on this computer"<input class="local-file" type="file" accept=".gguf" on:change=move |ev| {
                        if let Some(name) = pick_weights(&ev) {
                            local_url.set(format!("file:{name}"));
                        }
                    } /></label>
                    <label>"Context window, tokens (optional)"<input class="local-window" bind:value=local_window placeholder="2048" inputmode="numeric" aria-invalid=invalid("model.local") /></label>
                    // The select is the only writer of the choice: the saved one is
                    // selected once, then the select holds it.
                    <label>"Runs on"<select class="local-backend" on:change=move |ev| {
                        if let Some(backend) = LocalBackend::from_word(&event_target_value(&ev)) {
                            local_backend.set(backend);
                        }
                    }>
                        <option value="auto" selected=saved_backend == LocalBackend::Auto>"WebGPU where this browser has it, else the CPU"</option>
                        <option value="webgpu" selected=saved_backend == LocalBackend::WebGpu>"WebGPU only"</option>
                        <option value="cpu" selected=saved_backend == LocalBackend::Cpu>"The CPU only"</option>
                    </select></label>
                    {error("model.local")}
                    <p class="local-status" role="status">{move || local_status.get().unwrap_or_default()}</p>
                    {move || local_progress.get().map(|(loaded, total)| match total {
                        // A server that sends no length: a bar that says only "busy".
                        0 => view! { <progress class="local-progress" aria-label="Loading the local model"></progress> }.into_any(),
                        total => view! { <progress class="local-progress" aria-label="Loading the local model" max=total.to_string() value=loaded.min(total).to_string()></progress> }.into_any(),
                    })}
                    <button type="button" class="local-cancel" hidden=move || local_progress.get().is_none() on:click=move |_| {
                        if let ModelSource::Local(local) = current.get_untracked().model {
                            crate::web::local_model::cancel(&local);
                        }
                    }>"Cancel loading"</button>
                    <KeptModels status=local_status />
                </div>
                <label><input type="radio" name="model" class="use-proxy" prop:checked=move || use_proxy.get() on:change=move |_| { use_local.set(false); use_proxy.set(true); } />" OpenAI-compatible proxy"</label>
                <div hidden=move || !use_proxy.get()>
                    <label>"Proxy URL"<input class="proxy-url" type="url" bind:value=proxy_url aria-invalid=invalid("model.url") aria-describedby=described("model.url", "hint-proxy") /></label>
                    <p class="field-hint" id="hint-proxy">"https://, or http:// on this machine (localhost); for example “https://llm.example.com/v1”"</p>
                    {error("model.url")}
                    <label>"Model"<input class="proxy-model" bind:value=proxy_model aria-invalid=invalid("model.name") aria-describedby=described("model.name", "hint-model") /></label>
                    <p class="field-hint" id="hint-model">"The name the proxy serves, for example “gpt-4o-mini”"</p>
                    {error("model.name")}
                    <label>"Context window, tokens (optional)"<input class="proxy-window" bind:value=window placeholder="asked of the server" inputmode="numeric" aria-invalid=invalid("model.window") aria-describedby=described("model.window", "") /></label>
                    {error("model.window")}
                    <label>"Extra header (optional)"<input class="proxy-header" bind:value=header on:input=move |_| header_typed.set(true) placeholder="X-Proxy-Token: …" aria-invalid=invalid("model.header") aria-describedby=described("model.header", "") /></label>
                    {error("model.header")}
                </div>
                {error("model")}
                <label>"Temperature"<input class="temperature" inputmode="decimal" bind:value=temperature aria-invalid=invalid("temperature") aria-describedby=described("temperature", "hint-temperature") /></label>
                <p class="field-hint" id="hint-temperature">"0 to 2"</p>
                {error("temperature")}
            </fieldset>
            <fieldset>
                <legend>"Agent"</legend>
                <label>"Step cap"<input class="step-cap" inputmode="numeric" bind:value=cap aria-invalid=invalid("max_iterations") aria-describedby=described("max_iterations", "hint-cap") /></label>
                <p class="field-hint" id="hint-cap">"1 to 50 steps a run"</p>
                {error("max_iterations")}
                <label><input type="checkbox" class="reflection" bind:checked=reflection />" Review each answer once (reflection)"</label>
                <label><input type="checkbox" class="goal-guess" bind:checked=goal_guess />" Guess the goal of each message first"</label>
                <label><input type="checkbox" class="remote-images" bind:checked=images />" Show images from other sites"</label>
            </fieldset>
            <fieldset>
                <legend>"World"</legend>
                <label><input type="radio" name="backend" prop:checked=move || !use_supabase.get() on:change=move |_| use_supabase.set(false) />" In this page"</label>
                <label><input type="radio" name="backend" class="use-supabase" prop:checked=move || use_supabase.get() on:change=move |_| use_supabase.set(true) />" Supabase"</label>
                <div hidden=move || !use_supabase.get()>
                    <label>"Project URL"<input class="supabase-url" type="url" bind:value=supabase_url placeholder="https://xyz.supabase.co" aria-invalid=invalid("backend.url") aria-describedby=described("backend.url", "hint-supabase") /></label>
                    <p class="field-hint" id="hint-supabase">"https://, or http:// on this machine"</p>
                    {error("backend.url")}
                    <label>"Anon key"<input class="anon-key" bind:value=anon_key placeholder="the public anon key" aria-invalid=invalid("backend.anon_key") aria-describedby=described("backend.anon_key", "hint-anon") /></label>
                    <p class="field-hint" id="hint-anon">"The public anon key — never the service-role key"</p>
                    {error("backend.anon_key")}
                    <AccountPanel />
                </div>
            </fieldset>
            <fieldset>
                <legend>"Telemetry"</legend>
                <label>"Collector"<input class="collector" type="url" bind:value=collector placeholder="https://otel.example.com:4318" aria-invalid=invalid("collector") aria-describedby=described("collector", "hint-collector") /></label>
                <p class="field-hint" id="hint-collector">"An OpenTelemetry collector's OTLP/HTTP address: each run's spans go there (names, ids and times; no prompts). Empty: none."</p>
                <label>"Headers"<textarea class="collector-headers" rows="2" bind:value=collector_headers on:input=move |_| headers_typed.set(true) placeholder="x-api-key: …" aria-invalid=invalid("collector") /></label>
                {error("collector")}
            </fieldset>
            <fieldset>
                <legend>"Usage and cost"</legend>
                <label>"Input price"<input class="price-input" inputmode="decimal" bind:value=price_in placeholder="0.15" aria-invalid=invalid("price") aria-describedby=described("price", "hint-price") /></label>
                <label>"Output price"<input class="price-output" inputmode="decimal" bind:value=price_out placeholder="0.60" aria-invalid=invalid("price") aria-describedby=described("price", "hint-price") /></label>
                <p class="field-hint" id="hint-price">"Dollars per million tokens for the proxy's model; each answer shows its tokens and cost. The rules and local models cost nothing."</p>
                {error("price")}
                <label>"Conversation budget (tokens)"<input class="budget-conversation" inputmode="numeric" bind:value=conversation_tokens aria-invalid=invalid("budgets") /></label>
                <label>"Daily budget ($)"<input class="budget-day" inputmode="decimal" bind:value=day_cost aria-invalid=invalid("budgets") aria-describedby=described("budgets", "hint-budgets") /></label>
                <p class="field-hint" id="hint-budgets">"Reached, a run stops before asking the model again, saying so. Empty: no budget."</p>
                {error("budgets")}
            </fieldset>
            <div class="settings-actions">
                <button type="submit" class="settings-save primary">"Save"</button>
                <button type="button" class="settings-close" on:click=move |_| close()>"Close"</button>
            </div>
            <p class="settings-saved" role="status">{move || if saved.get() { "Saved." } else { "" }}</p>
        </form>
    }
}

/// Which proxy field a problem of `model` is about, by the check that fails.
fn proxy_field(model: &ModelSource) -> &'static str {
    let ModelSource::Proxy(model) = model else {
        return "model";
    };
    match model.validate() {
        Err(SettingsError::Url(_) | SettingsError::PlainHttp(_)) => "model.url",
        Err(SettingsError::EmptyModel) => "model.name",
        Err(SettingsError::ContextTokens(_)) => "model.window",
        Err(SettingsError::HeaderName(_) | SettingsError::ProviderKey) => "model.header",
        _ => "model",
    }
}

/// A message as a person reads it: quoted with “ ”, an empty quote said as such.
fn readable(message: &str) -> String {
    let mut out = String::new();
    let mut open = true;
    for (i, part) in message.replace("``", "nothing").split('`').enumerate() {
        if i > 0 {
            out.push(if open { '“' } else { '”' });
            open = !open;
        }
        out.push_str(part);
    }
    out
}

/// The id of `field`'s error message, for `aria-describedby`.
fn error_id(field: &str) -> String {
    format!("error-{}", field.replace('.', "-"))
}

/// `text` parsed as a `T`, or `None` with `message` noted as `field`'s problem.
/// The price and budgets from their fields (input price, output price, conversation
/// tokens, daily dollars): an empty field sets nothing.
fn metering(
    [input, output, tokens, day]: [String; 4],
    found: &mut Vec<FieldProblem>,
) -> (Option<Price>, Budgets) {
    let amount = "a price or budget is a number of dollars, 0 or more";
    let mut price = None;
    if !(input.trim().is_empty() && output.trim().is_empty()) {
        let input = parse::<f64>(&input, "price", amount, found).unwrap_or(0.0);
        let output = parse::<f64>(&output, "price", amount, found).unwrap_or(0.0);
        let read = Price { input, output };
        if !read.is_valid() {
            found.push(FieldProblem {
                field: "price",
                message: amount.into(),
            });
        }
        price = Some(read);
    }
    let mut budgets = Budgets::default();
    if !tokens.trim().is_empty() {
        let message = "the conversation budget is a whole number of tokens";
        budgets.conversation.tokens = parse(&tokens, "budgets", message, found);
    }
    if !day.trim().is_empty() {
        let cost = parse::<f64>(&day, "budgets", amount, found);
        if cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            found.push(FieldProblem {
                field: "budgets",
                message: amount.into(),
            });
        }
        budgets.day.cost = cost;
    }
    (price, budgets)
}

fn parse<T: std::str::FromStr>(
    text: &str,
    field: &'static str,
    message: &str,
    found: &mut Vec<FieldProblem>,
) -> Option<T> {
    let parsed = text.trim().parse().ok();
    if parsed.is_none() {
        found.push(FieldProblem {
            field,
            message: message.into(),
        });
    }
    parsed
}
