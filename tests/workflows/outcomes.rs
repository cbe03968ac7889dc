//! The character-workflow design's analytics (phase 4): a character's transactions
//! tallied per workflow, and each workflow's completion rate.

use super::bar::{Bar, DOTTY};
use familiar::store::Store;
use familiar::workflow::Outcomes;
use futures::executor::block_on;

fn outcomes(bar: &Bar) -> Vec<Outcomes> {
    let store: &dyn Store = &*bar.store;
    block_on(bar.character.transactions(store).outcomes()).unwrap()
}

#[test]
fn dottys_orders_are_tallied_completed_cancelled_expired_and_pending() {
    let bar = Bar::new(DOTTY);
    assert!(
        outcomes(&bar).is_empty(),
        "nothing ordered, nothing tallied"
    );

    bar.say("I'll have a whiskey");
    bar.say("Here you go"); // completed
    bar.say("I'll have a beer");
    bar.say("Actually, never mind"); // cancelled
    bar.say("I'll have wine");
    bar.wait_minutes(16);
    bar.say("I'll have a beer"); // the wine expired; the beer waits
    bar.say("I'm hungry for stew"); // a food order waits beside it

    let tally = outcomes(&bar);
    let drinks = tally
        .iter()
        .find(|o| o.transaction_type == "drink_order")
        .unwrap();
    assert_eq!(
        (
            drinks.pending,
            drinks.completed,
            drinks.cancelled,
            drinks.expired
        ),
        (1, 1, 1, 1)
    );
    assert_eq!(drinks.completion_rate(), Some(1.0 / 3.0));
    let food = tally
        .iter()
        .find(|o| o.transaction_type == "food_order")
        .unwrap();
    assert_eq!((food.pending, food.completed), (1, 0));
    assert_eq!(
        food.completion_rate(),
        None,
        "none of the food orders ended"
    );
    assert_eq!(tally.len(), 2);
}

#[test]
fn another_characters_transactions_are_not_counted() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have a whiskey");
    let store: &dyn Store = &*bar.store;
    let other = familiar::workflow::Transactions {
        store,
        character: "Somebody Else",
    };
    assert!(block_on(other.outcomes()).unwrap().is_empty());
}
