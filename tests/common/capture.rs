//! The capture server (`tests/servers/capture_server.py`) seen from browser tests: its
//! two loopback origins (`FAMILIAR_CAPTURE_URL`, `FAMILIAR_CAPTURE_OTHER_URL`, read at
//! compile time; `scripts/test.sh` starts it) and every request they have recorded.
#![allow(dead_code)]

use familiar::base::http::{Http, HttpRequest};
use familiar::web::Fetch;
use futures::StreamExt;
use serde_json::Value;

/// The two origins: the one a test signs in to or calls, and the one it must not reach.
pub fn origins() -> (&'static str, &'static str) {
    match (
        option_env!("FAMILIAR_CAPTURE_URL"),
        option_env!("FAMILIAR_CAPTURE_OTHER_URL"),
    ) {
        (Some(home), Some(other)) => (home, other),
        _ => panic!(
            "FAMILIAR_CAPTURE_URL and FAMILIAR_CAPTURE_OTHER_URL are unset: run scripts/test.sh"
        ),
    }
}

/// A path prefix of this run's own (`/name-123456`), so that what one run asks of a
/// server that outlives it is told apart from another's.
pub fn tag(name: &str) -> String {
    format!("/{name}-{}", (js_sys::Math::random() * 1e9) as u64)
}

/// Every request either origin has recorded, oldest first.
pub async fn seen() -> Vec<Value> {
    let (home, _) = origins();
    let request = HttpRequest {
        method: "GET",
        url: format!("{home}/seen"),
        headers: Vec::new(),
        body: None,
    };
    let mut response = Fetch.send(request).await.unwrap();
    let mut bytes = Vec::new();
    while let Some(chunk) = response.body.next().await {
        bytes.extend(chunk.unwrap());
    }
    serde_json::from_slice(&bytes).unwrap()
}

/// The origin a recorded request reached.
pub fn origin_of(record: &Value) -> String {
    format!("http://127.0.0.1:{}", record["port"])
}

/// `METHOD origin/path` of each request recorded at `origin` whose path starts with
/// `prefix`.
pub fn at(seen: &[Value], origin: &str, prefix: &str) -> Vec<String> {
    seen.iter()
        .filter(|r| origin_of(r) == origin)
        .filter(|r| r["path"].as_str().unwrap_or_default().starts_with(prefix))
        .map(|r| {
            format!(
                "{} {origin}{}",
                r["method"].as_str().unwrap_or_default(),
                r["path"].as_str().unwrap_or_default()
            )
        })
        .collect()
}

/// Each request recorded at `origin` that carried any of `secrets` in a header or its
/// body, described with where it was found.
pub fn carrying(seen: &[Value], origin: &str, secrets: &[&str]) -> Vec<String> {
    seen.iter()
        .filter(|r| origin_of(r) == origin)
        .filter_map(|r| {
            let text = format!("{} {}", r["headers"], r["body"]);
            let found: Vec<_> = secrets.iter().filter(|s| text.contains(*s)).collect();
            (!found.is_empty())
                .then(|| format!("{found:?} in {} {}: {text}", r["method"], r["path"]))
        })
        .collect()
}
