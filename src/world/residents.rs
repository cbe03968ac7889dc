//! The world's agents as the session runs them: each an [`Agent`] named for itself,
//! whose tools read and act as its own world user (an agent the signed-in player owns),
//! with its own ledger (`agent:<id>`, where `act_as` records its actions), and whose
//! actions need no one's approval (an NPC acts on what others say with no one to ask:
//! its operator's choice, made here for the world's residents). Its model is the
//! offline [`WorldPolicy`] unless a real model is given.

use std::rc::Rc;

use super::functions::ledger_owner;
use super::policy::WorldPolicy;
use super::triggers::WorldAgent;
use crate::compose::agent::Agent;
use crate::llm::Llm;
use crate::store::Store;
use crate::tool::ledger::Ledger;
use crate::tool::{Approval, ToolRegistry};

/// `who` as a session's agent over `store`, thinking with `llm` (the world policy when
/// `None`).
pub fn resident(who: &WorldAgent, store: &Rc<dyn Store>, llm: Option<Rc<dyn Llm>>) -> Agent {
    let mut tools = ToolRegistry::new();
    super::register_agent_tools(&mut tools, Rc::clone(store), who.id);
    tools.set_action_approval(Approval::Auto);
    tools.with_ledger(Ledger::new(Rc::clone(store), ledger_owner(who.id)));
    let system = format!(
        "You are {}, a character living in a game world. Act in character, as your \
         identity says, and act on the world only through your tools.",
        who.name
    );
    Agent::new(
        who.name.clone(),
        format!("{} of the world", who.name),
        system,
        llm.unwrap_or_else(|| Rc::new(WorldPolicy)),
        Rc::new(tools),
    )
}
