//! The app's settings: where the model comes from, how the agent runs, and which
//! backend holds the world. Validation reports every problem by field, so a form can
//! show each next to its input; nothing invalid is saved. A Supabase key must be the
//! public anon (publishable) key: a service key in the page would bypass row-level
//! security, so it is refused.

use crate::base::json::Read;
use serde::{Deserialize, Serialize};

use crate::llm::local::LocalSettings;
use crate::llm::openai::{ModelSettings, SettingsError, is_web_url, temperature_text};

/// Where answers come from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ModelSource {
    /// The deterministic rules model: no network, no key.
    #[default]
    Rules,
    /// An OpenAI-compatible proxy.
    Proxy(ModelSettings),
    /// A GGUF model in the page's own worker.
    Local(LocalSettings),
}

/// Where the world lives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Backend {
    /// In the page, kept in local storage.
    #[default]
    Local,
    /// A Supabase (or PostgREST) project, reached with its public anon key.
    Supabase { url: String, anon_key: String },
}

/// Everything the settings panel edits.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
#[serde(default)]
pub struct Settings {
    pub model: ModelSource,
    pub temperature: f32,
    /// The iteration cap of a run.
    pub max_iterations: u32,
    /// Review each answer once before it stands.
    pub reflection: bool,
    /// Guess the goal behind each message before working on it.
    pub goal_guess: bool,
    pub backend: Backend,
    /// Show images from other sites in answers (off: only their alt text).
    pub remote_images: bool,
    /// Talk to this character (its file name, e.g. `dotty`) instead of the assistant.
    pub character: Option<String>,
    /// An OpenTelemetry collector's OTLP/HTTP address the runs' spans go to (empty:
    /// none; the inspector still downloads a conversation's trace).
    pub collector: String,
    /// The headers each export carries, one `Name: value` a line.
    pub collector_headers: String,
    /// The proxy model's price, dollars per million tokens (none: its cost is unknown).
    pub price: Option<crate::llm::usage::Price>,
    /// The budgets every run is held to (`app::budget`).
    pub budgets: crate::app::Budgets,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            model: ModelSource::Rules,
            temperature: 0.2,
            max_iterations: crate::run::DEFAULT_MAX_ITERATIONS,
            reflection: false,
            goal_guess: false,
            backend: Backend::Local,
            remote_images: false,
            character: None,
            collector: String::new(),
            collector_headers: String::new(),
            price: None,
            budgets: crate::app::Budgets::default(),
        }
    }
}

impl Settings {
    /// The prices runs are counted at: the proxy model's, when one is set.
    pub fn prices(&self) -> crate::llm::usage::Prices {
        match (&self.model, self.price) {
            (ModelSource::Proxy(model), Some(price)) => {
                crate::llm::usage::Prices(vec![(model.model.clone(), price)])
            }
            _ => crate::llm::usage::Prices::default(),
        }
    }

    /// What may be kept in the page's storage: everything, except that a widget
    /// embedded in someone else's page keeps no proxy token and no collector headers
    /// (often an API key) there (any script of that page could read them); they then
    /// last as long as the page.
    pub fn to_store(&self, embedded: bool) -> Settings {
        let mut kept = self.clone();
        if embedded {
            if let ModelSource::Proxy(model) = &mut kept.model {
                model.extra_header = None;
            }
            kept.collector_headers.clear();
        }
        kept
    }
}

impl Settings {
    /// The proxy token these settings would send to another server than the one it
    /// was saved for (`before`'s proxy): a token is given for one server, so it does
    /// not follow a changed address unless the person types it again. `None` when the
    /// token stays with its server, or there is none.
    pub fn moved_token(&self, before: &Settings) -> Option<FieldProblem> {
        let (ModelSource::Proxy(now), ModelSource::Proxy(then)) = (&self.model, &before.model)
        else {
            return None;
        };
        let (from, to) = (origin(&then.base_url), origin(&now.base_url));
        (then.extra_header.is_some() && now.extra_header == then.extra_header && from != to).then(
            || FieldProblem {
                field: "model",
                message: format!(
                    "the extra header was given for {from}: type it again to send it to {to}, \
                     or clear it"
                ),
            },
        )
    }
}

impl Settings {
    /// The collector headers these settings would send to another collector than the
    /// one they were saved for, as [`Settings::moved_token`] for the proxy: headers
    /// (often an API key) are given for one collector, so they do not follow a changed
    /// address unless the person types them again. `None` when they stay, or are none.
    pub fn moved_collector_headers(&self, before: &Settings) -> Option<FieldProblem> {
        let (from, to) = (origin(&before.collector), origin(&self.collector));
        let kept = !before.collector_headers.trim().is_empty()
            && self.collector_headers == before.collector_headers;
        let both = !before.collector.trim().is_empty() && !self.collector.trim().is_empty();
        (kept && both && from != to).then(|| FieldProblem {
            field: "collector",
            message: format!(
                "the headers were given for {from}: type them again to send them to {to}, \
                 or clear them"
            ),
        })
    }
}

/// A URL's scheme, host and port, in lower case.
fn origin(url: &str) -> String {
    let url = url.trim().to_ascii_lowercase();
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
            format!("{scheme}://{host}")
        }
        None => url,
    }
}

/// One problem with one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldProblem {
    /// The field, e.g. `backend.anon_key`.
    pub field: &'static str,
    pub message: String,
}

