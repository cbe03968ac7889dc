//! `createAgent`'s `model` (and each composed agent's): the rules model, an
//! OpenAI-compatible proxy or a local GGUF model, with every problem named by its path.

use serde_json::Value;

use super::{Fields, Problem, kind};
use crate::llm::local::{LocalBackend, LocalSettings};
use crate::llm::openai::{ModelSettings, SettingsError};
use crate::llm::rules::RulesModel;

/// Where the agent's answers come from.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    /// The rules model, with the host's rules (or none: it answers its fallback).
    Rules(RulesModel),
    Proxy(ModelSettings),
    /// A GGUF model in the page's own worker (`model: {local: {url}}`).
    Local(LocalSettings),
}

pub(super) fn read_model(value: Option<&Value>, problems: &mut Vec<Problem>) -> Option<ModelSpec> {
    read_model_at(value, "config.model", problems)
}

/// [`read_model`] of the model at `path`.
pub(super) fn read_model_at(
    value: Option<&Value>,
    path: &str,
    problems: &mut Vec<Problem>,
) -> Option<ModelSpec> {
    let no_rules = || RulesModel {
        rules: Vec::new(),
        fallback: "I run offline with no rules for this.".into(),
    };
    let value = value?;
    if value.as_str() == Some("rules") {
        return Some(ModelSpec::Rules(no_rules()));
    }
    if value.get("rules").is_some() {
        let mut f = Fields::new(value, path, problems, &["rules", "fallback"])?;
        let fallback = f.string("fallback");
        let rules = f.get("rules").cloned().unwrap_or_default();
        let file = serde_json::json!({"rules": rules, "fallback": fallback.unwrap_or_else(|| no_rules().fallback)});
        return match crate::base::json::from_value::<RulesModel>(file) {
            Ok(model) => Some(ModelSpec::Rules(model)),
            Err(error) => {
                // The deepest path: `rules[0].keywords`, not `rules`.
                let path = error.path().to_string();
                f.problem(&path, error.into_inner().to_string());
                None
            }
        };
    }
    if let Some(local) = value.get("local") {
        return read_local(local, problems);
    }
    const KNOWN: [&str; 9] = [
        "url",
        "fetch",
        "model",
        "header",
        "temperature",
        "maxTokens",
        "contextTokens",
        "timeoutMs",
        "stream",
    ];
    let mut f = Fields::new(value, path, problems, &KNOWN)?;
    // A function never reaches here (JSON leaves functions out): anything else is wrong.
    if f.get("fetch").is_some() {
        f.problem(
            "fetch",
            "must be a function `(url, init) => Promise<Response>`, which sends the model's \
             requests in the page's fetch's place",
        );
    }
    let url = f.string("url").unwrap_or_default();
    let model = f.string("model").unwrap_or_default();
    let mut settings = ModelSettings::new(url, model);
    if let Some(temperature) = f.get("temperature") {
        match temperature.as_f64() {
            Some(t) => settings.temperature = Some(t as f32),
            None => f.problem(
                "temperature",
                format!("expected a number, got {}", kind(temperature)),
            ),
        }
    }
    settings.max_tokens = f
        .number("maxTokens", 1..=1_000_000)
        .and_then(|n| u32::try_from(n).ok());
    settings.context_tokens = f
        .number("contextTokens", 256..=10_000_000)
        .and_then(|n| u32::try_from(n).ok());
    if let Some(ms) = f.number("timeoutMs", 1..=u64::MAX) {
        settings.timeout_ms = ms;
    }
    if let Some(stream) = f.boolean("stream") {
        settings.stream = stream;
    }
    if let Some(header) = f.get("header")
        && let Some(mut h) = Fields::new(
            header,
            &format!("{path}.header"),
            f.problems,
            &["name", "value"],
        )
    {
        let name = h.string("name").unwrap_or_default();
        let value = h.string("value").unwrap_or_default();
        settings.extra_header = Some((name, value));
    }
    for error in every_problem(&settings) {
        f.problem(field_of(&error), error.to_string());
    }
    Some(ModelSpec::Proxy(settings))
}

