//! The demo app: Trunk builds this binary for the browser; natively it does nothing.

fn main() {
    #[cfg(target_arch = "wasm32")]
    {
        console_error_panic_hook::set_once();
        familiar::ui::start();
    }
}
