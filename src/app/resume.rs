//! Durable runs: a turn's run is saved (under [`Keys::run`]) before every step and
//! while it waits for an approval, and removed when the turn ends. One left behind
//! was cut off by a reload: [`Session::restore`] reports it, and [`Session::resume`]
//! drives it on in the same turn with the same agent. Its action calls keep their
//! idempotency keys, so an action applied before the reload is not applied again
//! (the ledger answers with its recorded result). What cannot be resumed faithfully
//! is refused, saying why.
//!
//! A saved run is data: what it may do comes from the live session. Its observation's
//! trigger, actor and boundaries are the live trigger's — the one the host gives
//! again ([`Session::resume_with`]), or, for a person's chat turn, the chat trigger the
//! session makes itself — never the saved ones, which a tampered save could widen or
//! point at another actor. A run a host's trigger began resumes only with that
//! trigger given again.

use std::rc::Rc;

use serde::{Deserialize, Serialize};

use super::keys::{Keys, Loaded, keep_aside};
use super::storage::Storage;
use super::turn::Place;
use super::update::{Notice, Update};
use super::{AppError, Session};
use crate::compose::agent::Agent;
use crate::run::{Actor, AgentRun, Boundaries, Observation, Outcome};

/// The version of what [`SavedRun`] is written as; other versions are kept aside.
const RUN_VERSION: u32 = 2;
/// Version 1 saved the history with the run; it still reads (see `run::transcript`).
const OLDEST_RUN_VERSION: u32 = 1;

/// A run in flight as saved: where its events go, which agent drives it, the run.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct SavedRun<R> {
    version: u32,
    conversation: String,
    turn: u64,
    agent: String,
    /// A played character's run: its workflows follow the answer, and a resume
    /// cannot redo them.
    character: bool,
    run: R,
}

/// Reads the run saved for `conversation`; one that cannot be read (corrupt, or of
/// another version) is kept aside and removed.
fn load_run(storage: &dyn Storage, keys: &Keys, conversation: &str) -> Loaded<SavedRun<AgentRun>> {
    let key = keys.run(conversation);
    let Some(text) = storage.load(&key) else {
        return Loaded::Missing;
    };
    let error = match crate::base::json::from_text::<SavedRun<AgentRun>>(&text) {
        Ok(saved) if (OLDEST_RUN_VERSION..=RUN_VERSION).contains(&saved.version) => {
            return Loaded::Found(saved);
        }
        Ok(saved) => format!(
            "a run saved as version {}, this build reads {OLDEST_RUN_VERSION} to {RUN_VERSION}",
            saved.version
        ),
        Err(error) => error.to_string(),
    };
    let loaded = keep_aside(storage, &key, &text, error);
    if storage.load(&format!("{key}.corrupt")).as_deref() == Some(text.as_str()) {
        storage.remove(&key);
    }
    loaded
}

impl Session {
    /// Saves the conversation and its run in flight, before a step.
    pub(super) fn checkpoint(&self, place: &Place, agent: &str, character: bool, run: &AgentRun) {
        self.note_untrusted(place, run);
        self.save_progress(&place.conversation);
        let saved = SavedRun {
            version: RUN_VERSION,
            conversation: place.conversation.clone(),
            turn: place.turn,
            agent: agent.to_owned(),
            character,
            run,
        };
        let disk = self.disk();
        let key = disk.keys.run(&place.conversation);
        let written = serde_json::to_string(&saved)
            .map_err(|e| e.to_string())
            .and_then(|text| disk.storage.save(&key, &text));
        if let Err(error) = written {
            self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
        }
        #[cfg(feature = "telemetry")]
        self.save_tracing(place);
    }

    /// Removes the saved run of a conversation.
    pub(super) fn forget_run(&self, conversation: &str) {
        let disk = self.disk();
        disk.storage.remove(&disk.keys.run(conversation));
    }

