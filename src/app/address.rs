//! Where a turn goes: the agent it is for and the conversation that keeps it. A game
//! event goes to the agent its actor names; a message is routed by the open
//! conversation's delegate (`@name` switching per conversation). A resident (an agent
//! with a memory of its own) keeps its turns in its own conversation, whichever is
//! open.

use std::rc::Rc;

use super::Session;
use super::state::State;
use super::update::Notice;
use crate::compose::agent::Agent;
use crate::compose::delegate::Delegate;
use crate::run::Observation;

/// What a turn was asked for: a person's message, or an event the host observed.
pub(super) enum Input {
    Chat(String),
    Observation(Box<Observation>),
}

/// Where a turn's updates go: its conversation and its number there.
#[derive(Clone, PartialEq)]
pub(super) struct Place {
    pub(super) conversation: String,
    pub(super) turn: u64,
}

/// Whom a turn is for and where it is kept: the agent, its conversation, and what the
/// agent is asked (a chat message with its route taken off).
pub(super) struct Address {
    pub(super) conversation: String,
    pub(super) agent: Rc<Agent>,
    pub(super) request: String,
}

/// The conversation of a resident (an agent with a memory of its own).
pub(super) fn own_conversation(agent: &str) -> String {
    format!("agent:{agent}")
}

impl Session {
    /// Whom `asked` is for and where it is kept. A game event goes to the agent its
    /// actor names; a message is routed by the open conversation's delegate. A
    /// resident's turns are kept in its own conversation, whichever is open, and a
    /// message to a resident opens it. Another agent's turn asked while a resident's
    /// conversation is open goes to the newest other conversation (or a new one),
    /// which a message opens and an event does not. `Some`: the conversation opened,
    /// with the notices of opening it.
    pub(super) fn address(
        &self,
        state: &mut State,
        asked: &Input,
    ) -> (Address, Option<Vec<Notice>>) {
        let open = state.open.clone();
        let (agent, request, switch) = match asked {
            Input::Observation(observation) => {
                let agent = agent_for(&state.delegate, observation);
                (agent, observation.subject.content.clone(), None)
            }
            #[cfg(feature = "workflows")]
            Input::Chat(text) if self.inner.config.play.is_some() => {
                (state.delegate.default_agent(), text.clone(), None)
            }
            Input::Chat(text) => {
                let current = state.open_conversation().agent.clone();
                let routing = state.delegate.route_in(text, current.as_deref());
                (routing.agent, routing.text, routing.switch)
            }
        };
        let chat = matches!(asked, Input::Chat(_));
        let conversation = if agent.own_memory {
            own_conversation(&agent.name)
        } else if open.starts_with("agent:") {
            let regular = state.index.iter().find(|e| !e.id.starts_with("agent:"));
            regular.map_or_else(String::new, |e| e.id.clone())
        } else {
            open.clone()
        };
        let disk = self.disk();
        let mut opened = None;
        let conversation = if conversation.is_empty() && chat {
            let (id, notices) = state.open_new(&disk);
            opened = Some(notices);
            id
        } else if conversation.is_empty() {
            state.fresh_id(disk.now_ms)
        } else {
            if conversation != open && chat {
                let notices = state.open(&conversation, &disk).unwrap_or_else(|_| {
                    // Not saved yet (its first turn): it opens empty.
                    state.open_fresh(&conversation, &disk)
                });
                opened = Some(notices);
            }
            conversation
        };
        let c = state.conversation_mut(&conversation, &disk);
        if agent.own_memory {
            c.agent = Some(agent.name.clone());
        } else if let Some(switch) = switch {
            c.agent = switch;
        }
        let address = Address {
            conversation,
            agent,
            request,
        };
        (address, opened)
    }
}

/// The agent an event is for: the one its actor names (several agents live in a game
/// world, each acting as itself), else the default.
fn agent_for(delegate: &Delegate, observation: &Observation) -> Rc<Agent> {
    let name = observation.actor.name.trim();
    (!name.is_empty())
        .then(|| delegate.named(name))
        .flatten()
        .unwrap_or_else(|| delegate.default_agent())
}
