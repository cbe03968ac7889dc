//! The session's state: its conversations (the open one and any a run is still
//! writing into), the saved list, the router, approvals waiting and granted, and the
//! runs in flight with their stop signals. Plain data and synchronous methods; the
//! session holds it in a `RefCell` and never across an await.

use crate::base::small_map::{SmallMap, SmallSet};
use std::rc::Rc;

use futures::channel::oneshot;
use futures::lock::Mutex;
use serde::Serialize;

use super::AppError;
use super::keys::{Keys, Loaded};
use super::storage::{
    self, ConversationEntry, Dirty, HeadShape, SavedEntry, SessionState, Storage,
    load_conversation, load_index, load_stored, remove_conversation, save_conversation, save_turns,
    stored_revision,
};
use super::update::{ApprovalKey, Decision, Notice, PendingApproval};
use crate::compose::delegate::Delegate;
use crate::run::event::Event;
use crate::run::interaction::Conversation;

/// Where and when a session writes: its storage, its keys, and the time now.
pub(super) struct Disk<'a> {
    pub(super) storage: &'a dyn Storage,
    pub(super) keys: Keys,
    pub(super) now_ms: i64,
}

/// A call waiting for a decision, and where the decision goes.
pub(super) struct Waiting {
    pub(super) pending: PendingApproval,
    pub(super) reply: oneshot::Sender<Decision>,
}

/// How many of a conversation's newest turns keep all their steps; older ones keep
/// what started them and their answer (`Interaction::folded` counts the rest), so
/// what a long-lived agent keeps, and saves, stays near a constant per turn.
pub const KEEP_STEPS_OF: usize = 200;

/// A run in flight, and how to stop it.
pub(super) struct Running {
    pub(super) conversation: String,
    pub(super) turn: u64,
    pub(super) stop: Option<oneshot::Sender<()>>,
}

pub(super) struct State {
    pub(super) open: String,
    pub(super) conversations: SmallMap<String, Conversation>,
    pub(super) index: Vec<ConversationEntry>,
    pub(super) delegate: Delegate,
    /// (conversation, agent, tool) approved for good.
    pub(super) always: SmallSet<(String, String, String)>,
    /// "Allow for this task": (conversation, turn, agent) and the site it holds on.
    pub(super) tasks: Vec<(String, u64, String, Option<String>)>,
    /// Sites whose harmless page actions run without asking (the host keeps them).
    pub(super) harmless_sites: SmallSet<String>,
    pub(super) waiting: Vec<Waiting>,
    pub(super) running: Vec<Running>,
    /// The revision of each conversation as this session last read or wrote it.
    revisions: SmallMap<String, u64>,
    /// What each conversation's head said when this session last wrote it (none: write
    /// it at the next save).
    heads: SmallMap<String, HeadShape>,
    /// The turns of each conversation changed since it was last stored.
    dirty: SmallMap<String, Dirty>,
    /// Where folding old turns goes on from, per conversation (see
    /// [`State::fold_old_turns`]); none yet: from the first turn.
    folded_to: SmallMap<String, usize>,
    /// Which conversation this session last stored as the open one.
    stored_open: Option<String>,
    /// One lock per conversation: its runs go one at a time, in order.
    locks: SmallMap<String, Rc<Mutex<()>>>,
    pub(super) destroyed: bool,
    /// A browser agent's call is in flight (`Session::visit`): the next is refused.
    #[cfg(feature = "webmcp")]
    pub(super) visiting: bool,
    runs_started: u64,
    /// What the open conversation reads as while it is not in memory.
    empty: Conversation,
}

/// A conversation just deleted, kept so that a person can take the deletion back.
#[derive(Debug, Clone, PartialEq)]
pub struct Deleted {
    /// Its entry in the list, as it was.
    pub entry: ConversationEntry,
    position: usize,
    conversation: Conversation,
}

fn new_id(now_ms: i64, salt: u64) -> String {
    format!("c{now_ms}-{salt}")
}

impl State {
    pub(super) fn new(delegate: Delegate, now_ms: i64) -> Self {
        let open = new_id(now_ms, 0);
        Self {
            conversations: [(open.clone(), Conversation::default())]
                .into_iter()
                .collect(),
            open,
            index: Vec::new(),
            delegate,
            always: SmallSet::new(),
            tasks: Vec::new(),
            harmless_sites: SmallSet::new(),
            waiting: Vec::new(),
            running: Vec::new(),
            revisions: SmallMap::new(),
            heads: SmallMap::new(),
            dirty: SmallMap::new(),
            folded_to: SmallMap::new(),
            stored_open: None,
            locks: SmallMap::new(),
            destroyed: false,
            #[cfg(feature = "webmcp")]
            visiting: false,
            runs_started: 0,
            empty: Conversation::default(),
        }
    }

