//! The browser behind the seams: the only module that touches `web_sys` and `js_sys`.

#[cfg(feature = "builtin")]
pub mod builtin_model;
pub mod character_file;
mod clock;
#[cfg(feature = "page")]
mod declared_tools;
#[cfg(feature = "telemetry")]
mod download;
mod fetch;
mod frame;
#[cfg(feature = "local")]
pub mod local_model;
#[cfg(feature = "guild")]
mod lock;
#[cfg(feature = "local")]
pub mod model_cache;
#[cfg(feature = "telemetry")]
pub mod otlp;
#[cfg(feature = "page")]
mod page;
mod page_title;
pub mod probe;
#[cfg(feature = "webmcp")]
pub mod published_tools;
mod shell;
mod storage;

pub use clock::BrowserClock;
#[cfg(feature = "page")]
pub use declared_tools::WindowTools;
#[cfg(feature = "telemetry")]
pub use download::download;
pub use fetch::{Fetch, HostFetch};
#[cfg(feature = "guild")]
pub use lock::TabsLock;
#[cfg(feature = "page")]
pub use page::WindowPage;
pub use page_title::PageTitle;
pub use shell::{MountPoint, Page, mark};
#[cfg(feature = "store")]
pub use storage::PageMemory;
pub use storage::{BrowserStorage, LocalStorage, load_json, remove, save_json};

/// Whether the app is a widget in someone else's page (it has a `#familiar` host
/// element) rather than the demo's own page.
pub fn in_host_page() -> bool {
    web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id("familiar"))
        .is_some()
}

/// A Supabase project's REST endpoint (or any PostgREST server) over `fetch`, with
/// its anon key.
#[cfg(feature = "supabase")]
pub fn supabase(url: &str, anon_key: &str) -> crate::store::PostgrestStore {
    crate::store::PostgrestStore::supabase(
        url,
        anon_key,
        std::rc::Rc::new(Fetch),
        std::rc::Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    )
}

/// Copies text to the clipboard, best effort: the page may not be allowed to.
pub fn copy_to_clipboard(text: &str) {
    if let Some(window) = web_sys::window() {
        let _ = window.navigator().clipboard().write_text(text);
    }
}
