//! Who acts in the world — whose memories the memory tools keep, whose ledger records
//! the applied actions, who plays character transactions — and the memory tools
//! registered as them. The demo and the JS API both build their agents from these.

use std::rc::Rc;

use crate::base::clock::Clock;
use crate::store::Store;
use crate::tool::ledger::Ledger;
use crate::tool::{Approval, Forget, Recall, Remember, ToolRegistry};
use crate::world;

/// Who acts in the world.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// The world user whose memories the memory tools keep.
    pub owner: i64,
    /// The world user the world's tools act as (data tools read as them).
    pub me: i64,
    /// The ledger's owner and the transactions' player: the signed-in user's id
    /// (their JWT's `sub`) online.
    pub user: String,
}

impl Participant {
    /// The page's own world: the agent keeps the memories; the person plays
    /// [`world::PLAYER_ID`].
    pub fn local() -> Self {
        Self {
            owner: world::AGENT_ID,
            me: world::PLAYER_ID,
            user: world::PLAYER_ID.to_string(),
        }
    }
}

/// Adds `remember` (which asks first once the run has read a page or a tool's
/// result: such text must not plant memories unseen), `recall` and `forget` (which
/// asks first) over `world` for `who`, with the ledger that applies each action once.
pub fn register_memory(
    tools: &mut ToolRegistry,
    world: &Rc<dyn Store>,
    who: &Participant,
    clock: Rc<dyn Clock>,
) {
    tools.with_ledger(Ledger::new(Rc::clone(world), who.user.clone()));
    tools
        .register(Remember::new(Rc::clone(world), clock, who.owner))
        .register(Recall::new(Rc::clone(world), who.owner))
        .register(Forget::new(Rc::clone(world), who.owner))
        .set_approval("remember", Approval::AskIfUntrusted)
        .set_approval("forget", Approval::Ask);
}
