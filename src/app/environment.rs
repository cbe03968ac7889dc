//! What the host perceives as each turn starts (seed 004's environment), per agent:
//! an agent's own environment when the host gave it one, else the session's. What
//! it perceived joins the turn's observation, so the run's first step (its observe
//! step) records it.

use super::address::{Address, Input};
use super::{Environment, Perceived, Session};
use crate::run::{Observation, Perception};

/// The session's environment and the agents' own.
#[derive(Default)]
pub(super) struct Environments {
    /// Every agent's without one of its own.
    pub(super) session: Option<Environment>,
    own: Vec<(String, Environment)>,
}

impl Environments {
    /// `agent`'s environment: its own, else the session's.
    fn of(&self, agent: &str) -> Option<Environment> {
        self.own
            .iter()
            .find(|(name, _)| name == agent)
            .map(|(_, environment)| environment.clone())
            .or_else(|| self.session.clone())
    }
}

impl Session {
    /// Perceives with `environment` as `agent`'s turns start, from now on, instead of
    /// the session's environment (`None`: the session's again).
    pub fn set_agent_environment(&self, agent: &str, environment: Option<Environment>) {
        let mut environments = self.inner.environments.borrow_mut();
        environments.own.retain(|(name, _)| name != agent);
        if let Some(environment) = environment {
            environments.own.push((agent.to_owned(), environment));
        }
    }

    /// What the environment of the agent `asked` goes to perceives as this turn
    /// starts (nothing without one).
    pub(super) async fn perceive(&self, asked: &Input, address: &Address) -> Perceived {
        let environment = self.inner.environments.borrow().of(&address.agent.name);
        let Some(environment) = environment else {
            return Perceived::default();
        };
        let observation = match asked {
            Input::Chat(_) => self.chat_observation(&address.agent, address.request.clone()),
            Input::Observation(observation) => (**observation).clone(),
        };
        environment(&observation).await
    }
}

impl Perceived {
    /// Puts what was perceived into `observation`: the text as its environment, the
    /// actor's state over what the trigger gave.
    pub(super) fn apply(self, observation: &mut Observation) {
        observation.actor.state.extend(self.actor);
        if let Some(environment) = Perception::new(&self.text, self.others) {
            observation.environment = Some(environment);
        }
    }
}
