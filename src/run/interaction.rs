//! The record the UI renders: a conversation of interactions, each made of steps.
//!
//! An [`Interaction`] is built only by applying the driver's [`Event`]s, so the UI,
//! a saved transcript and a test all see the same record. A [`Conversation`] gives
//! the model its history within a context budget. How it looks is the UI's business.

use crate::base::json::Read;
use crate::base::text::Text;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::Delta;
use crate::llm::message::ToolCall;
use crate::llm::usage::Tally;
use crate::run::event::{Decided, Event, Thought};
use crate::run::{ContextMemory, Fit, Outcome, Perception, PlanStep, Purpose, Review, Trigger};
use crate::tool::ToolKind;

pub use super::conversation::{Conversation, estimate_tokens};

/// Where an interaction is in its life: Start → Planning → Executing → Reflecting →
/// Completed | Failed | Aborted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Status {
    Start,
    Planning,
    Executing,
    Reflecting,
    Completed,
    Failed,
    Aborted,
}

impl Status {
    pub fn is_finished(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Aborted)
    }
}

/// One step of an interaction's timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Step {
    /// What started the run.
    Observe {
        trigger: Trigger,
        /// What the agent perceived as it started (its environment), when anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        environment: Option<Perception>,
    },
    /// A model call: why, its visible reasoning, and what it decided.
    Reason {
        purpose: Purpose,
        reasoning: String,
        /// Tools the model chose to call; empty when it answered.
        calls: Vec<String>,
    },
    /// The next request was trimmed to fit the model's context window.
    Fitted {
        fit: Fit,
    },
    /// The model's plan and context memory, as it last set them.
    Plan {
        steps: Vec<PlanStep>,
        memory: ContextMemory,
    },
    /// A tool call and, once finished, its result or error.
    ToolCall {
        call: ToolCall,
        kind: Option<ToolKind>,
        #[serde(with = "crate::run::event::tool_result::optional", default)]
        result: Option<Result<Value, String>>,
        duration_ms: Option<i64>,
        /// The sub-agent of a composite that owns the tool: the step is its.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// The run asked a person about this call; `decision` is theirs, once made (or
    /// a grant of theirs allowed it without asking).
    Approval {
        call: ToolCall,
        /// What it does, in plain words, as the card said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        decision: Option<Decided>,
        /// The sub-agent of a composite that owns the tool: the step is its.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    Reflection {
        review: Review,
    },
    GoalCheck {
        complete: bool,
        answer: String,
    },
    /// Something the run survived, such as an unusable review.
    Error {
        message: String,
    },
    /// The final answer.
    Answer {
        text: String,
        outcome: Outcome,
    },
}

impl Step {
    /// The sub-agent of a composite whose step it is; `None`: the run's own agent's.
    pub fn agent(&self) -> Option<&str> {
        match self {
            Self::ToolCall { agent, .. } | Self::Approval { agent, .. } => agent.as_deref(),
            _ => None,
        }
    }
}

