//! What runs cost and the budgets they are held to: the prices per model
//! (`createAgent({prices})`, the demo's Settings), budgets per conversation, per agent
//! and per day ([`Budgets`]), and what was spent against them ([`Spending`], kept
//! under `{ns}.usage`). Every turn's run — a message, a resident's trigger, a
//! schedule — is handed its price and what is left of its budgets as it is driven
//! ([`Session::meter_run`]); each model call it makes is counted here as it ends
//! ([`Session::count_usage`]): into the turn's record, the conversation's, the
//! agent's and the day's sums, and told as [`Update::Usage`]. A budget reached stops
//! the next model call in words (`run::meter`).

use std::cell::Cell;

use crate::base::json::Read;
use serde::Serialize;

use super::Session;
use super::turn::Place;
use super::update::{Notice, Update};
use crate::compose::agent::Agent;
use crate::llm::usage::{Price, Prices, Tally};
use crate::run::{AgentRun, Allowance, Limit};
use serde_json::Value;

/// How many days of spending are kept (the day's budget needs one).
const KEEP_DAYS: i64 = 31;
const DAY_MS: i64 = 86_400_000;

/// The budgets runs are held to; an empty limit holds nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Read)]
pub struct Budgets {
    /// Each conversation's, over all its turns.
    #[serde(default)]
    pub conversation: Limit,
    /// Each agent's, over every conversation it answers in.
    #[serde(default)]
    pub agent: Limit,
    /// Every run's together, per day (UTC).
    #[serde(default)]
    pub day: Limit,
}

/// What was spent, by conversation, by agent and by day (days since the epoch, UTC,
/// as text). Lists searched in order, not maps: tens of entries, and a map's code
/// for each type would cost the page kilobytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Spending {
    #[serde(default)]
    pub conversations: Vec<Spent>,
    #[serde(default)]
    pub agents: Vec<Spent>,
    #[serde(default)]
    pub days: Vec<Spent>,
}

/// One conversation's, agent's or day's tally.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Spent {
    pub name: String,
    pub tally: Tally,
}

/// `name`'s tally in `list`, added when missing.
fn entry<'a>(list: &'a mut Vec<Spent>, name: &str) -> Option<&'a mut Tally> {
    if !list.iter().any(|s| s.name == name) {
        list.push(Spent {
            name: name.to_owned(),
            tally: Tally::default(),
        });
    }
    list.iter_mut()
        .find(|s| s.name == name)
        .map(|s| &mut s.tally)
}

fn of(list: &[Spent], name: &str) -> Tally {
    list.iter()
        .find(|s| s.name == name)
        .map(|s| s.tally)
        .unwrap_or_default()
}

impl Spending {
    /// Counts `call` to its conversation, agent and day; days older than a month go.
    pub fn add(&mut self, conversation: &str, agent: &str, day: i64, call: &Tally) {
        for (list, name) in [
            (&mut self.conversations, conversation.to_owned()),
            (&mut self.agents, agent.to_owned()),
            (&mut self.days, day.to_string()),
        ] {
            if let Some(tally) = entry(list, &name) {
                tally.add(call);
            }
        }
        self.days
            .retain(|d| d.name.parse::<i64>().is_ok_and(|d| d > day - KEEP_DAYS));
    }

    pub fn conversation(&self, id: &str) -> Tally {
        of(&self.conversations, id)
    }

    pub fn agent(&self, name: &str) -> Tally {
        of(&self.agents, name)
    }

    pub fn day(&self, day: i64) -> Tally {
        of(&self.days, &day.to_string())
    }

    /// The budgets a run of `agent` in `conversation` on `day` counts against, with
    /// what was used of each.
    pub fn allowances(
        &self,
        budgets: &Budgets,
        conversation: &str,
        agent: &str,
        day: i64,
    ) -> Vec<Allowance> {
        let held = [
            (
                budgets.conversation,
                "this conversation's".to_owned(),
                self.conversation(conversation),
            ),
            (budgets.agent, format!("@{agent}'s"), self.agent(agent)),
            (budgets.day, "today's".to_owned(), self.day(day)),
        ];
        held.into_iter()
            .filter(|(limit, ..)| !limit.is_none())
            .map(|(limit, whose, used)| Allowance { whose, limit, used })
            .collect()
    }
}

/// `prices` as a host writes it: `{"model": {"input": 0.15, "output": 0.6}}`, dollars
/// per million tokens.
pub fn prices_from(value: &Value) -> Result<Prices, String> {
    let Some(models) = value.as_object() else {
        return Err(
            "prices: an object of model names, each {input, output} in dollars per million tokens"
                .into(),
        );
    };
    let mut prices = Vec::with_capacity(models.len());
    for (model, price) in models {
        known(price, &["input", "output"], &format!("prices.{model}"))?;
        let read: Price = crate::base::json::from_value(price.clone())
            .map_err(|e| format!("prices.{model}: {e}"))?;
        if !read.is_valid() {
            return Err(format!(
                "prices.{model}: input and output are dollars per million tokens, from 0 to 1,000,000"
            ));
        }
        prices.push((model.clone(), read));
    }
    Ok(Prices(prices))
}

