//! Settings → Usage and cost: the proxy model's price, and the budgets every run is
//! held to (a conversation's tokens, a day's dollars).

use leptos::prelude::*;

use super::{Problems, parse};
use crate::app::Budgets;
use crate::app::settings::{FieldProblem, Settings};
use crate::llm::usage::Price;

/// The Usage and cost fieldset's fields, as typed.
#[derive(Clone, Copy)]
pub(super) struct Fields {
    price_in: RwSignal<String>,
    price_out: RwSignal<String>,
    conversation_tokens: RwSignal<String>,
    day_cost: RwSignal<String>,
}

impl Fields {
    pub(super) fn new(initial: &Settings) -> Self {
        let amount = |n: Option<f64>| n.map(|n| n.to_string()).unwrap_or_default();
        Self {
            price_in: RwSignal::new(amount(initial.price.map(|p| p.input))),
            price_out: RwSignal::new(amount(initial.price.map(|p| p.output))),
            conversation_tokens: RwSignal::new(
                (initial.budgets.conversation.tokens)
                    .map(|n| n.to_string())
                    .unwrap_or_default(),
            ),
            day_cost: RwSignal::new(amount(initial.budgets.day.cost)),
        }
    }

    /// The price and budgets, into `settings`.
    pub(super) fn read(&self, settings: &mut Settings, found: &mut Vec<FieldProblem>) {
        let fields = [
            self.price_in,
            self.price_out,
            self.conversation_tokens,
            self.day_cost,
        ];
        (settings.price, settings.budgets) = metering(fields.map(|f| f.get_untracked()), found);
    }

    /// The Usage and cost fieldset.
    pub(super) fn view(self, problems: Problems) -> impl IntoView {
        let Self {
            price_in,
            price_out,
            conversation_tokens,
            day_cost,
        } = self;
        view! {
            <fieldset>
                <legend>"Usage and cost"</legend>
                <label>"Input price"<input class="price-input" inputmode="decimal" bind:value=price_in placeholder="0.15" aria-invalid=problems.invalid("price") aria-describedby=problems.described("price", "hint-price") /></label>
                <label>"Output price"<input class="price-output" inputmode="decimal" bind:value=price_out placeholder="0.60" aria-invalid=problems.invalid("price") aria-describedby=problems.described("price", "hint-price") /></label>
                <p class="field-hint" id="hint-price">"Dollars per million tokens for the proxy's model; each answer shows its tokens and cost. The rules and local models cost nothing."</p>
                {problems.error("price")}
                <label>"Conversation budget (tokens)"<input class="budget-conversation" inputmode="numeric" bind:value=conversation_tokens aria-invalid=problems.invalid("budgets") /></label>
                <label>"Daily budget ($)"<input class="budget-day" inputmode="decimal" bind:value=day_cost aria-invalid=problems.invalid("budgets") aria-describedby=problems.described("budgets", "hint-budgets") /></label>
                <p class="field-hint" id="hint-budgets">"Reached, a run stops before asking the model again, saying so. Empty: no budget."</p>
                {problems.error("budgets")}
            </fieldset>
        }
    }
}

/// The price and budgets from their fields (input price, output price, conversation
/// tokens, daily dollars): an empty field sets nothing.
fn metering(
    [input, output, tokens, day]: [String; 4],
    found: &mut Vec<FieldProblem>,
) -> (Option<Price>, Budgets) {
    let amount = "a price or budget is a number of dollars, 0 or more";
    let mut price = None;
    if !(input.trim().is_empty() && output.trim().is_empty()) {
        let input = parse::<f64>(&input, "price", amount, found).unwrap_or(0.0);
        let output = parse::<f64>(&output, "price", amount, found).unwrap_or(0.0);
        let read = Price { input, output };
        if !read.is_valid() {
            found.push(FieldProblem {
                field: "price",
                message: amount.into(),
            });
        }
        price = Some(read);
    }
    let mut budgets = Budgets::default();
    if !tokens.trim().is_empty() {
        let message = "the conversation budget is a whole number of tokens";
        budgets.conversation.tokens = parse(&tokens, "budgets", message, found);
    }
    if !day.trim().is_empty() {
        let cost = parse::<f64>(&day, "budgets", amount, found);
        if cost.is_some_and(|c| !c.is_finite() || c < 0.0) {
            found.push(FieldProblem {
                field: "budgets",
                message: amount.into(),
            });
        }
        budgets.day.cost = cost;
    }
    (price, budgets)
}
