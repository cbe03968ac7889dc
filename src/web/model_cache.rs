//! The local model's weights this browser keeps (Cache Storage, where the worker,
//! `js/local-worker.js`, puts them after a download): listed with their sizes, and
//! deleted when the person asks. Shared by every tab of the page's origin.

use js_sys::Array;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{Blob, Cache, Request, Response};

/// The cache the worker keeps the weights in.
const CACHE: &str = "familiar-models";

/// One kept file: its address and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    pub url: String,
    pub bytes: u64,
}

/// Every weights file kept, in the order the cache gives them.
pub async fn kept() -> Result<Vec<Kept>, String> {
    let cache = open().await?;
    let requests: Array = awaited(cache.keys())
        .await?
        .dyn_into()
        .map_err(|_| "the browser's cache listed no files".to_owned())?;
    let mut kept = Vec::new();
    for request in requests.iter() {
        let Ok(request) = request.dyn_into::<Request>() else {
            continue;
        };
        let Ok(response) = awaited(cache.match_with_request(&request))
            .await?
            .dyn_into::<Response>()
        else {
            continue;
        };
        kept.push(Kept {
            url: request.url(),
            bytes: size(&response).await?,
        });
    }
    Ok(kept)
}

/// A kept file's size: the length the worker wrote beside it, or else its body's
/// (copies kept by an older build), read only then, since the worker may be reading
/// the same file.
async fn size(response: &Response) -> Result<u64, String> {
    let said = response
        .headers()
        .get("content-length")
        .ok()
        .flatten()
        .and_then(|n| n.parse().ok());
    if let Some(bytes) = said {
        return Ok(bytes);
    }
    let blob = response.blob().map_err(|e| words(&e))?;
    let bytes = awaited(blob)
        .await?
        .dyn_into::<Blob>()
        .map_or(0.0, |b| b.size());
    // A size in bytes, whole and far below 2^53.
    Ok(bytes as u64)
}

/// Deletes the kept copy of `url`; whether there was one.
pub async fn forget(url: &str) -> Result<bool, String> {
    let cache = open().await?;
    Ok(awaited(cache.delete_with_str(url)).await?.as_bool() == Some(true))
}

async fn open() -> Result<Cache, String> {
    let caches = web_sys::window()
        .ok_or("no window")?
        .caches()
        .map_err(|e| format!("this page may not use the browser's cache: {}", words(&e)))?;
    awaited(caches.open(CACHE))
        .await?
        .dyn_into()
        .map_err(|_| "the browser's cache could not be opened".to_owned())
}

async fn awaited(promise: js_sys::Promise) -> Result<JsValue, String> {
    JsFuture::from(promise).await.map_err(|e| words(&e))
}

fn words(error: &JsValue) -> String {
    error
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| error.as_string())
        .unwrap_or_else(|| "the browser's cache failed".to_owned())
}
