//! What a person's earlier decisions cover: "always" for a tool in a conversation,
//! "for this task" for the rest of a turn's page actions on one site, a standing
//! permission for the harmless page actions on a site. None covers a call that always
//! asks, and a card offers only the grants its call can take.

use super::Session;
use super::address::Place;
use super::update::Decision;
use crate::compose::agent::Agent;
use crate::llm::message::ToolCall;
use crate::run::event::Grant;
use crate::tool::Reach;

impl Session {
    /// What `call` reaches (its site, whether it always asks), when its tool can
    /// judge: a host tool of the same name replaces the agent's, and judges nothing.
    pub(super) fn reach(&self, agent: &Agent, call: &ToolCall) -> Option<Reach> {
        let host = self.inner.host.catalogue();
        if host.iter().any(|t| t.spec.name == call.name) {
            return None;
        }
        agent.tools.judge(call)
    }

    /// The grant that covers `call` without asking, if any: "always" for its tool in
    /// this conversation, a standing permission for a harmless kind on its site, or
    /// "Allow for this task" given in this turn on the same site.
    pub(super) fn granted(
        &self,
        place: &Place,
        agent: &Agent,
        call: &ToolCall,
        reach: Option<&Reach>,
    ) -> Option<Grant> {
        if reach.is_some_and(|r| r.always_asks.is_some()) {
            return None;
        }
        let state = self.inner.state.borrow();
        let key = (
            place.conversation.clone(),
            agent.name.clone(),
            call.name.to_string(),
        );
        if state.always.contains(&key) {
            return Some(Grant::Always);
        }
        let reach = reach?;
        let on_site = reach
            .site
            .as_ref()
            .is_some_and(|site| state.harmless_sites.contains(site));
        if reach.standing && on_site {
            return Some(Grant::Site);
        }
        let task = state.tasks.iter().any(|(conversation, turn, name, site)| {
            *conversation == place.conversation
                && *turn == place.turn
                && *name == agent.name
                && *site == reach.site
        });
        task.then_some(Grant::Task)
    }

    /// Records what `decided` grants besides `call`; nothing for a call that always
    /// asks, nor a grant its card did not offer.
    pub(super) fn grant(
        &self,
        place: &Place,
        agent: &Agent,
        call: &ToolCall,
        reach: Option<&Reach>,
        decided: &Decision,
    ) {
        let offered = offers(reach);
        let mut state = self.inner.state.borrow_mut();
        match decided {
            Decision::ApproveAlways if offered.contains(&Grant::Always) => {
                state.always.insert((
                    place.conversation.clone(),
                    agent.name.clone(),
                    call.name.to_string(),
                ));
            }
            Decision::ApproveForTask if offered.contains(&Grant::Task) => {
                let site = reach.and_then(|r| r.site.clone());
                state.tasks.push((
                    place.conversation.clone(),
                    place.turn,
                    agent.name.clone(),
                    site,
                ));
            }
            Decision::ApproveOnSite if offered.contains(&Grant::Site) => {
                if let Some(site) = reach.and_then(|r| r.site.clone()) {
                    state.harmless_sites.insert(site);
                }
            }
            _ => {}
        }
    }
}

/// What a card may offer besides the one call: nothing for a call that always asks;
/// "always" (its tool, in this conversation) for a tool that judges nothing; for a
/// page action, "for this task", a standing permission on its site when it is of a
/// harmless kind, and "always".
pub(super) fn offers(reach: Option<&Reach>) -> Vec<Grant> {
    match reach {
        None => vec![Grant::Always],
        Some(reach) if reach.always_asks.is_some() => Vec::new(),
        Some(reach) => {
            let site = reach.standing && reach.site.is_some();
            let mut grants = vec![Grant::Task];
            grants.extend(site.then_some(Grant::Site));
            grants.push(Grant::Always);
            grants
        }
    }
}
