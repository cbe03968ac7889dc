//! Each player their own agents, and each agent its own ledger, in the local store (the
//! twin of migrations/0011_agent_copies.sql and 0012_claim_agents.sql; tests/sql/agents.sql asserts the same
//! against PostgreSQL): a newcomer claims copies of the starter agents once, acts as
//! them and never as another player's; the same ledger key used by two agents is two
//! actions, each applied once, through the rpc functions and through the residents'
//! tools alike.
#![allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]

use std::rc::Rc;

use familiar::llm::message::ToolCall;
use familiar::store::{Filtered, LocalStore, Row, Rpc, Select, Store, StoreError};
use familiar::tool::CallContext;
use familiar::world::functions::{ledger_owner, play_as};
use familiar::world::residents::resident;
use familiar::world::triggers::{Claim, agents, claimed};
use futures::executor::block_on;
use serde_json::{Value, json};

fn world() -> Rc<LocalStore> {
    let store =
        familiar::world::functions::install(LocalStore::new(familiar::world::schemas().unwrap()));
    store.seed(familiar::world::SEED).unwrap();
    Rc::new(store)
}

fn rpc(store: &LocalStore, function: &str, args: Value) -> Result<Value, StoreError> {
    let Value::Object(args) = args else {
        panic!("arguments are an object")
    };
    block_on(store.rpc(&Rpc {
        function: function.into(),
        args,
    }))
}

fn act_as(store: &LocalStore, agent: i64, action: &str, args: Value, key: Option<&str>) -> Value {
    rpc(
        store,
        "act_as",
        json!({"agent": agent, "action": action, "args": args, "key": key}),
    )
    .unwrap()
}

fn rows(store: &LocalStore, select: Select) -> Vec<Row> {
    store.run_select(&select).unwrap()
}

fn user(store: &LocalStore, id: i64) -> Row {
    rows(store, Select::from("users").eq("id", id))
        .pop()
        .unwrap()
}

fn purse(store: &LocalStore, id: i64) -> (i64, i64) {
    let row = user(store, id);
    (
        row["gold"].as_i64().unwrap(),
        row["energy"].as_i64().unwrap(),
    )
}

/// `sub` signed in and entered; their world user's id.
fn enter(store: &LocalStore, sub: &str) -> i64 {
    store.sign_in_as(Some(sub.into()));
    rpc(store, "enter_world", json!({"username": sub})).unwrap()["id"]
        .as_i64()
        .unwrap()
}

fn claim(store: &LocalStore) -> Vec<Claim> {
    serde_json::from_value(rpc(store, "claim_agents", json!({})).unwrap()).unwrap()
}

fn copy_of(claims: &[Claim], template: i64) -> i64 {
    claims
        .iter()
        .find(|c| c.template_id == template)
        .unwrap()
        .agent_id
}

#[test]
fn a_newcomer_claims_copies_of_the_starters_once() {
    let store = world();
    store.sign_in_as(Some("newcomer".into()));
    let early = rpc(&store, "claim_agents", json!({})).unwrap_err();
    assert!(matches!(early, StoreError::PermissionDenied(_)), "{early}");
    let me = enter(&store, "newcomer");
    let claims = claim(&store);
    let templates: Vec<i64> = claims.iter().map(|c| c.template_id).collect();
    assert_eq!(templates, [1, 2, 4]);
    let (dotty, mira) = (copy_of(&claims, 1), copy_of(&claims, 4));
    assert!(
        claims.iter().all(|c| c.agent_id > 4),
        "new users: {claims:?}"
    );
    assert_eq!(claims[2].username, format!("mira-{me}"));
    // Again: the same copies, no new user.
    let users = rows(&store, Select::from("users")).len();
    assert_eq!(claim(&store), claims);
    assert_eq!(rows(&store, Select::from("users")).len(), users);
    // A copy has its starter's stats, communities, standing and inventory.
    assert_eq!(purse(&store, mira), (0, 45));
    assert_eq!(user(&store, mira)["is_agent"], json!(true));
    let communities = rows(
        &store,
        Select::from("user_communities")
            .eq("user_id", mira)
            .order("community_id", true),
    );
    assert_eq!(communities.len(), 2);
    let standing = Select::from("faction_relations").eq("user_id", mira);
    assert_eq!(rows(&store, standing).len(), 2);
    let ale = rows(&store, Select::from("inventory").eq("user_id", dotty));
    assert_eq!(
        (ale[0]["item_name"].clone(), ale[0]["quantity"].clone()),
        (json!("ale"), json!(12))
    );
    // Dotty's friend is her player now; Mira's acquaintance is the player's Dotty.
    let friend = rows(&store, Select::from("relationships").eq("user_id", dotty));
    assert_eq!(
        (friend[0]["target_id"].clone(), friend[0]["kind"].clone()),
        (json!(me), json!("friend"))
    );
    let known = rows(&store, Select::from("relationships").eq("user_id", mira));
    assert_eq!(known[0]["target_id"], json!(dotty));
    let owned = Select::from("agent_owners").eq("owner_id", me);
    assert_eq!(rows(&store, owned).len(), 3);
}

