//! The run that called a tool, as a tool that runs a run of its own sees it (an agent
//! called as a tool, `compose::agent::register_as_tool`): the price and what is left
//! of the budgets its model calls count against, where it reports what they spent (the
//! driver hands that back with the call's result, [`crate::run::ToolResult::usage`],
//! and the calling run's meter counts it), and where its events go as they happen
//! ([`Relay`], by the call's id). Who listens is not the engine's business: the relay
//! is whatever the calling run's driver was given ([`super::Seams::relay`]); the app
//! traces what it hears under the call's span.

use std::cell::Cell;
use std::rc::Rc;

use crate::base::text::Text;
use crate::llm::usage::{Price, Prices, Tally};
use crate::run::Allowance;
use crate::run::event::Event;

/// Where a run made inside a tool call reports as it goes, by the call's id.
pub trait Relay {
    /// A run is made for call `call_id`, on `model` (as [`crate::llm::Llm::model`] names it).
    fn started(&self, call_id: &str, model: Option<&str>);
    /// An event of the run made for call `call_id`, as it happens.
    fn event(&self, call_id: &str, event: &Event);
    /// What that run's model calls used since it last reported: the model call that
    /// answered last (empty for one that counted nothing, the rules model's).
    fn usage(&self, call_id: &str, used: &Tally);
}

/// A calling run, as one of its tool calls sees it.
#[derive(Clone, Default)]
pub struct Caller {
    call_id: Text,
    /// The calling run's model, as its price is looked up, and that price.
    model: Option<String>,
    price: Option<Price>,
    /// The calling run's budgets, what it has spent counted as used.
    allowances: Vec<Allowance>,
    relay: Option<Rc<dyn Relay>>,
    /// What the run made within has reported spending, in all.
    spent: Cell<Tally>,
}

impl Caller {
    /// A run on `model` at `price`, held to `allowances` (what it spent counted in
    /// them), its runs made within told to `relay`.
    pub fn new(
        model: Option<&str>,
        price: Option<Price>,
        allowances: Vec<Allowance>,
        relay: Option<Rc<dyn Relay>>,
    ) -> Self {
        Self {
            model: model.map(str::to_owned),
            price,
            allowances,
            relay,
            ..Self::default()
        }
    }

    /// The same caller, as call `call_id` sees it (nothing spent yet).
    pub fn for_call(&self, call_id: &Text) -> Self {
        Self {
            call_id: call_id.clone(),
            spent: Cell::default(),
            ..self.clone()
        }
    }

    /// The price of `model`'s calls made within: the caller's when it is the caller's
    /// model; nothing for a model that runs in the page; else unknown (a cost budget
    /// then stops it, as it would stop the caller: `run::stop_words`).
    pub fn price_of(&self, model: Option<&str>) -> Option<Price> {
        if model == self.model.as_deref() {
            return self.price;
        }
        model.and_then(|model| Prices::default().of(model))
    }

    /// The budgets the run made within counts against: the caller's, less what the
    /// caller had spent when it made the call.
    pub fn allowances(&self) -> Vec<Allowance> {
        self.allowances.clone()
    }

    /// Tells the relay, if any, that a run on `model` is made within.
    pub fn started(&self, model: Option<&str>) {
        if let Some(relay) = &self.relay {
            relay.started(&self.call_id, model);
        }
    }

    /// Tells the relay, if any, of `event` of the run made within.
    pub fn event(&self, event: &Event) {
        if let Some(relay) = &self.relay {
            relay.event(&self.call_id, event);
        }
    }

    /// Takes in `total`, what the run made within has used so far, and tells the relay
    /// what was not told yet.
    pub fn used(&self, total: Tally) {
        let before = self.spent.replace(total);
        if let Some(relay) = &self.relay {
            relay.usage(&self.call_id, &total.since(&before));
        }
    }

    /// What the run made within used, in all, for the calling run's meter.
    pub fn spent(&self) -> Tally {
        self.spent.get()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_called_within_is_priced_as_the_callers_when_it_is_the_same_else_in_page_or_unknown()
    {
        let price = Price {
            input: 2.0,
            output: 3.0,
        };
        let caller = Caller::new(Some("gpt"), Some(price), Vec::new(), None);
        assert_eq!(caller.price_of(Some("gpt")), Some(price));
        assert_eq!(caller.price_of(Some("rules")), Some(Price::default()));
        assert_eq!(caller.price_of(Some("other")), None);
        assert_eq!(caller.price_of(None), None);
    }
}
