//! Where and how to reach an OpenAI-compatible proxy, validated before any request.

use crate::base::json::Read;
use serde::Serialize;

/// Settings of the OpenAI-compatible client. The page never holds a provider key:
/// the URL is a proxy that adds it; an optional extra header can carry a proxy token.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ModelSettings {
    /// The proxy's base URL, e.g. `https://llm.example.com/v1`.
    pub base_url: String,
    pub model: String,
    #[serde(default)]
    pub temperature: Option<f32>,
    #[serde(default)]
    pub max_tokens: Option<u32>,
    /// Longest wait for the response to start, and between streamed chunks.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    /// One extra request header, such as a proxy's own access token.
    #[serde(default)]
    pub extra_header: Option<(String, String)>,
    /// Ask for a streamed answer (the default). Some servers cannot stream tool calls;
    /// either way, a whole JSON answer is read as well as a stream.
    #[serde(default = "yes")]
    pub stream: bool,
    /// The model's context window in tokens (`contextTokens`); `None`: ask the server,
    /// else assume `llm::window::DEFAULT_CONTEXT_TOKENS`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u32>,
}

fn yes() -> bool {
    true
}

fn default_timeout_ms() -> u64 {
    60_000
}

/// A setting that cannot work, said so that the user can fix it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    #[error("the proxy URL must start with http:// or https:// and name a host, got `{0}`")]
    Url(String),
    #[error(
        "the proxy URL must use https:// (plain http:// only to this machine: localhost, \
         127.0.0.0/8 or ::1), got `{0}`: over plain http anyone on the network reads the \
         conversation and the proxy token, and can answer in the model's place"
    )]
    PlainHttp(String),
    #[error("the model name is empty")]
    EmptyModel,
    #[error("the temperature must be between 0 and 2, got {0}")]
    Temperature(String),
    #[error("the maximum number of tokens must be at least 1")]
    MaxTokens,
    #[error(
        "the context window must be 256 to 10,000,000 tokens and more than the maximum number of tokens, got {0}"
    )]
    ContextTokens(u32),
    #[error("the timeout must be between 1 second and 10 minutes, got {0} ms")]
    Timeout(u64),
    #[error("`{0}` cannot be used as a header name")]
    HeaderName(String),
    #[error(
        "the extra header's value looks like a provider API key, which a web page must never \
         hold: every script on the page (its ads, its analytics, an injected one) can read it \
         and spend on it. Keep the key in a proxy, or pass `fetch`, a function that adds it \
         outside the page's reach (an extension's trusted storage, your own server)"
    )]
    ProviderKey,
}

impl ModelSettings {
    /// Settings for `model` behind the proxy at `base_url`, with defaults elsewhere.
    pub fn new(base_url: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            base_url: base_url.into(),
            model: model.into(),
            temperature: None,
            max_tokens: None,
            timeout_ms: default_timeout_ms(),
            extra_header: None,
            stream: true,
            context_tokens: None,
        }
    }

    /// Checks every setting; the first problem found is returned.
    pub fn validate(&self) -> Result<(), SettingsError> {
        validate_url(&self.base_url)?;
        if self.model.trim().is_empty() {
            return Err(SettingsError::EmptyModel);
        }
        if let Some(t) = self.temperature.filter(|t| !(0.0..=2.0).contains(t)) {
            return Err(SettingsError::Temperature(temperature_text(t)));
        }
        if self.max_tokens == Some(0) {
            return Err(SettingsError::MaxTokens);
        }
        if let Some(n) = self.context_tokens
            && (!(256..=10_000_000).contains(&n) || self.max_tokens.is_some_and(|m| m >= n))
        {
            return Err(SettingsError::ContextTokens(n));
        }
        if !(1_000..=600_000).contains(&self.timeout_ms) {
            return Err(SettingsError::Timeout(self.timeout_ms));
        }
        if let Some((name, value)) = &self.extra_header {
            validate_header(name, value)?;
        }
        Ok(())
    }

    /// The chat-completions endpoint: the base URL plus `/chat/completions`, unless
    /// the base URL already ends there.
    pub fn endpoint(&self) -> String {
        let base = self.base_url.trim().trim_end_matches('/');
        if base.ends_with("/chat/completions") {
            base.to_owned()
        } else {
            format!("{base}/chat/completions")
        }
    }
}

fn validate_url(url: &str) -> Result<(), SettingsError> {
    if !is_web_url(url) {
        return Err(SettingsError::Url(url.trim().to_owned()));
    }
    if !crate::base::http::secure_or_loopback(url) {
        return Err(SettingsError::PlainHttp(url.trim().to_owned()));
    }
    Ok(())
}

/// Whether `url` is an `http(s)://` address naming a host, without credentials or
/// spaces: the shape of every server address a setting may hold.
pub(crate) fn is_web_url(url: &str) -> bool {
    let url = url.trim();
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"));
    let host = rest
        .and_then(|r| r.split(['/', '?', '#']).next())
        .unwrap_or("");
    let host_name = host.rsplit('@').next().unwrap_or("");
    !host_name.is_empty()
        && !host_name.starts_with(':')
        && !host.contains('@')
        && !url.contains(char::is_whitespace)
}

