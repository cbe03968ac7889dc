//! What a session is given besides its agents (a `Delegate`): how runs are shaped,
//! the character it may play, and the seams it works through. The demo, the JS API
//! and tests each build one; the session itself chooses no tools and no models.

use std::rc::Rc;

use super::storage::Storage;
use crate::base::clock::Clock;
#[cfg(feature = "workflows")]
use crate::llm::Llm;
use crate::run::{
    DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_LOOKUPS, DEFAULT_REASON_TOKENS, DEFAULT_TIME_BUDGET_MS,
};
#[cfg(feature = "workflows")]
use crate::store::Store;
#[cfg(feature = "workflows")]
use crate::workflow::Character;

/// History the model sees, in estimated tokens (the system prompt has its own room).
pub const DEFAULT_CONTEXT_BUDGET: usize = 3_000;

/// How many turns a conversation keeps by default: at a few hundred bytes a turn
/// (older ones folded, see `KEEP_STEPS_OF`) well inside `localStorage`'s 5 million
/// characters, with room for several conversations and the world.
pub const DEFAULT_KEEP_TURNS: usize = 5_000;

/// How each run is shaped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    pub max_iterations: u32,
    pub max_lookups: u32,
    /// Offer the `plan` tool (multi-step work, follow-ups owed).
    pub planning: bool,
    /// Reflection rounds on a drafted answer (0: none).
    pub reflection: u32,
    /// On a game event, after an action with nothing left to do, ask the model
    /// whether the goal is complete (the seed's loop) rather than wait for text.
    pub goal_check_on_events: bool,
    /// Offer the `plan` tool on game events (a world's triggers), whatever `planning`
    /// says for chat.
    pub planning_on_events: bool,
    pub time_budget_ms: u64,
    /// The cap on each reasoning call's answer, in tokens (the seed's 2000).
    pub reason_tokens: u32,
    /// How much of the conversation the model sees, in estimated tokens.
    pub context_budget: usize,
    /// How many turns a conversation keeps; its oldest go past that (storage is finite).
    pub keep_turns: usize,
    /// Chat turns go through the supervisor: complexity, plan, executor, decision.
    pub supervisor: bool,
    /// Each run first guesses the goal behind its input (the goal analysis phase); the
    /// turn records it.
    pub guess_goal: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_iterations: DEFAULT_MAX_ITERATIONS,
            max_lookups: DEFAULT_MAX_LOOKUPS,
            planning: false,
            reflection: 0,
            goal_check_on_events: true,
            planning_on_events: false,
            time_budget_ms: DEFAULT_TIME_BUDGET_MS,
            reason_tokens: DEFAULT_REASON_TOKENS,
            context_budget: DEFAULT_CONTEXT_BUDGET,
            keep_turns: DEFAULT_KEEP_TURNS,
            supervisor: false,
            guess_goal: false,
        }
    }
}

/// A character the session plays: chat messages go through its workflows.
#[cfg(feature = "workflows")]
pub struct Play {
    pub character: Rc<Character>,
    /// Where its transactions are kept.
    pub world: Rc<dyn Store>,
    /// Its model; `None` answers with the character's offline lines.
    pub llm: Option<Rc<dyn Llm>>,
    /// Who the character is talking to, in its transactions.
    pub player: String,
}

/// Everything a session needs.
pub struct Config {
    /// Prefixes every storage key, so several sessions share a page's storage.
    pub namespace: String,
    #[cfg(feature = "workflows")]
    pub play: Option<Play>,
    pub options: Options,
    pub clock: Rc<dyn Clock>,
    pub storage: Rc<dyn Storage>,
    /// A number in [0, 1): the random part of run ids, so two tabs never share keys.
    pub random: Rc<dyn Fn() -> f64>,
}

/// A character's instructions to its model, before any transaction context.
#[cfg(feature = "workflows")]
pub fn character_prompt(character: &Character) -> String {
    let who = &character.identity;
    format!(
        "You are {}, {}. {}. Stay in character and answer in one or two sentences.",
        who.name, who.occupation, who.personality
    )
}
