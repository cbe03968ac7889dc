//! Declarative character workflows, natively: Dotty's drink orders (seed 002's three
//! tests and more), a second workflow in the same character, Brannoc's three-stage
//! quest, model classification of keyword-only messages, and every loader error.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::rc::Rc;

use familiar::clock::{Clock, ManualClock};
use familiar::scripted::ScriptedModel;
use familiar::store::{LocalStore, Store};
use familiar::workflow::{Character, Intent, Prepared, Transaction, TransactionStatus, inject};
use futures::executor::block_on;
use serde_json::json;

const DOTTY: &str = include_str!("../public/characters/dotty.json");
const BRANNOC: &str = include_str!("../public/characters/brannoc.json");

/// A character talking to one user over a fresh local store, at a manual clock.
struct Bar {
    character: Character,
    store: Rc<LocalStore>,
    clock: ManualClock,
}

impl Bar {
    fn new(file: &str) -> Self {
        Self {
            character: Character::from_json(file).unwrap(),
            store: Rc::new(LocalStore::new(familiar::world::schemas().unwrap())),
            clock: ManualClock::starting_at(1_795_338_000_000),
        }
    }

    /// One message: before, (the model would answer here), after.
    fn say(&self, message: &str) -> (Prepared, Option<Transaction>) {
        self.say_with(message, None)
    }

    fn say_with(
        &self,
        message: &str,
        llm: Option<&dyn familiar::llm::Llm>,
    ) -> (Prepared, Option<Transaction>) {
        let store: &dyn Store = &*self.store;
        let prepared = block_on(
            self.character
                .before(store, &self.clock, llm, "user-1", message),
        )
        .unwrap();
        let recorded = block_on(
            self.character
                .after(store, &self.clock, "user-1", &prepared),
        )
        .unwrap();
        (prepared, recorded)
    }

    fn pending(&self) -> Option<Transaction> {
        let transactions = familiar::workflow::Transactions {
            store: &*self.store,
            character: &self.character.identity.name,
        };
        block_on(transactions.pending("user-1")).unwrap()
    }

    fn wait_minutes(&self, minutes: u64) {
        block_on(self.clock.sleep(minutes * 60_000));
    }
}

#[test]
fn order_then_pay_then_served() {
    let bar = Bar::new(DOTTY);
    let (prepared, created) = bar.say("I'll have a whiskey");
    let injection = prepared.injection.unwrap();
    assert_eq!(
        injection,
        "The customer just ordered whiskey. Confirm the order and say the price: 5 coins. Do not serve it before they pay."
    );
    let created = created.unwrap();
    assert_eq!(created.state, "awaiting_payment");
    assert_eq!(created.status, TransactionStatus::Pending);
    assert_eq!(created.context["drink"], "whiskey");
    assert_eq!(created.context["price"], 5);

    let (prepared, done) = bar.say("Here you go");
    assert!(
        prepared
            .injection
            .unwrap()
            .starts_with("The customer paid 5 coins for the whiskey.")
    );
    let done = done.unwrap();
    assert_eq!(done.status, TransactionStatus::Completed);
    assert_eq!(done.context["payment_received"], true);
    assert_eq!(bar.pending(), None);
    let system = inject("You are Dotty.", Some("Serve it."));
    assert_eq!(
        system,
        "You are Dotty.\n\n## Transaction context\nServe it."
    );
}

#[test]
fn order_then_never_mind_cancels() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a beer");
    let (prepared, cancelled) = bar.say("Actually, never mind");
    assert_eq!(prepared.intent, Intent::Cancel { workflow: 0 });
    assert!(prepared.injection.unwrap().contains("cancelled their beer"));
    assert_eq!(cancelled.unwrap().status, TransactionStatus::Cancelled);
    assert_eq!(bar.pending(), None);
}

#[test]
fn an_order_left_sixteen_minutes_expires_and_the_next_message_can_reorder() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have wine");
    bar.wait_minutes(16);
    let (prepared, recorded) = bar.say("I'll have a beer");
    let expired = prepared.expired.unwrap();
    assert_eq!(expired.status, TransactionStatus::Expired);
    assert_eq!(expired.context["drink"], "wine");
    let injection = prepared.injection.unwrap();
    assert!(
        injection.starts_with("The customer's wine order from a while ago went stale"),
        "{injection}"
    );
    assert!(injection.contains("just ordered beer"), "{injection}");
    let reordered = recorded.unwrap();
    assert_eq!(
        (
            reordered.context["drink"].clone(),
            reordered.context["price"].clone()
        ),
        (json!("beer"), json!(3))
    );
}

