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

// ---------------------------------------------------------------------------------
// The same five examples played by the offline world policy (no script, no key),
// through the session controller: the world's triggers build the observations, the
// policy decides from them, the actor's identity and its look-ups, and the run
// enforces each trigger's actions and data scope.

mod policy {
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
                    Some((tool.clone(), result.clone()))
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
                    id: format!("c{i}"),
                    name: (*name).into(),
                    arguments: args.to_string(),
                })
                .collect(),
        );
        model.push_text("I stop.");
        model.push_text("YES.");
        Rc::new(model)
    }
}

use familiar::run::Outcome;
use familiar::world::triggers::WorldEvent;
use policy::{fire, grimm, rows, scripted, user};

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

/// The page's own world (the JSON seed), its three agents behind one session, played
/// by the seeded player who owns them: what the World view does, natively.
#[test]
fn in_the_pages_world_the_owner_s_agents_act_as_themselves_through_one_session() {
    use std::cell::RefCell;
    use std::rc::Rc;

    use familiar::app::{Config, Options, Session, Storage, Update, VolatileStorage};
    use familiar::base::clock::{FixedClock, Instant};
    use familiar::compose::delegate::Delegate;
    use familiar::run::event::{Event, Thought};
    use familiar::store::{Filtered, Select, Store};
    use familiar::world::residents::resident;
    use familiar::world::triggers::agents;

    let clock = Rc::new(FixedClock(Instant {
        epoch_ms: 1_795_338_000_000,
        utc_offset_minutes: 0,
    }));
    let store: Rc<dyn Store> = Rc::new(familiar::world::local(clock.clone(), None).unwrap());
    let roster = agents();
    let mut delegate = Delegate::new(Rc::new(resident(&roster[0], &store, None)));
    for who in &roster[1..] {
        delegate = delegate.with_agent(Rc::new(resident(who, &store, None)));
    }
    let config = Config {
        namespace: "page".into(),
        play: None,
        options: Options {
            planning_on_events: true,
            ..Options::default()
        },
        clock,
        storage: Rc::new(VolatileStorage::new()) as Rc<dyn Storage>,
        random: Rc::new(|| 0.5),
    };
    let session = Session::new(config, delegate);
    // The owner approves each action their agents ask for (once a run has read
    // another party's text), and the test keeps what was asked.
    let asked = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&asked);
    session.set_approver(Some(Rc::new(
        move |pending: &familiar::app::PendingApproval| {
            log.borrow_mut()
                .push((pending.agent.clone(), pending.call.name.clone()));
            Box::pin(async { familiar::app::Decision::Approve })
        },
    )));
    let tools = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&tools);
    session.on(move |update| {
        if let Update::Event {
            turn,
            event: Event::Thought(Thought::ToolReturn { tool, .. }),
            ..
        } = update
            && !tool.starts_with("get_")
            && tool != "plan"
        {
            sink.borrow_mut().push((*turn, tool.clone()));
        }
    });
    let user = |id: i64| {
        let select = Select::from("users").eq("id", id);
        futures::executor::block_on(store.select(&select)).unwrap()[0].clone()
    };
    let mira = roster.iter().find(|a| a.name == "Mira").unwrap();
    let market = WorldEvent::MarketCheck.observe(mira);
    futures::executor::block_on(session.trigger(market)).unwrap();
    let mira_now = user(4);
    assert_eq!(
        (mira_now["energy"].clone(), mira_now["gold"].clone()),
        (json!(26), json!(47))
    );
    assert_eq!(user(3)["gold"], json!(25), "the owner's rows are untouched");
    for who in &roster {
        let battle = WorldEvent::BattleStarted { battle_id: 1 }.observe(who);
        futures::executor::block_on(session.trigger(battle)).unwrap();
    }
    let actions: Vec<String> = tools.borrow().iter().map(|(_, t)| t.clone()).collect();
    assert_eq!(
        actions,
        [
            "buy_item",
            "do_work",
            "buy_item",
            "consume_item",
            "join_battle",
            "join_battle",
            "ignore_battle"
        ]
    );
    assert_eq!(user(1)["energy"], json!(0), "Dotty fought with all she had");
    assert_eq!(user(4)["energy"], json!(26), "Mira stayed out");
    // Loyal to the Lantern Guild (85), Dotty votes for its proposal.
    let proposal = WorldEvent::Proposal {
        proposal_id: 1,
        title: "Buy a second lantern for the north gate".into(),
    };
    futures::executor::block_on(session.trigger(proposal.observe(&roster[0]))).unwrap();
    assert_eq!(tools.borrow().last().unwrap().1, "vote_on_proposal");
    let votes =
        futures::executor::block_on(store.select(&Select::from("votes").eq("user_id", 1))).unwrap();
    assert_eq!(votes[0]["in_favour"], json!(true));
    // The market check read only Mira's own rows and ran unasked; once the battle's
    // look-ups had read names players wrote, each action waited for the owner.
    let asked: Vec<(String, String)> = asked.borrow().clone();
    let pair = |agent: &str, tool: &str| (agent.to_owned(), tool.to_owned());
    assert_eq!(
        asked,
        [
            pair("Dotty", "join_battle"),
            pair("Brannoc", "join_battle"),
            pair("Mira", "ignore_battle"),
            pair("Dotty", "vote_on_proposal"),
        ]
    );
}
