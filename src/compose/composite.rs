//! Seed 004's composite agent: it gathers its sub-agents' tools into its own list and
//! routes each call to the agent that owns it. A gathered call is the composite's
//! run's own: the one approval rule ([`crate::run::provenance`]), the tools' policies,
//! a person's grants and the host bridge decide and run it exactly as they do the
//! composite's own tools, and its steps are tagged with the owner
//! ([`crate::run::Owners`]), so a front end shows them nested under that agent. The
//! other way to offer a sub-agent, one opaque tool running a run of its own, is
//! [`super::agent::register_as_tool`].

use std::rc::Rc;

use crate::compose::agent::Agent;
use crate::run::Owners;
use crate::tool::ToolRegistry;

/// Gathers `sub`'s tools into the composite's `tools`, recording `sub` as their owner
/// in `owners`; the names gathered. `names` chooses them: a tool of `sub`'s registry
/// is taken with its policy and runs there ([`ToolRegistry::adopt`]); any other name
/// is a host tool the page gives (now or later, by name), whose calls the host bridge
/// runs as ever, tagged with `sub`. With no names, every tool of `sub` that the
/// composite has no tool of its own by that name. A tool another sub-agent owns
/// already is refused, saying whose it is.
pub fn gather(
    tools: &mut ToolRegistry,
    owners: &mut Owners,
    sub: &Agent,
    names: &[String],
) -> Result<Vec<String>, String> {
    let chosen: Vec<String> = if names.is_empty() {
        let own = tools.catalogue();
        sub.tools
            .catalogue()
            .into_iter()
            .map(|t| t.spec.name)
            .filter(|name| !own.iter().any(|t| t.spec.name == *name) || owners.of(name).is_some())
            .collect()
    } else {
        names.to_vec()
    };
    if let Some((tool, other)) = chosen.iter().find_map(|tool| {
        owners
            .of(tool)
            .filter(|other| *other != sub.name)
            .map(|other| (tool, other))
    }) {
        return Err(format!(
            "`{tool}` is `{other}`'s already; a tool has one owner in a composite"
        ));
    }
    for name in &chosen {
        tools.adopt(&sub.tools, name);
        owners.insert(name, &sub.name);
    }
    Ok(chosen)
}

/// The composite itself: `name`'s agent over its own `tools` and the tools gathered
/// from `subs`, each sub-agent's by the names paired with it (see [`gather`]).
pub fn composite(
    mut agent: Agent,
    mut tools: ToolRegistry,
    subs: &[(Rc<Agent>, Vec<String>)],
) -> Result<Agent, String> {
    let mut owners = agent.owners.clone();
    for (sub, names) in subs {
        gather(&mut tools, &mut owners, sub, names)?;
    }
    agent.tools = Rc::new(tools);
    agent.owners = owners;
    Ok(agent)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::rules::RulesModel;
    use crate::tool::{Approval, NoArgs, ToolKind};
    use serde_json::json;

    fn agent(name: &str, tools: ToolRegistry) -> Agent {
        let llm = Rc::new(RulesModel::from_json(r#"{"fallback": "Hm.", "rules": []}"#).unwrap());
        Agent::new(name, "", "", llm, Rc::new(tools))
    }

    fn shop() -> Agent {
        let mut tools = ToolRegistry::new();
        tools.register_fn(
            "stock",
            ToolKind::Data,
            "What is in stock.",
            |_: NoArgs, _| async { Ok::<_, String>(json!({"swords": 2})) },
        );
        tools.register_fn("clock", ToolKind::Data, "The time.", |_: NoArgs, _| async {
            Ok::<_, String>(json!({"time": "shop time"}))
        });
        tools.register_fn("sell", ToolKind::Action, "Sells.", |_: NoArgs, _| async {
            Ok::<_, String>(json!({"sold": true}))
        });
        tools.set_approval("sell", Approval::Ask);
        agent("shop", tools)
    }

    fn own() -> ToolRegistry {
        let mut tools = ToolRegistry::new();
        tools.register_fn("clock", ToolKind::Data, "The time.", |_: NoArgs, _| async {
            Ok::<_, String>(json!({"time": "noon"}))
        });
        tools
    }

    #[test]
    fn gathering_takes_the_sub_agents_tools_with_their_policy_and_keeps_the_composites_own() {
        let mut tools = own();
        let mut owners = Owners::new();
        let gathered = gather(&mut tools, &mut owners, &shop(), &[]).unwrap();
        assert_eq!(gathered, ["sell", "stock"]);
        let catalogue = tools.catalogue();
        let sell = catalogue.iter().find(|t| t.spec.name == "sell").unwrap();
        assert_eq!(
            sell.approval,
            Approval::Ask,
            "the owner's policy came along"
        );
        assert_eq!(owners.of("sell"), Some("shop"));
        assert_eq!(
            owners.of("clock"),
            None,
            "the composite's own clock stays its own"
        );
    }

    #[test]
    fn a_named_tool_the_sub_agent_lacks_is_a_host_tool_it_owns() {
        let mut tools = own();
        let mut owners = Owners::new();
        let names = ["buy_item".to_owned()];
        gather(&mut tools, &mut owners, &shop(), &names).unwrap();
        assert_eq!(owners.of("buy_item"), Some("shop"));
        assert!(tools.kind_of("buy_item").is_none(), "the host registers it");
        let bank = agent("bank", ToolRegistry::new());
        let refused = gather(&mut tools, &mut owners, &bank, &names).unwrap_err();
        assert!(refused.contains("`buy_item` is `shop`'s"), "{refused}");
    }
}
