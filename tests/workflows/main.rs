//! Declarative character workflows, natively: Dotty's drink orders (seed 002's three
//! tests and more), Brannoc's three-stage quest and timeouts here; workflows side by
//! side (`workflows`), keyword semantics with and without a model (`keywords`), the
//! seed's own files played verbatim (`seed`), the loader's problems and notes
//! (`loader`), its fuzzing (`fuzz`), the bounds of a file as a whole (`limits`) and the
//! tally of how transactions ended (`outcomes`).
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

mod bar;
// proptest is a native dev-dependency.
#[cfg(not(target_arch = "wasm32"))]
mod fuzz;
mod keywords;
mod limits;
mod loader;
mod outcomes;
mod seed;
mod side_by_side;

use bar::{BRANNOC, Bar, DOTTY};
use familiar::store::Store;
use familiar::workflow::{Intent, TransactionStatus, inject};
use futures::executor::block_on;
use serde_json::json;

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
    let [expired] = &prepared.expired[..] else {
        panic!("one expired: {:?}", prepared.expired);
    };
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
    assert_eq!(prepared.expired, []);
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
    assert_eq!(fresh, [], "15 minutes is not past a 15-minute timeout");
    bar.wait_minutes(1);
    let expired = block_on(bar.character.expire_stale(store, &bar.clock, "user-1")).unwrap();
    assert_eq!(expired.len(), 1);
    assert_eq!(expired[0].status, TransactionStatus::Expired);
    assert_eq!(bar.pending(), None);
}
