//! A chat turn under the supervisor (`Options::supervisor`): complexity → plan →
//! executor rounds → decision, stepped here so the executor is an ordinary run of the
//! turn — the agent's tools and the host's, approvals that pause the whole turn until
//! a person (or the host's approver) answers, its time budget, and a checkpoint before
//! every step. The supervision itself is saved (under [`Keys::supervision`]) at every
//! stage, so a reload mid-plan resumes where it was: rounds already run are not run
//! again, and the round cut off goes on from its own saved run.

use crate::base::json::Read;
use futures::future::{Either, select};
use serde::Serialize;

use super::keys::Keys;
use super::storage::Storage;
use super::turn::{Place, StopSignal, stopped};
use super::update::{Notice, Update};
use super::{AppError, Session};
use crate::compose::agent::Agent;
use crate::compose::supervisor::{Next, Question, Status, Supervision, result_line};
use crate::llm::message::Message;
use crate::llm::usage::Counting;
use crate::run::event::Event;
use crate::run::interaction::Step;
use crate::run::{AgentRun, Observation, Outcome};

/// Executor rounds a supervised request gets, at most.
pub const MAX_ROUNDS: u32 = 2;

/// A supervision in flight as saved: where it belongs and which agent drives it.
#[derive(Debug, Clone, Serialize, Read)]
pub(super) struct SavedSupervision {
    pub(super) conversation: String,
    pub(super) turn: u64,
    pub(super) agent: String,
    pub(super) supervision: Supervision,
}

/// Reads the supervision saved for `conversation`; one that cannot be read is an
/// error saying why (it is left where it is, for `discard_interrupted`).
pub(super) fn load_supervision(
    storage: &dyn Storage,
    keys: &Keys,
    conversation: &str,
) -> Option<Result<SavedSupervision, String>> {
    let text = storage.load(&keys.supervision(conversation))?;
    Some(crate::base::json::from_text(&text).map_err(|e| e.to_string()))
}

impl Session {
    /// Handles the request `observation` carries under the supervisor, in the turn
    /// `place`: each executor round starts from it (what the host's environment
    /// perceived as the turn began, the scene a copilot is in, reaches every round).
    pub(super) async fn supervise(
        &self,
        place: &Place,
        agent: &Agent,
        history: Vec<Message>,
        observation: Observation,
        signal: StopSignal,
    ) -> Outcome {
        let supervision =
            Supervision::new(&observation.subject.content, MAX_ROUNDS).observing(observation);
        self.supervised(place, agent, history, supervision, None, signal)
            .await
    }

    /// Steps `supervision` to its end; `cut_off`: the executor run a reload cut off
    /// in its current round, to go on with.
    pub(super) async fn supervised(
        &self,
        place: &Place,
        agent: &Agent,
        history: Vec<Message>,
        mut supervision: Supervision,
        mut cut_off: Option<AgentRun>,
        signal: StopSignal,
    ) -> Outcome {
        loop {
            self.save_supervision(place, &agent.name, &supervision);
            match supervision.next() {
                Next::Ask(question) => {
                    // A stage is a model call like any: held to the budgets, counted.
                    let price = match self.stage_price(&place.conversation, agent) {
                        Ok(price) => price,
                        Err(words) => {
                            let stopped = Outcome::BudgetReached { reason: words };
                            return self.supervised_end(place, stopped);
                        }
                    };
                    self.status(place, question.status());
                    let started = self.inner.config.clock.now().epoch_ms;
                    let counting = Counting::new(&*agent.llm, price);
                    let asked = std::pin::pin!(question.ask(&counting));
                    let stop = std::pin::pin!(stopped(signal.clone()));
                    let answer = match select(stop, asked).await {
                        Either::Left(_) => None,
                        Either::Right((answer, _)) => Some(answer),
                    };
                    let used = counting.used();
                    self.count_call(place, &agent.name, &used);
                    #[cfg(feature = "telemetry")]
                    {
                        let error = match &answer {
                            Some(Err(error)) => Some(error.to_string()),
                            _ => None,
                        };
                        let stage = stage_name(&question);
                        self.trace_stage(place, stage, started, &used, error.as_deref());
                    }
                    match answer {
                        None => return self.supervised_end(place, stopped_outcome()),
                        Some(Ok(answer)) => self.status(place, supervision.answered(answer)),
                        Some(Err(error)) => {
                            let error = format!("the supervisor could not go on: {error}");
                            return self.supervised_end(place, Outcome::Failed { error });
                        }
                    }
                }
                Next::Execute { round, brief } => {
                    // Only the round a reload cut off goes on from its saved run.
                    let resumed = if round == supervision.round {
                        cut_off.take()
                    } else {
                        cut_off = None;
                        None
                    };
                    let status = supervision.begin(round);
                    self.save_supervision(place, &agent.name, &supervision);
                    self.status(place, status);
                    let run = resumed.unwrap_or_else(|| {
                        let observation = supervision.observation_for(brief);
                        let run = self.build_run(place, agent, observation, history.clone(), false);
                        let id = format!("{}-r{round}", run.id());
                        run.with_id(id)
                    });
                    let outcome = self.drive_within(place, agent, run, signal.clone()).await;
                    if matches!(
                        outcome,
                        Outcome::Aborted { .. } | Outcome::BudgetReached { .. }
                    ) {
                        return self.supervised_end(place, outcome);
                    }
                    supervision.executed(outcome, self.tool_results(place));
                    // Saved before its run is let go: a reload now does not redo it.
                    self.save_supervision(place, &agent.name, &supervision);
                    self.forget_run(&place.conversation);
                }
                Next::Done(report) => return self.supervised_end(place, report.outcome),
            }
        }
    }