/// One trigger and everything the agent did about it.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Interaction {
    pub id: u64,
    pub input: String,
    pub steps: Vec<Step>,
    pub status: Status,
    /// Answer text streamed by the current model call, until the outcome replaces it.
    pub draft: String,
    /// When it began, in milliseconds since the epoch (0: unknown).
    #[serde(default)]
    pub started_ms: i64,
    /// How many of its steps were let go when it became old (see
    /// [`Conversation::fold_old_turns`]): it keeps what started it and its answer.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub folded: u32,
    /// The agent that answered it (empty in saves from before agents were named).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agent: String,
    /// Who wrote the input, when another party did (an event's author, a browser
    /// agent): later turns read it quoted as theirs, never as the person's words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub author: Option<Value>,
    /// The goal the model guessed behind the input, when the run guessed one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub goal: Option<String>,
    /// What its model calls used, as their provider counted them, priced (`app::budget`).
    #[serde(default, skip_serializing_if = "Tally::is_empty")]
    pub usage: Tally,
    /// The estimated tokens of its input and its answer as history, with the answer as
    /// its own agent's and as another's (quoted): a finished turn does not change, so
    /// later runs do not estimate it again.
    #[serde(skip)]
    pub(crate) history_tokens: [crate::base::memo::Memo<(usize, usize)>; 2],
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl Interaction {
    pub fn new(id: u64, input: impl Into<String>) -> Self {
        Self {
            id,
            input: input.into(),
            steps: Vec::new(),
            status: Status::Start,
            draft: String::new(),
            started_ms: 0,
            folded: 0,
            usage: Tally::default(),
            agent: String::new(),
            author: None,
            goal: None,
            history_tokens: Default::default(),
        }
    }

    /// Lets go of the steps between what started a finished turn and its answer;
    /// whether there were any.
    pub(super) fn fold(&mut self) -> bool {
        let before = self.steps.len();
        self.steps
            .retain(|step| matches!(step, Step::Observe { .. } | Step::Answer { .. }));
        let dropped = before - self.steps.len();
        self.folded = self.folded.saturating_add(dropped as u32);
        dropped > 0
    }

    /// The final outcome, once there is one.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.steps.iter().rev().find_map(|step| match step {
            Step::Answer { outcome, .. } => Some(outcome),
            _ => None,
        })
    }

    /// Whether a budget stopped the turn before its model was asked again: marked
    /// stopped, not failed, and its message stays in what the model reads next.
    pub fn stopped_by_budget(&self) -> bool {
        matches!(self.outcome(), Some(Outcome::BudgetReached { .. }))
    }

    /// Reopens a turn that was closed as aborted (a reload cut its run off) so that
    /// its resumed run can go on: the closing answer is taken back. Whether it was.
    pub fn reopen(&mut self) -> bool {
        if !matches!(
            self.steps.last(),
            Some(Step::Answer {
                outcome: Outcome::Aborted { .. },
                ..
            })
        ) {
            return false;
        }
        self.steps.pop();
        self.status = Status::Executing;
        true
    }

    /// Folds one driver event into the record.
    pub fn apply(&mut self, event: &Event) {
        match event {
            Event::Started {
                trigger,
                environment,
                ..
            } => {
                self.status = Status::Start;
                self.steps.push(Step::Observe {
                    trigger: trigger.clone(),
                    environment: environment.clone(),
                });
            }
            Event::Fitted(fit) => self.steps.push(Step::Fitted { fit: fit.clone() }),
            Event::StepStarted(purpose) => {
                self.status = match purpose {
                    Purpose::CheckGoal | Purpose::Reflect { .. } => Status::Reflecting,
                    _ => Status::Planning,
                };
                self.draft.clear();
                self.steps.push(Step::Reason {
                    purpose: *purpose,
                    reasoning: String::new(),
                    calls: Vec::new(),
                });
            }
            Event::Delta(delta) => self.apply_delta(delta),
            Event::Thought(thought) => self.apply_thought(thought),
            Event::ToolStarted { call, kind, agent } => {
                self.status = Status::Executing;
                self.steps.push(Step::ToolCall {
                    call: call.clone(),
                    kind: *kind,
                    result: None,
                    duration_ms: None,
                    agent: agent.clone(),
                });
            }
            Event::PlanUpdated { plan, memory } => self.steps.push(Step::Plan {
                steps: plan.clone(),
                memory: memory.clone(),
            }),
            Event::ApprovalNeeded {
                call,
                description,
                agent,
            } => {
                self.steps.push(Step::Approval {
                    call: call.clone(),
                    description: description.clone(),
                    decision: None,
                    agent: agent.clone(),
                });
            }
            Event::Allowed {
                call,
                description,
                by,
                agent,
            } => self.steps.push(Step::Approval {
                call: call.clone(),
                description: description.clone(),
                decision: Some(Decided::Allowed { by: *by }),
                agent: agent.clone(),
            }),
            // The first decision stays: the run's own "approved" after a grant allowed
            // the call does not hide which grant it was.
            Event::Decided { call_id, decision } => {
                if let Some(Step::Approval { decision: slot, .. }) = self.approval_mut(call_id)
                    && slot.is_none()
                {
                    *slot = Some(decision.clone());
                }
            }
            Event::Reflection(review) => self.steps.push(Step::Reflection {
                review: review.clone(),
            }),
            Event::GoalGuessed { goal } => self.goal = Some(goal.clone()),
            Event::GoalChecked { complete, answer } => self.steps.push(Step::GoalCheck {
                complete: *complete,
                answer: answer.clone(),
            }),
            Event::Done(outcome) => {
                self.status = match outcome {
                    Outcome::Failed { .. } => Status::Failed,
                    Outcome::Aborted { .. } | Outcome::BudgetReached { .. } => Status::Aborted,
                    Outcome::Answered { .. }
                    | Outcome::GoalComplete { .. }
                    | Outcome::CapReached { .. } => Status::Completed,
                };
                // Stopped mid-answer, the text that streamed is what the person read:
                // it stays, and the outcome says it was stopped.
                let text = match outcome {
                    Outcome::Aborted { .. } if !self.draft.is_empty() => {
                        std::mem::take(&mut self.draft)
                    }
                    _ => outcome.text().to_owned(),
                };
                self.draft.clear();
                self.steps.push(Step::Answer {
                    text,
                    outcome: outcome.clone(),
                });
            }
        }
    }

    fn apply_delta(&mut self, delta: &Delta) {
        match delta {
            Delta::Text { text } => self.draft.push_str(text),
            Delta::Reasoning { text } => {
                if let Some(Step::Reason { reasoning, .. }) = self.steps.last_mut() {
                    reasoning.push_str(text);
                }
            }
            Delta::ToolCall { .. } => {}
        }
    }

    fn apply_thought(&mut self, thought: &Thought) {
        match thought {
            Thought::Actions { calls: asked, .. } => {
                if let Some(Step::Reason { calls, .. }) = self.steps.last_mut() {
                    *calls = asked.iter().map(|c| c.name.to_string()).collect();
                }
            }
            Thought::Message { .. } => {}
            Thought::ToolReturn {
                call_id,
                tool,
                result,
                duration_ms,
            } => self.finish_tool(call_id, tool, result, *duration_ms),
            Thought::Error { message } => self.steps.push(Step::Error {
                message: message.clone(),
            }),
        }
    }

    /// Whether a person declined `call_id`.
    fn declined(&self, call_id: &str) -> bool {
        self.steps.iter().any(|step| {
            matches!(step, Step::Approval { call, decision: Some(Decided::Denied { .. }), .. }
                if call.id == call_id)
        })
    }

    /// The step that asked a person about `call_id`.
    fn approval_mut(&mut self, call_id: &str) -> Option<&mut Step> {
        self.steps
            .iter_mut()
            .rev()
            .find(|step| matches!(step, Step::Approval { call, .. } if call.id == call_id))
    }

    /// Fills in the call's step; a call the run refused or handled itself (`plan`)
    /// never started, so it gets a step of its own — except one a person declined,
    /// which its approval step already shows as their decision.
    fn finish_tool(
        &mut self,
        call_id: &str,
        tool: &str,
        outcome: &Result<Value, String>,
        took: i64,
    ) {
        let step = self.steps.iter_mut().rev().find(
            |step| matches!(step, Step::ToolCall { call, result: None, .. } if call.id == call_id),
        );
        if let Some(Step::ToolCall {
            result,
            duration_ms,
            ..
        }) = step
        {
            *result = Some(outcome.clone());
            *duration_ms = Some(took);
        } else if tool != crate::run::PLAN_TOOL && !self.declined(call_id) {
            self.steps.push(Step::ToolCall {
                call: ToolCall {
                    id: call_id.into(),
                    name: tool.into(),
                    arguments: Text::default(),
                },
                kind: None,
                result: Some(outcome.clone()),
                duration_ms: Some(took),
                agent: None,
            });
        }
    }
}

#[cfg(test)]
#[path = "interaction_tests.rs"]
mod tests;