/// `budgets` as a host writes it: `{conversation, agent, day}`, each `{tokens, cost}`.
pub fn budgets_from(value: &Value) -> Result<Budgets, String> {
    known(value, &["conversation", "agent", "day"], "budgets")?;
    for whose in ["conversation", "agent", "day"] {
        if let Some(limit) = value.get(whose) {
            known(limit, &["tokens", "cost"], &format!("budgets.{whose}"))?;
            let cost = limit.get("cost").and_then(Value::as_f64);
            if cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
                return Err(format!("budgets.{whose}.cost: dollars, 0 or more"));
            }
        }
    }
    crate::base::json::from_value(value.clone()).map_err(|e| format!("budgets: {e}"))
}

/// Refuses a field not in `fields` (a misspelt limit would hold nothing).
fn known(value: &Value, fields: &[&str], path: &str) -> Result<(), String> {
    let Some(object) = value.as_object() else {
        return Err(format!("{path}: an object of {}", fields.join(", ")));
    };
    match object.keys().find(|k| !fields.contains(&k.as_str())) {
        Some(unknown) => Err(format!(
            "{path}.{unknown}: unknown (known: {})",
            fields.join(", ")
        )),
        None => Ok(()),
    }
}

/// The day (since the epoch, UTC) of a time in milliseconds.
pub fn day_of(epoch_ms: i64) -> i64 {
    epoch_ms.div_euclid(DAY_MS)
}

/// The session's prices, budgets and spending (read from storage when first needed).
#[derive(Default)]
pub(super) struct Metering {
    prices: Prices,
    budgets: Budgets,
    spending: Option<Spending>,
}

impl Session {
    /// Prices per model, by name, for the calls from now on.
    pub fn set_prices(&self, prices: Prices) {
        self.inner.metering.borrow_mut().prices = prices;
    }

    /// The budgets runs are held to, from their next model call on.
    pub fn set_budgets(&self, budgets: Budgets) {
        self.inner.metering.borrow_mut().budgets = budgets;
    }

    pub fn budgets(&self) -> Budgets {
        self.inner.metering.borrow().budgets
    }

    /// What was spent, by conversation, agent and day.
    pub fn spending(&self) -> Spending {
        self.with_spending(|spending| spending.clone())
    }

    /// Today's day number, as [`Spending::days`] counts them.
    pub fn today(&self) -> i64 {
        day_of(self.inner.config.clock.now().epoch_ms)
    }

    fn with_spending<T>(&self, f: impl FnOnce(&mut Spending) -> T) -> T {
        let mut metering = self.inner.metering.borrow_mut();
        let spending = metering.spending.get_or_insert_with(|| {
            let key = format!("{}.usage", self.inner.config.namespace);
            self.inner
                .config
                .storage
                .load(&key)
                .and_then(|text| crate::base::json::from_text(&text).ok())
                .unwrap_or_default()
        });
        f(spending)
    }

    /// Hands `run` its model's price and what is left of the budgets it counts
    /// against, as they stand now.
    pub(super) fn meter_run(&self, conversation: &str, agent: &Agent, run: &mut AgentRun) {
        let today = self.today();
        let budgets = self.budgets();
        let allowances =
            self.with_spending(|s| s.allowances(&budgets, conversation, &agent.name, today));
        run.meter_with(self.price_of(agent), allowances);
    }

    /// The price of `agent`'s model for a model call made outside a run's steps (a
    /// supervisor's stage); or the sentence that stops it: a budget it counts against
    /// is reached, or counts cost when the model has no price.
    #[cfg(feature = "supervisor")]
    pub(super) fn stage_price(
        &self,
        conversation: &str,
        agent: &Agent,
    ) -> Result<Option<Price>, String> {
        let today = self.today();
        let budgets = self.budgets();
        let allowances =
            self.with_spending(|s| s.allowances(&budgets, conversation, &agent.name, today));
        let price = self.price_of(agent);
        match crate::run::stop_words(&allowances, &Tally::default(), price.is_some()) {
            Some(words) => Err(words),
            None => Ok(price),
        }
    }

    /// The price of `agent`'s model, if it has one.
    fn price_of(&self, agent: &Agent) -> Option<Price> {
        let metering = self.inner.metering.borrow();
        agent
            .llm
            .model()
            .and_then(|model| metering.prices.of(model))
    }

    /// Counts what `run` used since `seen` (the run's usage when last counted) to the
    /// turn at `place` and its agent, conversation and day, and tells the listeners.
    pub(super) fn count_usage(
        &self,
        place: &Place,
        agent: &str,
        run: &AgentRun,
        seen: &Cell<Tally>,
    ) {
        let now = run.usage();
        let call = now.since(&seen.get());
        seen.set(now);
        #[cfg(feature = "telemetry")]
        self.settle_trace(place, &call, run.served());
        self.count_call(place, agent, &call);
    }

