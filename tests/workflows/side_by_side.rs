//! Workflows side by side: one pending transaction per workflow type, each cancelled,
//! advanced and timed out on its own.

use familiar::store::Store;
use familiar::workflow::{Intent, TransactionStatus};
use futures::executor::block_on;

use super::bar::{Bar, DOTTY, MARIGOLD};

fn types(bar: &Bar) -> Vec<(String, String)> {
    bar.all_pending()
        .into_iter()
        .map(|t| (t.transaction_type, t.state))
        .collect()
}

#[test]
fn a_pending_drink_order_does_not_block_a_food_order() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a whiskey");
    let (prepared, food) = bar.say("a bowl of stew, please");
    assert!(matches!(prepared.intent, Intent::Start { workflow: 1, .. }));
    assert_eq!(food.unwrap().context["dish"], "stew");
    let injection = prepared.injection.unwrap();
    assert!(
        injection.starts_with("The customer wants stew."),
        "{injection}"
    );
    assert!(
        injection.contains("A drink_order is pending, waiting for `awaiting_payment`"),
        "the model still knows the drink: {injection}"
    );
    assert_eq!(
        types(&bar),
        [
            ("food_order".to_owned(), "awaiting_payment".to_owned()),
            ("drink_order".to_owned(), "awaiting_payment".to_owned())
        ]
    );
}

#[test]
fn a_second_order_of_a_pending_type_does_not_start_another() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a whiskey");
    let (prepared, recorded) = bar.say("I'll have a beer");
    assert_eq!((prepared.intent, recorded), (Intent::None, None));
    assert_eq!(bar.all_pending().len(), 1);
    assert_eq!(bar.pending().unwrap().context["drink"], "whiskey");
}

#[test]
fn each_workflow_cancels_its_own_the_named_one_first_else_the_newest() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a whiskey");
    bar.say("a plate of pie");
    // Both cancellations match "cancel"; the message names the whiskey.
    let (prepared, cancelled) = bar.say("cancel the whiskey");
    assert_eq!(prepared.intent, Intent::Cancel { workflow: 0 });
    let cancelled = cancelled.unwrap();
    assert_eq!(
        (cancelled.transaction_type.as_str(), cancelled.status),
        ("drink_order", TransactionStatus::Cancelled)
    );
    assert_eq!(
        bar.character.offline_reply(&prepared).unwrap(),
        "No bother, love — I'll pour that whiskey back."
    );
    assert_eq!(bar.pending().unwrap().transaction_type, "food_order");
    bar.say("I'll have a cider");
    // Nothing named: the newest, the cider, goes.
    let (_, cancelled) = bar.say("never mind");
    assert_eq!(cancelled.unwrap().context["drink"], "cider");
    assert_eq!(bar.pending().unwrap().context["dish"], "pie");
}

#[test]
fn paying_with_two_pending_pays_the_named_one() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a whiskey");
    bar.say("some soup");
    let (_, paid) = bar.say("here you go, for the whiskey");
    let paid = paid.unwrap();
    assert_eq!(
        (paid.transaction_type.as_str(), paid.status),
        ("drink_order", TransactionStatus::Completed)
    );
    let (_, paid) = bar.say("here you go");
    assert_eq!(paid.unwrap().context["served"], true);
    assert_eq!(bar.all_pending(), []);
}

#[test]
fn each_workflow_times_out_on_its_own() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a whiskey");
    bar.say("some bread");
    bar.wait_minutes(16);
    let store: &dyn Store = &*bar.store;
    let expired = block_on(bar.character.expire_stale(store, &bar.clock, "user-1")).unwrap();
    let expired: Vec<&str> = expired
        .iter()
        .map(|t| t.transaction_type.as_str())
        .collect();
    assert_eq!(
        expired,
        ["drink_order"],
        "the drink's 15 minutes, not the food's 30"
    );
    assert_eq!(bar.pending().unwrap().context["dish"], "bread");
    bar.wait_minutes(15);
    let (prepared, _) = bar.say("hello?");
    assert_eq!(prepared.expired.len(), 1);
    assert_eq!(
        bar.character.offline_reply(&prepared).unwrap(),
        "Your bread went cold, love; I've cleared it."
    );
}

#[test]
fn a_room_is_booked_while_a_drink_waits_for_payment() {
    let inn = Bar::new(MARIGOLD);
    assert_eq!(
        inn.reply("I'll have a cider"),
        "One cider, that's 3 pennies."
    );
    assert_eq!(
        inn.reply("and the attic room"),
        "The attic room is 6 pennies a night. Shall I hold it?"
    );
    assert_eq!(inn.reply("yes"), "Here's the key to the attic room.");
    assert_eq!(inn.pending().unwrap().context["drink"], "cider");
    assert_eq!(inn.reply("nevermind"), "Right you are, no cider.");
    assert_eq!(inn.all_pending(), []);
}