    pub(super) fn restore(&mut self, disk: &Disk) -> Vec<Notice> {
        let (storage, keys, now_ms) = (disk.storage, &disk.keys, disk.now_ms);
        let mut notices = Vec::new();
        match load_index(storage, &keys.index()) {
            Loaded::Found(index) => self.index = index,
            Loaded::Missing => {}
            Loaded::Corrupt { kept_as, error } => notices.push(Notice::Corrupt {
                key: keys.index(),
                kept_as,
                error,
            }),
        }
        let current: Option<String> = storage
            .load(&keys.current())
            .and_then(|text| crate::base::json::from_text(&text).ok());
        let Some(id) = current else {
            return notices;
        };
        match self.read(&id, storage, keys) {
            Loaded::Found(conversation) => {
                self.conversations.clear();
                self.folded_to.clear();
                self.folded_to.clear();
                self.conversations.insert(id.clone(), conversation);
                self.open = id;
            }
            Loaded::Missing => {}
            Loaded::Corrupt { kept_as, error } => {
                notices.push(Notice::Corrupt {
                    key: keys.conversation(&id),
                    kept_as,
                    error,
                });
                self.open = new_id(now_ms, 0);
                self.conversations
                    .insert(self.open.clone(), Conversation::default());
            }
        }
        notices
    }

    pub(super) fn open_conversation(&self) -> &Conversation {
        self.conversations.get(&self.open).unwrap_or(&self.empty)
    }

    pub(super) fn pending(&self) -> Vec<PendingApproval> {
        self.waiting.iter().map(|w| w.pending.clone()).collect()
    }

    /// Takes the call `key` names out of the waiting list, with where its decision goes.
    pub(super) fn take_waiting(&mut self, key: &ApprovalKey) -> Option<oneshot::Sender<Decision>> {
        let index = self.waiting.iter().position(|w| w.pending.is(key))?;
        Some(self.waiting.remove(index).reply)
    }

    /// The waiting calls whose model-given id is `call_id` (several conversations'
    /// runs may each wait on a `call_1`).
    pub(super) fn waiting_with(&self, call_id: &str) -> Vec<ApprovalKey> {
        self.waiting
            .iter()
            .filter(|w| w.pending.call.id == call_id)
            .map(|w| w.pending.key())
            .collect()
    }

    /// A call no longer waits (decided, or its turn stopped); others with the same
    /// call id in other turns keep waiting.
    pub(super) fn forget_waiting(&mut self, key: &ApprovalKey) {
        self.waiting.retain(|w| !w.pending.is(key));
    }

    pub(super) fn stop_all(&mut self) {
        self.stop_where(|_| true);
    }

    fn stop_conversation(&mut self, id: &str) {
        self.stop_where(|r| r.conversation == id);
    }

    fn stop_where(&mut self, which: impl Fn(&Running) -> bool) {
        for running in self.running.iter_mut().filter(|r| which(r)) {
            if let Some(stop) = running.stop.take() {
                let _ = stop.send(());
            }
        }
    }

    pub(super) fn busy(&self) -> bool {
        !self.running.is_empty()
    }

    pub(super) fn lock(&mut self, conversation: &str) -> Rc<Mutex<()>> {
        Rc::clone(
            self.locks
                .get_or_insert_with(conversation.to_owned(), || Rc::new(Mutex::new(()))),
        )
    }

    /// A number for a new run, unique in this session.
    pub(super) fn next_run(&mut self) -> u64 {
        self.runs_started += 1;
        self.runs_started
    }

    /// The conversation `id`, read back from storage if it was let go (a turn queued
    /// while another conversation was opened), or new.
    pub(super) fn conversation_mut(&mut self, id: &str, disk: &Disk) -> &mut Conversation {
        if !self.conversations.contains_key(id) {
            let conversation = match self.read(id, disk.storage, &disk.keys) {
                Loaded::Found(conversation) => conversation,
                Loaded::Missing | Loaded::Corrupt { .. } => Conversation::default(),
            };
            self.folded_to.remove(id);
            self.conversations.insert(id.to_owned(), conversation);
        }
        self.conversations.get_or_default(id.to_owned())
    }

