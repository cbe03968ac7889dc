//! Seed 002's own character files, loaded verbatim (their `(?<drink>\w+)` named groups
//! included), played through the seed's conversation flow and its three tests.

use familiar::workflow::{Character, Intent, TransactionStatus};
use serde_json::json;

use super::bar::{Bar, SEED_DOTTY, SEED_SCHEMA};

#[test]
fn the_seeds_named_groups_compile_and_capture() {
    for file in [SEED_SCHEMA, SEED_DOTTY] {
        let character = Character::from_json(file).unwrap();
        let first = &character.workflows[0].states[0];
        let groups: Vec<&str> = first.matcher.patterns[0]
            .capture_names()
            .flatten()
            .collect();
        assert_eq!(groups, ["drink"]);
        assert_eq!(
            character.notes,
            [],
            "the seed's files use only what is read"
        );
    }
}

#[test]
fn the_seeds_schema_example_plays_order_pay_served() {
    let bar = Bar::new(SEED_SCHEMA);
    assert_eq!(
        bar.character.workflows.len(),
        1,
        "tab_management is disabled"
    );
    let (prepared, created) = bar.say("I'll have a whiskey");
    assert_eq!(
        prepared.injection.unwrap(),
        "User just ordered whiskey. Confirm order and state price: 5 coins."
    );
    let created = created.unwrap();
    assert_eq!(
        (created.state.as_str(), &created.context),
        (
            "awaiting_payment",
            json!({"drink": "whiskey", "price": 5}).as_object().unwrap()
        )
    );
    let (prepared, served) = bar.say("Here you go");
    assert_eq!(
        prepared.injection.unwrap(),
        "User just paid for their whiskey. Serve the drink warmly."
    );
    let served = served.unwrap();
    assert_eq!(served.status, TransactionStatus::Completed);
    assert_eq!(served.context["payment_received"], true);
    assert_eq!(served.context["drink_served"], true);
    assert_eq!(bar.pending(), None);
}

#[test]
fn the_seeds_schema_example_plays_order_cancel() {
    let bar = Bar::new(SEED_SCHEMA);
    let (_, created) = bar.say("I'll have a beer");
    assert_eq!(created.unwrap().context["price"], 3);
    let (prepared, cancelled) = bar.say("Actually, never mind");
    assert_eq!(prepared.intent, Intent::Cancel { workflow: 0 });
    assert_eq!(
        prepared.injection.unwrap(),
        "User cancelled their drink order. Acknowledge casually."
    );
    assert_eq!(cancelled.unwrap().status, TransactionStatus::Cancelled);
}

#[test]
fn the_seeds_third_test_an_order_left_sixteen_minutes_is_auto_cancelled() {
    let bar = Bar::new(SEED_SCHEMA);
    let (_, created) = bar.say("I'll have wine");
    assert_eq!(
        created.unwrap().context["drink"],
        "wine",
        "the second pattern"
    );
    bar.wait_minutes(16);
    let (prepared, _) = bar.say("hello again");
    assert_eq!(prepared.expired.len(), 1);
    assert_eq!(prepared.expired[0].status, TransactionStatus::Expired);
    assert_eq!(
        prepared.injection.unwrap(),
        "Previous drink order expired. User may re-order if interested."
    );
}

#[test]
fn the_seeds_dotty_example_serves_the_whiskey_its_pattern_captures_as_a() {
    let bar = Bar::new(SEED_DOTTY);
    // `\b(I'll have|give me|order) (?<drink>\w+)` captures `a` here; the price list
    // names the whiskey the author meant.
    let pattern = &bar.character.workflows[0].states[0].matcher.patterns[0];
    let captured = pattern.captures("I'll have a whiskey").unwrap();
    assert_eq!(&captured["drink"], "a");
    let (prepared, created) = bar.say("I'll have a whiskey");
    assert_eq!(
        prepared.injection.unwrap(),
        "User ordered whiskey. Confirm and state price."
    );
    let created = created.unwrap();
    assert_eq!(created.context["drink"], "whiskey");
    assert_eq!(created.context["price"], 5);
    let (prepared, served) = bar.say("Here you go");
    assert_eq!(
        prepared.injection.unwrap(),
        "User paid. Serve whiskey warmly."
    );
    assert_eq!(served.unwrap().status, TransactionStatus::Completed);
}

#[test]
fn a_captured_item_on_the_price_list_is_kept_and_an_unlisted_one_costs_the_default() {
    let bar = Bar::new(SEED_DOTTY);
    let (_, beer) = bar.say("give me beer");
    let beer = beer.unwrap();
    assert_eq!(
        (&beer.context["drink"], &beer.context["price"]),
        (&json!("beer"), &json!(3))
    );
    bar.say("here you go");
    // Nothing on the list is named: the capture stands, at the seed's default price.
    let (_, grog) = bar.say("order grog");
    let grog = grog.unwrap();
    assert_eq!(
        (&grog.context["drink"], &grog.context["price"]),
        (&json!("grog"), &json!(5))
    );
}

#[test]
fn the_seeds_dotty_example_has_no_cancellation_so_nevermind_changes_nothing() {
    // The example has no cancellation section: nothing cancels, and nothing breaks.
    let bar = Bar::new(SEED_DOTTY);
    bar.say("I'll have a beer");
    let (prepared, recorded) = bar.say("nevermind");
    assert_eq!((prepared.intent, recorded), (Intent::None, None));
    assert_eq!(bar.pending().unwrap().context["drink"], "beer");
}
