//! What a run reports as it goes: one [`Event`] per change, in order. The UI, the
//! scenario runner, embedders and tests all read the same stream; the record the UI
//! renders (`interaction`) is built only from it.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::llm::Delta;
use crate::message::ToolCall;
use crate::run::{ContextMemory, Outcome, Purpose, Review, Trigger};
use crate::tool::ToolKind;

/// A typed thought: what the model decided, or what came back to it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thought {
    /// The model asked for tools.
    Actions { text: String, calls: Vec<ToolCall> },
    /// The model answered in text.
    Message { text: String },
    /// A tool's result or error, as the model will read it.
    ToolReturn {
        call_id: String,
        tool: String,
        result: Result<Value, String>,
        duration_ms: i64,
    },
    /// Something went wrong that the run records but survives (an unusable review).
    Error { message: String },
}

/// A change in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A run began on this trigger and input.
    Started {
        trigger: Trigger,
        input: String,
    },
    /// The model is asked, for this purpose.
    StepStarted(Purpose),
    /// A piece of the model's response as it streams.
    Delta(Delta),
    Thought(Thought),
    /// A tool call starts (its result arrives as a [`Thought::ToolReturn`]).
    ToolStarted {
        call: ToolCall,
        kind: Option<ToolKind>,
    },
    /// The model changed its plan or context memory.
    PlanUpdated {
        plan: Vec<String>,
        memory: ContextMemory,
    },
    /// The run is paused until a person approves or denies this call.
    ApprovalNeeded {
        call: ToolCall,
    },
    /// A reflection on the drafted answer.
    Reflection(Review),
    /// The model said whether the goal is complete.
    GoalChecked {
        complete: bool,
        answer: String,
    },
    Done(Outcome),
}

impl Event {
    /// Its name, as serialized in its `event` field.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Started { .. } => "started",
            Self::StepStarted(_) => "step_started",
            Self::Delta(_) => "delta",
            Self::Thought(_) => "thought",
            Self::ToolStarted { .. } => "tool_started",
            Self::PlanUpdated { .. } => "plan_updated",
            Self::ApprovalNeeded { .. } => "approval_needed",
            Self::Reflection(_) => "reflection",
            Self::GoalChecked { .. } => "goal_checked",
            Self::Done(_) => "done",
        }
    }

    /// Every name [`Event::name`] can return.
    pub const NAMES: [&'static str; 10] = [
        "started",
        "step_started",
        "delta",
        "thought",
        "tool_started",
        "plan_updated",
        "approval_needed",
        "reflection",
        "goal_checked",
        "done",
    ];
}