    /// Counts `call` to the turn at `place` and its agent, conversation and day, and
    /// tells the listeners.
    pub(super) fn count_call(&self, place: &Place, agent: &str, call: &Tally) {
        let call = *call;
        if call.is_empty() {
            return;
        }
        let today = self.today();
        let spending = self.with_spending(|s| {
            s.add(&place.conversation, agent, today, &call);
            serde_json::to_string(s)
        });
        let key = format!("{}.usage", self.inner.config.namespace);
        let saved = spending
            .map_err(|e| e.to_string())
            .and_then(|text| self.inner.config.storage.save(&key, &text));
        if let Err(error) = saved {
            self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
        }
        let total = {
            let mut state = self.inner.state.borrow_mut();
            let interaction = state
                .conversations
                .get_mut(&place.conversation)
                .and_then(|c| c.interactions.iter_mut().find(|i| i.id == place.turn));
            interaction.map(|i| {
                i.usage.add(&call);
                i.usage
            })
        };
        self.tell(&Update::Usage {
            conversation: place.conversation.clone(),
            turn: place.turn,
            agent: agent.to_owned(),
            call,
            total: total.unwrap_or(call),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;

    fn call(tokens: u32) -> Tally {
        Tally::of(
            &Usage {
                prompt_tokens: tokens,
                completion_tokens: 0,
            },
            None,
        )
    }

    #[test]
    fn spending_is_summed_by_conversation_agent_and_day_and_old_days_go() {
        let mut spending = Spending::default();
        spending.add("c1", "scribe", 100, &call(10));
        spending.add("c2", "scribe", 100, &call(5));
        spending.add("c1", "main", 131, &call(1));
        assert_eq!(spending.conversation("c1").tokens(), 11);
        assert_eq!(spending.agent("scribe").tokens(), 15);
        assert_eq!(spending.day(100).tokens(), 0, "a month old: gone");
        assert_eq!(spending.day(131).tokens(), 1);
        assert_eq!(spending.conversation("none"), Tally::default());
        let saved = serde_json::to_string(&spending).unwrap();
        let read: Spending = crate::base::json::from_text(&saved).unwrap();
        assert_eq!(read, spending, "read back as written");
    }

    #[test]
    fn a_run_counts_against_each_budget_set_with_what_was_used_of_it() {
        let mut spending = Spending::default();
        spending.add("c1", "scribe", 7, &call(40));
        let budgets = Budgets {
            conversation: Limit {
                tokens: Some(100),
                cost: None,
            },
            agent: Limit::default(),
            day: Limit {
                tokens: None,
                cost: Some(1.0),
            },
        };
        let allowances = spending.allowances(&budgets, "c1", "scribe", 7);
        let whose: Vec<_> = allowances.iter().map(|a| a.whose.as_str()).collect();
        assert_eq!(
            whose,
            ["this conversation's", "today's"],
            "no agent budget set"
        );
        assert_eq!(allowances.first().map(|a| a.used.tokens()), Some(40));
        let agent = Budgets {
            agent: Limit {
                tokens: Some(1),
                cost: None,
            },
            ..Budgets::default()
        };
        let allowances = spending.allowances(&agent, "c2", "scribe", 8);
        assert_eq!(
            allowances.first().map(|a| a.whose.as_str()),
            Some("@scribe's")
        );
        assert_eq!(allowances.first().map(|a| a.used.tokens()), Some(40));
    }

    #[test]
    fn prices_and_budgets_are_read_as_a_host_writes_them_and_mistakes_are_named() {
        let prices =
            prices_from(&serde_json::json!({"gpt-4o-mini": {"input": 0.15, "output": 0.6}}));
        assert_eq!(
            prices.map(|p| p.of("gpt-4o-mini").map(|p| p.input)),
            Ok(Some(0.15))
        );
        assert_eq!(
            prices_from(&serde_json::json!({"m": {"input": -1, "output": 0}})).err(),
            Some(
                "prices.m: input and output are dollars per million tokens, from 0 to 1,000,000"
                    .into()
            )
        );
        assert!(prices_from(&serde_json::json!({"m": {"inptu": 1}})).is_err());
        let budgets = budgets_from(
            &serde_json::json!({"conversation": {"tokens": 2000}, "day": {"cost": 0.5}}),
        );
        assert_eq!(
            budgets,
            Ok(Budgets {
                conversation: Limit {
                    tokens: Some(2_000),
                    cost: None
                },
                agent: Limit::default(),
                day: Limit {
                    tokens: None,
                    cost: Some(0.5)
                },
            })
        );
        assert_eq!(
            budgets_from(&serde_json::json!({"conversation": {"toekns": 5}})).err(),
            Some("budgets.conversation.toekns: unknown (known: tokens, cost)".into())
        );
        assert!(budgets_from(&serde_json::json!({"week": {}})).is_err());
        assert!(budgets_from(&serde_json::json!({"day": {"cost": -1}})).is_err());
        assert!(budgets_from(&serde_json::json!({"day": {"tokens": -1}})).is_err());
    }

    #[test]
    fn days_are_utc_days_since_the_epoch() {
        assert_eq!(day_of(0), 0);
        assert_eq!(day_of(DAY_MS - 1), 0);
        assert_eq!(day_of(DAY_MS), 1);
        assert_eq!(day_of(-1), -1);
    }
}