#[test]
fn a_newcomer_acts_as_their_copies_and_never_as_anothers_agents() {
    let store = world();
    enter(&store, "first");
    let mira = copy_of(&claim(&store), 4);
    let worked = act_as(&store, mira, "do_work", json!({"job": "farming"}), None);
    assert_eq!(worked["gold"], json!(30));
    assert_eq!(purse(&store, mira), (30, 35));
    assert_eq!(purse(&store, 4), (0, 45), "the seed's Mira is untouched");
    let call = json!({"agent": 4, "action": "do_work", "args": {"job": "farming"}});
    let refused = rpc(&store, "act_as", call).unwrap_err();
    assert!(
        matches!(&refused, StoreError::PermissionDenied(m) if m == "you do not own agent 4"),
        "{refused}"
    );
    // A second newcomer gets copies of their own and cannot act as the first's.
    enter(&store, "second");
    let theirs = claim(&store);
    assert!(theirs.iter().all(|c| c.agent_id != mira));
    let call = json!({"agent": mira, "action": "do_work", "args": {"job": "farming"}});
    assert!(matches!(
        rpc(&store, "act_as", call),
        Err(StoreError::PermissionDenied(_))
    ));
    assert_eq!(purse(&store, mira), (30, 35));
}

#[test]
fn the_seeded_player_keeps_the_starters_and_no_copy_is_made() {
    let store = world();
    play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let users = rows(&store, Select::from("users")).len();
    let ids: Vec<i64> = claim(&store).iter().map(|c| c.agent_id).collect();
    assert_eq!(ids, [1, 2, 4]);
    assert_eq!(rows(&store, Select::from("users")).len(), users);
    // Their roster is the seed's agents as they are.
    let theirs = claimed(&claim(&store));
    assert_eq!(theirs, agents());
}

#[test]
fn the_same_key_used_by_two_agents_is_two_actions_each_applied_once() {
    let store = world();
    play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let farm = json!({"job": "farming"});
    act_as(&store, 1, "do_work", farm.clone(), Some("twin-key"));
    act_as(&store, 4, "do_work", farm.clone(), Some("twin-key"));
    act_as(&store, 4, "do_work", farm.clone(), Some("twin-key"));
    act_as(&store, 1, "do_work", farm, Some("twin-key"));
    assert_eq!(purse(&store, 1), (70, 70), "Dotty worked once");
    assert_eq!(purse(&store, 4), (30, 35), "Mira worked once");
    let records = rows(
        &store,
        Select::from("applied_actions")
            .eq("key", "twin-key")
            .order("user_id", true),
    );
    let owners: Vec<&Value> = records.iter().map(|r| &r["user_id"]).collect();
    assert_eq!(owners, [&json!("agent:1"), &json!("agent:4")]);
    assert_eq!(ledger_owner(4), "agent:4");
    // The player's own call under that key is a third action.
    rpc(
        &store,
        "do_work",
        json!({"job": "farming", "key": "twin-key"}),
    )
    .unwrap();
    assert_eq!(purse(&store, 3), (55, 90));
}

/// `who`'s resident calls `do_work` with the ledger key `key`.
fn resident_works(
    store: &Rc<LocalStore>,
    who: &familiar::world::triggers::WorldAgent,
    key: &str,
) -> Value {
    let shared: Rc<dyn Store> = store.clone();
    let agent = resident(who, &shared, None);
    let call = ToolCall {
        id: "c1".into(),
        name: "do_work".into(),
        arguments: json!({"job": "farming"}).to_string().into(),
    };
    let context = CallContext {
        idempotency_key: Some(key.into()),
        approved: false,
        caller: None,
    };
    block_on(agent.tools.call(&call, context)).unwrap()
}

#[test]
fn two_residents_tools_with_one_key_act_once_each_in_their_own_ledgers() {
    let store = world();
    enter(&store, "newcomer");
    let mine = claimed(&claim(&store));
    let (dotty, mira) = (&mine[0], &mine[2]);
    assert_eq!(
        resident_works(&store, dotty, "turn-1-step-1")["gold"],
        json!(70)
    );
    assert_eq!(
        resident_works(&store, mira, "turn-1-step-1")["gold"],
        json!(30)
    );
    // A retry of the same call (a resumed run) answers from the agent's ledger.
    assert_eq!(
        resident_works(&store, mira, "turn-1-step-1")["gold"],
        json!(30)
    );
    assert_eq!(purse(&store, mira.id), (30, 35));
    assert_eq!(purse(&store, dotty.id), (70, 70));
    let mira_ledger = Select::from("applied_actions").eq("user_id", ledger_owner(mira.id).as_str());
    assert_eq!(rows(&store, mira_ledger).len(), 1);
    assert_eq!(purse(&store, 4), (0, 45), "the seed's Mira is untouched");
}

