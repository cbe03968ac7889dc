//! `createAgent({prices, budgets})`, read and checked by `app::budget`, and what a
//! host asks of them afterwards: `agent.usage()`, what was spent by the open (or a
//! named) conversation, by each agent and today, with the budgets in force, and
//! `agent.setBudgets()`. Each model call's usage reaches listeners as a `usage`
//! update (`{agent, call, total}`, the turn's total so far); each turn of
//! `agent.conversation()` carries its own.

use serde::Serialize;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::FamiliarAgent;
use super::js::{error, to_js, to_json};
use crate::app::{Budgets, Session, budgets_from, prices_from};
use crate::llm::usage::{Prices, Tally};

/// What `agent.usage()` answers.
#[derive(Serialize)]
struct Report {
    conversation: Tally,
    /// By agent name.
    agents: serde_json::Map<String, Value>,
    today: Tally,
    budgets: Budgets,
}

/// The prices and budgets taken out of a config's JSON (they are not the agent
/// spec's), checked.
pub struct Metering {
    prices: Option<Prices>,
    budgets: Option<Budgets>,
}

/// Takes `prices` and `budgets` out of `config`.
pub fn take_metering(config: &mut Value) -> Result<Metering, String> {
    let Some(object) = config.as_object_mut() else {
        return Ok(Metering {
            prices: None,
            budgets: None,
        });
    };
    let prices = object
        .remove("prices")
        .map(|v| prices_from(&v))
        .transpose()?;
    let budgets = object
        .remove("budgets")
        .map(|v| budgets_from(&v))
        .transpose()?;
    Ok(Metering { prices, budgets })
}

impl Metering {
    pub fn install(self, session: &Session) {
        if let Some(prices) = self.prices {
            session.set_prices(prices);
        }
        if let Some(budgets) = self.budgets {
            session.set_budgets(budgets);
        }
    }
}

#[wasm_bindgen]
impl FamiliarAgent {
    /// What was spent, as providers counted it and priced: `{conversation, agents,
    /// today, budgets}` for the open conversation, or the one named.
    #[wasm_bindgen(unchecked_return_type = "UsageReport")]
    pub fn usage(&self, conversation: Option<String>) -> JsValue {
        let spending = self.session.spending();
        let id = conversation.unwrap_or_else(|| self.session.conversation_id());
        to_js(&Report {
            conversation: spending.conversation(&id),
            today: spending.day(self.session.today()),
            agents: (spending.agents.iter())
                .map(|s| {
                    (
                        s.name.clone(),
                        crate::base::json::to_value(&s.tally).unwrap_or_default(),
                    )
                })
                .collect(),
            budgets: self.session.budgets(),
        })
    }

    /// Replaces the budgets (`{conversation, agent, day}`, each `{tokens, cost}`);
    /// runs are held to them from their next model call.
    #[wasm_bindgen(js_name = setBudgets)]
    pub fn set_budgets(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Budgets")] budgets: JsValue,
    ) -> Result<(), JsValue> {
        let budgets = to_json(&budgets)
            .and_then(|v| budgets_from(&v))
            .map_err(|e| error(&e))?;
        self.session.set_budgets(budgets);
        Ok(())
    }
}
