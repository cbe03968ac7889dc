//! The same five examples played by the offline world policy (no script, no key),
//! through the session controller: the world's triggers build the observations, the
//! policy decides from them, the actor's identity and its look-ups, and the run
//! enforces each trigger's actions and data scope.

use std::cell::RefCell;
use std::rc::Rc;

use familiar::app::{Config, Options, Session, Storage, Update, VolatileStorage};
use familiar::base::clock::{FixedClock, Instant};
use familiar::compose::delegate::Delegate;
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;
use familiar::run::event::{Event, Thought};
use familiar::run::{ContextMemory, Outcome};
use familiar::store::{LocalStore, Select, Store};
use familiar::world::residents::resident;
use familiar::world::triggers::{Identity, WorldAgent, WorldEvent};
use familiar::world::{self, scenario::Scenario};
use serde_json::{Map, Value, json};

use super::*;

/// What one trigger did, as the controller's listeners saw it.
pub struct Played {
    pub tools: Vec<String>,
    pub results: Vec<(String, Result<Value, String>)>,
    pub memories: Vec<ContextMemory>,
    pub outcome: Outcome,
    pub world: Map<String, Value>,
}

pub fn grimm(loyalty: Option<i64>) -> WorldAgent {
    WorldAgent {
        id: super::AGENT,
        name: "Grimm".into(),
        identity: Identity {
            order_chaos: 0.5,
            loyalty,
            temperament: "gruff but loyal".into(),
        },
        // The scenarios are the seed's NPC deciding alone: no one to ask.
        npc: true,
    }
}

fn store_of(file: &str) -> Rc<LocalStore> {
    let path = format!("{}/tests/scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
    let scenario = Scenario::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let clock = FixedClock(Instant {
        epoch_ms: 1_795_338_000_000,
        utc_offset_minutes: 0,
    });
    let store = LocalStore::new(world::schemas().unwrap()).with_clock(Rc::new(clock));
    let store = Rc::new(world::functions::install(store));
    store
        .seed(&Value::Object(scenario.world.clone()).to_string())
        .unwrap();
    world::functions::play_as(&store, super::AGENT).unwrap();
    store
}

/// Fires `event` at `who` in the world of scenario `file`, through a session
/// whose agent thinks with `llm` (the world policy when `None`).
pub fn fire(
    file: &str,
    who: &WorldAgent,
    event: &WorldEvent,
    llm: Option<Rc<dyn familiar::llm::Llm>>,
) -> Played {
    let store = store_of(file);
    let shared: Rc<dyn Store> = store.clone();
    let agent = Rc::new(resident(who, &shared, llm));
    let config = Config {
        namespace: "world".into(),
        play: None,
        options: Options {
            planning_on_events: true,
            ..Options::default()
        },
        clock: Rc::new(FixedClock(Instant {
            epoch_ms: 1_795_338_000_000,
            utc_offset_minutes: 0,
        })),
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.25),
    };
    let session = Session::new(config, Delegate::new(agent));
    let events = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&events);
    session.on(move |update| {
        if let Update::Event { event, .. } = update {
            sink.borrow_mut().push(event.clone());
        }
    });
    let outcome = futures::executor::block_on(session.trigger(event.observe(who))).unwrap();
    let events = events.borrow();
    let results: Vec<(String, Result<Value, String>)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Thought(Thought::ToolReturn { tool, result, .. }) if tool != "plan" => {
                Some((tool.to_string(), result.clone()))
            }
            _ => None,
        })
        .collect();
    let memories = events
        .iter()
        .filter_map(|e| match e {
            Event::PlanUpdated { memory, .. } => Some(memory.clone()),
            _ => None,
        })
        .collect();
    Played {
        tools: results.iter().map(|(t, _)| t.clone()).collect(),
        results,
        memories,
        outcome,
        world: dump(&store),
    }
}

