//! The world's rules in the local store (the twin of migrations/0006_actions.sql and
//! 0008_player_rules.sql), played through the world's tools and its rpc functions: the
//! shared suite, read for what it must show, and the rules a player must not get round
//! (membership, sides in a battle, the guild's tick, the ledger's key cap, gold from
//! nothing).
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

mod common;

use std::rc::Rc;

use common::world::world_suite;
use familiar::store::{Filtered, LocalStore, Patch, Row, Rpc, Select, Store, StoreError};
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
fn posting_and_voting_in_a_community_need_its_membership() {
    let store = newcomer();
    let posts = rows(&store, Select::from("posts")).len();
    let votes = rows(&store, Select::from("votes")).len();
    assert_eq!(
        refusal(call(
            &store,
            "create_post",
            json!({"content": "Vote no!", "community_id": 1})
        )),
        "you are not a member of community 1"
    );
    assert_eq!(
        refusal(call(
            &store,
            "vote_on_proposal",
            json!({"proposal_id": 1, "in_favour": false})
        )),
        "you are not a member of community 1"
    );
    assert_eq!(
        refusal(call(
            &store,
            "create_post",
            json!({"content": "Hi", "community_id": 99})
        )),
        "there is no community 99"
    );
    assert_eq!(rows(&store, Select::from("posts")).len(), posts, "no post");
    assert_eq!(rows(&store, Select::from("votes")).len(), votes, "no vote");

    // A post to no community is anyone's; joining opens the community's.
    call(&store, "create_post", json!({"content": "Hello, town."})).unwrap();
    call(&store, "join_community", json!({"community_id": 1})).unwrap();
    let post = call(
        &store,
        "create_post",
        json!({"content": "Lit.", "community_id": 1}),
    );
    assert_eq!(post.unwrap()["community_id"], json!(1));
    let vote = call(
        &store,
        "vote_on_proposal",
        json!({"proposal_id": 1, "in_favour": true}),
    );
    assert_eq!(vote.unwrap()["in_favour"], json!(true));

    // Once out, neither again.
    call(&store, "leave_community", json!({"community_id": 1})).unwrap();
    assert_eq!(
        refusal(call(
            &store,
            "create_post",
            json!({"content": "Still here", "community_id": 1})
        )),
        "you are not a member of community 1"
    );
}

