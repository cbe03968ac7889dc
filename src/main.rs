//! The demo app: Trunk builds this binary for the browser; natively it does nothing.

fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        console_error_panic_hook::set_once();
        // `bench/ui` reads these marks to split startup into loading, mounting and drawing.
        mark("familiar:start");
        if let Some(loading) = web_sys::window()
            .and_then(|w| w.document())
            .and_then(|d| d.get_element_by_id("familiar-loading"))
        {
            loading.remove();
        }
        mount();
        mark("familiar:mounted");
        // The first frame that draws the app starts with this callback.
        leptos::prelude::request_animation_frame(|| mark("familiar:frame"));
    }
}

/// Mounts the app into the page's `#familiar` element when it has one (a host page
/// embedding the widget), or else into the body (the demo page).
#[cfg(target_arch = "wasm32")]
fn mount() {
    use wasm_bindgen::JsCast;
    let host = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("familiar"))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok());
    match host {
        Some(host) => leptos::mount::mount_to(host, familiar::ui::App).forget(),
        None => leptos::mount::mount_to_body(familiar::ui::App),
    }
}

/// A User Timing mark, if the page has a `performance` object.
#[cfg(target_arch = "wasm32")]
fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
