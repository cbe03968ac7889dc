//! Runs a reload cut off: the notices area offers to resume each (in its own
//! conversation, opened first) or to discard it.

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
        });
    }

    /// Forgets the cut-off run of `conversation`; its turn stays stopped.
    pub fn discard(&self, conversation: &str) {
        self.forget_interrupted(conversation);
        if let Some(Err(error)) = self.app().map(|app| app.discard_interrupted(conversation)) {
            self.notices.update(|n| n.push(error.to_string()));
        }
    }

    pub(super) fn forget_interrupted(&self, conversation: &str) {
        self.interrupted
            .update(|runs| runs.retain(|r| r.conversation != conversation));
    }
}
