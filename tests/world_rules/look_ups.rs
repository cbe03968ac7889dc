//! Look-ups: the knowledge table answers a search and item prices are looked up by
//! name, and `get_relationship` answers for a user, a faction by name and a community
//! by id.

use super::*;

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
            arguments: args.to_string().into(),
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
            arguments: args.to_string().into(),
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
            arguments: args.to_string().into(),
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

/// With no standing, `get_relationship` answers as the seed's does (`data || {
/// sentiment: 0, trust: 0, loyalty: 0 }`), never null: Dotty has no row for Brannoc
/// (a user's answer keeps its affinity and kind too), and the player none for the
/// Ashen Circle.
#[test]
fn get_relationship_with_no_standing_answers_the_seeds_zeros() {
    let store = world();
    familiar::world::functions::play_as(&store, familiar::world::PLAYER_ID).unwrap();
    let ask = |me: i64, tool: &str, args: Value| {
        let mut tools = familiar::tool::ToolRegistry::new();
        familiar::world::register_agent_tools(&mut tools, store.clone() as Rc<dyn Store>, me);
        let call = familiar::llm::message::ToolCall {
            id: "r".into(),
            name: tool.into(),
            arguments: args.to_string().into(),
        };
        block_on(tools.call(&call, familiar::tool::CallContext::default())).unwrap()
    };
    assert_eq!(
        ask(1, "get_relationship", json!({"target_id": 2})),
        json!({"target_id": 2, "affinity": 0, "kind": "stranger", "sentiment": 0, "trust": 0,
               "loyalty": 0})
    );
    let none = json!({"community_id": 2, "sentiment": 0, "trust": 0, "loyalty": 0});
    assert_eq!(
        ask(3, "get_relationship", json!({"target_id": "Ashen Circle"})),
        none
    );
    assert_eq!(
        ask(3, "get_faction_relationship", json!({"community_id": 2})),
        none
    );
}

/// The world's look-ups read rows that actions change: a run keeps their answers until
/// its next action (seed 000's tool caching); its actions are never kept.
#[test]
fn the_worlds_look_ups_are_kept_within_a_run_and_its_actions_are_not() {
    let store = world();
    let mut tools = familiar::tool::ToolRegistry::new();
    familiar::world::register_agent_tools(&mut tools, store as Rc<dyn Store>, 4);
    for info in tools.catalogue() {
        let name = info.spec.name.as_str();
        let data = info.kind == familiar::tool::ToolKind::Data;
        assert_eq!(tools.caches(name), data, "{name}");
    }
    assert!(tools.caches("get_my_stats") && !tools.caches("buy_item"));
}

/// Residents share the world's store: an action of one is a write every other's run
/// sees (`ToolRegistry::writes_seen`), so their kept look-ups are read again; a look-up
/// writes nothing and keeps them.
#[test]
fn another_residents_action_moves_the_writes_a_run_watches_and_a_look_up_does_not() {
    use familiar::llm::message::ToolCall;
    use familiar::tool::{CallContext, ToolRegistry};

    let store = world();
    familiar::world::functions::play_as(&store, 3).unwrap();
    let shared = store as Rc<dyn Store>;
    let mut mira = ToolRegistry::new();
    familiar::world::register_agent_tools(&mut mira, Rc::clone(&shared), 4);
    let mut dotty = ToolRegistry::new();
    familiar::world::register_agent_tools(&mut dotty, Rc::clone(&shared), 1);
    let call = |tools: &ToolRegistry, name: &str, args: Value| {
        let call = ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: args.to_string().into(),
        };
        block_on(tools.call(&call, CallContext::default()))
    };
    let before = mira.writes_seen();
    call(&mira, "get_my_stats", json!({})).unwrap();
    call(&dotty, "get_market_items", json!({})).unwrap();
    assert_eq!(mira.writes_seen(), before, "look-ups write nothing");
    let worked = call(&dotty, "do_work", json!({"job": "farming"})).unwrap();
    assert_eq!(worked["earned"], 30, "{worked}");
    assert!(
        mira.writes_seen() > before,
        "Dotty's work is a write Mira's run sees"
    );
}
