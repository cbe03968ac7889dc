//! The world's look-ups and actions: every look-up that returns another player's text
//! makes the next action ask, after reading a post every world action asks first, a
//! look-up of the agent's own rows leaves the person free to act unasked, and a chat
//! session that read a post waits for the person before posting.

use familiar::base::clock::FixedClock;
use familiar::llm::ToolSpec;
use familiar::run::AgentRun;
use familiar::run::driver::{Seams, Stop, drive};
use familiar::store::{Filtered, LocalStore, Select, Store};
use familiar::tool::CallContext;
use familiar::world;
use futures::executor::block_on;

use super::*;

const MARK: &str = "MARKED-BY-ANOTHER-PLAYER";

/// The seed world with every free-text column a player writes (names, descriptions,
/// posts, messages, proposals, memories) carrying [`MARK`], played as user 3.
fn marked_world() -> Rc<dyn Store> {
    let mut seed: Value = serde_json::from_str(world::SEED).unwrap();
    let columns = [
        ("users", "username"),
        ("communities", "name"),
        ("communities", "description"),
        ("posts", "content"),
        ("messages", "content"),
        ("proposals", "title"),
        ("memories", "content"),
    ];
    for (table, column) in columns {
        for row in seed[table].as_array_mut().unwrap() {
            let text = row[column].as_str().unwrap().to_owned();
            row[column] = json!(format!("{text} {MARK}"));
        }
    }
    seed["messages"].as_array_mut().unwrap().push(json!({
        "id": 2, "sender_id": 2, "receiver_id": 3, "content": format!("Pay me. {MARK}")
    }));
    seed["memories"].as_array_mut().unwrap().push(json!({
        "id": 2, "user_id": 3, "content": format!("brannoc said: {MARK}"), "importance": 5
    }));
    let clock = FixedClock(Instant {
        epoch_ms: 1_795_338_000_000,
        utc_offset_minutes: 0,
    });
    let store = LocalStore::new(world::schemas().unwrap()).with_clock(Rc::new(clock));
    let store = world::functions::install(store);
    store.seed(&seed.to_string()).unwrap();
    world::functions::play_as(&store, 3).unwrap();
    Rc::new(store)
}

fn world_tools(store: &Rc<dyn Store>) -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    world::register_tools(&mut tools, Rc::clone(store), 3);
    tools
}

/// Arguments for any world look-up: the fields its schema names, from one set that
/// reaches the marked rows (user 2, community 2, battle 1, a remembered saying).
fn arguments_for(spec: &ToolSpec) -> String {
    let all = json!({"user_id": 2, "community_id": 2, "target_id": 2, "battle_id": 1,
                     "query": "brannoc said", "limit": 20, "item_name": "ale"});
    let mut args = serde_json::Map::new();
    if let Some(properties) = spec.parameters["properties"].as_object() {
        for name in properties.keys() {
            args.insert(name.clone(), all[name].clone());
        }
    }
    Value::Object(args).to_string()
}

/// Drives a chat run (the person asked for nothing in particular) whose model makes
/// `first`, then `then`; where it stops.
fn look_then_act(tools: &ToolRegistry, first: ToolCall, then: ToolCall) -> Stop {
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![first])
        .push_tool_calls(vec![then])
        .push_text("done");
    let mut run = AgentRun::new(
        "You act in the world for the person.",
        Vec::new(),
        Observation::chat("see what is new"),
        tools.catalogue(),
    );
    let seams = Seams {
        llm: &model,
        tools,
        clock: &FrozenClock::at(1_000),
        host: None,
        checkpoint: None,
        relay: None,
    };
    block_on(drive(&mut run, &seams, &mut |_| {}))
}

#[test]
fn every_world_look_up_that_returns_another_players_text_makes_the_next_action_ask() {
    let store = marked_world();
    let tools = world_tools(&store);
    let reply = call("a1", "send_message", r#"{"user_id": 2, "content": "ok"}"#);
    let mut marked = Vec::new();
    for info in tools.catalogue() {
        if info.kind != ToolKind::Data {
            continue;
        }
        let look = call("l1", &info.spec.name, &arguments_for(&info.spec));
        let result = block_on(tools.call(&look, CallContext::default()));
        let result = result.unwrap_or_else(|e| panic!("{}: {e}", info.spec.name));
        if !result.to_string().contains(MARK) {
            continue;
        }
        marked.push(info.spec.name.clone());
        let stop = look_then_act(&tools, look, reply.clone());
        assert_eq!(
            stop,
            Stop::AwaitingApproval(reply.clone()),
            "`{}` returned another player's text, and `send_message` ran unasked",
            info.spec.name
        );
    }
    assert_eq!(
        marked,
        [
            "get_battle_details",
            "get_community_members",
            "get_conversation_history",
            "get_recent_posts",
            "get_user_community",
            "get_user_profile",
            "search_memories",
        ],
        "the look-ups that reach players' text, in name order"
    );
    let sent = block_on(store.select(&Select::from("messages").eq("content", "ok"))).unwrap();
    assert!(sent.is_empty(), "no message was sent");
}

#[test]
fn after_reading_a_post_every_world_action_asks_first() {
    let tools = world_tools(&marked_world());
    let actions: Vec<String> = tools
        .catalogue()
        .into_iter()
        .filter(|t| t.kind == ToolKind::Action)
        .map(|t| t.spec.name)
        .collect();
    assert!(actions.len() >= 10, "{actions:?}");
    for action in actions {
        let act = call("a1", &action, "{}");
        let stop = look_then_act(&tools, call("l1", "get_recent_posts", "{}"), act.clone());
        assert_eq!(stop, Stop::AwaitingApproval(act), "`{action}` ran unasked");
    }
}

#[test]
fn a_look_up_of_the_agents_own_rows_leaves_the_person_free_to_act_unasked() {
    let store = marked_world();
    let tools = world_tools(&store);
    let buy = call("a1", "buy_item", r#"{"item_name": "bread"}"#);
    let stop = look_then_act(&tools, call("l1", "get_market_items", "{}"), buy);
    assert!(matches!(stop, Stop::Done(_)), "{stop:?}");
    let bought = Select::from("inventory")
        .eq("user_id", 3)
        .eq("item_name", "bread");
    let rows = block_on(store.select(&bought)).unwrap();
    assert_eq!(
        rows[0]["quantity"], 3,
        "bought: the person asked, nothing untrusted read"
    );
}

#[test]
fn a_chat_session_that_read_a_post_waits_for_the_person_before_posting() {
    let store = marked_world();
    let storage = Rc::new(VolatileStorage::new());
    let model = Rc::new(ScriptedModel::new());
    let post = call("p1", "create_post", r#"{"content": "Brannoc is right."}"#);
    model
        .push_tool_calls(vec![call("l1", "get_recent_posts", "{}")])
        .push_tool_calls(vec![post])
        .push_text("Posted.");
    let session = session(&storage, &model, world_tools(&store));
    let mut pool = LocalPool::new();
    let sent = spawn_send(&pool, &session, "what is new in the feed?");
    pool.run_until_stalled();
    assert_eq!(asked(&session), ["create_post"]);
    let posts = || block_on(store.select(&Select::from("posts").eq("author_id", 3))).unwrap();
    assert!(posts().is_empty(), "nothing posted while it waits");
    session
        .approve(&session.pending()[0].call.id, false)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(sent.borrow().clone().unwrap().unwrap().text(), "Posted.");
    assert_eq!(posts().len(), 1, "posted once the person said yes");
}
