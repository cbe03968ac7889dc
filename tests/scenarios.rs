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

#[path = "scenarios/page_world.rs"]
mod page_world;
#[path = "scenarios/policy.rs"]
mod policy;

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

/// The agent of every scenario file (the seed's `agent-123`).
const AGENT: i64 = 123;

#[test]
fn a_scripted_greeting_reply_is_one_send_message_in_one_iteration() {
    let report = played("01_hi.json");
    assert_eq!(report.tools, ["send_message"]);
    assert_eq!(report.iterations, 1);
    let reply = row(&report, "messages", "sender_id", json!(AGENT));
    assert_eq!(reply["content"], "Hey! What's up?");
    assert_eq!(reply["receiver_id"], 456);
}

/// The observation the model reads carries the agent's identity and its stats as its
/// row holds them when the trigger fires (seed 000's OBSERVE: "who am I right now?").
#[test]
fn the_model_reads_the_agents_identity_and_current_stats_in_the_situation() {
    let report = played("01_hi.json");
    let situation = &report.system;
    assert!(
        situation.contains("SITUATION: message.received"),
        "{situation}"
    );
    for stat in [
        "\"morale\":50",
        "\"energy\":80",
        "\"health\":100",
        "\"gold\":20",
        "\"order_chaos\":0.5",
    ] {
        assert!(situation.contains(stat), "{stat} in {situation}");
    }
    let market = played("03_market_check.json");
    let state = &market.observation.actor.state;
    assert_eq!(
        (&state["health"], &state["energy"], &state["gold"]),
        (&json!(20), &json!(30), &json!(0)),
        "example 3 observes health 20, energy 30, gold 0"
    );
    assert!(state.contains_key("identity"));
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
        .find(|m| m.role == Role::Tool && m.content.contains("Fought against WarLord99"))
        .expect("the memory look-up reached the model");
    assert!(memories.content.contains("attacked our territory"));
    let community = report
        .transcript
        .iter()
        .find(|m| m.role == Role::Tool && m.content.contains("Chaos Legion"));
    assert!(community.is_some(), "their community reached the model");
    let memberships = report.world["user_communities"].as_array().unwrap();
    assert!(
        memberships
            .iter()
            .all(|m| m["user_id"] != AGENT || m["community_id"] == 1)
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
    let me = row(&report, "users", "id", json!(AGENT));
    assert_eq!(
        (me["energy"].clone(), me["gold"].clone()),
        (json!(60), json!(40)),
        "30 - 20 for mining + 50 for the food; 50 earned - 10 spent"
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
    // The enemy faction's standing, looked up by its name as the seed does.
    let faction = report
        .transcript
        .iter()
        .find(|m| m.role == Role::Tool && m.content.contains("\"sentiment\":-90"));
    assert!(
        faction.is_some(),
        "get_relationship(\"Chaos Horde\") answered"
    );
    // The first action failed: no food yet.
    let no_food = report.transcript.iter().find(|m| {
        m.content
            .contains("Insufficient food in inventory: need 5, have 0")
    });
    assert!(no_food.is_some(), "consume_item(\"food\", 5) failed");
    // After the fight the plan was empty; only context memory knew a reply was owed.
    let reminder = report
        .transcript
        .iter()
        .position(|m| m.role == Role::User && m.content.starts_with("Reminder:"))
        .expect("the loop reminded the model of the owed reply");
    assert!(
        report.transcript[reminder]
            .content
            .contains("reply to the leader's message 1")
    );
    let reply_call = report
        .transcript
        .iter()
        .position(|m| m.tool_calls.iter().any(|c| c.name == "reply_to_message"))
        .unwrap();
    assert!(reminder < reply_call);
    let me = row(&report, "users", "id", json!(AGENT));
    assert_eq!(
        me["energy"], 20,
        "two meals from 0 cap at 100, then 80 spent"
    );
    let reply = row(&report, "messages", "reply_to", json!(1));
    assert_eq!(
        (reply["sender_id"].clone(), reply["receiver_id"].clone()),
        (json!(AGENT), json!(789))
    );
}

#[test]
fn scripted_loyal_and_disloyal_replies_join_the_battle_or_ignore_it_after_the_lookups() {
    let loyal = played("05a_battle_loyal.json");
    let disloyal = played("05b_battle_disloyal.json");
    let lookups = ["get_battle_details", "get_relationship", "get_my_stats"];
    assert_eq!(loyal.tools[..3], lookups);
    assert_eq!(disloyal.tools[..3], lookups);
    assert_eq!(loyal.tools[3], "join_battle");
    assert_eq!(disloyal.tools[3], "ignore_battle");
    let standing = |r: &Replay| {
        r.transcript
            .iter()
            .find(|m| m.role == Role::Tool && m.content.contains("sentiment"))
            .map(|m| serde_json::from_str::<Value>(&m.content).unwrap())
            .unwrap()
    };
    assert_eq!(
        (
            standing(&loyal)["community_id"].clone(),
            standing(&loyal)["sentiment"].clone()
        ),
        (json!(2), json!(-70)),
        "toward the rival faction, by name"
    );
    assert_eq!(
        (
            standing(&disloyal)["community_id"].clone(),
            standing(&disloyal)["loyalty"].clone()
        ),
        (json!(1), json!(20)),
        "toward its own community"
    );
    assert!(loyal.world.contains_key("battle_participants"));
    assert!(!disloyal.world.contains_key("battle_participants"));
    let ignored = row(&disloyal, "applied_actions", "tool", json!("ignore_battle"));
    assert_eq!(ignored["result"]["ignored"], true);
}

/// Each file's trigger has the boundaries the world gives that trigger: its actions
/// and its whole data scope, never a narrower one.
#[test]
fn each_scenarios_boundaries_are_its_triggers_own() {
    use familiar::world::triggers::WorldEvent;
    let agent = policy::grimm(None);
    let cases = [
        (
            "01_hi.json",
            WorldEvent::Message {
                from: 456,
                message_id: 0,
                text: String::new(),
            },
        ),
        (
            "02_community_invite.json",
            WorldEvent::Message {
                from: 456,
                message_id: 0,
                text: String::new(),
            },
        ),
        ("03_market_check.json", WorldEvent::MarketCheck),
        (
            "04_leaders_call.json",
            WorldEvent::Mention {
                leader: 789,
                message_id: 1,
                text: String::new(),
            },
        ),
        (
            "05a_battle_loyal.json",
            WorldEvent::BattleStarted { battle_id: 789 },
        ),
        (
            "05b_battle_disloyal.json",
            WorldEvent::BattleStarted { battle_id: 789 },
        ),
    ];
    for (file, event) in cases {
        let path = format!("{}/tests/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
        let scenario = Scenario::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let observed = event.observe(&agent);
        assert_eq!(
            scenario.observation.boundaries, observed.boundaries,
            "{file}"
        );
        assert_eq!(scenario.observation.trigger.event, event.event(), "{file}");
    }
}