fn validate_header(name: &str, value: &str) -> Result<(), SettingsError> {
    const FORBIDDEN: [&str; 6] = [
        "host",
        "content-length",
        "content-type",
        "cookie",
        "origin",
        "connection",
    ];
    let token = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c));
    if !token || FORBIDDEN.contains(&name.to_ascii_lowercase().as_str()) {
        return Err(SettingsError::HeaderName(name.to_owned()));
    }
    if crate::base::secret::holds_secret(value) {
        return Err(SettingsError::ProviderKey);
    }
    Ok(())
}

/// A temperature as people write it ("0.2", "1.5"): the shortest text that reads back
/// as the same number. Through serde_json's float writer, already in the bundle for the
/// wire, rather than `f32`'s `Display`, which alone adds 10 KB to the wasm.
pub fn temperature_text(t: f32) -> String {
    if t.is_finite() {
        serde_json::to_string(&t).unwrap_or_default()
    } else if t.is_nan() {
        "NaN".into()
    } else if t > 0.0 {
        "inf".into()
    } else {
        "-inf".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temperatures_read_as_people_write_them() {
        let shown: Vec<String> = [0.2, 1.5, 0.0, 2.0, 0.7, f32::NAN, f32::INFINITY]
            .into_iter()
            .map(temperature_text)
            .collect();
        assert_eq!(shown, ["0.2", "1.5", "0.0", "2.0", "0.7", "NaN", "inf"]);
    }

    fn valid() -> ModelSettings {
        ModelSettings::new("https://llm.example.com/v1/", "gpt-4o-mini")
    }

    #[test]
    fn good_settings_pass_and_name_the_endpoint() {
        assert_eq!(valid().validate(), Ok(()));
        assert_eq!(
            valid().endpoint(),
            "https://llm.example.com/v1/chat/completions"
        );
        let full = ModelSettings::new("http://127.0.0.1:4000/v1/chat/completions", "m");
        assert_eq!(full.endpoint(), "http://127.0.0.1:4000/v1/chat/completions");
    }

    #[test]
    fn bad_urls_are_refused_before_any_request() {
        for url in [
            "",
            "llm.example.com",
            "ftp://x",
            "https://",
            "https:///v1",
            "http://a b",
            "https://user:pw@host/v1",
        ] {
            let settings = ModelSettings::new(url, "m");
            assert!(
                matches!(settings.validate(), Err(SettingsError::Url(_))),
                "{url}"
            );
        }
    }

    #[test]
    fn plain_http_is_refused_except_to_this_machine() {
        for url in [
            "http://example.com/v1",
            "http://llm.example.com:4000",
            "http://127.attacker.example/v1",
            "http://10.0.0.5:4000/v1",
            "http://example.com",
        ] {
            assert_eq!(
                ModelSettings::new(url, "m").validate(),
                Err(SettingsError::PlainHttp(url.to_owned())),
                "{url}"
            );
        }
        for url in [
            "http://127.0.0.1:4000/v1",
            "http://127.8.9.10/v1",
            "http://localhost:4000",
            "http://[::1]:4000/v1",
            "https://x",
            "https://llm.example.com/v1",
        ] {
            assert_eq!(ModelSettings::new(url, "m").validate(), Ok(()), "{url}");
        }
    }

    #[test]
    fn each_bad_setting_has_its_own_error() {
        let mut s = valid();
        s.model = "  ".into();
        assert_eq!(s.validate(), Err(SettingsError::EmptyModel));
        let mut s = valid();
        s.temperature = Some(3.5);
        assert_eq!(s.validate(), Err(SettingsError::Temperature("3.5".into())));
        let mut s = valid();
        s.max_tokens = Some(0);
        assert_eq!(s.validate(), Err(SettingsError::MaxTokens));
        let mut s = valid();
        s.timeout_ms = 10;
        assert_eq!(s.validate(), Err(SettingsError::Timeout(10)));
        let mut s = valid();
        s.context_tokens = Some(2_048);
        assert_eq!(s.validate(), Ok(()));
        s.max_tokens = Some(4_096);
        assert_eq!(s.validate(), Err(SettingsError::ContextTokens(2_048)));
        s.max_tokens = None;
        s.context_tokens = Some(100);
        assert_eq!(s.validate(), Err(SettingsError::ContextTokens(100)));
    }

    #[test]
    fn an_extra_header_must_be_a_token_and_never_a_provider_key() {
        let mut s = valid();
        s.extra_header = Some(("X-Proxy-Token".into(), "team-42".into()));
        assert_eq!(s.validate(), Ok(()));
        s.extra_header = Some(("Bad Header".into(), "v".into()));
        assert_eq!(
            s.validate(),
            Err(SettingsError::HeaderName("Bad Header".into()))
        );
        s.extra_header = Some(("Authorization".into(), "Bearer sk-proj-abc".into()));
        assert_eq!(s.validate(), Err(SettingsError::ProviderKey));
    }
}
