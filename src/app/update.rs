//! What a session tells its front ends: every run event tagged with the conversation
//! and turn it belongs to, the turns it begins or resumes, a character's workflow
//! results, and notices of what went wrong outside a run (a failed save, an ignored
//! host message, a run cut off by a reload).
//! Also the approval vocabulary: what is pending and what a person decided.

use crate::base::json::Read;
use serde::Serialize;

use crate::compose::supervisor::Status;
use crate::llm::message::ToolCall;
use crate::llm::usage::Tally;
use crate::run::event::{Event, Grant};
use crate::run::provenance::Traced;
#[cfg(feature = "workflows")]
use crate::workflow::Transaction;

/// One change a front end may show.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "update", rename_all = "snake_case")]
pub enum Update {
    /// A turn began on this input (a message or an event's description).
    TurnBegan {
        conversation: String,
        turn: u64,
        input: String,
    },
    /// The session opened this conversation itself: a message to a resident opens the
    /// resident's own conversation (and one to another agent leaves it).
    Opened {
        conversation: String,
    },
    /// A turn cut off by a reload goes on: its run was resumed.
    TurnResumed {
        conversation: String,
        turn: u64,
    },
    /// A run event of this turn.
    Event {
        conversation: String,
        turn: u64,
        event: Event,
    },
    /// A character's workflows prepared this turn: what they added to the prompt.
    CharacterPrepared {
        conversation: String,
        turn: u64,
        injection: Option<String>,
    },
    /// A character's transaction after the answer, or why it was not recorded.
    #[cfg(feature = "workflows")]
    TransactionRecorded {
        conversation: String,
        turn: u64,
        transaction: Option<Transaction>,
        error: Option<String>,
    },
    /// A character's transaction outlived its workflow's timeout and expired.
    #[cfg(feature = "workflows")]
    TransactionExpired {
        transaction: Transaction,
    },
    /// A supervised turn's stage: analysing, planned, executing round n of m, decided.
    Supervisor {
        conversation: String,
        turn: u64,
        #[serde(flatten)]
        status: Status,
    },
    /// A model call of this turn ended: what it used, as its provider counted it,
    /// priced (`call`), and the turn's total so far; its agent's (`app::budget`).
    Usage {
        conversation: String,
        turn: u64,
        agent: String,
        call: Tally,
        total: Tally,
    },
    Notice(Notice),
}

impl Update {
    /// The name a listener subscribes to: the event's own name for run events
    /// (`started`, `delta`, `tool_started`, `done`…), else the update's.
    pub fn name(&self) -> &'static str {
        match self {
            Self::TurnBegan { .. } => "turn_began",
            Self::TurnResumed { .. } => "turn_resumed",
            Self::Opened { .. } => "opened",
            Self::Event { event, .. } => event.name(),
            Self::CharacterPrepared { .. } => "character_prepared",
            Self::Supervisor { .. } => "supervisor",
            Self::Usage { .. } => "usage",
            #[cfg(feature = "workflows")]
            Self::TransactionRecorded { .. } => "transaction_recorded",
            #[cfg(feature = "workflows")]
            Self::TransactionExpired { .. } => "transaction_expired",
            Self::Notice(notice) => notice.name(),
        }
    }

    /// The conversation and turn it belongs to, if any.
    pub fn turn(&self) -> Option<(&str, u64)> {
        match self {
            Self::TurnBegan {
                conversation, turn, ..
            }
            | Self::TurnResumed { conversation, turn }
            | Self::Event {
                conversation, turn, ..
            }
            | Self::CharacterPrepared {
                conversation, turn, ..
            }
            | Self::Supervisor {
                conversation, turn, ..
            }
            | Self::Usage {
                conversation, turn, ..
            } => Some((conversation, *turn)),
            #[cfg(feature = "workflows")]
            Self::TransactionRecorded {
                conversation, turn, ..
            } => Some((conversation, *turn)),
            #[cfg(feature = "workflows")]
            Self::TransactionExpired { .. } => None,
            Self::Notice(_) | Self::Opened { .. } => None,
        }
    }
}