fn dump(store: &LocalStore) -> Map<String, Value> {
    let mut world = Map::new();
    for schema in world::schemas().unwrap() {
        let mut select = Select::from(&schema.name);
        for column in &schema.primary_key {
            select = select.order(column, true);
        }
        let rows = futures::executor::block_on(store.select(&select)).unwrap();
        world.insert(schema.name, rows.into_iter().map(Value::Object).collect());
    }
    world
}

pub fn rows<'a>(played: &'a Played, table: &str) -> &'a Vec<Value> {
    played.world[table].as_array().unwrap()
}

pub fn user(played: &Played, id: i64) -> Value {
    rows(played, "users")
        .iter()
        .find(|u| u["id"] == json!(id))
        .cloned()
        .unwrap()
}

/// A model that makes `calls` in one turn, then answers.
pub fn scripted(calls: &[(&str, Value)]) -> Rc<dyn familiar::llm::Llm> {
    let model = ScriptedModel::new();
    model.push_tool_calls(
        calls
            .iter()
            .enumerate()
            .map(|(i, (name, args))| ToolCall {
                id: format!("c{i}").into(),
                name: (*name).into(),
                arguments: args.to_string().into(),
            })
            .collect(),
    );
    model.push_text("I stop.");
    model.push_text("YES.");
    Rc::new(model)
}

fn sent_by_agent_to(played: &policy::Played, to: i64) -> Vec<&Value> {
    rows(played, "messages")
        .iter()
        .filter(|m| m["sender_id"] == json!(AGENT) && m["receiver_id"] == json!(to))
        .collect()
}

#[test]
fn the_policy_answers_a_greeting_with_one_message_and_no_look_ups() {
    let hi = WorldEvent::Message {
        from: 456,
        message_id: 1,
        text: "Hi".into(),
    };
    let played = fire("01_hi.json", &grimm(None), &hi, None);
    assert_eq!(played.tools, ["send_message"]);
    assert!(matches!(played.outcome, Outcome::GoalComplete { .. }));
    let sent = sent_by_agent_to(&played, 456);
    assert_eq!(sent.len(), 1, "{sent:?}");
}

#[test]
fn the_policy_refuses_an_enemys_invitation_after_looking_them_up() {
    let invite = WorldEvent::Message {
        from: 456,
        message_id: 1,
        text: "Join my community!".into(),
    };
    let played = fire("02_community_invite.json", &grimm(None), &invite, None);
    assert_eq!(
        played.tools,
        [
            "get_user_profile",
            "get_user_community",
            "get_relationship",
            "search_memories",
            "send_message"
        ]
    );
    let memory = &played.results[3].1.as_ref().unwrap().to_string();
    assert!(memory.contains("Fought against WarLord99"), "{memory}");
    let refusal = sent_by_agent_to(&played, 456)[0];
    assert!(
        refusal["content"].as_str().unwrap().contains("enemies"),
        "a gruff refusal: {refusal}"
    );
    assert!(
        rows(&played, "user_communities")
            .iter()
            .all(|m| m["user_id"] != json!(AGENT) || m["community_id"] == json!(1)),
        "Grimm joined no other community"
    );
}

