//! The page's `localStorage`: [`Persist`] for the local store, the session's keyed
//! [`Storage`], and JSON values (the settings) saved and loaded by key; and
//! [`PageMemory`], kept only while the page lives, for what must not outlive it.

#[cfg(feature = "store")]
use std::cell::RefCell;
#[cfg(feature = "store")]
use std::collections::HashMap;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::app::Storage;
#[cfg(feature = "store")]
use crate::store::Persist;

/// The value saved under `key`, if there is one that reads as a `T`.
pub fn load_json<T: DeserializeOwned>(key: &str) -> Option<T> {
    crate::base::json::from_text(&LocalStorage::new(key).load()?).ok()
}

/// Saves `value` under `key` (a failure is reported in the console).
pub fn save_json<T: Serialize>(key: &str, value: &T) {
    if let Ok(text) = serde_json::to_string(value) {
        LocalStorage::new(key).save(&text);
    }
}

/// Removes `key`.
pub fn remove(key: &str) {
    if let Some(storage) = LocalStorage::storage() {
        let _ = storage.remove_item(key);
    }
}

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

    pub fn load(&self) -> Option<String> {
        Self::storage()?.get_item(&self.key).ok()?
    }

    /// Storage can be full or disabled (private windows); the page then keeps working
    /// from memory, and the write is reported in the console rather than lost silently.
    pub fn save(&self, snapshot: &str) {
        let saved = Self::storage().is_some_and(|s| s.set_item(&self.key, snapshot).is_ok());
        if !saved {
            web_sys::console::warn_1(
                &format!("familiar: could not save `{}` to localStorage", self.key).into(),
            );
        }
    }
}

#[cfg(feature = "store")]
impl Persist for LocalStorage {
    fn load(&self) -> Option<String> {
        LocalStorage::load(self)
    }

    fn save(&self, snapshot: &str) {
        LocalStorage::save(self, snapshot);
    }
}

#[cfg(feature = "store")]
thread_local! {
    static PAGE_MEMORY: RefCell<HashMap<String, String>> = RefCell::new(HashMap::new());
}

/// One entry kept in the page's memory, never in its storage: it lasts as long as the
/// page, and no script the page loads later (nor after a reload) finds it in
/// `localStorage`. Every `PageMemory` of one key reads the same entry.
#[cfg(feature = "store")]
#[derive(Debug, Clone)]
pub struct PageMemory {
    key: String,
}

#[cfg(feature = "store")]
impl PageMemory {
    pub fn new(key: impl Into<String>) -> Self {
        Self { key: key.into() }
    }
}

#[cfg(feature = "store")]
impl Persist for PageMemory {
    fn load(&self) -> Option<String> {
        PAGE_MEMORY.with(|memory| memory.borrow().get(&self.key).cloned())
    }

    fn save(&self, snapshot: &str) {
        PAGE_MEMORY.with(|memory| {
            memory
                .borrow_mut()
                .insert(self.key.clone(), snapshot.to_owned())
        });
    }
}

/// The page's `localStorage` as a session's [`Storage`]: a failed write (full, or
/// disabled in a private window) comes back as an error the session reports.
#[derive(Debug, Clone, Copy, Default)]
pub struct BrowserStorage;

impl Storage for BrowserStorage {
    fn load(&self, key: &str) -> Option<String> {
        LocalStorage::storage()?.get_item(key).ok()?
    }

    fn save(&self, key: &str, value: &str) -> Result<(), String> {
        let storage = LocalStorage::storage().ok_or("localStorage is not available")?;
        storage.set_item(key, value).map_err(|error| {
            let name = js_sys::Reflect::get(&error, &"name".into())
                .ok()
                .and_then(|n| n.as_string())
                .unwrap_or_else(|| "Error".into());
            if name == "QuotaExceededError" {
                "localStorage is full".to_owned()
            } else {
                format!("localStorage refused the write ({name})")
            }
        })
    }

    fn remove(&self, key: &str) {
        if let Some(storage) = LocalStorage::storage() {
            let _ = storage.remove_item(key);
        }
    }
}
