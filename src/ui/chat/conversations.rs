//! The conversations of the chat pane: a new one, one reopened from History, one
//! deleted (and taken back).

use leptos::prelude::*;

use super::{Chat, Inspector};

impl Chat {
    /// Opens a new, empty conversation (the current one stays in the list).
    pub fn new_conversation(&self) {
        let Some(app) = self.app() else {
            return;
        };
        if !self.may_leave() {
            return;
        }
        app.leave();
        let id = app.new_conversation();
        self.busy.set(app.running_in(&id));
        self.conversation_id.set(id);
        self.inspector.set(Inspector::default());
        self.show(app.conversation());
        self.refresh_world();
    }

    /// Opens a saved conversation.
    pub fn open(&self, id: &str) {
        let Some(app) = self.app() else {
            return;
        };
        if app.conversation_id() != id && !self.may_leave() {
            return;
        }
        app.leave();
        if app.open(id).is_ok() {
            self.busy.set(app.running_in(id));
            self.conversation_id.set(id.to_owned());
            self.show(app.conversation());
            self.send_waiting(id);
        }
    }

    /// Whether the person lets the shown conversation go: leaving cancels a request
    /// waiting for their approval there, so they are asked first. A resident's request
    /// is not cancelled (it waits on her World card), so leaving hers asks nothing.
    fn may_leave(&self) -> bool {
        let waiting = self.pending.with_untracked(|p| {
            p.as_ref()
                .filter(|p| {
                    !p.key
                        .conversation
                        .starts_with(&crate::app::Session::own_conversation(""))
                })
                .map(|p| p.call.name.clone())
        });
        let Some(tool) = waiting else {
            return true;
        };
        let question = format!(
            "A request waits for your approval here ({}). Leave this conversation and cancel it?",
            tool.replace('_', " ")
        );
        web_sys::window()
            .and_then(|w| w.confirm_with_message(&question).ok())
            .unwrap_or(false)
    }

    /// Shows the conversation `id` (a resident's own, from the World view, or one the
    /// controller opened), its runs and those of others going on.
    pub fn view(&self, id: &str) {
        let Some(app) = self.app() else {
            return;
        };
        if app.conversation_id() != id && app.open(id).is_err() {
            return;
        }
        self.conversation_id.set(id.to_owned());
        self.show(app.conversation());
        self.busy.set(app.running_in(id));
    }

    /// Deletes a saved conversation; the open one is replaced by a new one.
    pub fn delete(&self, id: &str) {
        let Some(app) = self.app() else {
            return;
        };
        self.deleted.set(app.delete(id));
        self.saved.set(app.conversations());
        if self.conversation_id.get_untracked() != app.conversation_id() {
            self.conversation_id.set(app.conversation_id());
            self.show(app.conversation());
        }
    }

    /// Takes the last deletion back: the conversation returns to its place in the list.
    pub fn undo_delete(&self) {
        let (Some(deleted), Some(app)) = (self.deleted.get_untracked(), self.app()) else {
            return;
        };
        self.deleted.set(None);
        app.undelete(deleted);
        self.saved.set(app.conversations());
    }
}