    /// The runs a reload cut off, of every saved conversation with no run in flight
    /// in this session (also reported by [`Session::restore`]); saved runs that
    /// cannot be read are kept aside and told.
    pub fn interrupted(&self) -> Vec<Notice> {
        let disk = self.disk();
        let ids: Vec<String> = {
            let state = self.inner.state.borrow();
            let mut ids: Vec<String> = state.index.iter().map(|c| c.id.clone()).collect();
            if !ids.contains(&state.open) {
                ids.push(state.open.clone());
            }
            // A run in flight here saves its own run: that one was not cut off.
            ids.retain(|id| !state.running.iter().any(|r| &r.conversation == id));
            ids
        };
        ids.iter()
            .filter_map(|id| match load_run(disk.storage, &disk.keys, id) {
                Loaded::Missing => self.interrupted_supervision(id),
                Loaded::Found(saved) => Some(Notice::Interrupted {
                    refused: self
                        .resumable(&saved)
                        .and_then(|_| self.live_trigger(&saved, None))
                        .err()
                        .map(|e| e.to_string()),
                    conversation: saved.conversation,
                    turn: saved.turn,
                    agent: saved.agent,
                }),
                Loaded::Corrupt { kept_as, error } => Some(Notice::Corrupt {
                    key: disk.keys.run(id),
                    kept_as,
                    error,
                }),
            })
            .collect()
    }

    /// The agent to resume a saved run with, or why it cannot be resumed faithfully.
    fn resumable(&self, saved: &SavedRun<AgentRun>) -> Result<Rc<Agent>, AppError> {
        if saved.character {
            return Err(AppError::CannotResume(
                "a played character records its transaction after the answer, and that \
                 cannot be redone after a reload; discard it and ask again"
                    .into(),
            ));
        }
        self.agent_named(&saved.agent)
    }

    /// The trigger a saved run resumes under: `given` (the host's, again), which must
    /// be for the run's agent and of its event; else, for a person's chat turn, the
    /// chat trigger (no actor, every action its tools allow, as any chat turn). A run
    /// a host's trigger began cannot be resumed without it: its saved boundaries and
    /// actor are not taken on trust.
    fn live_trigger(
        &self,
        saved: &SavedRun<AgentRun>,
        given: Option<Observation>,
    ) -> Result<Observation, AppError> {
        let stored = saved.run.observation();
        let Some(given) = given else {
            return if is_chat_turn(stored) {
                Ok(Observation::chat(stored.subject.content.clone()))
            } else {
                Err(AppError::CannotResume(format!(
                    "it began with the host's `{}` trigger; resume it with that trigger \
                     given again",
                    stored.trigger.event
                )))
            };
        };
        let named = given.actor.name.trim();
        let agent = {
            let delegate = &self.inner.state.borrow().delegate;
            (!named.is_empty())
                .then(|| delegate.named(named))
                .flatten()
                .unwrap_or_else(|| delegate.default_agent())
        };
        if agent.name != saved.agent {
            return Err(AppError::CannotResume(format!(
                "the trigger given is for `{}`, the saved run is `{}`'s",
                agent.name, saved.agent
            )));
        }
        let same = |a: &Observation, b: &Observation| {
            a.trigger.kind == b.trigger.kind && a.trigger.event == b.trigger.event
        };
        if !same(&given, stored) {
            return Err(AppError::CannotResume(format!(
                "the trigger given is `{}`, the saved run began with `{}`",
                given.trigger.event, stored.trigger.event
            )));
        }
        // It happened when it first did.
        let mut given = given;
        given.trigger.timestamp = stored.trigger.timestamp.clone();
        Ok(given)
    }

    pub(super) fn agent_named(&self, name: &str) -> Result<Rc<Agent>, AppError> {
        let agent = self.inner.state.borrow().delegate.named(name);
        agent.ok_or_else(|| {
            AppError::CannotResume(format!("the agent `{name}` is not in this session"))
        })
    }

    /// Drives the run a reload cut off in `conversation` to its end, in the same turn
    /// (reopened) with the same agent, pausing for approvals as any turn does. Actions
    /// applied before the reload are not applied again. Refused (with why) when there
    /// is none, when it cannot be read or resumed faithfully (a run a host's trigger
    /// began: see [`Session::resume_with`]), or when the conversation went on since.
    pub async fn resume(&self, conversation: &str) -> Result<Outcome, AppError> {
        self.resume_under(conversation, None).await
    }

    /// [`Session::resume`] for a run a host's trigger began, under `trigger`, that
    /// trigger given again: the resumed run's actor and boundaries are its, never the
    /// saved ones. Refused when it names another agent or another event.
    pub async fn resume_with(
        &self,
        conversation: &str,
        trigger: Observation,
    ) -> Result<Outcome, AppError> {
        self.resume_under(conversation, Some(trigger)).await
    }