    /// Reads a conversation from storage, noting the revision it was read at.
    fn read(&mut self, id: &str, storage: &dyn Storage, keys: &Keys) -> Loaded<Conversation> {
        let key = keys.conversation(id);
        self.revisions
            .insert(id.to_owned(), stored_revision(storage, &key));
        self.heads.remove(id);
        match load_stored(storage, &key) {
            Loaded::Found((conversation, dirty)) => {
                self.dirty.insert(id.to_owned(), dirty);
                Loaded::Found(conversation)
            }
            Loaded::Missing => Loaded::Missing,
            Loaded::Corrupt { kept_as, error } => Loaded::Corrupt { kept_as, error },
        }
    }

    /// Applies a run event to its own conversation, wherever that is.
    pub(super) fn apply(&mut self, conversation: &str, turn: u64, event: &Event) {
        if let Some(c) = self.conversations.get_mut(conversation) {
            c.apply(turn, event);
            let dirty = self.dirty.get_or_default(conversation.to_owned());
            dirty.turns.insert(turn);
        }
    }

    /// Folds the turns of `id` that have grown old (a turn keeps its steps while it is
    /// among the newest [`KEEP_STEPS_OF`]) and lets go of those past `keep_turns`;
    /// the next save writes them again, or removes them.
    pub(super) fn age_turns(&mut self, id: &str, keep_turns: usize) {
        let Some(conversation) = self.conversations.get_mut(id) else {
            return;
        };
        let from = self.folded_to.get(id).copied().unwrap_or(0);
        let (folded, next) = conversation.fold_old_turns(KEEP_STEPS_OF, from);
        let gone = conversation.let_go_oldest(keep_turns);
        self.folded_to
            .insert(id.to_owned(), next.saturating_sub(gone.len()));
        let dirty = self.dirty.get_or_default(id.to_owned());
        dirty.turns.extend(folded);
        for id in gone {
            dirty.turns.remove(&id);
            dirty.gone.insert(id);
        }
    }

    /// Drops turn `turn` of `id` and every later one (a message edited is asked again
    /// from there), then saves what is left; `NoTurn` when `id` has no such turn.
    pub(super) fn cut(
        &mut self,
        id: &str,
        turn: u64,
        disk: &Disk,
    ) -> Result<Vec<Notice>, AppError> {
        let conversation = self.conversation_mut(id, disk);
        let at = conversation
            .interactions
            .iter()
            .position(|i| i.id == turn)
            .ok_or(AppError::NoTurn(turn))?;
        let gone: Vec<u64> = conversation
            .interactions
            .drain(at..)
            .map(|i| i.id)
            .collect();
        if let Some(folded) = self.folded_to.get_mut(id) {
            *folded = (*folded).min(at);
        }
        let dirty = self.dirty.get_or_default(id.to_owned());
        for id in gone {
            dirty.turns.remove(&id);
            dirty.gone.insert(id);
        }
        Ok(self.save(id, disk))
    }

    /// Saves `id` and, once that is saved, its place in the list.
    pub(super) fn save(&mut self, id: &str, disk: &Disk) -> Vec<Notice> {
        self.write(id, disk, true)
    }

    /// Saves the turns of `id` a run in flight changed (before each of its steps); the
    /// list moves when the turn begins and ends, not at every step between.
    pub(super) fn save_progress(&mut self, id: &str, disk: &Disk) -> Vec<Notice> {
        let listed = self.index.first().is_some_and(|c| c.id == id);
        self.write(id, disk, !listed)
    }

    fn write(&mut self, id: &str, disk: &Disk, relist: bool) -> Vec<Notice> {
        let (storage, keys, now_ms) = (disk.storage, &disk.keys, disk.now_ms);
        let Some(conversation) = self.conversations.get(id) else {
            return Vec::new();
        };
        let Some(first) = conversation.interactions.first() else {
            return Vec::new();
        };
        let title: String = first.input.chars().take(60).collect();
        let key = keys.conversation(id);
        let known = self.revisions.get(id).copied().unwrap_or(0);
        if stored_revision(storage, &key) > known {
            // Another tab wrote it since: never overwrite its turns with ours.
            return vec![Notice::Conflict { key }];
        }
        let dirty = self.dirty.get(id).cloned().unwrap_or_default();
        // The revision counts writes of the head (the turns it names): a step of a turn
        // in progress writes its turn only and leaves the revision where it is.
        let mut head = self.heads.remove(id);
        match save_turns(storage, &key, conversation, known + 1, &dirty, &mut head) {
            Ok(true) => {
                self.revisions.insert(id.to_owned(), known + 1);
            }
            Ok(false) => {}
            // The list is never advanced past what was saved.
            Err(error) => return vec![Notice::SaveFailed { key, error }],
        }
        if let Some(head) = head {
            self.heads.insert(id.to_owned(), head);
        }
        self.dirty.remove(id);
        if !relist {
            return Vec::new();
        }
        self.index.retain(|c| c.id != id);
        self.index.insert(
            0,
            ConversationEntry {
                id: id.to_owned(),
                title,
                updated_ms: now_ms,
            },
        );
        let mut notices = save_json(storage, &keys.index(), &self.index);
        if id == self.open && self.stored_open.as_deref() != Some(id) {
            let written = save_json(storage, &keys.current(), &self.open);
            if written.is_empty() {
                self.stored_open = Some(id.to_owned());
            }
            notices.extend(written);
        }
        notices
    }

