//! Usage as the provider counted it, turned into cost: a model's [`Price`] per
//! million tokens, the table of them a host or Settings gives ([`Prices`]), and the
//! sum of calls a turn, an agent, a conversation or a day spent ([`Tally`]).
//!
//! Pure numbers. Which budgets stop a run is the run's and the app's
//! (`run::meter`, `app::budget`); how a total is shown is the front end's.

use std::cell::Cell;

use crate::base::json::Read;
use futures::future::LocalBoxFuture;
use serde::Serialize;

use super::{ChatRequest, ChatResponse, DeltaSink, Llm, LlmError, Usage};

/// What a model costs per million tokens, in the host's currency (the docs and the
/// chat say dollars): prompt (input) and completion (output) apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Read)]
pub struct Price {
    pub input: f64,
    pub output: f64,
}

impl Price {
    /// What `usage` costs at this price.
    pub fn of(&self, usage: &Usage) -> f64 {
        (f64::from(usage.prompt_tokens) * self.input
            + f64::from(usage.completion_tokens) * self.output)
            / 1_000_000.0
    }

    /// Neither price negative nor beyond reason (a million dollars a million tokens).
    pub fn is_valid(&self) -> bool {
        let ok = |p: f64| p.is_finite() && (0.0..=1_000_000.0).contains(&p);
        ok(self.input) && ok(self.output)
    }
}

/// The models that run in the page, by [`crate::llm::Llm::model`]'s names.
pub const IN_PAGE: [&str; 3] = ["rules", "local", "builtin"];

/// Prices by model name, as configured (`createAgent({prices})`, Settings).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Prices(pub Vec<(String, Price)>);

impl Prices {
    /// The price of `model`, if one is set; a model that runs in the page (the
    /// rules model, the local model, the browser's own) costs nothing unless priced.
    pub fn of(&self, model: &str) -> Option<Price> {
        let set = self.0.iter().find(|(m, _)| m == model).map(|(_, p)| *p);
        set.or_else(|| IN_PAGE.contains(&model).then(Price::default))
    }
}

/// Calls, tokens and cost added up. A call with no price adds its tokens but not a
/// cost: `unpriced` says how many there were, so a total never claims to be whole
/// when it is not. A call that used no tokens (the rules model's) costs nothing,
/// priced or not.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Read)]
pub struct Tally {
    #[serde(default)]
    pub calls: u32,
    #[serde(default)]
    pub prompt_tokens: u64,
    #[serde(default)]
    pub completion_tokens: u64,
    #[serde(default)]
    pub cost: f64,
    #[serde(default)]
    pub unpriced: u32,
}

impl Tally {
    /// One call's usage at `price`. A call that used no tokens (the rules model's)
    /// counts as nothing: no call to show under a turn, nothing to keep with it.
    pub fn of(usage: &Usage, price: Option<Price>) -> Self {
        if usage.prompt_tokens == 0 && usage.completion_tokens == 0 {
            return Self::default();
        }
        let cost = price.map(|price| price.of(usage));
        Self {
            calls: 1,
            prompt_tokens: u64::from(usage.prompt_tokens),
            completion_tokens: u64::from(usage.completion_tokens),
            cost: cost.unwrap_or(0.0),
            unpriced: u32::from(cost.is_none()),
        }
    }

    pub fn tokens(&self) -> u64 {
        self.prompt_tokens.saturating_add(self.completion_tokens)
    }

    pub fn is_empty(&self) -> bool {
        self.calls == 0
    }

    /// `self` and `other` together.
    pub fn add(&mut self, other: &Tally) {
        self.calls = self.calls.saturating_add(other.calls);
        self.prompt_tokens = self.prompt_tokens.saturating_add(other.prompt_tokens);
        self.completion_tokens = self
            .completion_tokens
            .saturating_add(other.completion_tokens);
        self.cost += other.cost;
        self.unpriced = self.unpriced.saturating_add(other.unpriced);
    }

    /// What `self` has that `before` (an earlier reading of it) had not.
    pub fn since(&self, before: &Tally) -> Tally {
        Tally {
            calls: self.calls.saturating_sub(before.calls),
            prompt_tokens: self.prompt_tokens.saturating_sub(before.prompt_tokens),
            completion_tokens: self
                .completion_tokens
                .saturating_sub(before.completion_tokens),
            cost: (self.cost - before.cost).max(0.0),
            unpriced: self.unpriced.saturating_sub(before.unpriced),
        }
    }

    /// In words, as the chat's meter says it: "1,234 tokens · $0.0012", "0 tokens ·
    /// free", "812 tokens · cost unknown (no price for the model)".
    pub fn words(&self) -> String {
        let tokens = format!("{} tokens", thousands(self.tokens()));
        let cost = if self.unpriced > 0 && self.cost == 0.0 {
            "cost unknown (no price for the model)".to_owned()
        } else if self.cost == 0.0 {
            "free".to_owned()
        } else if self.unpriced > 0 {
            format!("at least {}", dollars(self.cost))
        } else {
            dollars(self.cost)
        };
        format!("{tokens} · {cost}")
    }
}

/// A model that counts what its calls used, priced: for model calls made outside a
/// run's steps (a supervisor's stages), whose usage no run's meter sees.
pub struct Counting<'l> {
    llm: &'l dyn Llm,
    price: Option<Price>,
    used: Cell<Tally>,
}

impl<'l> Counting<'l> {
    pub fn new(llm: &'l dyn Llm, price: Option<Price>) -> Self {
        Self {
            llm,
            price,
            used: Cell::new(Tally::default()),
        }
    }

