//! Reading a character file in the page, for the demo and the JS API alike: by URL
//! (relative to the page) or from a file a person picked, bounded in size.

use futures::StreamExt;
use wasm_bindgen_futures::JsFuture;

use super::Fetch;
use crate::base::http::{Http, HttpRequest};

/// The largest character file read.
pub const MAX_CHARACTER_BYTES: usize = 1 << 20;

/// The text at `url` (relative to the page), at most [`MAX_CHARACTER_BYTES`].
pub async fn fetch_text(url: &str) -> Result<String, String> {
    let failed = |why: String| format!("the character file {url} cannot be read: {why}");
    let request = HttpRequest {
        method: "GET",
        url: resolve(url),
        headers: Vec::new(),
        body: None,
    };
    let mut response = Fetch
        .send(request)
        .await
        .map_err(|e| failed(e.to_string()))?;
    if response.status != 200 {
        return Err(failed(format!("the server answered {}", response.status)));
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.body.next().await {
        bytes.extend(chunk.map_err(|e| failed(e.to_string()))?);
        if bytes.len() > MAX_CHARACTER_BYTES {
            return Err(failed(format!(
                "it is larger than {MAX_CHARACTER_BYTES} bytes"
            )));
        }
    }
    String::from_utf8(bytes).map_err(|_| failed("it is not UTF-8 text".into()))
}

/// The text of a file a person picked, at most [`MAX_CHARACTER_BYTES`].
pub async fn read_file(file: &web_sys::File) -> Result<String, String> {
    let name = file.name();
    let size = file.size();
    if size > MAX_CHARACTER_BYTES as f64 {
        return Err(format!("{name} is larger than {MAX_CHARACTER_BYTES} bytes"));
    }
    let text = JsFuture::from(file.text())
        .await
        .map_err(|_| format!("{name} cannot be read"))?;
    text.as_string()
        .ok_or_else(|| format!("{name} is not text"))
}

/// A URL relative to the page, made absolute.
fn resolve(url: &str) -> String {
    let base = web_sys::window().and_then(|w| w.location().href().ok());
    match base.and_then(|base| web_sys::Url::new_with_base(url, &base).ok()) {
        Some(resolved) => resolved.href(),
        None => url.to_owned(),
    }
}
