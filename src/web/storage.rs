//! [`Persist`] in the page's `localStorage`, so the local store survives a reload.

use crate::store::Persist;

/// One `localStorage` entry.
#[derive(Debug, Clone)]
pub struct LocalStorage {
    key: String,
}

impl LocalStorage {
    pub fn new(key: impl Into<String>) -> Self {
        Self { key: key.into() }
    }

    fn storage() -> Option<web_sys::Storage> {
        web_sys::window()?.local_storage().ok()?
    }
}

impl Persist for LocalStorage {
    fn load(&self) -> Option<String> {
        Self::storage()?.get_item(&self.key).ok()?
    }

    /// Storage can be full or disabled (private windows); the page then keeps working
    /// from memory, and the write is reported in the console rather than lost silently.
    fn save(&self, snapshot: &str) {
        let saved = Self::storage().is_some_and(|s| s.set_item(&self.key, snapshot).is_ok());
        if !saved {
            web_sys::console::warn_1(
                &format!("familiar: could not save `{}` to localStorage", self.key).into(),
            );
        }
    }
}
