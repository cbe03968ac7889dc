//! Which agent of a composite owns each of its tools (seed 004's composite gathers
//! its sub-agents' tools into its own list): the run tags each call, its approval and
//! its step with the owner, so a front end shows them nested under that agent. Who
//! owns a tool changes nothing about whether its call may run — the run's one
//! approval rule ([`super::provenance`]) decides that for every tool alike. Never
//! saved: a resumed run takes its owners from the live agent, as it takes its tools.

use crate::base::small_map::SmallMap;

use super::AgentRun;

/// Tool name → the agent that owns it; tools of the agent's own are absent.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Owners(SmallMap<String, String>);

impl Owners {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `agent` as the owner of `tool`; the agent that owned it before, if
    /// another did.
    pub fn insert(&mut self, tool: &str, agent: &str) -> Option<String> {
        self.0
            .insert(tool.to_owned(), agent.to_owned())
            .filter(|before| before != agent)
    }

    /// The agent that owns `tool`, when another agent does.
    pub fn of(&self, tool: &str) -> Option<&str> {
        self.0.get(tool).map(String::as_str)
    }

    /// Every `(tool, agent)`, in tool order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(t, a)| (t.as_str(), a.as_str()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl AgentRun {
    /// Tags the calls to tools other agents own with their owner (see [`Owners`]).
    pub fn with_owners(mut self, owners: Owners) -> Self {
        self.owners = owners;
        self
    }

    /// The agent that owns `tool`, when a sub-agent of a composite does.
    pub fn owner_of(&self, tool: &str) -> Option<&str> {
        self.owners.of(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tool_owned_by_one_agent_says_so_when_another_claims_it() {
        let mut owners = Owners::new();
        assert_eq!(owners.insert("buy", "shop"), None);
        assert_eq!(owners.insert("buy", "shop"), None, "the same owner again");
        assert_eq!(owners.insert("buy", "bank").as_deref(), Some("shop"));
        assert_eq!(owners.of("buy"), Some("bank"));
        assert_eq!(owners.of("sell"), None);
    }
}