/// `model: {local: "…gguf"}` or `model: {local: {url, contextTokens, worker, sha256,
/// backend, threads}}`.
fn read_local(value: &Value, problems: &mut Vec<Problem>) -> Option<ModelSpec> {
    let mut settings = match value.as_str() {
        Some(url) => LocalSettings::new(url),
        None => {
            let known = [
                "url",
                "contextTokens",
                "worker",
                "sha256",
                "backend",
                "threads",
                "onProgress",
            ];
            let mut f = Fields::new(value, "config.model.local", problems, &known)?;
            let mut settings = LocalSettings::new(f.string("url").unwrap_or_default());
            settings.context_tokens = f
                .number("contextTokens", 256..=131_072)
                .and_then(|n| u32::try_from(n).ok());
            settings.worker = f.string("worker");
            settings.threads = f
                .number("threads", 1..=64)
                .and_then(|n| u32::try_from(n).ok());
            settings.sha256 = f.string("sha256").map(|h| h.trim().to_ascii_lowercase());
            if let Some(word) = f.string("backend") {
                match LocalBackend::from_word(word.trim()) {
                    Some(backend) => settings.backend = backend,
                    None => f.problem(
                        "backend",
                        format!("must be “auto”, “webgpu” or “cpu”, not “{word}”"),
                    ),
                }
            }
            settings
        }
    };
    if let Some(problem) = settings
        .sha256
        .is_some()
        .then(|| settings.problem())
        .flatten()
    {
        problems.push(Problem {
            path: "config.model.local.sha256".into(),
            message: problem,
        });
        return None;
    }
    settings.url = settings.url.trim().to_owned();
    if settings.url.is_empty() {
        problems.push(Problem {
            path: "config.model.local.url".into(),
            message: "the address of the model's GGUF file is required".into(),
        });
        return None;
    }
    Some(ModelSpec::Local(settings))
}

/// Every problem of `settings`: `validate` stops at the first, so each setting is
/// checked alone, among others known to be valid.
fn every_problem(settings: &ModelSettings) -> Vec<SettingsError> {
    let valid = ModelSettings::new("https://proxy.invalid", "model");
    let header = settings.extra_header.as_ref();
    let alone = [
        ModelSettings {
            base_url: settings.base_url.clone(),
            ..valid.clone()
        },
        ModelSettings {
            model: settings.model.clone(),
            ..valid.clone()
        },
        ModelSettings {
            temperature: settings.temperature,
            ..valid.clone()
        },
        ModelSettings {
            max_tokens: settings.max_tokens,
            ..valid.clone()
        },
        ModelSettings {
            timeout_ms: settings.timeout_ms,
            ..valid.clone()
        },
        // The window is checked against the answer's tokens, so with them.
        ModelSettings {
            max_tokens: settings.max_tokens,
            context_tokens: settings.context_tokens,
            ..valid.clone()
        },
        // The header's name and value, each alone.
        ModelSettings {
            extra_header: header.map(|(name, _)| (name.clone(), String::new())),
            ..valid.clone()
        },
        ModelSettings {
            extra_header: header.map(|(_, value)| ("X-Proxy-Token".into(), value.clone())),
            ..valid
        },
    ];
    let mut found: Vec<SettingsError> = Vec::new();
    for error in alone.iter().filter_map(|s| s.validate().err()) {
        if !found.contains(&error) {
            found.push(error);
        }
    }
    found
}

/// The field of `config.model` a settings problem is about.
fn field_of(error: &SettingsError) -> &'static str {
    match error {
        SettingsError::Url(_) | SettingsError::PlainHttp(_) => "url",
        SettingsError::EmptyModel => "model",
        SettingsError::Temperature(_) => "temperature",
        SettingsError::MaxTokens => "maxTokens",
        SettingsError::ContextTokens(_) => "contextTokens",
        SettingsError::Timeout(_) => "timeoutMs",
        SettingsError::HeaderName(_) => "header.name",
        SettingsError::ProviderKey => "header.value",
    }
}
