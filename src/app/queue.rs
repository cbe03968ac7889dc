//! Messages waiting their turn. A message that cannot begin at once (its
//! conversation's run goes on, or waits for an approval) is kept under
//! [`Keys::queued`](super::Keys::queued) until its turn is begun and the conversation
//! holding it saved, so a reload between the two loses nothing. Turns are taken from
//! the head of the queue, oldest first, so a message sent later never overtakes one a
//! reload left waiting; [`Session::send_queued`] sends what a reload left, once the
//! person has dealt with the run that was in the way (resumed or discarded it).

use futures::lock::Mutex;
use serde::Serialize;

use super::keys::{Loaded, load_kept};
use super::turn::Input;
use super::update::{Notice, Update};
use super::{AppError, Session, checked_input};
use crate::base::json::Read;
use crate::run::Outcome;

/// A message in a queue, numbered so that two equal texts stay two messages.
#[derive(Debug, Clone, Serialize, Read)]
pub(super) struct Queued {
    number: u64,
    text: String,
}

impl Session {
    /// The messages of `conversation` still waiting for their turn, oldest first.
    pub fn queued(&self, conversation: &str) -> Vec<String> {
        self.queue(conversation)
            .into_iter()
            .map(|q| q.text)
            .collect()
    }

    /// Sends what waits in `conversation`'s queue, one turn after the other. Resolves
    /// to the outcomes of the turns it took (a message another sender took first is
    /// not taken twice).
    pub async fn send_queued(&self, conversation: &str) -> Result<Vec<Outcome>, AppError> {
        let lock = self.inner.state.borrow_mut().lock(conversation);
        let mut outcomes = Vec::new();
        while let Some((_, outcome)) = self.next_in_queue(conversation, &lock, None).await? {
            outcomes.push(outcome);
        }
        Ok(outcomes)
    }

    /// Takes the turns waiting in `conversation`'s queue, oldest first, up to and
    /// including message `mine`; its outcome.
    pub(super) async fn run_queue(
        &self,
        conversation: &str,
        lock: &Mutex<()>,
        mine: u64,
    ) -> Result<Outcome, AppError> {
        loop {
            match self.next_in_queue(conversation, lock, Some(mine)).await? {
                Some((number, outcome)) if number == mine => return Ok(outcome),
                Some(_) => {}
                None => return Err(AppError::NotQueued(conversation.to_owned())),
            }
        }
    }

    /// Waits for the conversation's turn, then takes the message at the head of its
    /// queue: its number and outcome. `None` when the queue is empty, or when `mine`
    /// no longer waits in it (another sender took it).
    async fn next_in_queue(
        &self,
        conversation: &str,
        lock: &Mutex<()>,
        mine: Option<u64>,
    ) -> Result<Option<(u64, Outcome)>, AppError> {
        let _turn = lock.lock().await;
        loop {
            if self.inner.state.borrow().destroyed {
                return Err(AppError::Destroyed);
            }
            let queue = self.queue(conversation);
            if mine.is_some_and(|mine| !queue.iter().any(|q| q.number == mine)) {
                return Ok(None);
            }
            let Some(head) = queue.into_iter().next() else {
                return Ok(None);
            };
            // Read back from storage: what no longer passes as a message leaves.
            let Ok(text) = checked_input(&head.text) else {
                self.dequeue(conversation, head.number);
                continue;
            };
            let asked = Input::Chat(text);
            let (address, _same_lock) = self.addressed(&asked)?;
            let outcome = self
                .run_turn(address, asked, Some((conversation, head.number)))
                .await;
            return Ok(Some((head.number, outcome)));
        }
    }

    /// `conversation`'s queue as kept; one that cannot be read is kept aside, told,
    /// and read as empty.
    pub(super) fn queue(&self, conversation: &str) -> Vec<Queued> {
        let disk = self.disk();
        let key = disk.keys.queued(conversation);
        match load_kept::<Vec<Queued>>(disk.storage, &key) {
            Loaded::Found(queue) => queue,
            Loaded::Missing => Vec::new(),
            Loaded::Corrupt { kept_as, error } => {
                disk.storage.remove(&key);
                self.tell(&Update::Notice(Notice::Corrupt {
                    key,
                    kept_as,
                    error,
                }));
                Vec::new()
            }
        }
    }

    /// Keeps `text` at the end of `conversation`'s queue; its number there.
    pub(super) fn enqueue(&self, conversation: &str, text: &str) -> u64 {
        let mut queue = self.queue(conversation);
        let number = queue.last().map_or(1, |q| q.number + 1);
        queue.push(Queued {
            number,
            text: text.to_owned(),
        });
        self.write_queue(conversation, &queue);
        number
    }

    /// Takes message `number` out of `conversation`'s queue: its turn is begun and
    /// saved.
    pub(super) fn dequeue(&self, conversation: &str, number: u64) {
        let mut queue = self.queue(conversation);
        let before = queue.len();
        queue.retain(|q| q.number != number);
        if queue.len() != before {
            self.write_queue(conversation, &queue);
        }
    }

    fn write_queue(&self, conversation: &str, queue: &[Queued]) {
        let disk = self.disk();
        let key = disk.keys.queued(conversation);
        if queue.is_empty() {
            disk.storage.remove(&key);
            return;
        }
        let written = serde_json::to_string(queue)
            .map_err(|e| e.to_string())
            .and_then(|text| disk.storage.save(&key, &text));
        if let Err(error) = written {
            self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
        }
    }
}