    async fn resume_under(
        &self,
        conversation: &str,
        trigger: Option<Observation>,
    ) -> Result<Outcome, AppError> {
        let lock = {
            let mut state = self.inner.state.borrow_mut();
            if state.destroyed {
                return Err(AppError::Destroyed);
            }
            state.lock(conversation)
        };
        let _turn = lock.lock().await;
        let disk = self.disk();
        let supervised = self.cut_off_supervision(conversation)?;
        let saved = match load_run(disk.storage, &disk.keys, conversation) {
            Loaded::Found(saved) => Some(saved),
            Loaded::Missing if supervised.is_some() => None,
            Loaded::Missing => return Err(AppError::NotInterrupted(conversation.to_owned())),
            Loaded::Corrupt { kept_as, error } => {
                self.tell(&Update::Notice(Notice::Corrupt {
                    key: disk.keys.run(conversation),
                    kept_as: kept_as.clone(),
                    error: error.clone(),
                }));
                return Err(AppError::BadState(format!(
                    "the interrupted run is unreadable ({error}); it was kept under {kept_as}"
                )));
            }
        };
        let (turn, agent, trigger) = match (&saved, &supervised) {
            (Some(saved), _) => (
                saved.turn,
                self.resumable(saved)?,
                Some(self.live_trigger(saved, trigger)?),
            ),
            (None, Some(supervised)) => {
                (supervised.turn, self.agent_named(&supervised.agent)?, None)
            }
            (None, None) => return Err(AppError::NotInterrupted(conversation.to_owned())),
        };
        let history = {
            let mut state = self.inner.state.borrow_mut();
            if state.destroyed {
                return Err(AppError::Destroyed);
            }
            let c = state.conversation_mut(conversation, &disk);
            let reopened = match c.interactions.last_mut() {
                Some(last) if last.id == turn => last.reopen(),
                _ => false,
            };
            if !reopened {
                return Err(AppError::CannotResume(format!(
                    "turn {turn} has ended, or the conversation went on after it"
                )));
            }
            c.context_before(turn, &agent.name, self.inner.config.options.context_budget)
        };
        let place = Place {
            conversation: conversation.to_owned(),
            turn,
        };
        self.tell(&Update::TurnResumed {
            conversation: conversation.to_owned(),
            turn,
        });
        // What may run, and what the model is told, comes from the live agent,
        // registry and trigger; the saved run is data (it may be stale, or tampered
        // with).
        let options = &self.inner.config.options;
        let run = saved.zip(trigger).map(|(saved, trigger)| {
            saved
                .run
                .resumed(
                    agent.system.clone(),
                    trigger,
                    self.catalogue(&agent),
                    history.clone(),
                )
                .with_max_iterations(options.max_iterations)
                .with_max_lookups(options.max_lookups)
                .with_time_budget_ms(options.time_budget_ms)
                .with_reason_tokens(options.reason_tokens)
                .with_owners(agent.owners.clone())
        });
        let run = match (run, self.orders_of(&agent)) {
            (Some(run), Some(orders)) => Some(run.with_orders(orders)),
            (run, _) => run,
        };
        let signal = self.start_running(&place);
        let outcome = match (supervised, run) {
            (Some(saved), run) => {
                self.supervised(&place, &agent, history, saved.supervision, run, signal)
                    .await
            }
            (None, Some(run)) => self.drive(&place, &agent, run, false, signal).await,
            (None, None) => Outcome::Failed {
                error: "nothing was saved to resume".into(),
            },
        };
        self.end_turn(&place);
        Ok(outcome)
    }

    /// Forgets the run a reload cut off in `conversation`; its turn stays closed.
    /// Refused while a run of that conversation is in flight (the saved run is its).
    pub fn discard_interrupted(&self, conversation: &str) -> Result<(), AppError> {
        let state = self.inner.state.borrow();
        if state.running.iter().any(|r| r.conversation == conversation) {
            return Err(AppError::Busy("discard the saved run"));
        }
        drop(state);
        let disk = self.disk();
        let key = disk.keys.run(conversation);
        let supervision = disk.keys.supervision(conversation);
        if disk.storage.load(&key).is_none() && disk.storage.load(&supervision).is_none() {
            return Err(AppError::NotInterrupted(conversation.to_owned()));
        }
        disk.storage.remove(&key);
        disk.storage.remove(&supervision);
        Ok(())
    }
}

/// Whether `observation` is a person's chat message as the session makes one
/// ([`Observation::chat`]): the only trigger a run resumes under with no host to give
/// it again.
fn is_chat_turn(observation: &Observation) -> bool {
    let chat = Observation::chat(observation.subject.content.clone());
    observation.trigger == chat.trigger
        && observation.actor == Actor::default()
        && observation.boundaries == Boundaries::default()
        && !observation.subject.is_untrusted()
}
