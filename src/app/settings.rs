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
mod tests {
    use super::*;

    #[test]
    fn a_provider_key_in_the_extra_header_is_refused_saying_why_and_what_instead() {
        let mut model = crate::llm::openai::ModelSettings::new("https://llm.example.com/v1", "m");
        let with = |value: &str| {
            let mut model = model.clone();
            model.extra_header = Some(("Authorization".into(), value.into()));
            Settings {
                model: ModelSource::Proxy(model),
                ..Settings::default()
            }
            .problems()
        };
        let refused = with("Bearer sk-proj-4f9c2d7e8a1b3c5d6e7f8a9b"); // fake-key
        assert_eq!(refused.len(), 1, "{refused:?}");
        assert_eq!(refused[0].field, "model");
        let message = &refused[0].message;
        assert!(message.contains("any script on the page"), "{message}");
        assert!(message.contains("Use the Familiar extension"), "{message}");
        assert!(message.contains("a proxy that keeps the key"), "{message}");
        assert!(
            !message.contains("`fetch`"),
            "a person has no fetch to pass: {message}"
        );
        assert_eq!(
            with("Bearer team-token-42"),
            [],
            "a proxy's own token passes"
        );
        model.extra_header = Some((
            "X-Api-Key".into(),
            "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW".into(), // fake-key
        ));
        let google = Settings {
            model: ModelSource::Proxy(model),
            ..Settings::default()
        };
        assert_eq!(google.problems().len(), 1, "a Google key too");
    }

    #[test]
    fn an_embedded_widget_keeps_no_proxy_token_in_storage() {
        let mut model = crate::llm::openai::ModelSettings::new("https://llm.example.com/v1", "m");
        model.extra_header = Some(("X-Proxy-Token".into(), "team-42".into()));
        let settings = Settings {
            model: ModelSource::Proxy(model),
            ..Settings::default()
        };
        let ModelSource::Proxy(kept) = settings.to_store(true).model else {
            panic!("not a proxy");
        };
        assert_eq!(kept.extra_header, None);
        assert_eq!(kept.base_url, "https://llm.example.com/v1");
        assert_eq!(
            settings.to_store(false),
            settings,
            "the demo's own page keeps it"
        );
    }

    #[test]
    fn an_embedded_widget_keeps_no_collector_headers_in_storage() {
        let settings = Settings {
            collector: "https://otel.example:4318".into(),
            collector_headers: "x-api-key: k-123".into(),
            ..Settings::default()
        };
        let kept = settings.to_store(true);
        assert_eq!(kept.collector_headers, "");
        assert_eq!(kept.collector, "https://otel.example:4318");
        assert_eq!(
            settings.to_store(false),
            settings,
            "the demo's own page keeps them"
        );
    }

    #[test]
    fn collector_headers_do_not_follow_a_changed_address_unasked() {
        let collector = |url: &str, headers: &str| Settings {
            collector: url.into(),
            collector_headers: headers.into(),
            ..Settings::default()
        };
        let saved = collector("https://otel.example:4318", "x-api-key: k-123");
        let moved = collector("https://elsewhere.example", "x-api-key: k-123");
        let problem = moved.moved_collector_headers(&saved).unwrap();
        assert_eq!(problem.field, "collector");
        assert_eq!(
            problem.message,
            "the headers were given for https://otel.example:4318: type them again to send \
             them to https://elsewhere.example, or clear them"
        );
        for fine in [
            collector("https://OTEL.example:4318/v1/traces", "x-api-key: k-123"),
            collector("https://elsewhere.example", "x-api-key: k-124"),
            collector("https://elsewhere.example", ""),
        ] {
            assert_eq!(fine.moved_collector_headers(&saved), None, "{fine:?}");
        }
        assert_eq!(moved.moved_collector_headers(&Settings::default()), None);
    }

