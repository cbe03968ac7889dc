//! The world's rules in the local store (the twin of migrations/0006_actions.sql and
//! 0008_player_rules.sql), played through the world's tools and its rpc functions: the
//! shared suite, read for what it must show, and the rules a player must not get round
//! (membership, sides in a battle, the guild's tick, the ledger's key cap, gold from
//! nothing).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::rc::Rc;

use common::world::world_suite;
use familiar::store::{Filtered, LocalStore, Row, Rpc, Select, Store, StoreError};
use futures::executor::block_on;
use serde_json::{Value, json};

#[path = "world_rules/agents.rs"]
mod agents;
#[path = "world_rules/communities.rs"]
mod communities;
#[path = "world_rules/economy.rs"]
mod economy;
#[path = "world_rules/look_ups.rs"]
mod look_ups;

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
        json!({"battle_id": 1, "side": 1, "damage": 10, "energy_left": 72})
    );
    assert_eq!(
        step(&log, "stats at the end")["ok"],
        json!({"gold": 69, "energy": 72, "health": 100, "morale": 50})
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

fn call(store: &LocalStore, function: &str, args: Value) -> Result<Value, StoreError> {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    store.run_rpc(&Rpc {
        function: function.into(),
        args,
    })
}

fn rows(store: &LocalStore, select: Select) -> Vec<Row> {
    store.run_select(&select).unwrap()
}

fn user(store: &LocalStore, id: i64) -> Row {
    rows(store, Select::from("users").eq("id", id))
        .pop()
        .unwrap()
}

fn int(row: &Row, column: &str) -> i64 {
    row[column].as_i64().unwrap()
}

fn refusal(result: Result<Value, StoreError>) -> String {
    result.unwrap_err().to_string()
}

/// A newcomer signed in and entered: a member of no community.
fn newcomer() -> Rc<LocalStore> {
    let store = world();
    store.sign_in_as(Some("newcomer".into()));
    call(&store, "enter_world", json!({})).unwrap();
    store
}

#[test]
fn a_ledger_key_past_its_cap_is_refused_and_the_action_undone() {
    let store = newcomer();
    let before = user(&store, 5);
    let key = "k".repeat(300);
    assert_eq!(
        refusal(call(
            &store,
            "do_work",
            json!({"job": "farming", "key": key})
        )),
        "the key is 300 characters; at most 256"
    );
    assert_eq!(user(&store, 5), before, "the work is undone");
    let fits = "k".repeat(256);
    call(&store, "do_work", json!({"job": "farming", "key": fits})).unwrap();
    assert_eq!(int(&user(&store, 5), "gold"), int(&before, "gold") + 30);
}

#[test]
fn a_blank_ledger_key_is_no_key_and_each_call_applies() {
    let store = newcomer();
    let gold = int(&user(&store, 5), "gold");
    for key in ["", "  "] {
        call(&store, "do_work", json!({"job": "farming", "key": key})).unwrap();
    }
    assert_eq!(int(&user(&store, 5), "gold"), gold + 60, "applied twice");
    let kept = rows(&store, Select::from("applied_actions"));
    assert!(
        kept.iter().all(|r| r
            .get("key")
            .and_then(Value::as_str)
            .is_some_and(|k| !k.trim().is_empty())),
        "{kept:?}"
    );
    // A key that is not blank still applies once.
    for _ in 0..2 {
        call(&store, "do_work", json!({"job": "farming", "key": " k "})).unwrap();
    }
    assert_eq!(int(&user(&store, 5), "gold"), gold + 90);
}