/// Something went wrong outside a run; nothing is dropped silently.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "notice", rename_all = "snake_case")]
pub enum Notice {
    /// A write failed; what was not saved is still in memory.
    SaveFailed { key: String, error: String },
    /// Saved data could not be read; it was kept aside and a fresh one started.
    Corrupt {
        key: String,
        kept_as: String,
        error: String,
    },
    /// Another tab saved this conversation since this one read it: this tab's turns
    /// are kept in memory, not written over the other's.
    Conflict { key: String },
    /// A message from the host was not a result any call was waiting for.
    HostMessageIgnored { reason: String },
    /// A run was cut off mid-way (the page was closed or reloaded): its turn can be
    /// resumed or the saved run discarded. `refused` says why resuming cannot be
    /// done faithfully, when it cannot.
    Interrupted {
        conversation: String,
        turn: u64,
        agent: String,
        refused: Option<String>,
    },
}

impl Notice {
    pub fn name(&self) -> &'static str {
        match self {
            Self::SaveFailed { .. } => "save_failed",
            Self::Corrupt { .. } => "corrupt_data",
            Self::Conflict { .. } => "conflict",
            Self::HostMessageIgnored { .. } => "host_message_ignored",
            Self::Interrupted { .. } => "interrupted",
        }
    }
}

/// A call waiting for a person (or the host's approver).
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct PendingApproval {
    pub conversation: String,
    pub turn: u64,
    /// The agent whose run made the call.
    pub agent: String,
    pub call: ToolCall,
    /// What the call would do, in plain words, when its tool can say (the page
    /// actions name the element: `Click the button "Send" [7]`), else what the tool
    /// says it does (its registered description, or the host's for a host tool), for
    /// the person deciding; `None` when it gives none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The site the call acts on (`https://shop.example`), when it acts on one: what a
    /// grant given on this card holds for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub site: Option<String>,
    /// Why this call asks every time (it submits, buys, deletes, sends or signs out),
    /// whatever was granted: the card offers no grant then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub always_asks: Option<String>,
    /// What the card may offer besides this one call: `task` (the rest of this run's
    /// page actions on this site), `site` (the harmless kinds on this site, standing),
    /// `always` (this tool in this conversation). Empty for a call that always asks.
    #[serde(default)]
    pub grants: Vec<Grant>,
    /// The values that carry the call's consequence, each with where it came from
    /// (the person, the owner, the page it was read on …), for the card to say.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<Traced>,
}

impl PendingApproval {
    /// Which waiting call this is, for [`crate::app::Session::decide`].
    pub fn key(&self) -> ApprovalKey {
        ApprovalKey {
            conversation: self.conversation.clone(),
            turn: self.turn,
            call: self.call.id.to_string(),
        }
    }

    /// Whether `key` names this call.
    pub fn is(&self, key: &ApprovalKey) -> bool {
        self.turn == key.turn && self.call.id == key.call && self.conversation == key.conversation
    }
}

/// Names one waiting call: the model's call id alone does not (models number their
/// calls `call_1`, `call_2`… in every run), so a decision names the conversation and
/// turn whose run waits as well. At most one call waits per turn.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Read)]
pub struct ApprovalKey {
    pub conversation: String,
    pub turn: u64,
    /// The model's id of the call.
    pub call: String,
}

impl std::fmt::Display for ApprovalKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "`{}` (conversation `{}`, turn {})",
            self.call, self.conversation, self.turn
        )
    }
}

/// What was decided about a pending call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    Approve,
    /// Approve, and every later call of this tool by this agent in this conversation.
    ApproveAlways,
    /// Approve, and the rest of this run's page actions on the call's site (see
    /// [`Grant::Task`]); as [`Decision::Approve`] for a call no grant may cover.
    ApproveForTask,
    /// Approve, and the harmless kinds on the call's site from now on (see
    /// [`Grant::Site`]); as [`Decision::Approve`] for a call of another kind.
    ApproveOnSite,
    Deny {
        reason: String,
    },
}
