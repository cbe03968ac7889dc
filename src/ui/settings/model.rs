//! Settings → Model: the rules model, the local model in this tab, or an
//! OpenAI-compatible proxy (its address, model, window and extra header), and the
//! temperature. A saved proxy token does not follow a changed address unless typed
//! again.

use leptos::prelude::*;

use super::loading::{
    DEFAULT_LOCAL_URL, Progress, follow, follow_loading, local_hint, pick_weights,
};
use super::{Problems, parse};
use crate::app::settings::{FieldProblem, ModelSource, Settings};
use crate::llm::local::{LocalBackend, LocalSettings};
use crate::llm::openai::{ModelSettings, SettingsError, temperature_text};

/// The Model fieldset's fields, as typed.
#[derive(Clone, Copy)]
pub(super) struct Fields {
    use_proxy: RwSignal<bool>,
    use_local: RwSignal<bool>,
    proxy_url: RwSignal<String>,
    proxy_model: RwSignal<String>,
    header: RwSignal<String>,
    /// Whether the person typed the extra header since the last save: only then may a
    /// saved token go to a changed proxy address.
    header_typed: RwSignal<bool>,
    window: RwSignal<String>,
    temperature: RwSignal<String>,
    local_url: RwSignal<String>,
    local_window: RwSignal<String>,
    local_backend: RwSignal<LocalBackend>,
    /// The backend saved, which the select shows chosen once.
    saved_backend: LocalBackend,
    /// The local model's loading, in words.
    pub(super) local_status: RwSignal<Option<String>>,
    local_progress: RwSignal<Progress>,
}

impl Fields {
    pub(super) fn new(initial: &Settings) -> Self {
        let (proxy_url, proxy_model, header) = match &initial.model {
            ModelSource::Proxy(m) => (
                m.base_url.clone(),
                m.model.clone(),
                m.extra_header
                    .clone()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .unwrap_or_default(),
            ),
            ModelSource::Rules | ModelSource::Local(_) => {
                (String::new(), String::new(), String::new())
            }
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
        let fields = Self {
            use_proxy: RwSignal::new(matches!(initial.model, ModelSource::Proxy(_))),
            use_local: RwSignal::new(matches!(initial.model, ModelSource::Local(_))),
            proxy_url: RwSignal::new(proxy_url),
            proxy_model: RwSignal::new(proxy_model),
            header: RwSignal::new(header),
            header_typed: RwSignal::new(false),
            window: RwSignal::new(match &initial.model {
                ModelSource::Proxy(m) => {
                    m.context_tokens.map(|n| n.to_string()).unwrap_or_default()
                }
                ModelSource::Rules | ModelSource::Local(_) => String::new(),
            }),
            temperature: RwSignal::new(temperature_text(initial.temperature)),
            local_url: RwSignal::new(local_url),
            local_window: RwSignal::new(local_window),
            local_backend: RwSignal::new(local_backend),
            saved_backend: local_backend,
            local_status: RwSignal::new(None::<String>),
            local_progress: RwSignal::new(None::<(u64, u64)>),
        };
        // Opened while the saved model loads (or after): its status from where it is.
        if let ModelSource::Local(local) = &initial.model
            && let Some(worker) = crate::web::local_model::running(local)
        {
            follow(&worker, fields.local_status, fields.local_progress);
        }
        fields
    }

    /// Reads the fields whose edits re-check the form.
    pub(super) fn track(&self) {
        let _ = (
            self.use_proxy.get(),
            self.proxy_url.get(),
            self.proxy_model.get(),
            self.header.get(),
            self.window.get(),
            self.temperature.get(),
        );
    }

    /// The temperature and the model source, into `settings`.
    pub(super) fn read(&self, settings: &mut Settings, found: &mut Vec<FieldProblem>) {
        let temperature = parse(
            &self.temperature.get_untracked(),
            "temperature",
            "the temperature must be a number",
            found,
        )
        .unwrap_or(0.0);
        settings.temperature = temperature;
        settings.model = if self.use_proxy.get_untracked() {
            let mut model = ModelSettings::new(
                self.proxy_url.get_untracked().trim(),
                self.proxy_model.get_untracked().trim(),
            );
            model.temperature = Some(temperature);
            let window = self.window.get_untracked();
            if !window.trim().is_empty() {
                let message = "the context window must be a whole number of tokens";
                model.context_tokens = parse(&window, "model.window", message, found);
            }
            let header = self.header.get_untracked();
            if let Some((name, value)) = header.split_once(':') {
                model.extra_header = Some((name.trim().to_owned(), value.trim().to_owned()));
            } else if !header.trim().is_empty() {
                found.push(FieldProblem {
                    field: "model.header",
                    message: "the extra header must look like “Name: value”".into(),
                });
            }
            ModelSource::Proxy(model)
        } else if self.use_local.get_untracked() {
            let mut local = LocalSettings::new(self.local_url.get_untracked().trim());
            local.backend = self.local_backend.get_untracked();
            let window = self.local_window.get_untracked();
            if !window.trim().is_empty() {
                let message = "the context window must be a whole number of tokens";
                local.context_tokens = parse(&window, "model.local", message, found);
            }
            ModelSource::Local(local)
        } else {
            ModelSource::Rules
        };
    }

    /// The saved token `settings` would send to another proxy than `before`'s, unless
    /// the person typed the header again.
    pub(super) fn moved_token(
        &self,
        settings: &Settings,
        before: &Settings,
    ) -> Option<FieldProblem> {
        if self.header_typed.get_untracked() {
            return None;
        }
        settings.moved_token(before).map(|problem| FieldProblem {
            field: "model.header",
            ..problem
        })
    }

    /// Saved as `now`: the local model starts loading, and a header typed is the
    /// saved one.
    pub(super) fn saved(&self, now: &Settings) {
        if let ModelSource::Local(local) = &now.model {
            follow_loading(local, self.local_status, self.local_progress);
        }
        self.header_typed.set(false);
    }

    /// The Model fieldset.
    pub(super) fn view(self, problems: Problems, current: Signal<Settings>) -> impl IntoView {
        let Self {
            use_proxy,
            use_local,
            proxy_url,
            proxy_model,
            header,
            header_typed,
            window,
            temperature,
            local_url,
            local_window,
            local_backend,
            saved_backend,
            local_status,
            local_progress,
        } = self;
        let error = move |field| problems.error(field);
        let invalid = move |field| problems.invalid(field);
        let described = move |field, hint| problems.described(field, hint);
        view! {
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
                    <super::super::kept_models::KeptModels status=local_status />
                </div>
                <label><input type="radio" name="model" class="use-proxy" prop:checked=move || use_proxy.get() on:change=move |_| { use_local.set(false); use_proxy.set(true); } />" OpenAI-compatible proxy, or a model server on this machine"</label>
                <div hidden=move || !use_proxy.get()>
                    {super::servers::view(proxy_url, proxy_model, header, window)}
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
        }
    }
}

/// Which proxy field a problem of `model` is about, by the check that fails.
pub(super) fn proxy_field(model: &ModelSource) -> &'static str {
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
