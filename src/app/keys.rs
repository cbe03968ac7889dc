//! What a session keeps under which key of its namespace (so several agents share a
//! page without sharing entries), and reading a kept value back leniently: text that
//! cannot be read is kept aside under `{key}.corrupt` and said, never read as nothing
//! and overwritten at the next save.

use super::keyed_storage::Storage;

/// The keys of one namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Keys {
    namespace: String,
}

impl Keys {
    pub fn new(namespace: &str) -> Self {
        Self {
            namespace: namespace.to_owned(),
        }
    }

    pub fn index(&self) -> String {
        format!("{}.conversations", self.namespace)
    }

    pub fn current(&self) -> String {
        format!("{}.current", self.namespace)
    }

    /// The character files a person loaded (see [`super::loaded_characters`]).
    pub fn characters(&self) -> String {
        format!("{}.characters", self.namespace)
    }

    pub fn conversation(&self, id: &str) -> String {
        format!("{}.conversation.{id}", self.namespace)
    }

    /// The run of a conversation's turn in flight, saved after every step.
    pub fn run(&self, conversation: &str) -> String {
        format!("{}.run.{conversation}", self.namespace)
    }

    /// The messages of a conversation waiting for their turn (see `app::queue`).
    pub fn queued(&self, conversation: &str) -> String {
        format!("{}.queued.{conversation}", self.namespace)
    }

    /// A conversation's trace: its id and its last spans (feature `telemetry`).
    pub fn trace(&self, conversation: &str) -> String {
        format!("{}.trace.{conversation}", self.namespace)
    }

    /// The tracer of a conversation's run in flight, saved beside the run.
    pub fn run_tracer(&self, conversation: &str) -> String {
        format!("{}.tracer.{conversation}", self.namespace)
    }

    /// The supervisor's state of a conversation's supervised turn in flight, saved at
    /// every stage.
    pub fn supervision(&self, conversation: &str) -> String {
        format!("{}.supervisor.{conversation}", self.namespace)
    }
}

/// What a saved entry turned out to be.
#[derive(Debug, Clone, PartialEq)]
pub enum Loaded<T> {
    Missing,
    Found(T),
    /// Unreadable: its text was kept under `kept_as` and the caller starts afresh.
    Corrupt {
        kept_as: String,
        error: String,
    },
}

/// Reads the value kept under `key`; unreadable text is kept aside (see
/// [`keep_aside`]) rather than read as nothing and overwritten at the next save.
pub fn load_kept<T: serde::de::DeserializeOwned>(storage: &dyn Storage, key: &str) -> Loaded<T> {
    let Some(text) = storage.load(key) else {
        return Loaded::Missing;
    };
    match crate::base::json::from_text(&text) {
        Ok(value) => Loaded::Found(value),
        Err(error) => keep_aside(storage, key, &text, error.to_string()),
    }
}

/// Keeps unreadable text under `<key>.corrupt`, never overwriting it silently.
pub(super) fn keep_aside<T>(
    storage: &dyn Storage,
    key: &str,
    text: &str,
    error: String,
) -> Loaded<T> {
    let kept_as = format!("{key}.corrupt");
    match storage.save(&kept_as, text) {
        Ok(()) => Loaded::Corrupt { kept_as, error },
        Err(save_error) => Loaded::Corrupt {
            kept_as: format!("nowhere ({save_error}); it is still under {key}"),
            error,
        },
    }
}