impl Settings {
    /// Every problem, in field order; empty when the settings can be used.
    pub fn problems(&self) -> Vec<FieldProblem> {
        let mut found = Vec::new();
        let mut problem = |field, message: String| found.push(FieldProblem { field, message });
        if let ModelSource::Proxy(model) = &self.model
            && let Err(error) = model.validate()
        {
            let message = match error {
                SettingsError::ProviderKey => PAGE_KEY.into(),
                error => error.to_string(),
            };
            problem("model", message);
        }
        if let ModelSource::Local(local) = &self.model
            && let Some(error) = local.problem()
        {
            problem("model.local", error);
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            problem(
                "temperature",
                format!(
                    "the temperature must be between 0 and 2, got {}",
                    temperature_text(self.temperature)
                ),
            );
        }
        if !(1..=50).contains(&self.max_iterations) {
            problem(
                "max_iterations",
                format!("the step cap must be 1 to 50, got {}", self.max_iterations),
            );
        }
        if let Backend::Supabase { url, anon_key } = &self.backend {
            if is_web_url(url) && !crate::base::http::secure_or_loopback(url) {
                problem(
                    "backend.url",
                    format!(
                        "the Supabase URL must use https:// (plain http:// only on this \
                         machine's loopback), got `{}`",
                        url.trim()
                    ),
                );
            }
            if !is_web_url(url) {
                problem(
                    "backend.url",
                    format!(
                        "the Supabase URL must start with https:// and name a host, got `{}`",
                        url.trim()
                    ),
                );
            }
            if let Err(message) = anon_key_only(anon_key) {
                problem("backend.anon_key", message);
            }
        }
        if let Err(message) = self.collector() {
            problem("collector", message);
        }
        found
    }

    /// The collector the runs' spans go to, if one is named; or why it cannot be used.
    pub fn collector(&self) -> Result<Option<crate::trace::Collector>, String> {
        if self.collector.trim().is_empty() {
            return match self.collector_headers.trim() {
                "" => Ok(None),
                _ => Err("headers need a collector address".into()),
            };
        }
        let mut headers = Vec::new();
        for line in self
            .collector_headers
            .lines()
            .filter(|l| !l.trim().is_empty())
        {
            let Some((name, value)) = line.split_once(':') else {
                return Err(format!("`{}` is not `Name: value`", line.trim()));
            };
            headers.push((name.trim().to_owned(), value.trim().to_owned()));
        }
        crate::trace::Collector::new(&self.collector, headers).map(Some)
    }
}

/// Accepts a public key: a legacy JWT whose role is `anon`, or a `sb_publishable_` key.
fn anon_key_only(key: &str) -> Result<(), String> {
    let key = key.trim();
    if key.is_empty() {
        return Err("the anon key is empty".into());
    }
    if key.starts_with("sb_secret_") {
        return Err(SERVICE_KEY.into());
    }
    if key.starts_with("sb_publishable_") {
        return Ok(());
    }
    let role = crate::base::secret::jwt_role(key).ok_or_else(|| {
        "this is not a Supabase key: expected the project's anon key (a JWT) or a \
         sb_publishable_ key"
            .to_owned()
    })?;
    match role.as_str() {
        "anon" => Ok(()),
        "service_role" => Err(SERVICE_KEY.into()),
        other => Err(format!(
            "the key's role is `{other}`; use the project's anon key"
        )),
    }
}

/// Why Settings refuse a provider's key in the proxy's extra header, and what to use
/// instead: the person typing it has no `fetch` of their own to pass, as a host has.
const PAGE_KEY: &str = "this looks like a provider API key, which a web page must never \
    hold: any script on the page (an ad, an analytics tag, an injected one) can read what \
    the page holds and spend on the key. Use the Familiar extension, which keeps the key in \
    its own storage, or a proxy that keeps the key and gives you a token of its own; a \
    model server on this machine needs none";

const SERVICE_KEY: &str = "this is a service key: it bypasses row-level security and must \
    never be in a web page; use the project's anon key";

/// The settings kept under `key`, and what to tell the person when they could not be
/// used: unreadable or invalid ones are kept aside under `{key}.corrupt` (never read as
/// the defaults and overwritten at the next save without a word), and the defaults
/// stand in.
pub fn load_settings(storage: &dyn super::Storage, key: &str) -> (Settings, Option<super::Notice>) {
    use super::keys::{Loaded, keep_aside};
    let corrupt = |kept_as, error| super::Notice::Corrupt {
        key: key.to_owned(),
        kept_as,
        error,
    };
    match super::load_kept::<Settings>(storage, key) {
        Loaded::Found(settings) if settings.problems().is_empty() => (settings, None),
        Loaded::Found(settings) => {
            let why: Vec<String> = settings
                .problems()
                .iter()
                .map(|p| format!("{}: {}", p.field, p.message))
                .collect();
            let text = storage.load(key).unwrap_or_default();
            let notice = match keep_aside::<()>(storage, key, &text, why.join("; ")) {
                Loaded::Corrupt { kept_as, error } => Some(corrupt(kept_as, error)),
                _ => None,
            };
            (Settings::default(), notice)
        }
        Loaded::Missing => (Settings::default(), None),
        Loaded::Corrupt { kept_as, error } => (Settings::default(), Some(corrupt(kept_as, error))),
    }
}

#[cfg(test)]
#[path = "settings_tests.rs"]
mod tests;