    pub(super) fn open(&mut self, id: &str, disk: &Disk) -> Result<Vec<Notice>, AppError> {
        let (storage, keys) = (disk.storage, &disk.keys);
        if !self.conversations.contains_key(id) {
            match self.read(id, storage, keys) {
                Loaded::Found(conversation) => {
                    self.folded_to.remove(id);
                    self.conversations.insert(id.to_owned(), conversation);
                }
                // A resident's own conversation exists before its first turn.
                Loaded::Missing if self.is_residents(id) => {
                    self.folded_to.remove(id);
                    self.conversations
                        .insert(id.to_owned(), Conversation::default());
                }
                Loaded::Missing => return Err(AppError::NoConversation(id.to_owned())),
                Loaded::Corrupt { kept_as, error } => {
                    return Err(AppError::BadState(format!(
                        "conversation `{id}` is unreadable ({error}); it was kept under {kept_as}"
                    )));
                }
            }
        }
        self.open = id.to_owned();
        self.forget_idle();
        Ok(save_json(storage, &keys.current(), &self.open))
    }

    /// Opens `id`, which has nothing saved yet (a resident's conversation before its
    /// first turn).
    pub(super) fn open_fresh(&mut self, id: &str, disk: &Disk) -> Vec<Notice> {
        self.conversation_mut(id, disk);
        self.open = id.to_owned();
        self.forget_idle();
        save_json(disk.storage, &disk.keys.current(), &self.open)
    }

    /// Leaving the open conversation for another stops its runs, unless it is a
    /// resident's own: those are the world's and go on, their approvals waiting on the
    /// resident's card.
    fn leave(&mut self) {
        let open = self.open.clone();
        if !self.is_residents(&open) {
            self.stop_conversation(&open);
        }
    }

    /// Whether `id` is the own conversation of one of the delegate's residents.
    fn is_residents(&self, id: &str) -> bool {
        id.strip_prefix("agent:")
            .and_then(|name| self.delegate.named(name))
            .is_some_and(|agent| agent.own_memory)
    }

    /// An id for a new conversation, not opened.
    pub(super) fn fresh_id(&mut self, now_ms: i64) -> String {
        let salt = self.next_run();
        new_id(now_ms, salt)
    }

    pub(super) fn open_new(&mut self, disk: &Disk) -> (String, Vec<Notice>) {
        let (storage, keys, now_ms) = (disk.storage, &disk.keys, disk.now_ms);
        let salt = self.next_run();
        let id = new_id(now_ms, salt);
        self.conversations
            .insert(id.clone(), Conversation::default());
        self.open = id.clone();
        self.forget_idle();
        (id.clone(), save_json(storage, &keys.current(), &id))
    }

    /// Deletes `id`, keeping what it was (when it could be read) for [`Self::undelete`].
    pub(super) fn delete(&mut self, id: &str, disk: &Disk) -> (Option<Deleted>, Vec<Notice>) {
        let (storage, keys) = (disk.storage, &disk.keys);
        self.stop_conversation(id);
        self.folded_to.remove(id);
        let kept = match self.conversations.remove(id) {
            Some(conversation) => Some(conversation),
            None => match load_conversation(storage, &keys.conversation(id)) {
                Loaded::Found(conversation) => Some(conversation),
                Loaded::Missing | Loaded::Corrupt { .. } => None,
            },
        };
        let position = self.index.iter().position(|c| c.id == id);
        let deleted = match (kept, position) {
            (Some(conversation), Some(position)) => Some(Deleted {
                entry: self.index.remove(position),
                position,
                conversation,
            }),
            _ => None,
        };
        remove_conversation(storage, &keys.conversation(id));
        self.index.retain(|c| c.id != id);
        self.revisions.remove(id);
        self.heads.remove(id);
        self.dirty.remove(id);
        let mut notices = save_json(storage, &keys.index(), &self.index);
        if self.open == id {
            notices.extend(self.open_new(disk).1);
        }
        (deleted, notices)
    }

