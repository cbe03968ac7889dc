//! What a reload cut off: the notices area offers to resume each run (in its own
//! conversation, opened first) or to discard it; the messages that waited behind a
//! run go once it is dealt with.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::Chat;
use crate::app::Notice;

/// A run a reload cut off, as the banner offers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Interrupted {
    pub conversation: String,
    pub turn: u64,
    /// Why it cannot be resumed (then only Discard is offered).
    pub refused: Option<String>,
}

impl Chat {
    /// Offers the run an `interrupted` notice tells of.
    pub(super) fn offer_resume(&self, notice: &Notice) {
        if let Notice::Interrupted {
            conversation,
            turn,
            refused,
            ..
        } = notice
        {
            let run = Interrupted {
                conversation: conversation.clone(),
                turn: *turn,
                refused: refused.clone(),
            };
            self.interrupted.update(|runs| runs.push(run));
        }
    }

    /// Resumes the cut-off run of `conversation`, showing that conversation.
    pub fn resume(&self, conversation: &str) {
        let Some(app) = self.app() else {
            return;
        };
        self.forget_interrupted(conversation);
        if self.conversation_id.get_untracked() != conversation {
            self.open(conversation);
        }
        let (chat, conversation) = (*self, conversation.to_owned());
        spawn_local(async move {
            if let Err(error) = app.resume(&conversation).await {
                chat.notices.update(|n| n.push(error.to_string()));
            }
            chat.refresh(false);
            chat.send_waiting(&conversation);
        });
    }

    /// Forgets the cut-off run of `conversation`; its turn stays stopped.
    pub fn discard(&self, conversation: &str) {
        self.forget_interrupted(conversation);
        if let Some(Err(error)) = self.app().map(|app| app.discard_interrupted(conversation)) {
            self.notices.update(|n| n.push(error.to_string()));
        }
        self.send_waiting(conversation);
    }

    /// Sends the messages a reload left waiting in `conversation` when it is the one
    /// on screen and no cut-off run is in their way (they go after it is resumed or
    /// discarded).
    pub(super) fn send_waiting(&self, conversation: &str) {
        let Some(app) = self.app() else {
            return;
        };
        let in_the_way = self
            .interrupted
            .with_untracked(|runs| runs.iter().any(|r| r.conversation == conversation));
        if in_the_way
            || self.conversation_id.get_untracked() != conversation
            || app.queued(conversation).is_empty()
        {
            return;
        }
        let (chat, conversation) = (*self, conversation.to_owned());
        spawn_local(async move {
            let _ = app.send_queued(&conversation).await;
            chat.refresh(false);
        });
    }

    pub(super) fn forget_interrupted(&self, conversation: &str) {
        self.interrupted
            .update(|runs| runs.retain(|r| r.conversation != conversation));
    }
}
