//! The storage seam: keyed text (the page's `localStorage`, `chrome.storage` through a
//! host, memory in tests), and its in-memory kind.

use crate::base::small_map::SmallMap;
use std::cell::{Cell, RefCell};

/// Keyed text storage. A write can fail (a full or disabled storage) and says so.
pub trait Storage {
    fn load(&self, key: &str) -> Option<String>;
    fn save(&self, key: &str, value: &str) -> Result<(), String>;
    fn remove(&self, key: &str);
}

/// Storage in memory: for tests, and for hosts that keep state themselves
/// (`saveState` / `loadState`).
#[derive(Debug, Default)]
pub struct VolatileStorage {
    entries: RefCell<SmallMap<String, String>>,
    full: Cell<bool>,
    written: Cell<usize>,
}

impl VolatileStorage {
    pub fn new() -> Self {
        Self::default()
    }

    /// Makes every later write fail, as a full `localStorage` does.
    pub fn fill_up(&self) {
        self.full.set(true);
    }

    /// The keys held, in order.
    pub fn keys(&self) -> Vec<String> {
        self.entries.borrow().keys().cloned().collect()
    }

    /// How many bytes have been written, keys and values, since it was made.
    pub fn bytes_written(&self) -> usize {
        self.written.get()
    }
}

impl Storage for VolatileStorage {
    fn load(&self, key: &str) -> Option<String> {
        self.entries.borrow().get(key).cloned()
    }

    fn save(&self, key: &str, value: &str) -> Result<(), String> {
        if self.full.get() {
            return Err("the storage is full".into());
        }
        self.written
            .set(self.written.get() + key.len() + value.len());
        self.entries
            .borrow_mut()
            .insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn remove(&self, key: &str) {
        self.entries.borrow_mut().remove(key);
    }
}
