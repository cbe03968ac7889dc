//! Whether a model server answers at an address on this machine, for Settings: the
//! page's own request first; when it fails, a `no-cors` one, whose answer the page
//! cannot read but whose arrival tells a server that refuses this page's origin
//! (CORS) from nothing listening. Each is aborted after the time given. What the
//! answers mean is `app::model_servers`'.

use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{AbortSignal, RequestInit, Response};

use crate::app::model_servers::{Place, Reached};

/// The page's own origin (`https://demo.example`), as a server is told to allow it.
pub fn page_origin() -> String {
    web_sys::window()
        .and_then(|w| w.location().origin().ok())
        .unwrap_or_default()
}

/// Asks `place` which models it serves, within `timeout_ms` a try.
pub async fn reach(place: &Place, timeout_ms: u32) -> Reached {
    let url = place.models_url();
    if let Some((status, body)) = get(&url, false, timeout_ms).await {
        return Reached::Answered { status, body };
    }
    match get(&url, true, timeout_ms).await {
        Some(_) => Reached::Refused,
        None => Reached::Nothing,
    }
}

/// A GET of `url`: its status and body (an opaque `no-cors` answer has neither), or
/// `None` for no answer within `timeout_ms`.
async fn get(url: &str, no_cors: bool, timeout_ms: u32) -> Option<(u16, String)> {
    let init = RequestInit::new();
    init.set_signal(Some(&AbortSignal::timeout_with_u32(timeout_ms)));
    if no_cors {
        // Set by name: web-sys's typed setter needs a feature of its own.
        js_sys::Reflect::set(&init, &"mode".into(), &"no-cors".into()).ok()?;
    }
    let fetched = web_sys::window()?.fetch_with_str_and_init(url, &init);
    let response: Response = JsFuture::from(fetched).await.ok()?.dyn_into().ok()?;
    if no_cors {
        return Some((response.status(), String::new()));
    }
    let body = JsFuture::from(response.text().ok()?).await.ok()?;
    Some((response.status(), body.as_string().unwrap_or_default()))
}