    /// What its calls used so far.
    pub fn used(&self) -> Tally {
        self.used.get()
    }
}

impl Llm for Counting<'_> {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let response = self.llm.chat(request, sink).await;
            if let Some(usage) = response.as_ref().ok().and_then(|r| r.usage) {
                let mut used = self.used.get();
                used.add(&Tally::of(&usage, self.price));
                self.used.set(used);
            }
            response
        })
    }

    fn context_window(&self) -> LocalBoxFuture<'_, Option<super::window::ContextWindow>> {
        self.llm.context_window()
    }

    fn model(&self) -> Option<&str> {
        self.llm.model()
    }
}

/// `n` with thousands separated by commas.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A cost in dollars: cents when it is a cent or more, else four places. Written with
/// integers: Rust's float formatting would add kilobytes to the page.
pub fn dollars(cost: f64) -> String {
    let (places, scale) = if cost >= 0.01 {
        (2, 100.0)
    } else {
        (4, 10_000.0)
    };
    // Rounded to whole hundredths (or ten-thousandths); saturating, never negative.
    let units = (cost.max(0.0) * scale).round().min(u64::MAX as f64) as u64;
    let whole = units / scale as u64;
    let part = (units % scale as u64).to_string();
    format!(
        "${}.{}{part}",
        thousands(whole),
        "0".repeat(places - part.len().min(places))
    )
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

    #[test]
    fn a_price_per_million_tokens_prices_input_and_output_apart() {
        let price = Price {
            input: 0.15,
            output: 0.60,
        };
        let cost = price.of(&usage(1_000_000, 500_000));
        assert!((cost - 0.45).abs() < 1e-12, "{cost}");
        assert!((Price::default().of(&usage(10, 10))).abs() < f64::EPSILON);
        assert!(
            !Price {
                input: -1.0,
                output: 0.0
            }
            .is_valid()
        );
        assert!(
            !Price {
                input: f64::NAN,
                output: 0.0
            }
            .is_valid()
        );
        assert!(price.is_valid());
    }

    #[test]
    fn a_call_without_a_price_counts_its_tokens_and_says_its_cost_is_unknown() {
        let mut total = Tally::of(&usage(100, 20), None);
        assert_eq!((total.tokens(), total.unpriced, total.cost), (120, 1, 0.0));
        assert_eq!(
            total.words(),
            "120 tokens · cost unknown (no price for the model)"
        );
        total.add(&Tally::of(
            &usage(1_000, 0),
            Some(Price {
                input: 10.0,
                output: 0.0,
            }),
        ));
        assert_eq!(total.words(), "1,120 tokens · at least $0.01");
    }

    #[test]
    fn a_call_that_used_no_tokens_counts_as_nothing_priced_or_not() {
        let rules = Tally::of(&usage(0, 0), None);
        assert_eq!((rules.calls, rules.unpriced, rules.cost), (0, 0, 0.0));
        assert!(rules.is_empty(), "nothing counted: {rules:?}");
        assert_eq!(rules.words(), "0 tokens · free");
    }

    #[test]
    fn tallies_add_up_and_what_came_since_an_earlier_reading_is_their_difference() {
        let price = Some(Price {
            input: 2.0,
            output: 8.0,
        });
        let first = Tally::of(&usage(5, 7), price);
        let mut total = first;
        total.add(&Tally::of(&usage(1_200, 300), price));
        assert_eq!(
            (total.calls, total.prompt_tokens, total.completion_tokens),
            (2, 1_205, 307)
        );
        let since = total.since(&first);
        assert_eq!((since.calls, since.tokens()), (1, 1_500));
        assert!((since.cost - 0.0048).abs() < 1e-12);
        assert_eq!(since.words(), "1,500 tokens · $0.0048");
    }

    #[test]
    fn a_counting_model_adds_up_what_its_calls_used_at_its_price() {
        let scripted = crate::llm::scripted::ScriptedModel::new();
        for (prompt, completion) in [(100, 10), (50, 5)] {
            scripted.push(Ok(ChatResponse {
                text: "ok".into(),
                reasoning: String::new(),
                tool_calls: Vec::new(),
                finish: crate::llm::FinishReason::Stop,
                usage: Some(usage(prompt, completion)),
                served: Default::default(),
            }));
        }
        let price = Price {
            input: 1_000.0,
            output: 10_000.0,
        };
        let counting = Counting::new(&scripted, Some(price));
        let request = ChatRequest::default();
        for _ in 0..2 {
            let answer = futures::executor::block_on(counting.chat(&request, &mut |_| {}));
            assert!(answer.is_ok(), "{answer:?}");
        }
        let used = counting.used();
        assert_eq!(
            (used.calls, used.prompt_tokens, used.completion_tokens),
            (2, 150, 15)
        );
        assert!((used.cost - 0.3).abs() < 1e-9, "{}", used.cost);
    }

    #[test]
    fn prices_are_found_by_model_name() {
        let prices = Prices(vec![(
            "gpt-4o-mini".into(),
            Price {
                input: 0.15,
                output: 0.6,
            },
        )]);
        assert_eq!(prices.of("gpt-4o-mini").map(|p| p.output), Some(0.6));
        assert_eq!(prices.of("other"), None);
        assert_eq!(
            prices.of("local"),
            Some(Price::default()),
            "in the page: free"
        );
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(dollars(12.5), "$12.50");
        assert_eq!(dollars(1234.005), "$1,234.01");
        assert_eq!(dollars(0.000066), "$0.0001");
        assert_eq!(dollars(0.0048), "$0.0048");
        assert_eq!(dollars(0.0), "$0.0000");
        assert_eq!(dollars(0.05), "$0.05");
    }
}
