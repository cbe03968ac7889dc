//! The demo app: Trunk builds this binary for the browser; natively it does nothing.

fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        console_error_panic_hook::set_once();
        // `bench/ui` reads these two marks to split startup into loading and mounting.
        mark("familiar:start");
        leptos::mount::mount_to_body(familiar::ui::App);
        mark("familiar:mounted");
    }
}

/// A User Timing mark, if the page has a `performance` object.
#[cfg(target_arch = "wasm32")]
fn mark(name: &str) {
    if let Some(performance) = web_sys::window().and_then(|w| w.performance()) {
        let _ = performance.mark(name);
    }
}
