//! What a run reports as it goes: one [`Event`] per change, in order. The UI, the
//! scenario runner, embedders and tests all read the same stream; the record the UI
//! renders (`interaction`) is built only from it.

use crate::base::text::Text;
use serde::Serialize;
use serde_json::Value;

use crate::base::json::Read;
use crate::llm::Delta;
use crate::llm::message::ToolCall;
use crate::run::{ContextMemory, Fit, Outcome, Perception, PlanStep, Purpose, Review, Trigger};
use crate::tool::ToolKind;

/// A typed thought: what the model decided, or what came back to it.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Thought {
    /// The model asked for tools.
    Actions { text: String, calls: Vec<ToolCall> },
    /// The model answered in text.
    Message { text: String },
    /// A tool's result or error, as the model will read it.
    ToolReturn {
        call_id: Text,
        tool: Text,
        #[serde(with = "tool_result")]
        result: Result<Value, String>,
        duration_ms: i64,
    },
    /// Something went wrong that the run records but survives (an unusable review).
    Error { message: String },
}

/// What a person decided about a call that asked first: a decision, not a failure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
#[serde(tag = "decision", rename_all = "snake_case")]
pub enum Decided {
    Approved,
    /// Run without a card, under a grant the person gave on an earlier card.
    Allowed {
        by: Grant,
    },
    Denied {
        reason: String,
    },
}

/// What a person granted on a card besides the call it asked about. None covers a
/// call that always asks (it submits, buys, deletes, sends or signs out).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Grant {
    /// The rest of this run's (this turn's) page actions on the same site.
    Task,
    /// The harmless kinds (scroll, highlight) on the site, standing: kept by
    /// the host, given back to later agents.
    Site,
    /// This tool, for this agent, in this conversation.
    Always,
}

impl Grant {
    /// How a line in the conversation names it: "Allowed for this task: …".
    pub fn label(self) -> &'static str {
        match self {
            Self::Task => "Allowed for this task",
            Self::Site => "Allowed on this site",
            Self::Always => "Allowed always",
        }
    }
}

/// A change in a run.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// A run began on this trigger and input.
    Started {
        trigger: Trigger,
        input: String,
        /// What the agent perceived as it started (its environment), when anything.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        environment: Option<Perception>,
    },
    /// The next request was trimmed to fit the model's context window.
    Fitted(Fit),
    /// The model is asked, for this purpose.
    StepStarted(Purpose),
    /// A piece of the model's response as it streams.
    Delta(Delta),
    Thought(Thought),
    /// A tool call starts (its result arrives as a [`Thought::ToolReturn`]).
    ToolStarted {
        call: ToolCall,
        kind: Option<ToolKind>,
        /// The sub-agent of a composite that owns the tool ([`crate::run::Owners`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// The model changed its plan or context memory.
    PlanUpdated {
        plan: Vec<PlanStep>,
        memory: ContextMemory,
    },
    /// The run is paused until a person approves or denies this call.
    ApprovalNeeded {
        call: ToolCall,
        /// What the tool says it does (its registered description), in its own words,
        /// for the person deciding.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        /// The sub-agent of a composite that owns the tool ([`crate::run::Owners`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A call that would have asked ran without a card, under a grant the person gave
    /// before: shown and recorded all the same.
    Allowed {
        call: ToolCall,
        /// What it does, in plain words, as its card would have said.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        by: Grant,
        /// The sub-agent of a composite that owns the tool ([`crate::run::Owners`]).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// A person decided about the call the run was paused for.
    Decided {
        call_id: String,
        #[serde(flatten)]
        decision: Decided,
    },
    /// A reflection on the drafted answer.
    Reflection(Review),
    /// The model guessed the goal behind the input (the goal analysis phase).
    GoalGuessed {
        goal: String,
    },
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
            Self::Fitted(_) => "fitted",
            Self::StepStarted(_) => "step_started",
            Self::Delta(_) => "delta",
            Self::Thought(_) => "thought",
            Self::ToolStarted { .. } => "tool_started",
            Self::PlanUpdated { .. } => "plan_updated",
            Self::ApprovalNeeded { .. } => "approval_needed",
            Self::Allowed { .. } => "allowed",
            Self::Decided { .. } => "decided",
            Self::Reflection(_) => "reflection",
            Self::GoalGuessed { .. } => "goal_guessed",
            Self::GoalChecked { .. } => "goal_checked",
            Self::Done(_) => "done",
        }
    }

    /// Every name [`Event::name`] can return.
    pub const NAMES: [&'static str; 14] = [
        "started",
        "fitted",
        "step_started",
        "delta",
        "thought",
        "tool_started",
        "plan_updated",
        "approval_needed",
        "allowed",
        "decided",
        "reflection",
        "goal_guessed",
        "goal_checked",
        "done",
    ];
}

/// A tool result as JSON readers expect it: `{"ok": value}` or `{"error": message}`.
/// Older saves wrote serde's `{"Ok": …}` / `{"Err": …}`; both are read.
pub mod tool_result {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;

    #[derive(Serialize, Deserialize)]
    enum Written {
        #[serde(rename = "ok", alias = "Ok")]
        Ok(Value),
        #[serde(rename = "error", alias = "Err")]
        Error(String),
    }

    pub fn serialize<S: Serializer>(
        result: &Result<Value, String>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match result {
            Ok(value) => Written::Ok(value.clone()),
            Err(error) => Written::Error(error.clone()),
        }
        .serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Result<Value, String>, D::Error> {
        Ok(match Written::deserialize(d)? {
            Written::Ok(value) => Ok(value),
            Written::Error(error) => Err(error),
        })
    }

    /// The same, for a result that may not have arrived yet.
    pub mod optional {
        use super::*;

        pub fn serialize<S: Serializer>(
            result: &Option<Result<Value, String>>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            let written = result.as_ref().map(|r| match r {
                Ok(value) => Written::Ok(value.clone()),
                Err(error) => Written::Error(error.clone()),
            });
            written.serialize(s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Result<Value, String>>, D::Error> {
            Ok(Option::<Written>::deserialize(d)?.map(|w| match w {
                Written::Ok(value) => Ok(value),
                Written::Error(error) => Err(error),
            }))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_results_are_written_as_ok_or_error_and_older_saves_still_read() {
        let event = Event::Thought(Thought::ToolReturn {
            call_id: "c1".into(),
            tool: "spawn".into(),
            result: Err("no room".into()),
            duration_ms: 3,
        });
        let written = serde_json::to_value(&event).unwrap();
        assert_eq!(written["result"], json!({"error": "no room"}));
        assert_eq!(serde_json::from_value::<Event>(written).unwrap(), event);
        let older = json!({"event": "thought", "type": "tool_return", "call_id": "c1",
                           "tool": "spawn", "result": {"Ok": 1}, "duration_ms": 3});
        let Event::Thought(Thought::ToolReturn { result, .. }) =
            serde_json::from_value(older).unwrap()
        else {
            panic!("not a tool return");
        };
        assert_eq!(result, Ok(json!(1)));
    }
}
