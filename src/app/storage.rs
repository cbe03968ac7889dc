//! How a session keeps its conversations, over the [`Storage`] seam
//! (`keyed_storage`) under the keys of its namespace (`keys`): the saved forms with
//! their version (a run in flight is saved by `resume`). A conversation is stored as a small head
//! under its key and each turn under a key of its own, so a save writes the turns that
//! changed and the head, whatever the conversation's length.

use crate::base::json::Read;
use crate::base::json::{ReadError, from_value};
use crate::base::small_map::SmallSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::run::event::Event;
use crate::run::interaction::{Conversation, Interaction};
use crate::run::{ContextMemory, Outcome};

pub use super::keyed_storage::{Storage, VolatileStorage};
use super::keys::keep_aside;
pub use super::keys::{Keys, Loaded, load_kept};

/// The version of the whole-state form (`SessionState`, [`SavedConversation`]) and
/// the index.
pub const VERSION: u32 = 1;

/// The version of a conversation's head, which lists its turns stored apart.
const HEAD_VERSION: u32 = 2;

/// A conversation in the list of saved ones.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ConversationEntry {
    pub id: String,
    pub title: String,
    pub updated_ms: i64,
}

/// Everything a session keeps, for `saveState` / `loadState`.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct SessionState {
    pub version: u32,
    pub open: String,
    pub conversations: Vec<SavedEntry>,
}

/// One conversation of a [`SessionState`].
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct SavedEntry {
    #[serde(flatten)]
    pub entry: ConversationEntry,
    pub conversation: Conversation,
}

/// A conversation as saved: its version, then the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
struct SavedConversation {
    version: u32,
    /// Counts the writes: a tab that last saw an older one must not overwrite it.
    #[serde(default)]
    revision: u64,
    conversation: Conversation,
}

/// A conversation as stored since [`HEAD_VERSION`]: its turns' ids as ranges and
/// everything else it keeps (pinned facts, whether it read untrusted text); each turn
/// is under [`turn_key`].
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
struct Head {
    version: u32,
    revision: u64,
    turns: Vec<[u64; 2]>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pinned: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    untrusted: bool,
    #[serde(default, skip_serializing_if = "is_zero")]
    let_go: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    agent: Option<String>,
    #[serde(default, skip_serializing_if = "ContextMemory::is_empty")]
    memory: ContextMemory,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Head {
    fn ids(&self) -> impl Iterator<Item = u64> + '_ {
        self.turns.iter().flat_map(|[first, last]| *first..=*last)
    }
}

/// Ids as inclusive ranges of consecutive ones (turn ids grow by one).
fn ranges(ids: impl Iterator<Item = u64>) -> Vec<[u64; 2]> {
    let mut ranges: Vec<[u64; 2]> = Vec::new();
    for id in ids {
        match ranges.last_mut() {
            Some(range) if range[1].checked_add(1) == Some(id) => range[1] = id,
            _ => ranges.push([id, id]),
        }
    }
    ranges
}

/// Where turn `id` of the conversation stored under `key` is.
pub fn turn_key(key: &str, id: u64) -> String {
    format!("{key}.turn.{id}")
}

/// Which turns of a conversation changed since it was stored.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Dirty {
    /// Everything: it was never stored in this form.
    pub all: bool,
    pub turns: SmallSet<u64>,
    /// Turns let go: removed once the head no longer names them.
    pub gone: SmallSet<u64>,
}

impl Dirty {
    pub fn all() -> Self {
        Self {
            all: true,
            turns: SmallSet::new(),
            gone: SmallSet::new(),
        }
    }
}

/// Reads a conversation, migrating the unversioned form older builds wrote; turns it
/// left unfinished are closed (see [`closed`]).
pub fn load_conversation(storage: &dyn Storage, key: &str) -> Loaded<Conversation> {
    match load_stored(storage, key) {
        Loaded::Found((conversation, _)) => Loaded::Found(conversation),
        Loaded::Missing => Loaded::Missing,
        Loaded::Corrupt { kept_as, error } => Loaded::Corrupt { kept_as, error },
    }
}

