//! The world's rules in the local store (the twin of migrations/0006_actions.sql),
//! played through the world's tools: the shared suite, read for what it must show.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use std::rc::Rc;

use common::world::world_suite;
use familiar::store::{LocalStore, Store};
use futures::executor::block_on;
use serde_json::{Value, json};

fn world() -> Rc<LocalStore> {
    let store =
        familiar::world::functions::install(LocalStore::new(familiar::world::schemas().unwrap()));
    store.seed(familiar::world::SEED).unwrap();
    Rc::new(store)
}

fn step<'a>(log: &'a [(String, Value)], name: &str) -> &'a Value {
    &log.iter().find(|(n, _)| n == name).unwrap().1
}

#[test]
fn the_rules_refuse_in_plain_words_and_apply_each_key_once() {
    let store = world();
    store.sign_in_as(Some("newcomer".into()));
    let log = block_on(world_suite(store.clone() as Rc<dyn Store>, "newcomer"));
    assert_eq!(
        step(&log, "enter the world")["ok"]["gold"],
        json!(25),
        "a new player starts with 25 gold"
    );
    assert_eq!(
        step(&log, "enter again: the same user"),
        &json!({"ok": true})
    );
    assert_eq!(
        step(&log, "999 draughts"),
        &json!({"error": "`buy_item` failed: quantity must be 1 to 100, not 999"})
    );
    assert_eq!(
        step(&log, "beyond the purse"),
        &json!({"error": "`buy_item` failed: Insufficient gold. Need 50, have 25"})
    );
    assert_eq!(
        step(&log, "the same purchase again"),
        step(&log, "buy bread"),
        "the key's recorded result comes back"
    );
    assert_eq!(
        step(&log, "stats after buying once")["ok"]["gold"],
        json!(19),
        "two loaves at 3 gold, bought once"
    );
    assert_eq!(
        step(&log, "two billion damage"),
        &json!({"error": "`join_battle` failed: energy must be 1 to 100, not 2000000000"})
    );
    assert_eq!(
        step(&log, "fight")["ok"],
        json!({"battle_id": 1, "side": 1, "damage": 10, "energy_left": 90})
    );
    assert_eq!(
        step(&log, "stats at the end")["ok"],
        json!({"gold": 69, "energy": 90, "health": 100, "morale": 50})
    );
    assert_eq!(
        step(&log, "another user's key is not mine"),
        &json!({"ok": true})
    );
    assert_eq!(
        step(&log, "it completes"),
        &json!({"ok": ["completed", "completed"]})
    );
}

#[test]
fn no_one_signed_in_changes_nothing() {
    let store = world();
    let log = block_on(world_suite(store.clone() as Rc<dyn Store>, "nobody"));
    assert_eq!(
        step(&log, "enter the world"),
        &json!({"error": "not allowed: sign in first"})
    );
    assert_eq!(
        step(&log, "buy bread"),
        &json!({"error": "`buy_item` failed: not allowed: sign in and enter the world first"})
    );
}
