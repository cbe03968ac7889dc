//! The run's bounds: how many iterations and look-ups it may take (so every model
//! turn counts against a cap), its wall-clock budget, and how much of one reply and
//! one result it takes in; with its optional phases, the limits a run is built with.

use crate::base::json::Read;
use serde::Serialize;

use super::{AgentRun, Outcome, Phase};

/// How many iterations (reason → act rounds that act or answer) a run may take.
pub const DEFAULT_MAX_ITERATIONS: u32 = 10;
/// How many look-up-only model turns one iteration may take before only actions are
/// offered. A look-up-only turn past them is refused and counts as an iteration, so
/// every model turn counts against a bound: see [`AgentRun::max_model_turns`].
pub const DEFAULT_MAX_LOOKUPS: u32 = 4;
/// The most tool calls one model reply may make; the rest are refused (each still
/// gets its answer, as the chat format requires).
pub const MAX_CALLS_PER_REPLY: usize = 16;
/// The most characters of one tool result the model is shown; past them it sees the
/// start and how long the whole was.
pub const MAX_RESULT_CHARS: usize = 16_000;
/// The most tokens a reasoning call's answer may take: seed 000's reason node asks its
/// model with `maxTokens: 2000`. An agent's `maxTokens` sets another; the model's own
/// `max_tokens`, when lower, holds, and so does what its window leaves after the prompt.
pub const DEFAULT_REASON_TOKENS: u32 = 2_000;
/// The wall-clock time a run's effects (model calls and tools, not a person's
/// approval) may take in all, so a server that trickles bytes cannot keep it alive.
pub const DEFAULT_TIME_BUDGET_MS: u64 = 10 * 60 * 1000;

/// The run's optional phases and caps.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub(super) struct Limits {
    pub(super) max_iterations: u32,
    pub(super) max_lookups: u32,
    /// Offer the `plan` tool.
    pub(super) planning: bool,
    /// After an action with nothing left to do, ask whether the goal is complete.
    pub(super) goal_check: bool,
    /// Reflection rounds on a drafted answer (0: none).
    pub(super) reflections: u32,
    pub(super) guess_goal: bool,
    #[serde(default = "default_time_budget")]
    pub(super) time_budget_ms: u64,
    /// The cap on each reasoning call's answer, in tokens.
    #[serde(default = "default_reason_tokens")]
    pub(super) reason_tokens: u32,
}

fn default_time_budget() -> u64 {
    DEFAULT_TIME_BUDGET_MS
}

fn default_reason_tokens() -> u32 {
    DEFAULT_REASON_TOKENS
}

impl AgentRun {
    /// Caps the iterations; a cap of 0 answers at once without tools.
    pub fn with_max_iterations(mut self, max_iterations: u32) -> Self {
        self.limits.max_iterations = max_iterations;
        self
    }

    /// Caps the look-up-only model turns of one iteration.
    pub fn with_max_lookups(mut self, max_lookups: u32) -> Self {
        self.limits.max_lookups = max_lookups;
        self
    }

    /// Caps each reasoning call's answer at `tokens` ([`DEFAULT_REASON_TOKENS`]
    /// unless set).
    pub fn with_reason_tokens(mut self, tokens: u32) -> Self {
        self.limits.reason_tokens = tokens;
        self
    }

    /// Bounds the wall-clock time of the run's effects in all (a person's approval
    /// does not count).
    pub fn with_time_budget_ms(mut self, ms: u64) -> Self {
        self.limits.time_budget_ms = ms;
        self
    }

    pub fn max_iterations(&self) -> u32 {
        self.limits.max_iterations
    }

    /// The most reason turns the run can take, whatever the model sends: each
    /// iteration may take its look-ups, then one more turn that acts or answers; then
    /// the tools-off answer. (A model that only looks up ends sooner: past its
    /// look-ups each turn uses up an iteration.) Goal checks, reflections and a goal
    /// guess are bounded by their own caps on top.
    pub fn max_model_turns(&self) -> u32 {
        let limits = &self.limits;
        limits
            .max_iterations
            .saturating_mul(limits.max_lookups.saturating_add(1))
            .saturating_add(1)
    }

    /// What is left of the time budget.
    pub fn time_left_ms(&self) -> u64 {
        self.limits.time_budget_ms.saturating_sub(self.spent_ms)
    }

    /// The driver spent `ms` on this run's effects.
    pub fn spent(&mut self, ms: u64) {
        self.spent_ms = self.spent_ms.saturating_add(ms);
    }

    /// The time budget ran out during an effect: the run fails, saying so.
    pub fn out_of_time(&mut self) {
        if !matches!(self.phase, Phase::Done(_)) {
            self.finish(Outcome::Failed {
                error: format!(
                    "the run used up its time budget of {} s",
                    self.limits.time_budget_ms / 1000
                ),
            });
        }
    }

    pub(super) fn at_cap(&self) -> bool {
        self.iterations >= self.limits.max_iterations
    }
}