/// [`load_conversation`], with what must be written back at the next save: every turn
/// of an older form (it is migrated then), and the turns closed on reading.
pub fn load_stored(storage: &dyn Storage, key: &str) -> Loaded<(Conversation, Dirty)> {
    let Some(text) = storage.load(key) else {
        return Loaded::Missing;
    };
    // The text is parsed once, and its form told by its keys: trying each form on the
    // text parsed it again for each (a conversation saved whole, before turn keys, is
    // all its turns in one text).
    let value = match serde_json::from_str::<Value>(&text) {
        Ok(value) => value,
        Err(error) => return keep_aside(storage, key, &text, error.to_string()),
    };
    let head = match value.get("turns") {
        // A head is small: reading a copy leaves the value for the older forms.
        Some(_) => from_value::<Head>(value.clone()).ok(),
        None => None,
    };
    if let Some(head) = head
        && head.version <= HEAD_VERSION
    {
        let mut interactions = Vec::new();
        for id in head.ids() {
            let turn = storage
                .load(&turn_key(key, id))
                .ok_or_else(|| "it is missing".to_owned());
            match turn.and_then(|t| {
                crate::base::json::from_text::<Interaction>(&t).map_err(|e| e.to_string())
            }) {
                Ok(interaction) => interactions.push(interaction),
                Err(why) => return keep_aside(storage, key, &text, format!("turn {id}: {why}")),
            }
        }
        let conversation = Conversation {
            interactions,
            pinned: head.pinned,
            untrusted: head.untrusted,
            let_go: head.let_go,
            agent: head.agent,
            memory: head.memory,
        };
        let (conversation, closed) = closing(conversation);
        let dirty = Dirty {
            turns: closed,
            ..Dirty::default()
        };
        return Loaded::Found((conversation, dirty));
    }
    let older = match value.get("conversation") {
        // Without that key it is no `SavedConversation` (the field is required).
        Some(_) => match from_value::<SavedConversation>(value) {
            Ok(saved) if saved.version <= VERSION => Ok(saved.conversation),
            // Rare: the value was used up, and the text is read again.
            _ => crate::base::json::from_text::<Conversation>(&text),
        },
        None => from_value::<Conversation>(value).map_err(ReadError::into_inner),
    };
    match older {
        Ok(conversation) => Loaded::Found((closed(conversation), Dirty::all())),
        Err(error) => keep_aside(storage, key, &text, error.to_string()),
    }
}

/// A saved conversation's unfinished turns end: a run cut off by a reload cannot go
/// on, and its turn says so instead of spinning.
pub(super) fn closed(conversation: Conversation) -> Conversation {
    closing(conversation).0
}

/// [`closed`], with the ids of the turns it closed.
fn closing(mut conversation: Conversation) -> (Conversation, SmallSet<u64>) {
    let mut ids = SmallSet::new();
    for interaction in &mut conversation.interactions {
        if !interaction.status.is_finished() {
            interaction.apply(&Event::Done(Outcome::Aborted {
                reason: "the page was closed before the answer".into(),
            }));
            ids.insert(interaction.id);
        }
    }
    (conversation, ids)
}

/// Writes a whole conversation in the current form.
pub fn save_conversation(
    storage: &dyn Storage,
    key: &str,
    conversation: &Conversation,
    revision: u64,
) -> Result<(), String> {
    save_turns(
        storage,
        key,
        conversation,
        revision,
        &Dirty::all(),
        &mut None,
    )
    .map(drop)
}

/// What a conversation's head says besides its revision, as this session last wrote
/// it: the head is written again only when this changes.
#[derive(Debug, Clone, PartialEq)]
pub struct HeadShape {
    turns: Vec<[u64; 2]>,
    pinned: Vec<String>,
    untrusted: bool,
    let_go: u64,
    agent: Option<String>,
    memory: ContextMemory,
}

