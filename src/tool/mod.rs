//! Tools and the registry that offers them to the model.
//!
//! A tool is typed at the edge — [`Tool::Args`] derives its JSON Schema, its output
//! serializes — and erased once, privately, when registered. The registry hands the
//! schemas to the model and turns every way a call can go wrong (unknown tool, bad
//! arguments, a failing tool, a refusal) into a [`ToolError`] the model reads on its
//! next turn. Each tool also carries its policy — approval, timeout, where it runs —
//! which the run reads from the [`ToolInfo`] catalogue; the run enforces boundaries
//! and approvals, the driver timeouts.

mod current_time;
#[cfg(feature = "store")]
pub mod ledger;
#[cfg(feature = "store")]
mod memory;
#[cfg(feature = "page")]
pub mod page;
mod registry;

use crate::base::json::{Read, SchemaText};
use crate::base::text::Text;
use std::future::Future;

use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::llm::ToolSpec;

pub use current_time::CurrentTime;
#[cfg(feature = "store")]
pub use memory::{Forget, Recall, Remember};
pub(crate) use registry::parse_arguments;
pub use registry::{Describer, Judge, Reach, ToolRegistry};

/// Whether a tool only reads the world or changes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Read-only; several may run at once.
    Data,
    /// Changes the world; one per step.
    Action,
}

/// Whether a person must approve a call first.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Approval {
    /// Runs without asking, whatever the conversation has read.
    #[default]
    Auto,
    /// Pauses the run until a person approves or denies the call.
    Ask,
    /// Runs without asking while the conversation has read nothing but the person's
    /// own words; once it has read text another party wrote (a result of a tool whose
    /// [`Author`] is `Others`, an event subject a player wrote, a loaded state) —
    /// in this run or an earlier turn — asks first, so a post or a message cannot, say,
    /// send gold or plant a memory unseen. The default for actions.
    AskIfUntrusted,
    /// Never runs; the model is told so.
    Deny,
}

impl Approval {
    /// What a tool of `kind` gets unless its registration says otherwise: an action
    /// asks once the conversation is untrusted, a look-up runs.
    pub fn default_for(kind: ToolKind) -> Self {
        match kind {
            ToolKind::Action => Self::AskIfUntrusted,
            ToolKind::Data => Self::Auto,
        }
    }

    /// Whether a call under this policy waits for a person, given whether the
    /// conversation has read untrusted text.
    pub fn asks(self, untrusted: bool) -> bool {
        match self {
            Self::Ask => true,
            Self::AskIfUntrusted => untrusted,
            Self::Auto | Self::Deny => false,
        }
    }
}

/// Who may have written a tool's result: what decides whether reading it makes the
/// conversation untrusted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Author {
    /// Text another party may have written: posts, messages, names, a page, a host's
    /// data, remembered text. What a look-up returns unless its registration says not.
    #[default]
    Others,
    /// Only what the agent, the person or the world's own rules produce (your stats,
    /// prices, the clock, a rule's refusal, an action's report of what it did):
    /// reading it changes nothing.
    Own,
}

impl Author {
    /// Whose words a tool of `kind` returns unless its registration says otherwise: a
    /// look-up returns what is out there (others'); an action reports what it did.
    pub fn default_for(kind: ToolKind) -> Self {
        match kind {
            ToolKind::Data => Self::Others,
            ToolKind::Action => Self::Own,
        }
    }
}

/// Where a tool's work happens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunsOn {
    /// In the page, by the registry.
    #[default]
    Page,
    /// In the host (a game, say): the call goes out with a request id and the run
    /// awaits the host's answer under the tool's timeout.
    Host,
}

/// How long a tool may take before its call fails, unless set otherwise.
pub const DEFAULT_TOOL_TIMEOUT_MS: u64 = 30_000;

/// A tool as the run sees it: what to offer the model and how calls are governed.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ToolInfo {
    pub spec: ToolSpec,
    pub kind: ToolKind,
    #[serde(default)]
    pub approval: Approval,
    #[serde(default)]
    pub runs_on: RunsOn,
    pub timeout_ms: u64,
    /// Who may have written its results.
    #[serde(default)]
    pub author: Author,
    /// The arguments whose values carry consequence (a recipient, an amount, text
    /// sent): a call whose such value came from others' text waits for a person,
    /// whatever grant is active ([`crate::run::provenance`]). With none declared, an
    /// action is judged as a whole by its [`Approval`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub consequential: Vec<Consequential>,
}