#[test]
fn a_fighter_cannot_change_sides_by_changing_communities() {
    let store = world();
    familiar::world::functions::play_as(&store, 3).unwrap();
    let battle = || {
        rows(&store, Select::from("battles").eq("id", 1))
            .pop()
            .unwrap()
    };
    let before = battle();
    // The player fought for the Lantern Guild (side 1); now of the Ashen Circle only.
    call(&store, "join_community", json!({"community_id": 2})).unwrap();
    call(&store, "leave_community", json!({"community_id": 1})).unwrap();
    assert_eq!(
        refusal(call(
            &store,
            "join_battle",
            json!({"battle_id": 1, "energy": 10})
        )),
        "you fight for side 1 of battle 1; you cannot change sides"
    );
    assert_eq!(battle(), before, "no damage to either side");
    assert_eq!(int(&user(&store, 3), "energy"), 100, "no energy spent");
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

/// Sets user `id`'s gold and energy, as the game could.
fn set_purse(store: &LocalStore, id: i64, gold: i64, energy: i64) {
    let mut set = Row::new();
    set.insert("gold".into(), json!(gold));
    set.insert("energy".into(), json!(energy));
    let patch = Patch {
        table: "users".into(),
        set,
        filters: Vec::new(),
        returning: false,
    }
    .eq("id", id);
    store.run_update(&patch).unwrap();
}

/// (name, pay, energy cost) of every job; (name, price, energy restored) of every item
/// on sale that restores energy.
type Jobs = Vec<(String, i64, i64)>;
fn economy(store: &LocalStore) -> (Jobs, Jobs) {
    let jobs = rows(store, Select::from("jobs").order("name", true))
        .iter()
        .map(|j| {
            (
                j["name"].as_str().unwrap().to_owned(),
                int(j, "pay"),
                int(j, "energy_cost"),
            )
        })
        .collect();
    let foods = rows(store, Select::from("market_items").eq("available", true))
        .iter()
        .filter_map(|i| {
            let energy = i["effects"].get("energy")?.as_i64()?;
            (energy > 0).then(|| {
                (
                    i["name"].as_str().unwrap().to_owned(),
                    int(i, "price"),
                    energy,
                )
            })
        })
        .collect();
    (jobs, foods)
}

#[test]
fn no_cycle_of_one_job_and_one_food_makes_gold() {
    // Before: mining and two loaves netted 44 gold, farming and one loaf 27.
    let store = world();
    familiar::world::functions::play_as(&store, 3).unwrap();
    let (jobs, foods) = economy(&store);
    assert!(
        !jobs.is_empty() && !foods.is_empty(),
        "there is work and food"
    );
    let mut most = i64::MIN;
    for (job, _, cost) in &jobs {
        for (food, _, energy) in &foods {
            set_purse(&store, 3, 100_000, 100);
            call(&store, "do_work", json!({"job": job})).unwrap();
            let loaves = (cost + energy - 1) / energy;
            let args = json!({"item_name": food, "quantity": loaves});
            call(&store, "buy_item", args.clone()).unwrap();
            call(&store, "consume_item", args).unwrap();
            let me = user(&store, 3);
            assert_eq!(
                int(&me, "energy"),
                100,
                "{job} and {food} come back to full energy"
            );
            most = most.max(int(&me, "gold") - 100_000);
        }
    }
    assert_eq!(most, 0, "the best cycle breaks even (farming and bread)");
}

#[test]
fn the_seed_makes_no_gold_from_nothing_and_says_which_numbers_would() {
    let store = world();
    assert_eq!(familiar::world::functions::gold_loop(&store).unwrap(), None);
    let cheap = Patch {
        table: "market_items".into(),
        set: json!({"price": 2}).as_object().unwrap().clone(),
        filters: Vec::new(),
        returning: false,
    }
    .eq("name", "bread");
    store.run_update(&cheap).unwrap();
    assert_eq!(
        familiar::world::functions::gold_loop(&store)
            .unwrap()
            .as_deref(),
        Some(
            "farming pays 30 gold for 10 energy, and bread restores 1 energy for 2 gold: \
             work, buy and eat would make gold"
        ),
        "the words of the database's gold_loop()"
    );
}

/// Seed 000's economy as its worked examples price it: the jobs of its `do_work`
/// (mining 50 gold for 20 energy, farming 30 for 10, trading 40 for 15) and food at
/// 10 gold for 50 energy, played by the local store's rules: taken, not refused, and
/// work → buy → eat restores energy, never past 100. The same numbers and chain run
/// against PostgreSQL in tests/sql/rls.sql.
#[test]
fn the_seeds_market_numbers_are_taken_and_work_buy_eat_restores_energy_up_to_100() {
    let store = world();
    let (jobs, _) = economy(&store);
    let seed_jobs = [("farming", 30, 10), ("mining", 50, 20), ("trading", 40, 15)]
        .map(|(name, pay, cost)| (name.to_owned(), pay, cost));
    assert_eq!(jobs, seed_jobs, "the seed's do_work table");
    let food = familiar::store::Insert {
        table: "market_items".into(),
        rows: vec![
            json!({"name": "food", "price": 10, "available": true, "effects": {"energy": 50}})
                .as_object()
                .unwrap()
                .clone(),
        ],
        on_conflict: None,
        client_key: None,
        returning: true,
    };
    assert_eq!(store.run_insert(&food).unwrap().len(), 1, "food is taken");
    // The guard is a report in both stores (migrations/0014_seed_economy.sql says why).
    assert_eq!(
        familiar::world::functions::gold_loop(&store)
            .unwrap()
            .as_deref(),
        Some(
            "farming pays 30 gold for 10 energy, and food restores 50 energy for 10 gold: \
             work, buy and eat would make gold"
        )
    );
    // Example 3's agent: health 20, energy 30, no gold.
    familiar::world::functions::play_as(&store, 3).unwrap();
    set_purse(&store, 3, 0, 30);
    let one = json!({"item_name": "food", "quantity": 1});
    assert_eq!(
        refusal(call(&store, "buy_item", one.clone())),
        "Insufficient gold. Need 10, have 0"
    );
    let work = call(&store, "do_work", json!({"job": "mining"})).unwrap();
    assert_eq!((&work["earned"], &work["energy"]), (&json!(50), &json!(10)));
    assert_eq!(
        call(&store, "buy_item", one.clone()).unwrap()["gold_left"],
        40
    );
    let eaten = call(&store, "consume_item", one).unwrap();
    assert_eq!(
        eaten["now"]["energy"], 60,
        "10 left after mining, and 50 more"
    );
    let two = json!({"item_name": "food", "quantity": 2});
    call(&store, "buy_item", two.clone()).unwrap();
    let full = call(&store, "consume_item", two).unwrap();
    assert_eq!(full["now"]["energy"], 100, "60 and 100 more, capped at 100");
    let me = user(&store, 3);
    assert_eq!((int(&me, "energy"), int(&me, "gold")), (100, 20));
}

/// A small deterministic generator (xorshift), so a failure replays.
struct Dice(u64);

impl Dice {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// The proof's potential, times the best job's energy cost: gold, plus energy and the
/// energy held in the inventory at the best job's pay per energy.
fn potential(store: &LocalStore, id: i64, (pay, cost): (i64, i64), foods: &Jobs) -> i64 {
    let me = user(store, id);
    let held: i64 = rows(store, Select::from("inventory").eq("user_id", id))
        .iter()
        .map(|slot| {
            let energy = foods
                .iter()
                .find(|(name, ..)| slot["item_name"] == json!(name))
                .map_or(0, |(.., energy)| *energy);
            int(slot, "quantity") * energy
        })
        .sum();
    int(&me, "gold") * cost + pay * (int(&me, "energy") + held)
}

#[test]
fn no_sequence_of_actions_grows_gold_past_what_the_start_holds() {
    // The whole class, not one cycle: any mix of work, buying, eating and fighting,
    // refusals included. The potential never grows, so neither can gold past it.
    let store = world();
    let (jobs, foods) = economy(&store);
    let best = jobs
        .iter()
        .map(|(_, pay, cost)| (*pay, *cost))
        .max_by(|a, b| (a.0 * b.1).cmp(&(b.0 * a.1)))
        .unwrap();
    let items: Vec<String> = rows(&store, Select::from("market_items"))
        .iter()
        .map(|i| i["name"].as_str().unwrap().to_owned())
        .collect();
    let mut applied = [0; 4];
    for seed in 1..=20u64 {
        let store = world();
        familiar::world::functions::play_as(&store, 3).unwrap();
        set_purse(&store, 3, 200, 100);
        let mut dice = Dice(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let start = potential(&store, 3, best, &foods);
        let mut last = start;
        for step in 0..300 {
            let item = &items[dice.below(items.len())];
            let quantity = 1 + dice.below(20);
            let kind = dice.below(4);
            let result = match kind {
                0 => call(
                    &store,
                    "do_work",
                    json!({"job": jobs[dice.below(jobs.len())].0}),
                ),
                1 => call(
                    &store,
                    "buy_item",
                    json!({"item_name": item, "quantity": quantity}),
                ),
                2 => call(
                    &store,
                    "consume_item",
                    json!({"item_name": item, "quantity": quantity}),
                ),
                _ => call(
                    &store,
                    "join_battle",
                    json!({"battle_id": 1, "energy": quantity}),
                ),
            };
            applied[kind] += usize::from(result.is_ok());
            let now = potential(&store, 3, best, &foods);
            assert!(
                now <= last,
                "seed {seed}, step {step}: the potential grew {last} → {now}"
            );
            last = now;
            assert!(int(&user(&store, 3), "gold") * best.1 <= start);
        }
    }
    assert!(
        applied.iter().all(|n| *n > 20),
        "each kind of action applied: {applied:?}"
    );
}

fn act_as(store: &LocalStore, agent: i64, action: &str, args: Value) -> Result<Value, StoreError> {
    let mut call = Row::new();
    call.insert("agent".into(), json!(agent));
    call.insert("action".into(), json!(action));
    call.insert("args".into(), args);
    block_on(store.rpc(&Rpc {
        function: "act_as".into(),
        args: call,
    }))
}

#[test]
fn an_agents_action_changes_the_agents_rows_and_not_its_owners() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let worked = act_as(&store, 1, "do_work", json!({"job": "farming"})).unwrap();
    assert_eq!(worked["gold"], json!(70));
    assert_eq!(
        (
            user(&store, 1)["gold"].clone(),
            user(&store, 1)["energy"].clone()
        ),
        (json!(70), json!(70)),
        "Dotty worked"
    );
    assert_eq!(user(&store, 3)["gold"], json!(25), "the player did not");
    let ignored = act_as(&store, 4, "ignore_battle", json!({"battle_id": 1})).unwrap();
    assert_eq!(ignored["ignored"], json!(true));
    let unknown = act_as(&store, 1, "drop_everything", json!({})).unwrap_err();
    assert_eq!(
        unknown.to_string(),
        StoreError::Rule("there is no action drop_everything".into()).to_string()
    );
}

#[test]
fn one_player_cannot_act_as_anothers_agent() {
    let store = world();
    // Dotty's own player owns no agent: not Brannoc, whom the seeded player owns.
    familiar::world::functions::play_as(&store, 1).unwrap();
    let before = user(&store, 2);
    let refused = act_as(&store, 2, "do_work", json!({"job": "mining"})).unwrap_err();
    assert!(
        matches!(&refused, StoreError::PermissionDenied(m) if m == "you do not own agent 2"),
        "{refused}"
    );
    assert_eq!(user(&store, 2), before, "Brannoc's rows are untouched");
    // Acting as oneself is allowed.
    assert!(act_as(&store, 1, "do_work", json!({"job": "farming"})).is_ok());
}

#[test]
fn a_residents_tools_act_as_the_agent_through_its_owner() {
    use familiar::world::residents::resident;
    use familiar::world::triggers::agents;
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let shared: Rc<dyn Store> = store.clone();
    let mira = agents().into_iter().find(|a| a.name == "Mira").unwrap();
    let agent = resident(&mira, &shared, None);
    let call = familiar::llm::message::ToolCall {
        id: "c1".into(),
        name: "do_work".into(),
        arguments: json!({"job": "farming"}).to_string(),
    };
    let context = familiar::tool::CallContext {
        idempotency_key: Some("mira-work".into()),
    };
    let done = block_on(agent.tools.call(&call, context)).unwrap();
    assert_eq!(done["gold"], json!(30));
    assert_eq!(user(&store, 4)["energy"], json!(35));
    assert_eq!(user(&store, 3)["energy"], json!(100));
}

#[test]
fn the_knowledge_table_answers_a_search_and_item_prices_are_looked_up_by_name() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let mut tools = familiar::tool::ToolRegistry::new();
    familiar::world::register_tools(&mut tools, store.clone() as Rc<dyn Store>, 3);
    let call = |name: &str, args: Value| {
        let call = familiar::llm::message::ToolCall {
            id: "k".into(),
            name: name.into(),
            arguments: args.to_string(),
        };
        block_on(tools.call(&call, familiar::tool::CallContext::default()))
    };
    let found = call("search_knowledge", json!({"query": "how does mining pay?"})).unwrap();
    assert_eq!(found.as_array().unwrap().len(), 1, "{found}");
    assert_eq!(found[0]["topic"], json!("work"));
    let lore = call("search_knowledge", json!({"query": "lore"})).unwrap();
    assert!(
        lore[0]["content"]
            .as_str()
            .unwrap()
            .contains("Lantern Guild")
    );
    let bread = call("get_item_price", json!({"item_name": "bread"})).unwrap();
    assert_eq!(
        (bread["price"].clone(), bread["effects"]["energy"].clone()),
        (json!(3), json!(1))
    );
    let missing = call("get_item_price", json!({"item_name": "dragon"})).unwrap_err();
    assert!(
        missing
            .to_string()
            .contains("Item dragon not found in the market"),
        "{missing}"
    );
}

#[test]
fn a_member_abstains_once_and_a_proposal_keeps_its_description() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let abstain = |proposal: i64| {
        let mut args = Row::new();
        args.insert("proposal_id".into(), json!(proposal));
        args.insert("key".into(), Value::Null);
        block_on(store.rpc(&Rpc {
            function: "abstain_from_vote".into(),
            args,
        }))
    };
    let mut made = Row::new();
    made.insert("community_id".into(), json!(1));
    made.insert("title".into(), json!("A well for the tavern"));
    made.insert("description".into(), json!("Dig a well behind the tavern."));
    made.insert("key".into(), Value::Null);
    let made = block_on(store.rpc(&Rpc {
        function: "create_proposal".into(),
        args: made,
    }))
    .unwrap();
    assert_eq!(made["description"], json!("Dig a well behind the tavern."));
    let id = made["id"].as_i64().unwrap();
    let described = rows(
        &store,
        Select::from("proposal_descriptions").eq("proposal_id", id),
    );
    assert_eq!(described.len(), 1);
    assert!(abstain(id).is_ok());
    assert_eq!(
        refusal(abstain(id)),
        format!("you already voted on proposal {id}")
    );
    // The player voted on proposal 1 already: no abstaining after a vote.
    assert_eq!(refusal(abstain(1)), "you already voted on proposal 1");
    assert_eq!(rows(&store, Select::from("abstentions")).len(), 1);
}