    #[test]
    fn the_proxy_models_price_is_the_one_runs_are_counted_at_and_older_saves_have_none() {
        let price = crate::llm::usage::Price {
            input: 0.15,
            output: 0.6,
        };
        let proxy = Settings {
            model: ModelSource::Proxy(crate::llm::openai::ModelSettings::new(
                "https://llm.example.com/v1",
                "gpt-4o-mini",
            )),
            price: Some(price),
            ..Settings::default()
        };
        assert_eq!(proxy.prices().of("gpt-4o-mini"), Some(price));
        let rules = Settings {
            price: Some(price),
            ..Settings::default()
        };
        assert_eq!(rules.prices(), crate::llm::usage::Prices::default());
        let older: Settings =
            crate::base::json::from_text(r#"{"temperature": 0.5}"#).unwrap_or_default();
        assert_eq!(
            (older.price, older.budgets),
            (None, crate::app::Budgets::default())
        );
    }

    #[test]
    fn a_proxy_token_does_not_follow_a_changed_address_unasked() {
        let proxy = |url: &str, token: Option<&str>| {
            let mut model = crate::llm::openai::ModelSettings::new(url, "m");
            model.extra_header = token.map(|t| ("X-Proxy-Token".into(), t.into()));
            Settings {
                model: ModelSource::Proxy(model),
                ..Settings::default()
            }
        };
        let saved = proxy("https://llm.example.com/v1", Some("team-42"));
        let moved = proxy("https://elsewhere.example/v1", Some("team-42"));
        let problem = moved.moved_token(&saved).unwrap();
        assert_eq!(problem.field, "model");
        assert_eq!(
            problem.message,
            "the extra header was given for https://llm.example.com: type it again to send \
             it to https://elsewhere.example, or clear it"
        );
        for fine in [
            proxy("https://LLM.example.com/v2", Some("team-42")),
            proxy("https://elsewhere.example/v1", Some("team-43")),
            proxy("https://elsewhere.example/v1", None),
        ] {
            assert_eq!(fine.moved_token(&saved), None, "{:?}", fine.model);
        }
        assert_eq!(moved.moved_token(&Settings::default()), None);
    }

    #[test]
    fn supabase_over_plain_http_is_refused_except_on_loopback() {
        let with = |url: &str| Settings {
            backend: Backend::Supabase {
                url: url.into(),
                anon_key: "sb_publishable_abc".into(),
            },
            ..Settings::default()
        };
        let problems = with("http://db.example.com").problems();
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].message.contains("https://"));
        assert!(with("http://127.0.0.1:54321").problems().is_empty());
        assert!(with("https://db.example.com").problems().is_empty());
    }

    /// A JWT with these claims (the signature is not checked here).
    fn jwt(claims: &str) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let encode = |bytes: &[u8]| -> String {
            bytes
                .chunks(3)
                .flat_map(|chunk| {
                    let n = chunk.iter().fold(0u32, |n, b| (n << 8) | u32::from(*b))
                        << (8 * (3 - chunk.len()));
                    (0..=chunk.len())
                        .map(move |i| ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char)
                })
                .collect()
        };
        format!(
            "{}.{}.signature",
            encode(br#"{"alg":"HS256","typ":"JWT"}"#),
            encode(claims.as_bytes())
        )
    }

    fn supabase(anon_key: &str) -> Settings {
        Settings {
            backend: Backend::Supabase {
                url: "https://abc.supabase.co".into(),
                anon_key: anon_key.into(),
            },
            ..Settings::default()
        }
    }

    #[test]
    fn the_defaults_are_valid() {
        assert_eq!(Settings::default().problems(), []);
    }

    #[test]
    fn an_anon_key_is_accepted_and_a_service_key_refused() {
        assert_eq!(
            supabase(&jwt(r#"{"iss":"supabase","role":"anon"}"#)).problems(),
            []
        );
        assert_eq!(supabase("sb_publishable_abc123").problems(), []);
        for key in [
            jwt(r#"{"role":"service_role"}"#),
            "sb_secret_abc".to_owned(),
        ] {
            let problems = supabase(&key).problems();
            assert_eq!(problems.len(), 1, "{key}");
            assert_eq!(problems[0].field, "backend.anon_key");
            assert!(problems[0].message.contains("service key"), "{problems:?}");
        }
        let problems = supabase("not-a-key").problems();
        assert!(problems[0].message.contains("not a Supabase key"));
    }

    #[test]
    fn every_problem_is_reported_with_its_field() {
        let settings = Settings {
            model: ModelSource::Proxy(ModelSettings::new("ftp://x", "m")),
            temperature: 3.0,
            max_iterations: 0,
            backend: Backend::Supabase {
                url: "abc.supabase.co".into(),
                anon_key: String::new(),
            },
            ..Settings::default()
        };
        let fields: Vec<_> = settings.problems().iter().map(|p| p.field).collect();
        assert_eq!(
            fields,
            [
                "model",
                "temperature",
                "max_iterations",
                "backend.url",
                "backend.anon_key"
            ]
        );
    }

    #[test]
    fn settings_round_trip_and_missing_fields_take_defaults() {
        let settings = supabase("sb_publishable_x");
        let json = serde_json::to_string(&settings).unwrap();
        assert_eq!(serde_json::from_str::<Settings>(&json).unwrap(), settings);
        let partial: Settings = serde_json::from_str(r#"{"reflection": true}"#).unwrap();
        assert!(partial.reflection);
        assert!(
            !partial.goal_guess,
            "a save from before goal guessing guesses none"
        );
        assert_eq!(partial.max_iterations, 10);
    }

    #[test]
    fn unreadable_or_invalid_settings_are_kept_aside_and_said() {
        use crate::app::{Notice, Storage, VolatileStorage};
        let storage = VolatileStorage::new();
        assert_eq!(load_settings(&storage, "s"), (Settings::default(), None));
        storage.save("s", "{not json").unwrap();
        let (settings, notice) = load_settings(&storage, "s");
        assert_eq!(settings, Settings::default());
        assert!(
            matches!(notice, Some(Notice::Corrupt { ref kept_as, .. }) if kept_as == "s.corrupt")
        );
        assert_eq!(storage.load("s.corrupt").as_deref(), Some("{not json"));
        let invalid = Settings {
            max_iterations: 0,
            ..Settings::default()
        };
        assert!(!invalid.problems().is_empty());
        let text = serde_json::to_string(&invalid).unwrap();
        storage.save("s", &text).unwrap();
        let (settings, notice) = load_settings(&storage, "s");
        assert_eq!(settings, Settings::default());
        assert!(
            matches!(notice, Some(Notice::Corrupt { ref error, .. }) if error.contains("max_iterations")),
            "{notice:?}"
        );
        assert_eq!(storage.load("s.corrupt").as_deref(), Some(text.as_str()));
    }

    #[test]
    fn a_collector_is_named_by_its_address_and_header_lines_and_checked() {
        let with = |url: &str, headers: &str| Settings {
            collector: url.into(),
            collector_headers: headers.into(),
            ..Settings::default()
        };
        assert_eq!(Settings::default().collector(), Ok(None));
        let named = with("https://otel.example", "x-api-key: k1\n\nx-tenant:tavern");
        let collector = named.collector().unwrap().unwrap();
        assert_eq!(collector.url, "https://otel.example/v1/traces");
        assert_eq!(
            collector.headers,
            [
                ("x-api-key".into(), "k1".into()),
                ("x-tenant".into(), "tavern".into())
            ]
        );
        assert!(named.problems().is_empty());
        for (url, headers) in [
            ("http://otel.example", ""),
            ("https://otel.example", "no colon"),
            ("", "x-api-key: k1"),
        ] {
            let problems = with(url, headers).problems();
            assert_eq!(problems.len(), 1, "{url} {headers}");
            assert_eq!(problems[0].field, "collector");
        }
    }
}