#[test]
fn the_policy_works_buys_and_eats_when_the_market_check_finds_it_short_of_gold() {
    let played = fire(
        "03_market_check.json",
        &grimm(None),
        &WorldEvent::MarketCheck,
        None,
    );
    assert_eq!(
        played.tools,
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
    let failed = played.results[2].1.as_ref().unwrap_err();
    assert!(
        failed.ends_with("Insufficient gold. Need 10, have 0"),
        "{failed}"
    );
    let me = user(&played, AGENT);
    assert_eq!(
        (me["energy"].clone(), me["gold"].clone()),
        (json!(60), json!(40))
    );
    assert!(matches!(played.outcome, Outcome::GoalComplete { .. }));
    assert_eq!(
        rows(&played, "applied_actions").len(),
        3,
        "work, buy, eat once each"
    );
}

#[test]
fn the_policy_answers_the_leaders_call_after_the_work_it_required_from_context_memory() {
    let call = WorldEvent::Mention {
        leader: 789,
        message_id: 1,
        text: "Everyone fight in battle_456!".into(),
    };
    let played = fire("04_leaders_call.json", &grimm(None), &call, None);
    assert_eq!(
        played.tools,
        [
            "get_user_profile",
            "get_relationship",
            "get_battle_details",
            "get_my_stats",
            "consume_item",
            "get_market_items",
            "get_available_jobs",
            "do_work",
            "buy_item",
            "consume_item",
            "join_battle",
            "reply_to_message"
        ]
    );
    // The reply was owed from the first action on, and settled by the reply.
    let first = &played.memories[0];
    assert_eq!(first.owed[0].tool, "reply_to_message");
    assert_eq!(first.facts["reply_to_message_id"], json!(1));
    let reply = rows(&played, "messages")
        .iter()
        .find(|m| m["reply_to"] == json!(1))
        .unwrap();
    assert_eq!(reply["sender_id"], json!(AGENT));
    let fought = rows(&played, "battle_participants")
        .iter()
        .find(|p| p["battle_id"] == json!(456) && p["user_id"] == json!(AGENT))
        .unwrap();
    assert_eq!(
        fought["damage_dealt"],
        json!(50),
        "all the energy the food gave"
    );
    assert!(matches!(played.outcome, Outcome::GoalComplete { .. }));
}

#[test]
fn the_same_battle_is_joined_by_a_loyal_agent_and_ignored_by_a_disloyal_one() {
    let battle = WorldEvent::BattleStarted { battle_id: 789 };
    let lookups = [
        "get_battle_details",
        "get_user_community",
        "get_my_stats",
        "get_faction_relationship",
        "get_faction_relationship",
    ];
    let loyal = fire("05a_battle_loyal.json", &grimm(None), &battle, None);
    assert_eq!(loyal.tools[..5], lookups);
    assert_eq!(loyal.tools[5..], ["join_battle"]);
    assert!(
        rows(&loyal, "battle_participants")
            .iter()
            .any(|p| p["user_id"] == json!(AGENT) && p["damage_dealt"] == json!(50))
    );
    assert_eq!(user(&loyal, AGENT)["energy"], json!(0));

    let disloyal = fire("05b_battle_disloyal.json", &grimm(None), &battle, None);
    assert_eq!(disloyal.tools[..5], lookups);
    assert_eq!(disloyal.tools[5..], ["ignore_battle"]);
    assert!(rows(&disloyal, "battle_participants").is_empty());
    assert_eq!(user(&disloyal, AGENT)["energy"], json!(50));
    // The same world, a loyal row but a disloyal identity: the identity decides.
    let fickle = fire("05a_battle_loyal.json", &grimm(Some(20)), &battle, None);
    assert_eq!(
        fickle.tools.last().map(String::as_str),
        Some("ignore_battle")
    );
}

#[test]
fn a_trigger_refuses_an_action_outside_its_mapping_and_a_look_up_outside_its_scope() {
    let model = scripted(&[
        ("get_battle_details", json!({"battle_id": 789})),
        ("join_battle", json!({"battle_id": 789, "energy": 10})),
    ]);
    let played = fire(
        "05a_battle_loyal.json",
        &grimm(None),
        &WorldEvent::MarketCheck,
        Some(model),
    );
    let lookup = played.results[0].1.as_ref().unwrap_err();
    assert!(lookup.contains("may not read"), "{lookup}");
    let action = played.results[1].1.as_ref().unwrap_err();
    assert!(action.contains("does not allow"), "{action}");
    assert!(rows(&played, "battle_participants").is_empty());
    assert_eq!(user(&played, AGENT)["energy"], json!(50), "nothing changed");
}