/// Writes the turns of `conversation` that `dirty` names, its last turn (the one a
/// turn in progress writes into), then its head, at `revision`, unless the head would
/// say what `written` says it already does: a step of a turn in progress writes that
/// turn only. The head goes last, so it never names a turn that is not stored. Says
/// whether the head (and so the revision) was written; `written` follows it.
pub fn save_turns(
    storage: &dyn Storage,
    key: &str,
    conversation: &Conversation,
    revision: u64,
    dirty: &Dirty,
    written: &mut Option<HeadShape>,
) -> Result<bool, String> {
    // Every field, by name: one added to `Conversation` must be given a place here.
    let Conversation {
        interactions,
        pinned,
        untrusted,
        let_go,
        agent,
        memory,
    } = conversation;
    // Turn ids only grow, so a changed turn is found by its id, not by a walk.
    let changed: Box<dyn Iterator<Item = &Interaction>> = if dirty.all {
        Box::new(interactions.iter())
    } else {
        let at = |id: u64| {
            let index = interactions.partition_point(|i| i.id < id);
            let found = interactions.get(index).filter(|i| i.id == id);
            // Out of order (never written so, but read from storage): walk.
            found.or_else(|| interactions.iter().find(|i| i.id == id))
        };
        let last = interactions.last().filter(|i| !dirty.turns.contains(&i.id));
        Box::new(dirty.turns.iter().filter_map(move |id| at(*id)).chain(last))
    };
    for interaction in changed {
        let text = serde_json::to_string(interaction).map_err(|e| e.to_string())?;
        storage.save(&turn_key(key, interaction.id), &text)?;
    }
    let shape = HeadShape {
        turns: ranges(interactions.iter().map(|i| i.id)),
        pinned: pinned.clone(),
        untrusted: *untrusted,
        let_go: *let_go,
        agent: agent.clone(),
        memory: memory.clone(),
    };
    if !dirty.all && dirty.gone.is_empty() && written.as_ref() == Some(&shape) {
        return Ok(false);
    }
    let head = Head {
        version: HEAD_VERSION,
        revision,
        turns: shape.turns.clone(),
        pinned: shape.pinned.clone(),
        untrusted: shape.untrusted,
        let_go: shape.let_go,
        agent: shape.agent.clone(),
        memory: shape.memory.clone(),
    };
    let text = serde_json::to_string(&head).map_err(|e| e.to_string())?;
    storage.save(key, &text)?;
    *written = Some(shape);
    // An id let go may be in use again (every turn was edited away, and the next
    // began at 1): then its record is the new turn's.
    let reused = |id: &u64| interactions.binary_search_by_key(id, |i| i.id).is_ok();
    for id in dirty.gone.iter().filter(|id| !reused(id)) {
        storage.remove(&turn_key(key, *id));
    }
    Ok(true)
}

/// Removes the conversation stored under `key`, its turns included.
pub fn remove_conversation(storage: &dyn Storage, key: &str) {
    let head = storage
        .load(key)
        .and_then(|text| crate::base::json::from_text::<Head>(&text).ok());
    if let Some(head) = head {
        for id in head.ids() {
            storage.remove(&turn_key(key, id));
        }
    }
    storage.remove(key);
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
        .and_then(|text| crate::base::json::from_text::<Head>(&text).ok())
        .map_or(0, |head| head.revision)
}

