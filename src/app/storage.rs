//! Where a session keeps its conversations: the [`Storage`] seam (the page's
//! `localStorage`, memory in tests), the keys under a namespace so several agents
//! share a page without sharing entries, and the saved forms with their version
//! (a run in flight is saved by `resume`).

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::run::Outcome;
use crate::run::event::Event;
use crate::run::interaction::Conversation;

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
    entries: RefCell<BTreeMap<String, String>>,
    full: Cell<bool>,
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
}

impl Storage for VolatileStorage {
    fn load(&self, key: &str) -> Option<String> {
        self.entries.borrow().get(key).cloned()
    }

    fn save(&self, key: &str, value: &str) -> Result<(), String> {
        if self.full.get() {
            return Err("the storage is full".into());
        }
        self.entries
            .borrow_mut()
            .insert(key.to_owned(), value.to_owned());
        Ok(())
    }

    fn remove(&self, key: &str) {
        self.entries.borrow_mut().remove(key);
    }
}

/// The version of what [`SavedConversation`] and the index are written as.
pub const VERSION: u32 = 1;

/// A conversation in the list of saved ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConversationEntry {
    pub id: String,
    pub title: String,
    pub updated_ms: i64,
}

/// A conversation as saved: its version, then the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct SavedConversation {
    version: u32,
    /// Counts the writes: a tab that last saw an older one must not overwrite it.
    #[serde(default)]
    revision: u64,
    conversation: Conversation,
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

    pub fn conversation(&self, id: &str) -> String {
        format!("{}.conversation.{id}", self.namespace)
    }

    /// The run of a conversation's turn in flight, saved after every step.
    pub fn run(&self, conversation: &str) -> String {
        format!("{}.run.{conversation}", self.namespace)
    }
}

/// Reads a conversation, migrating the unversioned form older builds wrote; turns it
/// left unfinished are closed (see [`closed`]).
pub fn load_conversation(storage: &dyn Storage, key: &str) -> Loaded<Conversation> {
    let Some(text) = storage.load(key) else {
        return Loaded::Missing;
    };
    if let Ok(saved) = serde_json::from_str::<SavedConversation>(&text)
        && saved.version <= VERSION
    {
        return Loaded::Found(closed(saved.conversation));
    }
    match serde_json::from_str::<Conversation>(&text) {
        Ok(conversation) => Loaded::Found(closed(conversation)),
        Err(error) => keep_aside(storage, key, &text, error.to_string()),
    }
}

/// A saved conversation's unfinished turns end: a run cut off by a reload cannot go
/// on, and its turn says so instead of spinning.
pub(super) fn closed(mut conversation: Conversation) -> Conversation {
    for interaction in &mut conversation.interactions {
        if !interaction.status.is_finished() {
            interaction.apply(&Event::Done(Outcome::Aborted {
                reason: "Stopped: the page was closed before the answer.".into(),
            }));
        }
    }
    conversation
}

/// Writes a conversation in the current version.
pub fn save_conversation(
    storage: &dyn Storage,
    key: &str,
    conversation: &Conversation,
    revision: u64,
) -> Result<(), String> {
    let saved = SavedConversation {
        version: VERSION,
        revision,
        conversation: conversation.clone(),
    };
    let text = serde_json::to_string(&saved).map_err(|e| e.to_string())?;
    storage.save(key, &text)
}

/// The revision of the conversation saved under `key` (0 when there is none, or it
/// predates revisions).
pub fn stored_revision(storage: &dyn Storage, key: &str) -> u64 {
    #[derive(Deserialize)]
    struct Head {
        #[serde(default)]
        revision: u64,
    }
    storage
        .load(key)
        .and_then(|text| serde_json::from_str::<Head>(&text).ok())
        .map_or(0, |head| head.revision)
}

/// Reads the list of conversations.
pub fn load_index(storage: &dyn Storage, key: &str) -> Loaded<Vec<ConversationEntry>> {
    let Some(text) = storage.load(key) else {
        return Loaded::Missing;
    };
    match serde_json::from_str(&text) {
        Ok(index) => Loaded::Found(index),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn answered() -> Event {
        Event::Done(Outcome::Answered { text: "hi".into() })
    }

    #[test]
    fn a_turn_left_unfinished_is_read_back_closed() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        conversation.begin("cut off by a reload");
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        let Loaded::Found(read) = load_conversation(&storage, "k") else {
            panic!("not read");
        };
        assert!(read.interactions[0].status.is_finished());
    }

    #[test]
    fn a_conversation_round_trips_in_the_current_version() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        let turn = conversation.begin("hello");
        conversation.apply(turn, &answered());
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        assert!(
            storage
                .load("k")
                .unwrap()
                .starts_with("{\"version\":1,\"revision\":1,")
        );
        assert_eq!(stored_revision(&storage, "k"), 1);
        assert_eq!(
            load_conversation(&storage, "k"),
            Loaded::Found(conversation)
        );
    }

    #[test]
    fn an_older_unversioned_conversation_is_migrated() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        let turn = conversation.begin("from before versions");
        conversation.apply(turn, &answered());
        storage
            .save("k", &serde_json::to_string(&conversation).unwrap())
            .unwrap();
        assert_eq!(
            load_conversation(&storage, "k"),
            Loaded::Found(conversation)
        );
    }

    #[test]
    fn corrupt_data_is_kept_aside_and_reported() {
        let storage = VolatileStorage::new();
        storage.save("k", "{not json").unwrap();
        let Loaded::Corrupt { kept_as, error } = load_conversation(&storage, "k") else {
            panic!("not reported as corrupt");
        };
        assert_eq!(kept_as, "k.corrupt");
        assert!(!error.is_empty());
        assert_eq!(storage.load("k.corrupt").as_deref(), Some("{not json"));
    }

    #[test]
    fn namespaces_keep_their_keys_apart() {
        let (a, b) = (Keys::new("npc1"), Keys::new("npc2"));
        assert_ne!(a.conversation("c1"), b.conversation("c1"));
        assert_eq!(a.index(), "npc1.conversations");
    }
}
