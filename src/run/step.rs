//! The run's steps as plain data: what [`AgentRun::next_step`](super::AgentRun::next_step)
//! asks of its driver (a [`NextStep`]: a model call for a [`Purpose`], tool calls as
//! [`Invocation`]s, a pause, or the [`Outcome`]) and what the driver feeds back
//! ([`ToolResult`]). The machine that decides them is the parent module's.

use crate::base::json::Read;
use crate::base::text::Text;
use serde::Serialize;
use serde_json::Value;

use crate::llm::ChatRequest;
use crate::llm::message::ToolCall;
use crate::llm::usage::Tally;
use crate::tool::{Approval, RunsOn, ToolError, ToolKind};

/// What the driver should do next.
#[derive(Debug, Clone, PartialEq)]
pub enum NextStep {
    /// Ask the model.
    CallModel(ModelCall),
    /// Run these calls in the page (data calls concurrently) and report every result.
    CallTools(Vec<Invocation>),
    /// Send these calls to the host and report its answers.
    AwaitHost(Vec<Invocation>),
    /// Pause until a person approves or denies this action.
    AwaitApproval(ToolCall),
    Done(Outcome),
}

/// A model call and what it is for.
#[derive(Debug, Clone, PartialEq)]
pub struct ModelCall {
    pub purpose: Purpose,
    pub request: ChatRequest,
}

/// Why the model is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Read)]
#[serde(tag = "purpose", rename_all = "snake_case")]
pub enum Purpose {
    GuessGoal,
    /// Reason and decide; `iteration` counts from 1.
    Reason {
        iteration: u32,
    },
    /// The cap was hit: one last answer with tools off.
    FinalAnswer,
    CheckGoal,
    Reflect {
        round: u32,
    },
}

/// One tool call as the run wants it made.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Invocation {
    pub call: ToolCall,
    /// `None` for a tool the registry does not know (its call fails as unknown).
    pub kind: Option<ToolKind>,
    pub runs_on: RunsOn,
    pub approval: Approval,
    pub timeout_ms: u64,
    /// Stable across retries and resumes, and the id a host answers to; the ledger
    /// keys applied actions by it.
    pub idempotency_key: Option<Text>,
    /// The arguments a person approved it with (as values): when it runs, it runs
    /// only with these (see [`Invocation::approval_broken`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approved: Option<Box<Value>>,
    /// The agent of a composite that owns its tool (see [`super::Owners`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub owner: Option<String>,
}

impl Invocation {
    /// The id a host answers to.
    pub fn request_id(&self) -> &str {
        self.idempotency_key.as_deref().unwrap_or(&self.call.id)
    }
}

/// A call's idempotency key, `{run}/{iteration}/{call}`, or with the look-up turn
/// `{run}/{iteration}.{lookup}/{call}`: pieces pushed into a string sized for them, as
/// every call of every step makes a key and `format!` costs several times that.
pub(super) fn idempotency_key(run: &str, iteration: u32, lookup: Option<u32>, call: &str) -> Text {
    let mut key = String::with_capacity(run.len() + call.len() + 24);
    key.push_str(run);
    key.push('/');
    push_decimal(&mut key, iteration);
    if let Some(lookup) = lookup {
        key.push('.');
        push_decimal(&mut key, lookup);
    }
    key.push('/');
    key.push_str(call);
    key.into()
}

fn push_decimal(to: &mut String, n: u32) {
    let mut place = 1;
    while place <= n / 10 {
        place *= 10;
    }
    loop {
        to.push(char::from(b'0' + (n / place % 10) as u8));
        if place == 1 {
            break;
        }
        place /= 10;
    }
}

/// A finished call, fed back with [`AgentRun::tools_returned`].
#[derive(Debug, Clone, PartialEq)]
pub struct ToolResult {
    pub call_id: Text,
    pub result: Result<Value, ToolError>,
    pub duration_ms: i64,
    /// When it finished, in milliseconds since the epoch (0: not known).
    pub at_ms: i64,
    /// What model calls made for it used (an agent called as a tool: its run's), for
    /// the calling run's meter; nothing for any other tool, a host's, or a kept answer.
    pub usage: Tally,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Outcome {
    /// The model answered in text.
    Answered { text: String },
    /// The model acted and then judged the goal complete; `text` is its judgement.
    GoalComplete { text: String },
    /// The iteration cap was hit; `text` is the model's final, tools-off answer.
    CapReached { text: String },
    /// Stopped from outside (a person, a closed tab).
    Aborted { reason: String },
    /// Stopped before the model was asked again, because a budget the run is held to
    /// is reached; `reason` says which ([`crate::run::stop_words`]). The turn is not
    /// answered, but its message stays in what the model reads next.
    BudgetReached { reason: String },
    /// The run could not go on.
    Failed { error: String },
}

impl Outcome {
    /// What to show the user.
    pub fn text(&self) -> &str {
        match self {
            Self::Answered { text } | Self::GoalComplete { text } | Self::CapReached { text } => {
                text
            }
            Self::Aborted { reason } | Self::BudgetReached { reason } => reason,
            Self::Failed { error } => error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::idempotency_key;

    #[test]
    fn a_key_names_the_run_the_iteration_the_look_up_and_the_call() {
        assert_eq!(
            idempotency_key("run-1", 0, None, "call_0"),
            "run-1/0/call_0"
        );
        assert_eq!(idempotency_key("r", 12, Some(3), "c"), "r/12.3/c");
        assert_eq!(idempotency_key("r", 10, Some(0), "c"), "r/10.0/c");
        assert_eq!(
            idempotency_key("r", u32::MAX, Some(10), ""),
            "r/4294967295.10/"
        );
    }
}
