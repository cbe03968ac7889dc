//! The `Http` seam: send a request, get a status, headers and a body that streams.
//!
//! The browser implementation (`web::Fetch`) uses `fetch`; tests use scripted servers.
//! Cancelling is dropping: an implementation must abort its request when the future
//! or the body stream is dropped, so a timeout or a user's Stop is just a drop.

use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;

/// An outgoing request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpRequest {
    pub method: &'static str,
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: Option<String>,
}

/// A response whose body arrives in chunks.
pub struct HttpResponse {
    pub status: u16,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: LocalBoxStream<'static, Result<Vec<u8>, HttpError>>,
}

impl HttpResponse {
    /// The first value of header `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// A request that got no response, or whose body broke off.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    /// No connection, DNS failure, CORS refusal: the browser does not say which.
    #[error("network error: {0}")]
    Network(String),
    /// The request could not even be built (a bad URL or header).
    #[error("the request is invalid: {0}")]
    Invalid(String),
}

/// Sends HTTP requests.
pub trait Http {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'static, Result<HttpResponse, HttpError>>;
}

/// `https://`, or `http://` to this machine only: keys and tokens never cross a
/// network in the clear.
pub fn secure_or_loopback(url: &str) -> bool {
    let url = url.trim().to_ascii_lowercase();
    !url.starts_with("http://") || is_loopback(&url)
}

/// Whether `url`'s host is this machine: `localhost`, 127.0.0.0/8 or ::1.
pub fn is_loopback(url: &str) -> bool {
    let url = url.trim().to_ascii_lowercase();
    let rest = url.split_once("://").map_or(url.as_str(), |(_, rest)| rest);
    let host = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = host.rsplit('@').next().unwrap_or_default();
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.split(':').next().unwrap_or_default(),
    };
    host == "localhost"
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_passes_only_to_this_machine() {
        for (url, ok) in [
            ("http://127.0.0.1:54321", true),
            ("http://localhost/rest", true),
            ("http://[::1]:80", true),
            ("http://127.attacker.example", false),
            ("http://db.example.com", false),
            ("https://db.example.com", true),
        ] {
            assert_eq!(secure_or_loopback(url), ok, "{url}");
        }
    }

    #[test]
    fn loopback_is_this_machine_whatever_the_scheme() {
        for (url, ok) in [
            ("http://127.0.0.1:11434/v1", true),
            ("https://localhost:8443", true),
            ("http://[::1]:1234/v1", true),
            ("http://127.attacker.example", false),
            ("http://user@127.0.0.1.example", false),
            ("https://llm.example.com/v1", false),
        ] {
            assert_eq!(is_loopback(url), ok, "{url}");
        }
    }
}
