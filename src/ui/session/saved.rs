//! Keeping conversations: saving the open one and the list of past ones in local
//! storage, and opening, starting and deleting them.

use leptos::prelude::*;

use super::{
    CURRENT_KEY, INDEX_KEY, Inspector, SavedConversation, Session, conversation_key, now_ms,
};
use crate::interaction::Conversation;
use crate::web::{load_json, remove, save_json};

impl Session {
    /// Saves the conversation and the list of conversations.
    pub(super) fn save(&self) {
        let id = self.conversation_id.get_untracked();
        let title = self.inner.with_value(|inner| {
            save_json(&conversation_key(&id), &inner.conversation);
            inner
                .conversation
                .interactions
                .first()
                .map(|i| i.input.chars().take(60).collect::<String>())
        });
        let Some(title) = title else {
            return;
        };
        self.saved.update(|saved| {
            saved.retain(|c| c.id != id);
            saved.insert(
                0,
                SavedConversation {
                    id: id.clone(),
                    title,
                    updated_ms: now_ms(),
                },
            );
        });
        save_json(INDEX_KEY, &self.saved.get_untracked());
        save_json(CURRENT_KEY, &id);
    }

    /// Opens a new, empty conversation (the current one stays in the list).
    pub fn new_conversation(&self) {
        self.stop();
        let id = format!("c{}", now_ms());
        self.conversation_id.set(id.clone());
        save_json(CURRENT_KEY, &id);
        self.inspector.set(Inspector::default());
        self.show(Conversation::default());
        self.refresh_world();
    }

    /// Opens a saved conversation.
    pub fn open(&self, id: &str) {
        self.stop();
        let Some(conversation) = load_json::<Conversation>(&conversation_key(id)) else {
            return;
        };
        self.conversation_id.set(id.to_owned());
        save_json(CURRENT_KEY, &id);
        self.show(conversation);
    }

    /// Deletes a saved conversation; the open one is replaced by a new one.
    pub fn delete(&self, id: &str) {
        remove(&conversation_key(id));
        self.saved.update(|saved| saved.retain(|c| c.id != id));
        save_json(INDEX_KEY, &self.saved.get_untracked());
        if self.conversation_id.get_untracked() == id {
            self.new_conversation();
        }
    }
}
