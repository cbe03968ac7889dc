//! Standing orders an owner gives at run time (the World view, read back from where
//! the world keeps them): they stand over the orders an agent was built with, from
//! its next run on.

use super::Session;
use crate::compose::agent::Agent;
use crate::run::orders::StandingOrders;

impl Session {
    /// Gives `agent` these standing orders from its next run on (`None`: none, whatever
    /// it was built with), as its owner set them where they are kept (the World view,
    /// the database's `set_standing_orders`).
    pub fn set_orders(&self, agent: &str, orders: Option<StandingOrders>) {
        let mut given = self.inner.orders.borrow_mut();
        given.retain(|(name, _)| name != agent);
        given.push((agent.to_owned(), orders));
    }

    /// The standing orders `agent` runs under: its owner's latest, else its own.
    pub(super) fn orders_of(&self, agent: &Agent) -> Option<StandingOrders> {
        let given = self.inner.orders.borrow();
        match given.iter().find(|(name, _)| *name == agent.name) {
            Some((_, orders)) => orders.clone(),
            None => agent.orders.clone(),
        }
    }
}