/// An argument of a tool whose value carries consequence, and what it is to the call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Consequential {
    /// The argument's name, or a JSON pointer into the arguments (`/payment/to`).
    pub argument: String,
    /// What the value is, for the card: `recipient`, `amount`, `address`.
    pub means: String,
}

/// One consequential value of a call, before it is traced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Valued {
    /// What the value is to the call: `recipient`, `amount`, `text typed into "To"`.
    pub means: String,
    pub value: String,
    /// Whether it names the element acted on (traced by
    /// [`crate::run::provenance::Readings::source_of_target`]).
    pub target: bool,
}

/// What a call knows besides its arguments.
#[derive(Clone, Default)]
pub struct CallContext {
    /// Set on every action call: the same key for every attempt of the same call, so
    /// a retried or resumed run can never apply it twice.
    pub idempotency_key: Option<Text>,
    /// A person approved this very call (a card, or a grant they gave): a tool that
    /// acts for an owner may say so where the owner's word lifts a bound (the world's
    /// `act_as`, past an agent's standing orders). The model cannot set it.
    pub approved: bool,
    /// The run that made the call, for a tool that runs a run of its own (an agent
    /// called as a tool): its budgets, where its usage and events go. The driver sets
    /// it on every call it runs in the page; `None` outside a run.
    pub caller: Option<std::rc::Rc<crate::run::driver::Caller>>,
}

/// A typed tool.
pub trait Tool: 'static {
    /// The name the model calls it by.
    const NAME: &'static str;
    const KIND: ToolKind;
    /// Who may have written its results; [`Author::default_for`] its kind (the
    /// default for a look-up: another party), unless the tool says otherwise.
    const AUTHOR: Option<Author> = None;
    type Args: DeserializeOwned + JsonSchema;
    type Output: Serialize;
    type Error: std::fmt::Display;

    /// What the tool does, for the model.
    fn description(&self) -> String;

    /// The JSON Schema of its arguments, as the model reads it: derived from
    /// [`Tool::Args`] at run time unless the tool writes it down (as the lean
    /// runtime's tools do, to leave schemars' generator out of that build).
    fn parameters() -> Value
    where
        Self: Sized,
    {
        parameters_schema::<Self::Args>()
    }

    fn call(
        &self,
        args: Self::Args,
        cx: CallContext,
    ) -> impl Future<Output = Result<Self::Output, Self::Error>>;
}

/// Arguments for a tool that takes none.
#[derive(Debug, Clone, Copy, Default, serde::Deserialize, JsonSchema, SchemaText)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

impl NoArgs {
    /// Its schema, written at compile time (a test holds it to what schemars
    /// derives), for the tools that take no arguments to give as their
    /// [`Tool::parameters`].
    pub fn parameters() -> Value {
        crate::base::json::schema::parameters::<Self>()
    }
}

/// A call that did not produce a result. All of these go back to the model.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ToolError {
    #[error("there is no tool named `{0}`")]
    Unknown(String),
    #[error("invalid arguments for `{tool}`: {reason}")]
    InvalidArguments { tool: String, reason: String },
    #[error("`{tool}` failed: {message}")]
    Failed { tool: String, message: String },
    #[error("`{tool}` took longer than {ms} ms and was stopped")]
    TimedOut { tool: String, ms: u64 },
    /// An action that timed out: it may have taken effect all the same.
    #[error(
        "`{tool}` took longer than {ms} ms and was stopped; whether it took effect is \
         unknown, so check before doing it again"
    )]
    OutcomeUnknown { tool: String, ms: u64 },
    /// A person said no: the call did not run, by their decision.
    #[error("`{tool}` was not run: the person declined it ({reason})")]
    Declined { tool: String, reason: String },
    /// Refused by the run: outside its boundaries, switched off, or one action too many.
    #[error("`{tool}` was not run: {reason}")]
    Refused { tool: String, reason: String },
}

/// The JSON Schema of `A` as a function's `parameters`: an object schema without the
/// meta keys models do not need.
fn parameters_schema<A: JsonSchema>() -> Value {
    let mut schema = schemars::schema_for!(A).to_value();
    if let Some(object) = schema.as_object_mut() {
        object.remove("$schema");
        object.remove("title");
    }
    schema
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_of_no_arguments_written_at_compile_time_is_the_derived_one() {
        assert_eq!(NoArgs::parameters(), parameters_schema::<NoArgs>());
        assert_eq!(
            crate::tool::current_time::CurrentTime::parameters(),
            parameters_schema::<NoArgs>()
        );
    }
}
