//! A run's meter: the usage its model reported, call by call, priced as the run was
//! told, and the budgets it runs within ([`Allowance`]). Before each model call the
//! driver asks [`AgentRun::budget_reached`]; a run whose budget is spent stops there,
//! in words (`Outcome::BudgetReached` with the budget's sentence), before asking the model
//! anything more. What the budgets are and how much of them was used before this run
//! is the app's (`app::budget`): it hands them over with [`AgentRun::meter_with`].

use crate::base::json::Read;
use serde::Serialize;

use super::{AgentRun, Outcome};
use crate::llm::Usage;
use crate::llm::usage::{Price, Tally, dollars, thousands};

/// A budget: at most so many tokens, or so much cost, or both (whichever is reached
/// first stops the run).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Read)]
pub struct Limit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<f64>,
}

impl Limit {
    pub fn is_none(&self) -> bool {
        self.tokens.is_none() && self.cost.is_none()
    }

    /// The limit `used` has reached and how much was used, in words ("2,000 tokens",
    /// "2,114 tokens"; "$0.50", "$0.52"), if any.
    pub fn reached_by(&self, used: &Tally) -> Option<(String, String)> {
        if let Some(tokens) = self.tokens
            && used.tokens() >= tokens
        {
            let words = |n| format!("{} tokens", thousands(n));
            return Some((words(tokens), words(used.tokens())));
        }
        match self.cost {
            Some(cost) if used.cost >= cost => Some((dollars(cost), dollars(used.cost))),
            _ => None,
        }
    }
}

/// One budget a run counts against: whose it is ("this conversation's", "@scribe's",
/// "today's"), its limit, and what had been used of it when the run was handed it.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Allowance {
    pub whose: String,
    pub limit: Limit,
    pub used: Tally,
}

/// What a run has spent, its price and its budgets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Meter {
    /// Everything this run's model calls used.
    #[serde(default)]
    pub total: Tally,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    price: Option<Price>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    allowances: Vec<Allowance>,
    /// What the run spent since its allowances were handed over.
    #[serde(default)]
    since: Tally,
}

impl Meter {
    /// Records one call's usage, priced.
    pub fn record(&mut self, usage: &Usage) {
        let call = Tally::of(usage, self.price);
        self.total.add(&call);
        self.since.add(&call);
    }

    /// Records what a tool call's own model calls used, priced as they were made.
    pub fn record_spent(&mut self, spent: &Tally) {
        self.total.add(spent);
        self.since.add(spent);
    }

    /// The sentence that stops the run, once one of its budgets is reached (or one
    /// counts cost and the run's model has no price: [`stop_words`]).
    pub fn reached(&self) -> Option<String> {
        stop_words(&self.allowances, &self.since, self.price.is_some())
    }
}

/// How a budget's stop begins and ends ([`stop_words`]).
const STOPPED: &str = "Stopped: ";
const UNASKED: &str = " Nothing more was asked of the model.";

/// The sentence that stops a model call held to `allowances`, once `spent` (since they
/// were handed over) has reached one of them; or, when `priced` is false, once one
/// counts cost: what the model costs is unknown, so that budget could never be
/// reached and would hold nothing. It fails closed: a cost budget is for a person who
/// must not be charged past it.
pub fn stop_words(allowances: &[Allowance], spent: &Tally, priced: bool) -> Option<String> {
    allowances.iter().find_map(|allowance| {
        if let (Some(cost), false) = (allowance.limit.cost, priced) {
            return Some(format!(
                "{STOPPED}{} budget of {} counts cost, and the model has no price, so its cost is unknown. Set its price, or hold it to tokens.{UNASKED}",
                allowance.whose,
                dollars(cost)
            ));
        }
        let mut used = allowance.used;
        used.add(spent);
        allowance.limit.reached_by(&used).map(|(limit, used)| {
            format!(
                "{STOPPED}{} budget of {limit} is reached ({used} used).{UNASKED}",
                allowance.whose
            )
        })
    })
}

impl AgentRun {
    /// Prices this run's calls at `price` (none: their cost is unknown) and holds it
    /// to `allowances`, as used so far; what it spent before is not counted again.
    pub fn meter_with(&mut self, price: Option<Price>, allowances: Vec<Allowance>) {
        self.meter.price = price;
        self.meter.allowances = allowances;
        self.meter.since = Tally::default();
    }

    /// What this run's model calls used, as their provider counted them.
    pub fn usage(&self) -> Tally {
        self.meter.total
    }

    /// Who answered its last model call, as the provider said (nothing, for a model
    /// in the page, or before its first answer).
    pub fn served(&self) -> &crate::llm::Served {
        &self.served
    }