fn set_orders(store: &LocalStore, agent: i64, orders: Value) -> Result<Value, StoreError> {
    rpc(
        store,
        "set_standing_orders",
        json!({"agent": agent, "orders": orders}),
    )
}

fn refusal(result: Result<Value, StoreError>) -> String {
    match result {
        Err(error) => error.to_string(),
        Ok(answer) => panic!("refused, but it answered {answer}"),
    }
}

/// An owner's standing orders in the page's world, held as the database holds them
/// (tests/sql/standing_orders.sql): set only by the owner and in their shape; an
/// action, a battle or a day's gold outside them refused, the call undone; a call the
/// owner approved run past them; read back for the engine; lifted with null.
#[test]
fn standing_orders_hold_an_agent_in_the_pages_world_as_the_database_holds_them() {
    let store = world();
    play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let mira = 4;
    for (orders, named) in [
        (json!({"actions": ["give_gold"]}), "give_gold"),
        (json!({"gold_per_day": -1}), "gold_per_day"),
        (json!({"spend": 3}), "spend"),
        (json!({"battles": [0]}), "ids"),
        (json!(["do_work"]), "standing orders"),
    ] {
        let refused = refusal(set_orders(&store, mira, orders.clone()));
        assert!(refused.contains(named), "{orders}: {refused}");
    }
    let orders = json!({"actions": ["do_work", "buy_item", "join_battle"],
                        "gold_per_day": 5, "battles": [2]});
    assert_eq!(set_orders(&store, mira, orders.clone()).unwrap(), orders);

    let outside = json!({"agent": mira, "action": "consume_item", "args": {"item_name": "bread"}});
    let refused = refusal(rpc(&store, "act_as", outside));
    assert!(
        refused.contains("mira's standing orders do not let it consume_item"),
        "{refused}"
    );
    let battle = json!({"agent": mira, "action": "join_battle",
                        "args": {"battle_id": 1, "energy": 5}});
    let refused = refusal(rpc(&store, "act_as", battle));
    assert!(refused.contains("battle 1 is not one of them"), "{refused}");
    assert_eq!(purse(&store, mira), (0, 45), "nothing changed");

    // Earning is not spending; one loaf (3 gold) is within 5 a day, a second is not.
    act_as(&store, mira, "do_work", json!({"job": "mining"}), None);
    act_as(
        &store,
        mira,
        "buy_item",
        json!({"item_name": "bread"}),
        None,
    );
    assert_eq!(purse(&store, mira), (47, 25));
    let again = json!({"agent": mira, "action": "buy_item", "args": {"item_name": "bread"}});
    let refused = refusal(rpc(&store, "act_as", again));
    assert!(
        refused.contains("spend 5 gold a day, and 2 of it is left"),
        "{refused}"
    );
    assert_eq!(
        purse(&store, mira),
        (47, 25),
        "the refused purchase was undone"
    );

    // A call its owner approved runs past them, and counts against no bound.
    for (action, args) in [
        ("consume_item", json!({"item_name": "bread"})),
        ("buy_item", json!({"item_name": "bread"})),
    ] {
        let approved = json!({"agent": mira, "action": action, "args": args, "approved": true});
        rpc(&store, "act_as", approved).unwrap();
    }
    assert_eq!(purse(&store, mira), (44, 26));

    // The engine reads them back, for the agent they belong to.
    let kept = block_on(familiar::world::orders::kept(&*store, &agents())).unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0].0, "Mira");
    assert_eq!(kept[0].1.gold_per_day, Some(5));

    // Another player can neither set nor lift them.
    enter(&store, "eve");
    let refused = refusal(set_orders(&store, mira, Value::Null));
    assert!(refused.contains("you do not own agent 4"), "{refused}");
    play_as(&store, familiar::world::PLAYER_ID).unwrap();
    assert_eq!(set_orders(&store, mira, Value::Null).unwrap(), Value::Null);
    assert!(
        block_on(familiar::world::orders::kept(&*store, &agents()))
            .unwrap()
            .is_empty()
    );
    act_as(
        &store,
        mira,
        "consume_item",
        json!({"item_name": "bread"}),
        None,
    );
}
