//! [`Http`] over the browser's `fetch` (sent and read through `gloo-net`), streaming
//! the body through a `ReadableStream` reader. Dropping the request or its body aborts the fetch through
//! its `AbortController`.
//!
//! A request that carries anything of ours — a header (a key, a token) or a body (a
//! refresh token, a prompt) — never follows a redirect: the browser would repeat it,
//! custom headers and body included, to wherever the server points, so it fails as a
//! network error instead (`redirect: "error"`). Only a bare GET (a character file)
//! may be redirected.
//!
//! [`HostFetch`] sends through a function the host gives instead (`model.fetch`):
//! the same request, as `(url, init)`, so that a key the engine never sees (an
//! extension's stored key, a game server's) is added by the host, for the origin it
//! chooses.

use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt};
use js_sys::{Reflect, Uint8Array};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, Headers, ReadableStreamDefaultReader, RequestInit, RequestRedirect,
};

use crate::base::http::{Http, HttpError, HttpRequest, HttpResponse};

/// The page's `fetch`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Fetch;

/// The host's own `fetch`: `(url, init) => Promise<Response>`.
#[derive(Debug, Clone)]
pub struct HostFetch(pub js_sys::Function);

/// Aborts the fetch when dropped; harmless once the response has been read.
struct AbortOnDrop(AbortController);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The message of a JavaScript error value.
fn describe(value: &JsValue) -> String {
    value
        .dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| value.as_string())
        .unwrap_or_else(|| format!("{value:?}"))
}

/// A request that got no response, in words a person can act on: the browser's own
/// ("TypeError: Failed to fetch") says nothing of what to check.
fn unanswered(url: &str, why: &str) -> String {
    // Chromium, Firefox and Safari's words for a request that got no response.
    let lost = ["Failed to fetch", "NetworkError", "Load failed"];
    if !lost.iter().any(|words| why.contains(words)) {
        return why.to_owned();
    }
    let origin = web_sys::Url::new(url).map_or_else(|_| url.to_owned(), |u| u.origin());
    format!(
        "no answer from {origin}: check the address, that the server there is running, \
         and that it allows requests from this page (CORS) ({why})"
    )
}

impl Http for Fetch {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'static, Result<HttpResponse, HttpError>> {
        Box::pin(send(request, None))
    }
}

impl Http for HostFetch {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'static, Result<HttpResponse, HttpError>> {
        Box::pin(send(request, Some(self.0.clone())))
    }
}

/// The host's function called with `(url, init)`: its `Response`, or why not.
async fn host_fetch(
    fetch: &js_sys::Function,
    url: &str,
    init: &RequestInit,
) -> Result<gloo_net::http::Response, HttpError> {
    let returned = fetch
        .call2(&JsValue::NULL, &JsValue::from_str(url), init)
        .map_err(|e| HttpError::Network(format!("model.fetch threw: {}", describe(&e))))?;
    let settled = JsFuture::from(js_sys::Promise::resolve(&returned))
        .await
        .map_err(|e| HttpError::Network(unanswered(url, &describe(&e))))?;
    let response: web_sys::Response = settled.dyn_into().map_err(|_| {
        HttpError::Invalid("model.fetch resolved to something that is not a Response".into())
    })?;
    Ok(response.into())
}

async fn send(
    request: HttpRequest,
    fetch: Option<js_sys::Function>,
) -> Result<HttpResponse, HttpError> {
    let invalid = |e: JsValue| HttpError::Invalid(describe(&e));
    let abort = AbortOnDrop(AbortController::new().map_err(invalid)?);
    let headers = Headers::new().map_err(invalid)?;
    for (name, value) in &request.headers {
        headers.append(name, value).map_err(invalid)?;
    }
    let init = RequestInit::new();
    init.set_method(request.method);
    init.set_headers(&headers);
    init.set_signal(Some(&abort.0.signal()));
    if let Some(body) = &request.body {
        init.set_body(&JsValue::from_str(body));
    }
    if !request.headers.is_empty() || request.body.is_some() {
        init.set_redirect(RequestRedirect::Error);
    }
    // Built here, not by gloo-net's builder: that one rewrites a URL that has a query
    // (it appends `&`), and PostgREST's URLs all have one.
    let response = match fetch {
        Some(fetch) => host_fetch(&fetch, &request.url, &init).await?,
        None => {
            let built =
                web_sys::Request::new_with_str_and_init(&request.url, &init).map_err(invalid)?;
            gloo_net::http::Request::from(built)
                .send()
                .await
                .map_err(|e| HttpError::Network(unanswered(&request.url, &e.to_string())))?
        }
    };
    let header_list = response
        .headers()
        .entries()
        .map(|(name, value)| (name.to_ascii_lowercase(), value))
        .collect();
    let reader: Option<ReadableStreamDefaultReader> = response
        .body()
        .map(|body| body.get_reader().unchecked_into());
    let body = stream::unfold((reader, abort), |(reader, abort)| async move {
        let chunk = read_chunk(reader.as_ref()?).await.transpose()?;
        Some((chunk, (reader, abort)))
    });
    Ok(HttpResponse {
        status: response.status(),
        headers: header_list,
        body: body.boxed_local(),
    })
}

/// The next chunk of the body: `Ok(None)` at its end.
async fn read_chunk(reader: &ReadableStreamDefaultReader) -> Result<Option<Vec<u8>>, HttpError> {
    let result = JsFuture::from(reader.read())
        .await
        .map_err(|e| HttpError::Network(describe(&e)))?;
    let done = Reflect::get(&result, &JsValue::from_str("done"))
        .ok()
        .and_then(|d| d.as_bool())
        .unwrap_or(true);
    if done {
        return Ok(None);
    }
    let value = Reflect::get(&result, &JsValue::from_str("value"))
        .map_err(|e| HttpError::Network(describe(&e)))?;
    Ok(Some(Uint8Array::new(&value).to_vec()))
}