    /// Its price, and its budgets with what it has spent counted as used: what a run
    /// made inside one of its tool calls is held to (`driver::Caller`).
    pub fn allowances_left(&self) -> (Option<Price>, Vec<Allowance>) {
        let mut left = self.meter.allowances.clone();
        for allowance in &mut left {
            allowance.used.add(&self.meter.since);
        }
        (self.meter.price, left)
    }

    /// Why the run must not ask its model again: a budget it runs within is reached.
    pub fn budget_reached(&self) -> Option<String> {
        self.meter.reached()
    }

    /// Ends the run before its model is asked again, as [`AgentRun::budget_reached`]
    /// said: `Outcome::BudgetReached` with the budget's sentence.
    pub fn stop_for_budget(&mut self, words: String) {
        if !matches!(self.phase, super::Phase::Done(_)) {
            self.finish(Outcome::BudgetReached { reason: words });
        }
    }

    /// Counts what a tool call's own model calls used (an agent called as a tool) as
    /// this run's: its turn, agent, conversation and day count it, and its budgets hold it.
    pub(super) fn record_spent(&mut self, spent: &Tally) {
        self.meter.record_spent(spent);
    }

    pub(super) fn record_usage(&mut self, usage: Option<Usage>) {
        if let Some(usage) = usage {
            self.meter.record(&usage);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(prompt: u32, completion: u32) -> Usage {
        Usage {
            prompt_tokens: prompt,
            completion_tokens: completion,
        }
    }

    fn meter(limit: Limit, used: Tally, price: Option<Price>) -> Meter {
        Meter {
            price,
            allowances: vec![Allowance {
                whose: "this conversation's".into(),
                limit,
                used,
            }],
            ..Meter::default()
        }
    }

    #[test]
    fn a_token_budget_is_reached_by_what_was_used_before_and_what_the_run_spent() {
        let before = Tally::of(&usage(900, 50), None);
        let mut meter = meter(
            Limit {
                tokens: Some(1_000),
                cost: None,
            },
            before,
            None,
        );
        assert_eq!(meter.reached(), None, "950 of 1,000");
        meter.record(&usage(40, 20));
        assert_eq!(
            meter.reached().as_deref(),
            Some(
                "Stopped: this conversation's budget of 1,000 tokens is reached (1,010 tokens used). Nothing more was asked of the model."
            )
        );
        assert_eq!(meter.total.tokens(), 60, "the run's own usage");
    }

    #[test]
    fn a_cost_budget_is_reached_at_the_models_price() {
        let price = Price {
            input: 1_000.0,
            output: 1_000.0,
        };
        let mut meter = meter(
            Limit {
                tokens: None,
                cost: Some(0.5),
            },
            Tally::default(),
            Some(price),
        );
        meter.record(&usage(200, 100));
        assert_eq!(meter.reached(), None, "$0.30 of $0.50");
        meter.record(&usage(200, 0));
        let words = meter.reached().unwrap_or_default();
        assert!(words.contains("budget of $0.50 is reached"), "{words}");
        assert!(words.contains("$0.50 used"), "{words}");
    }

    #[test]
    fn the_rules_models_calls_use_no_budget() {
        let mut meter = meter(
            Limit {
                tokens: Some(1),
                cost: Some(0.0001),
            },
            Tally::default(),
            Some(Price::default()),
        );
        for _ in 0..10 {
            meter.record(&usage(0, 0));
        }
        assert_eq!(meter.reached(), None);
        assert_eq!((meter.total.calls, meter.total.tokens()), (0, 0));
    }

    #[test]
    fn a_cost_budget_stops_a_model_with_no_price_before_it_is_asked_and_a_token_budget_does_not() {
        let cost = Limit {
            tokens: None,
            cost: Some(0.5),
        };
        let unpriced = meter(cost, Tally::default(), None);
        let words = unpriced.reached().unwrap_or_default();
        assert!(
            words.starts_with("Stopped: this conversation's budget of $0.50 counts cost, and the model has no price, so its cost is unknown."),
            "{words}"
        );
        let priced = meter(cost, Tally::default(), Some(Price::default()));
        assert_eq!(priced.reached(), None, "an in-page model costs nothing");
        let tokens = meter(
            Limit {
                tokens: Some(100),
                cost: None,
            },
            Tally::default(),
            None,
        );
        assert_eq!(tokens.reached(), None, "tokens are counted, priced or not");
    }

    #[test]
    fn an_empty_limit_is_never_reached_and_the_meter_survives_a_save() {
        let used = Tally::of(&usage(u32::MAX, u32::MAX), None);
        assert_eq!(Limit::default().reached_by(&used), None);
        let mut meter = meter(
            Limit {
                tokens: Some(10),
                cost: None,
            },
            Tally::default(),
            None,
        );
        meter.record(&usage(3, 4));
        let saved = serde_json::to_string(&meter).unwrap_or_default();
        let read: Meter = serde_json::from_str(&saved).unwrap_or_default();
        assert_eq!(read, meter);
    }
}