/// Reads the list of conversations.
pub fn load_index(storage: &dyn Storage, key: &str) -> Loaded<Vec<ConversationEntry>> {
    load_kept(storage, key)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered() -> Event {
        Event::Done(Outcome::Answered { text: "hi".into() })
    }

    #[test]
    fn a_turn_left_unfinished_is_read_back_closed_saying_why_once() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        conversation.begin("cut off by a reload");
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        let Loaded::Found(read) = load_conversation(&storage, "k") else {
            panic!("not read");
        };
        assert!(read.interactions[0].status.is_finished());
        // The view says "Stopped: {reason}."; the reason does not say it again.
        let told = format!("{:?}", read.interactions[0].steps);
        assert!(
            told.contains("\"the page was closed before the answer\"") && !told.contains("Stopped"),
            "{told}"
        );
    }

    #[test]
    fn a_conversation_round_trips_in_the_current_version() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        let turn = conversation.begin("hello");
        conversation.apply(turn, &answered());
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        assert_eq!(
            storage.load("k").unwrap(),
            "{\"version\":2,\"revision\":1,\"turns\":[[1,1]]}"
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
    fn the_whole_state_form_of_before_turn_keys_is_read_and_migrated_at_the_next_save() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        let turn = conversation.begin("from version 1");
        conversation.apply(turn, &answered());
        let saved = SavedConversation {
            version: 1,
            revision: 4,
            conversation: conversation.clone(),
        };
        storage
            .save("k", &serde_json::to_string(&saved).unwrap())
            .unwrap();
        assert_eq!(stored_revision(&storage, "k"), 4);
        let Loaded::Found((read, dirty)) = load_stored(&storage, "k") else {
            panic!("not read");
        };
        assert_eq!(read, conversation);
        assert!(dirty.all, "every turn is written at the next save");
        save_turns(&storage, "k", &read, 5, &dirty, &mut None).unwrap();
        assert!(storage.load("k.turn.1").is_some());
        assert_eq!(
            load_conversation(&storage, "k"),
            Loaded::Found(conversation)
        );
    }

    #[test]
    fn a_save_writes_the_changed_and_last_turns_and_the_head_only() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        for n in 0..200 {
            let turn = conversation.begin(format!("turn {n} {}", "x".repeat(200)));
            conversation.apply(turn, &answered());
        }
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        let whole = storage.bytes_written();
        let turn = conversation.begin("one more");
        conversation.apply(turn, &answered());
        let before = storage.bytes_written();
        save_turns(
            &storage,
            "k",
            &conversation,
            2,
            &Dirty::default(),
            &mut None,
        )
        .unwrap();
        let one = storage.bytes_written() - before;
        let last = serde_json::to_string(conversation.interactions.last().unwrap()).unwrap();
        let head = storage.load("k").unwrap();
        assert_eq!(
            one,
            "k.turn.201".len() + last.len() + "k".len() + head.len(),
            "the new turn and the head, nothing else"
        );
        assert!(
            one * 50 < whole,
            "{one} bytes against {whole} for the whole"
        );
        assert_eq!(head, "{\"version\":2,\"revision\":2,\"turns\":[[1,201]]}");
        assert_eq!(
            load_conversation(&storage, "k"),
            Loaded::Found(conversation)
        );
    }

    #[test]
    fn a_step_of_a_turn_in_progress_writes_that_turn_and_not_the_head() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        let mut head = None;
        let turn = conversation.begin("first");
        let wrote = save_turns(&storage, "k", &conversation, 1, &Dirty::all(), &mut head);
        assert_eq!(wrote, Ok(true), "a new turn is named by the head");
        conversation.apply(turn, &answered());
        let before = storage.bytes_written();
        let wrote = save_turns(
            &storage,
            "k",
            &conversation,
            2,
            &Dirty::default(),
            &mut head,
        );
        assert_eq!(wrote, Ok(false), "the same turns: the head stays");
        let last = serde_json::to_string(conversation.interactions.last().unwrap()).unwrap();
        assert_eq!(
            storage.bytes_written() - before,
            "k.turn.1".len() + last.len()
        );
        assert_eq!(stored_revision(&storage, "k"), 1);
        conversation.begin("second");
        let wrote = save_turns(
            &storage,
            "k",
            &conversation,
            2,
            &Dirty::default(),
            &mut head,
        );
        assert_eq!(wrote, Ok(true), "a turn begun: the head names it");
        assert_eq!(stored_revision(&storage, "k"), 2);
        assert_eq!(
            load_conversation(&storage, "k"),
            Loaded::Found(closed(conversation))
        );
    }

    #[test]
    fn what_a_conversation_keeps_besides_its_turns_is_kept_in_its_head() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        let turn = conversation.begin("read a post");
        conversation.apply(turn, &answered());
        conversation.pinned = vec!["the ale is cold".into()];
        conversation.untrusted = true;
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        assert_eq!(
            load_conversation(&storage, "k"),
            Loaded::Found(conversation)
        );
    }

    #[test]
    fn a_missing_turn_makes_the_conversation_corrupt_not_shorter() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        for text in ["one", "two"] {
            let turn = conversation.begin(text);
            conversation.apply(turn, &answered());
        }
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        storage.remove("k.turn.1");
        let Loaded::Corrupt { kept_as, error } = load_conversation(&storage, "k") else {
            panic!("a conversation missing a turn read as whole");
        };
        assert_eq!(kept_as, "k.corrupt");
        assert!(error.contains("turn 1"), "{error}");
    }

    #[test]
    fn removing_a_conversation_removes_its_turns() {
        let storage = VolatileStorage::new();
        let mut conversation = Conversation::default();
        conversation.begin("one");
        conversation.begin("two");
        save_conversation(&storage, "k", &conversation, 1).unwrap();
        remove_conversation(&storage, "k");
        assert!(storage.keys().is_empty(), "{:?}", storage.keys());
    }

    #[test]
    fn namespaces_keep_their_keys_apart() {
        let (a, b) = (Keys::new("npc1"), Keys::new("npc2"));
        assert_ne!(a.conversation("c1"), b.conversation("c1"));
        assert_eq!(a.index(), "npc1.conversations");
    }
}
