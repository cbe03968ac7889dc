//! Seed 000's five worked scenarios, played from `tests/scenarios/*.json` through the
//! same code as `familiar-probe scenario`: the engine, the world's tools and the local
//! store, with each file's scripted model. Each file's `expect` is checked, and the
//! rules each scenario exists for are asserted here too. What the agent decides comes
//! from the script (the disloyal agent stops because its script never calls
//! `join_battle`); what is tested is everything around it: the tools' answers, the
//! world's rules, the loop's replans and reminders, and actions applied once. The
//! names say so.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use familiar::llm::message::Role;
use familiar::world::scenario::{Replay, Scenario, play};
use serde_json::{Value, json};

fn played(file: &str) -> Replay {
    let path = format!("{}/tests/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let scenario = Scenario::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let report = futures::executor::block_on(play(&scenario)).unwrap();
    let mismatches = report.mismatches(scenario.expect.as_ref().unwrap());
    assert!(mismatches.is_empty(), "{file}: {mismatches:#?}");
    report
}

fn row<'a>(report: &'a Replay, table: &str, column: &str, value: Value) -> &'a Value {
    report.world[table]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r[column] == value)
        .unwrap_or_else(|| panic!("no {table} row with {column} = {value}"))
}

#[test]
fn a_scripted_greeting_reply_is_one_send_message_in_one_iteration() {
    let report = played("01_hi.json");
    assert_eq!(report.tools, ["send_message"]);
    assert_eq!(report.iterations, 1);
    let reply = row(&report, "messages", "sender_id", json!(1));
    assert_eq!(reply["content"], "Hey! What's up?");
}

#[test]
fn a_scripted_refusal_of_an_enemys_invite_reaches_the_model_with_its_lookups() {
    let report = played("02_community_invite.json");
    assert_eq!(
        report.tools,
        [
            "get_user_profile",
            "get_user_community",
            "get_relationship",
            "search_memories",
            "send_message"
        ]
    );
    assert_eq!(report.iterations, 1);
    let memories = report
        .transcript
        .iter()
        .find(|m| m.role == Role::Tool && m.content.contains("burned our granary"));
    assert!(memories.is_some(), "the memory look-up reached the model");
    let memberships = report.world["user_communities"].as_array().unwrap();
    assert!(
        memberships
            .iter()
            .all(|m| m["user_id"] != 1 || m["community_id"] == 1)
    );
}

#[test]
fn a_scripted_purchase_without_gold_fails_then_work_buy_eat_apply_once_each() {
    let report = played("03_market_check.json");
    assert_eq!(
        report.tools,
        [
            "get_my_stats",
            "get_market_items",
            "buy_item",
            "get_available_jobs",
            "do_work",
            "buy_item",
            "consume_item"
        ]
    );
    assert_eq!(report.iterations, 4);
    let failure = report
        .transcript
        .iter()
        .find(|m| m.content.contains("Insufficient gold. Need 10, have 0"));
    assert!(
        failure.is_some(),
        "the failed purchase was explained to the model"
    );
    let me = row(&report, "users", "id", json!(1));
    assert_eq!(
        (me["energy"].clone(), me["gold"].clone()),
        (json!(70), json!(40))
    );
    assert_eq!(
        report.world["applied_actions"].as_array().unwrap().len(),
        3,
        "three actions applied, once each"
    );
}

#[test]
fn the_loop_reminds_a_scripted_model_of_the_leaders_owed_reply_after_six_iterations() {
    let report = played("04_leaders_call.json");
    assert_eq!(report.iterations, 6);
    assert_eq!(
        report.tools.last().map(String::as_str),
        Some("reply_to_message")
    );
    // After the fight the plan was empty; only context memory knew a reply was owed.
    let reminder = report
        .transcript
        .iter()
        .position(|m| m.role == Role::User && m.content.starts_with("Reminder:"))
        .expect("the loop reminded the model of the owed reply");
    assert!(
        report.transcript[reminder]
            .content
            .contains("General Marcus on message 5")
    );
    let reply_call = report
        .transcript
        .iter()
        .position(|m| m.tool_calls.iter().any(|c| c.name == "reply_to_message"))
        .unwrap();
    assert!(reminder < reply_call);
    let me = row(&report, "users", "id", json!(1));
    assert_eq!(
        me["energy"], 20,
        "two meals from 0 cap at 100, then 80 spent"
    );
    let reply = row(&report, "messages", "reply_to", json!(5));
    assert_eq!(
        (reply["sender_id"].clone(), reply["receiver_id"].clone()),
        (json!(1), json!(3))
    );
}

#[test]
fn scripted_loyal_and_disloyal_replies_join_the_battle_or_stop_after_the_lookups() {
    let loyal = played("05a_battle_loyal.json");
    let disloyal = played("05b_battle_disloyal.json");
    let lookups = ["get_battle_details", "get_user_community", "get_my_stats"];
    assert_eq!(loyal.tools[..3], lookups);
    assert_eq!(disloyal.tools, lookups);
    assert_eq!(loyal.tools[3], "join_battle");
    let community = |r: &Replay| {
        r.transcript
            .iter()
            .find(|m| m.role == Role::Tool && m.content.contains("loyalty"))
            .map(|m| serde_json::from_str::<Value>(&m.content).unwrap()["loyalty"].clone())
    };
    assert_eq!(community(&loyal), Some(json!(90)));
    assert_eq!(community(&disloyal), Some(json!(20)));
    assert!(loyal.world.contains_key("battle_participants"));
    assert!(!disloyal.world.contains_key("battle_participants"));
}