    /// The supervised turn ends with `outcome`: told, and its supervision let go.
    fn supervised_end(&self, place: &Place, outcome: Outcome) -> Outcome {
        self.forget_supervision(&place.conversation);
        self.event(place, Event::Done(outcome.clone()));
        outcome
    }

    /// Every tool result of the turn's executor rounds so far, as the decider reads
    /// them.
    fn tool_results(&self, place: &Place) -> Vec<String> {
        let state = self.inner.state.borrow();
        let Some(conversation) = state.conversations.get(&place.conversation) else {
            return Vec::new();
        };
        let turn = conversation.interactions.iter().rev();
        let steps = turn.filter(|i| i.id == place.turn).flat_map(|i| &i.steps);
        steps
            .filter_map(|step| match step {
                Step::ToolCall {
                    call,
                    result: Some(result),
                    ..
                } => Some(result_line(&call.name, result)),
                _ => None,
            })
            .collect()
    }

    fn status(&self, place: &Place, status: Status) {
        self.tell(&Update::Supervisor {
            conversation: place.conversation.clone(),
            turn: place.turn,
            status,
        });
    }

    fn save_supervision(&self, place: &Place, agent: &str, supervision: &Supervision) {
        let saved = SavedSupervision {
            conversation: place.conversation.clone(),
            turn: place.turn,
            agent: agent.to_owned(),
            supervision: supervision.clone(),
        };
        let disk = self.disk();
        let key = disk.keys.supervision(&place.conversation);
        let written = serde_json::to_string(&saved)
            .map_err(|e| e.to_string())
            .and_then(|text| disk.storage.save(&key, &text));
        if let Err(error) = written {
            self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
        }
    }

    /// A supervised turn cut off between its executor's runs (analysing, planning,
    /// deciding): its supervision alone was saved.
    pub(super) fn interrupted_supervision(&self, conversation: &str) -> Option<Notice> {
        let disk = self.disk();
        match load_supervision(disk.storage, &disk.keys, conversation)? {
            Ok(saved) => Some(Notice::Interrupted {
                refused: self.agent_named(&saved.agent).err().map(|e| e.to_string()),
                conversation: saved.conversation,
                turn: saved.turn,
                agent: saved.agent,
            }),
            Err(error) => Some(Notice::Interrupted {
                conversation: conversation.to_owned(),
                turn: 0,
                agent: String::new(),
                refused: Some(format!(
                    "the supervisor's saved state is unreadable ({error}); discard it"
                )),
            }),
        }
    }

    /// Removes the saved supervision of a conversation.
    pub(super) fn forget_supervision(&self, conversation: &str) {
        let disk = self.disk();
        disk.storage.remove(&disk.keys.supervision(conversation));
    }

    /// The supervision a reload cut off in `conversation`, if any; one that cannot be
    /// read refuses the resume, saying why.
    pub(super) fn cut_off_supervision(
        &self,
        conversation: &str,
    ) -> Result<Option<SavedSupervision>, AppError> {
        let disk = self.disk();
        match load_supervision(disk.storage, &disk.keys, conversation) {
            None => Ok(None),
            Some(Ok(saved)) => Ok(Some(saved)),
            Some(Err(error)) => Err(AppError::BadState(format!(
                "the interrupted supervisor's state is unreadable ({error}); discard it"
            ))),
        }
    }
}

/// A stage's name on its span (`familiar.step`).
#[cfg(feature = "telemetry")]
fn stage_name(question: &Question) -> &'static str {
    match question {
        Question::Complexity(_) => "complexity",
        Question::Plan { .. } => "plan",
        Question::Decision { .. } => "decision",
    }
}

fn stopped_outcome() -> Outcome {
    Outcome::Aborted {
        reason: "stopped before it finished".into(),
    }
}