/// Seed 000's `get_relationship(targetId)` answers for "a specific user or faction":
/// example 4 asks it of the enemy faction by name ("Chaos Horde"), example 5 of its own
/// community. The page's Dotty stands toward the Lantern Guild (1) and the Ashen
/// Circle (2) as `faction_relations` holds it.
#[test]
fn get_relationship_answers_for_a_user_a_faction_by_name_and_a_community_by_id() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let mut tools = familiar::tool::ToolRegistry::new();
    familiar::world::register_agent_tools(&mut tools, store.clone() as Rc<dyn Store>, 1);
    let call = |args: Value| {
        let call = familiar::llm::message::ToolCall {
            id: "r".into(),
            name: "get_relationship".into(),
            arguments: args.to_string(),
        };
        block_on(tools.call(&call, familiar::tool::CallContext::default()))
    };
    let player = call(json!({"target_id": 3})).unwrap();
    assert_eq!(
        (&player["affinity"], &player["kind"]),
        (&json!(40), &json!("friend"))
    );
    assert_eq!(
        call(json!({"target_id": "3"})).unwrap(),
        player,
        "an id as text"
    );
    let enemy = call(json!({"target_id": "Ashen Circle"})).unwrap();
    assert_eq!(
        enemy,
        json!({"community_id": 2, "sentiment": -40, "trust": 20, "loyalty": 0})
    );
    assert_eq!(
        call(json!({"target_id": "ashen circle"})).unwrap(),
        enemy,
        "any case"
    );
    let own = call(json!({"community_id": 1})).unwrap();
    assert_eq!(
        (&own["loyalty"], &own["sentiment"]),
        (&json!(85), &json!(70))
    );
    let faction = |args: Value| {
        let call = familiar::llm::message::ToolCall {
            id: "f".into(),
            name: "get_faction_relationship".into(),
            arguments: args.to_string(),
        };
        block_on(tools.call(&call, familiar::tool::CallContext::default())).unwrap()
    };
    assert_eq!(
        faction(json!({"community_id": 1})),
        own,
        "the same standing"
    );
    let unknown = call(json!({"target_id": "Chaos Horde"}))
        .unwrap_err()
        .to_string();
    assert!(
        unknown.contains("there is no faction named Chaos Horde"),
        "{unknown}"
    );
    let nobody = call(json!({})).unwrap_err().to_string();
    assert!(nobody.contains("name the other party"), "{nobody}");
}
