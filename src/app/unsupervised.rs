//! A build without the `supervisor` feature (the lean runtime): no turn is supervised
//! (`createAgent` refuses `supervisor: true`), so there is no supervision to resume. One
//! saved by a fuller build over the same storage is reported and refused, never run.

use super::turn::{Place, StopSignal};
use super::update::Notice;
use super::{AppError, Session};
use crate::compose::agent::Agent;
use crate::llm::message::Message;
use crate::run::{AgentRun, Outcome};

const REFUSED: &str = "a supervised turn needs the supervisor, which this build leaves out";

/// Stands for a saved supervision, which this build never reads.
pub(super) struct SavedSupervision {
    pub(super) turn: u64,
    pub(super) agent: String,
    pub(super) supervision: Unread,
}

/// The supervisor's state, unread.
pub(super) struct Unread;

impl Session {
    fn supervision_saved(&self, conversation: &str) -> bool {
        let disk = self.disk();
        let key = disk.keys.supervision(conversation);
        disk.storage.load(&key).is_some()
    }

    pub(super) fn interrupted_supervision(&self, conversation: &str) -> Option<Notice> {
        self.supervision_saved(conversation)
            .then(|| Notice::Interrupted {
                conversation: conversation.to_owned(),
                turn: 0,
                agent: String::new(),
                refused: Some(REFUSED.into()),
            })
    }

    pub(super) fn cut_off_supervision(
        &self,
        conversation: &str,
    ) -> Result<Option<SavedSupervision>, AppError> {
        if self.supervision_saved(conversation) {
            return Err(AppError::CannotResume(REFUSED.into()));
        }
        Ok(None)
    }

    pub(super) fn forget_supervision(&self, conversation: &str) {
        let disk = self.disk();
        disk.storage.remove(&disk.keys.supervision(conversation));
    }

    pub(super) async fn supervised(
        &self,
        _: &Place,
        _: &Agent,
        _: Vec<Message>,
        _: Unread,
        _: Option<AgentRun>,
        _: StopSignal,
    ) -> Outcome {
        Outcome::Failed {
            error: REFUSED.into(),
        }
    }
}