    /// Puts a deleted conversation back where it was in the list.
    pub(super) fn undelete(&mut self, deleted: Deleted, disk: &Disk) -> Vec<Notice> {
        let (storage, keys) = (disk.storage, &disk.keys);
        let Deleted {
            entry,
            position,
            conversation,
        } = deleted;
        let key = keys.conversation(&entry.id);
        let revision = stored_revision(storage, &key) + 1;
        if let Err(error) = save_conversation(storage, &key, &conversation, revision) {
            return vec![Notice::SaveFailed { key, error }];
        }
        self.revisions.insert(entry.id.clone(), revision);
        self.heads.remove(&entry.id);
        self.index.retain(|c| c.id != entry.id);
        self.index.insert(position.min(self.index.len()), entry);
        save_json(storage, &keys.index(), &self.index)
    }

    /// Drops conversations neither open nor written into by a run.
    fn forget_idle(&mut self) {
        let open = &self.open;
        let running = &self.running;
        self.conversations
            .retain(|id, _| id == open || running.iter().any(|r| &r.conversation == id));
    }

    /// Every listed conversation (read from storage unless in memory) and which is
    /// open.
    pub(super) fn snapshot(&self, disk: &Disk) -> SessionState {
        let (storage, keys) = (disk.storage, &disk.keys);
        let conversations = self
            .index
            .iter()
            .filter_map(|entry| {
                let conversation = match self.conversations.get(&entry.id) {
                    Some(conversation) => conversation.clone(),
                    None => match load_conversation(storage, &keys.conversation(&entry.id)) {
                        Loaded::Found(conversation) => conversation,
                        _ => return None,
                    },
                };
                Some(SavedEntry {
                    entry: entry.clone(),
                    conversation,
                })
            })
            .collect();
        SessionState {
            version: storage::VERSION,
            open: self.open.clone(),
            conversations,
        }
    }

    pub(super) fn load(
        &mut self,
        saved: SessionState,
        disk: &Disk,
    ) -> Result<Vec<Notice>, AppError> {
        let (storage, keys) = (disk.storage, &disk.keys);
        if self.busy() {
            return Err(AppError::Busy("load a state"));
        }
        if saved.version > storage::VERSION {
            return Err(AppError::BadState(format!(
                "it is version {}, newer than this build's {}",
                saved.version,
                storage::VERSION
            )));
        }
        let mut notices = Vec::new();
        for old in std::mem::take(&mut self.index) {
            remove_conversation(storage, &keys.conversation(&old.id));
        }
        self.conversations.clear();
        self.dirty.clear();
        for SavedEntry {
            entry,
            conversation,
        } in saved.conversations
        {
            // A loaded state is data the person did not write: its runs ask first.
            let conversation = Conversation {
                untrusted: true,
                ..conversation
            };
            let key = keys.conversation(&entry.id);
            let conversation = storage::closed(conversation);
            // Loading a state is a deliberate overwrite: it becomes the newest revision.
            let revision = stored_revision(storage, &key) + 1;
            match save_conversation(storage, &key, &conversation, revision) {
                Ok(()) => {
                    self.index.push(entry.clone());
                    self.revisions.insert(entry.id.clone(), revision);
                    self.heads.remove(&entry.id);
                }
                Err(error) => notices.push(Notice::SaveFailed { key, error }),
            }
            self.conversations.insert(entry.id, conversation);
        }
        self.open = saved.open;
        self.conversations.get_or_default(self.open.clone());
        notices.extend(save_json(storage, &keys.index(), &self.index));
        notices.extend(save_json(storage, &keys.current(), &self.open));
        self.forget_idle();
        Ok(notices)
    }
}

fn save_json<T: Serialize>(storage: &dyn Storage, key: &str, value: &T) -> Vec<Notice> {
    let saved = serde_json::to_string(value)
        .map_err(|e| e.to_string())
        .and_then(|text| storage.save(key, &text));
    match saved {
        Ok(()) => Vec::new(),
        Err(error) => vec![Notice::SaveFailed {
            key: key.to_owned(),
            error,
        }],
    }
}

impl super::Session {
    /// Leaves the open conversation (for a new one, or one from History): its runs
    /// stop, unless it is a resident's own, whose runs go on in the world.
    pub fn leave(&self) {
        self.inner.state.borrow_mut().leave();
    }
}