#[test]
fn an_order_within_the_timeout_stays_pending() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have wine");
    bar.wait_minutes(14);
    let (prepared, _) = bar.say("lovely weather");
    assert_eq!(prepared.expired, None);
    assert!(
        prepared
            .injection
            .unwrap()
            .starts_with("A drink_order is pending, waiting for `awaiting_payment`")
    );
    assert_eq!(bar.pending().unwrap().context["drink"], "wine");
}

#[test]
fn the_price_comes_from_the_named_group_and_an_unknown_drink_costs_the_default() {
    let bar = Bar::new(DOTTY);
    let (_, beer) = bar.say("Give me a pint of BEER");
    assert_eq!(beer.unwrap().context["price"], 3);
    bar.say("cancel that");
    let (_, mystery) = bar.say("I'd like a grog");
    let mystery = mystery.unwrap();
    assert_eq!(mystery.context["drink"], "grog");
    assert_eq!(mystery.context["price"], 5, "the default price");
}

#[test]
fn two_workflows_live_in_one_character() {
    let bar = Bar::new(DOTTY);
    assert_eq!(
        bar.character.workflows.len(),
        2,
        "tab_management is disabled"
    );
    let (_, drink) = bar.say("I'll have a mead");
    assert_eq!(drink.unwrap().transaction_type, "drink_order");
    bar.say("here you go");
    let (prepared, food) = bar.say("I'm hungry for stew");
    assert!(matches!(prepared.intent, Intent::Start { workflow: 1, .. }));
    let food = food.unwrap();
    assert_eq!(
        (
            food.transaction_type.as_str(),
            food.context["price"].clone()
        ),
        ("food_order", json!(4))
    );
}

#[test]
fn a_message_that_matches_nothing_changes_nothing() {
    let bar = Bar::new(DOTTY);
    let (prepared, recorded) = bar.say("What a lovely evening.");
    assert_eq!(
        (prepared.intent, prepared.injection, recorded),
        (Intent::None, None, None)
    );
    bar.say("I'll have an ale");
    let before = bar.pending().unwrap();
    let (prepared, recorded) = bar.say("Tell me about the weather.");
    assert_eq!(prepared.intent, Intent::None);
    assert_eq!(recorded, None);
    assert_eq!(
        bar.pending().unwrap(),
        before,
        "the pending order is untouched"
    );
}

#[test]
fn keyword_only_messages_ask_the_model_when_the_state_allows_and_not_otherwise() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have an ale");
    // "coins" is only a keyword of the payment step.
    let (prepared, recorded) = bar.say("the coins are on the counter");
    assert_eq!(
        (prepared.intent.clone(), recorded),
        (Intent::None, None),
        "no model: patterns decide"
    );
    let model = ScriptedModel::new();
    model.push_text(r#"{"matches": true}"#);
    let (prepared, recorded) = bar.say_with("the coins are on the counter", Some(&model));
    assert!(matches!(prepared.intent, Intent::Advance { state: 1, .. }));
    assert_eq!(recorded.unwrap().status, TransactionStatus::Completed);
    let question = &model.requests()[0];
    assert!(question.response_format.is_some(), "a strict-JSON question");
    // A model that says no, or answers nonsense, changes nothing.
    bar.say("I'll have an ale");
    let model = ScriptedModel::new();
    model.push_text("hmm, maybe?").push_text("still unsure");
    let (prepared, _) = bar.say_with("the coins are on the counter", Some(&model));
    assert_eq!(prepared.intent, Intent::None);
}

#[test]
fn brannocs_quest_goes_offered_accepted_returned() {
    let smith = Bar::new(BRANNOC);
    let (prepared, offered) = smith.say("Any work for me?");
    assert!(prepared.injection.unwrap().contains("Promise 40 gold"));
    assert_eq!(offered.unwrap().state, "awaiting_acceptance");
    let (_, accepted) = smith.say("Deal, I'll find it");
    let accepted = accepted.unwrap();
    assert_eq!(
        (
            accepted.state.as_str(),
            accepted.context["accepted"].clone()
        ),
        ("searching", json!(true))
    );
    let (prepared, returned) = smith.say("Here is your hammer!");
    assert!(prepared.injection.unwrap().contains("Pay the 40 gold"));
    assert_eq!(returned.unwrap().status, TransactionStatus::Completed);
}

