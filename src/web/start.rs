//! Starting the app in a page: where it mounts (a host page's `#familiar` element, or
//! else the body), the loading notice in index.html it takes the place of, and the
//! User Timing marks `bench/ui` reads. What it mounts is [`crate::ui::App`].

use wasm_bindgen::JsCast;
use web_sys::{Document, HtmlElement};

/// Mounts the app and marks `familiar:start`, `familiar:mounted` and `familiar:frame`
/// (the first animation frame after mounting: the one that draws it).
pub fn start() {
    mark("familiar:start");
    let document = web_sys::window().and_then(|w| w.document());
    if let Some(loading) = element(document.as_ref(), "familiar-loading") {
        loading.remove();
    }
    match element(document.as_ref(), "familiar").and_then(|e| e.dyn_into::<HtmlElement>().ok()) {
        Some(host) => leptos::mount::mount_to(host, crate::ui::App).forget(),
        None => leptos::mount::mount_to_body(crate::ui::App),
    }
    mark("familiar:mounted");
    leptos::prelude::request_animation_frame(|| mark("familiar:frame"));
}

fn element(document: Option<&Document>, id: &str) -> Option<web_sys::Element> {
    document?.get_element_by_id(id)
}

/// A User Timing mark, if the page has a `performance` object.
fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
