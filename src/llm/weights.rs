//! Whether an address serves a local model's weights, asked before settings naming it
//! are saved: a wrong address otherwise reads as "Saved." and every question after it
//! fails. One HEAD request, so nothing is downloaded twice: the status, the type (a web
//! page is not weights) and the size. A server that does not answer HEAD is let
//! through; the worker then refuses a file that is not GGUF, naming what it found.
//! Each refusal says what to do instead.

use crate::base::http::{Http, HttpRequest};

/// The smallest file taken for weights: a GGUF header and one tiny tensor are less,
/// but no model anyone runs is.
pub const MIN_WEIGHTS_BYTES: u64 = 1_000_000;

/// What the person can do instead, said after every refusal.
const WHAT_TO_DO: &str = "Give the address of a GGUF file (a model hub's download link \
    ends in .gguf), or pick a file on this computer; `scripts/demo.sh --with-model` \
    serves SmolLM2 at the demo's default address.";

/// What the address serves: GGUF weights, of this many bytes when the server said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weights {
    pub bytes: Option<u64>,
}

/// Checks that `url` (absolute) serves GGUF weights; why not, with what to do.
pub async fn check(http: &dyn Http, url: &str) -> Result<Weights, String> {
    let request = HttpRequest {
        method: "HEAD",
        url: url.to_owned(),
        headers: Vec::new(),
        body: None,
    };
    let refused = |why: String| format!("{why}. {WHAT_TO_DO}");
    let response = http
        .send(request)
        .await
        .map_err(|e| refused(format!("the weights at {url} could not be fetched: {e}")))?;
    // Some hosts (signed storage links) refuse HEAD: the worker's own load checks.
    if matches!(response.status, 405 | 501) {
        return Ok(Weights { bytes: None });
    }
    if !(200..300).contains(&response.status) {
        let why = match response.status {
            404 | 410 => format!("there is no file at {url} (HTTP {})", response.status),
            401 | 403 => format!(
                "{url} is not open to this page (HTTP {}): the file may be private",
                response.status
            ),
            status => format!("{url} answered HTTP {status}, not the weights"),
        };
        return Err(refused(why));
    }
    let kind = response.header("content-type").unwrap_or_default();
    if kind
        .trim_start()
        .to_ascii_lowercase()
        .starts_with("text/html")
    {
        return Err(refused(format!("{url} is a web page, not a GGUF file")));
    }
    let bytes = response
        .header("content-length")
        .and_then(|n| n.trim().parse::<u64>().ok());
    if let Some(n) = bytes.filter(|n| *n < MIN_WEIGHTS_BYTES) {
        return Err(refused(format!(
            "{url} is {n} bytes, too small for a model's weights"
        )));
    }
    Ok(Weights { bytes })
}