fn errors_of(file: serde_json::Value) -> Vec<(String, String)> {
    Character::from_json(&file.to_string())
        .unwrap_err()
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

fn one_state(state: serde_json::Value) -> serde_json::Value {
    json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"enabled": true, "states": [state]}}
    })
}

#[test]
fn the_loader_reports_each_problem_with_its_path() {
    let unknown_state = errors_of(one_state(json!({
        "name": "a",
        "actions": {"create_transaction": {}},
        "next_state": "b"
    })));
    assert_eq!(unknown_state[0].0, "workflows.w.states[0].next_state");
    assert!(unknown_state[0].1.contains("there is no state `b`"));

    let bad_regex = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["ok", "(unclosed"]},
        "actions": {"create_transaction": {}}
    })));
    assert_eq!(
        bad_regex[0].0,
        "workflows.w.states[0].triggers.intent_patterns[1]"
    );
    assert!(bad_regex[0].1.contains("does not compile"));

    let huge_regex = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["(?:a{100}){100}"]},
        "actions": {"create_transaction": {}}
    })));
    assert_eq!(
        huge_regex[0].0,
        "workflows.w.states[0].triggers.intent_patterns[0]"
    );

    let long_regex = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["a".repeat(1001)]},
        "actions": {"create_transaction": {}}
    })));
    assert!(long_regex[0].1.contains("at most 1000"));

    let placeholder = errors_of(one_state(json!({
        "name": "a",
        "triggers": {"intent_patterns": ["(?<drink>\\w+)"]},
        "actions": {"create_transaction": {}, "prompt_injection": "{context.drink} for {context.table}"}
    })));
    assert_eq!(
        placeholder,
        [(
            "workflows.w.states[0].actions.prompt_injection".to_owned(),
            "`{context.table}` names no field of this workflow".to_owned()
        )]
    );

    let reply = errors_of(one_state(json!({
        "name": "a",
        "actions": {"create_transaction": {}, "offline_reply": "Your {context.drnk}, love."}
    })));
    assert_eq!(reply[0].0, "workflows.w.states[0].actions.offline_reply");

    // Several problems come back together; bad JSON is an error at the root.
    let several = errors_of(json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"enabled": true, "states": [
            {"name": "a", "triggers": {"intent_patterns": ["("]}, "actions": {"update_transaction": {}}, "next_state": "zzz"}
        ], "timeout": {"duration_minutes": 0}}}
    }));
    assert_eq!(several.len(), 4, "{several:?}");
    let root = Character::from_json("{\"identity\": {}").unwrap_err();
    assert_eq!(root[0].path, "$");
}

#[test]
fn with_no_model_the_character_speaks_its_offline_replies() {
    let bar = Bar::new(DOTTY);
    let (prepared, _) = bar.say("I'll have a whiskey");
    assert_eq!(
        bar.character.offline_reply(&prepared).unwrap(),
        "One whiskey coming up, love — that'll be 5 coins."
    );
    let (prepared, _) = bar.say("Here you go");
    assert!(
        bar.character
            .offline_reply(&prepared)
            .unwrap()
            .contains("slides the whiskey")
    );
    let (prepared, _) = bar.say("lovely evening");
    assert!(
        bar.character
            .offline_reply(&prepared)
            .unwrap()
            .starts_with("What'll it be")
    );
    bar.say("I'll have wine");
    bar.wait_minutes(16);
    let (prepared, _) = bar.say("I'll have a beer");
    assert_eq!(
        bar.character.offline_reply(&prepared).unwrap(),
        "That wine you ordered went flat, love, so I tipped it out. One beer coming up, love — that'll be 3 coins."
    );
}

#[test]
fn a_stale_transaction_expires_on_load_without_a_message() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a cider");
    bar.wait_minutes(15);
    let store: &dyn Store = &*bar.store;
    let fresh = block_on(bar.character.expire_stale(store, &bar.clock, "user-1")).unwrap();
    assert_eq!(fresh, None, "15 minutes is not past a 15-minute timeout");
    bar.wait_minutes(1);
    let expired = block_on(bar.character.expire_stale(store, &bar.clock, "user-1")).unwrap();
    assert_eq!(expired.unwrap().status, TransactionStatus::Expired);
    assert_eq!(bar.pending(), None);
}
