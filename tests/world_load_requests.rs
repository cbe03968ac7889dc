//! bench/world_load replays the page's requests by hand (players.mjs reads them from
//! bench/world_load/requests.json); here each data tool runs through the runtime's own
//! PostgREST store client against a recording HTTP peer, and the request it sends must
//! be the one the bench replays, so the bench cannot drift from the page. Likewise the
//! actions' rpc calls, as the player and through `act_as`.
#![cfg(not(target_arch = "wasm32"))]
#![allow(
    clippy::unwrap_used,
    clippy::panic,
    clippy::indexing_slicing,
    clippy::disallowed_methods
)]

mod common;

use std::rc::Rc;

use common::ScriptedHttp;
use familiar::base::clock::ManualClock;
use familiar::llm::message::ToolCall;
use familiar::store::{PostgrestStore, Store};
use familiar::tool::{CallContext, ToolRegistry};
use futures::executor::block_on;
use serde_json::Value;

const BASE: &str = "http://127.0.0.1:3000/rest/v1/";
const ME: i64 = 7;
const OTHER: i64 = 9;
const COMMUNITY: i64 = 2;
const WORD: &str = "bread";

fn requests() -> Value {
    serde_json::from_str(include_str!("../bench/world_load/requests.json")).unwrap()
}

/// A template of requests.json with this test's values.
fn fill(template: &str, action: &str) -> String {
    template
        .replace("{me}", &ME.to_string())
        .replace("{other}", &OTHER.to_string())
        .replace("{community}", &COMMUNITY.to_string())
        .replace("{word}", WORD)
        .replace("{action}", action)
}

/// The world's tools over a PostgREST store whose peer records every request and
/// answers each with `[]` (what the tool makes of it does not matter here). As the
/// player, or as the player's agent `agent`.
fn world_tools(agent: Option<i64>) -> (ToolRegistry, Rc<ScriptedHttp>) {
    let http = Rc::new(ScriptedHttp::default());
    for _ in 0..4 {
        http.reply(200, "[]");
    }
    let store: Rc<dyn Store> = Rc::new(PostgrestStore::new(
        BASE,
        "anon-key",
        http.clone(),
        Rc::new(ManualClock::default()),
        Box::new(|| 0.5),
    ));
    let mut tools = ToolRegistry::new();
    match agent {
        None => familiar::world::register_tools(&mut tools, store, ME),
        Some(agent) => familiar::world::register_agent_tools(&mut tools, store, agent),
    }
    (tools, http)
}

fn call(tools: &ToolRegistry, name: &str, args: &str, key: Option<&str>) {
    let call = ToolCall {
        id: "w".into(),
        name: name.into(),
        arguments: args.into(),
    };
    let cx = CallContext {
        idempotency_key: key.map(Into::into),
        ..CallContext::default()
    };
    // Only the request is under test: the answer `[]` may be refused as a row.
    let _ = block_on(tools.call(&call, cx));
}

#[test]
fn each_look_up_the_bench_replays_is_the_request_the_store_client_sends() {
    let requests = requests();
    let reads = requests["reads"].as_object().unwrap();
    assert_eq!(reads.len(), 8, "the bench's look-ups");
    for (name, read) in reads {
        let (tools, http) = world_tools(None);
        call(
            &tools,
            name,
            &fill(read["args"].as_str().unwrap(), ""),
            None,
        );
        let sent = http.requests.borrow();
        assert_eq!(sent.len(), 1, "{name}: one request");
        assert_eq!(sent[0].method, "GET", "{name}");
        let want = format!("{BASE}{}", fill(read["path"].as_str().unwrap(), ""));
        assert_eq!(
            sent[0].url, want,
            "{name}: the bench replays another request"
        );
    }
}

#[test]
fn the_actions_the_bench_replays_are_the_rpc_calls_the_store_client_sends() {
    let requests = requests();
    let actions = &requests["actions"];
    let keys = |body: &Option<String>| -> Vec<String> {
        let body: Value = serde_json::from_str(body.as_deref().unwrap()).unwrap();
        let mut keys: Vec<String> = body.as_object().unwrap().keys().cloned().collect();
        keys.sort_unstable();
        keys
    };
    // The player: rpc/<action> with the action's arguments and its ledger key.
    let (tools, http) = world_tools(None);
    call(&tools, "do_work", r#"{"job": "farming"}"#, Some("load-7-0"));
    let sent = http.requests.borrow();
    let player = &actions["player"];
    assert_eq!(sent[0].method, "POST");
    let path = fill(player["path"].as_str().unwrap(), "do_work");
    assert_eq!(sent[0].url, format!("{BASE}{path}"));
    let body = player["body"].as_array().unwrap();
    assert_eq!(
        body,
        &["...args", "key"],
        "the bench adds the key to the arguments"
    );
    assert_eq!(keys(&sent[0].body), ["job", "key"]);
    drop(sent);
    // An agent: rpc/act_as with the agent, the action, its arguments and the key.
    let (tools, http) = world_tools(Some(OTHER));
    call(&tools, "do_work", r#"{"job": "farming"}"#, Some("load-7-1"));
    let sent = http.requests.borrow();
    let agent = &actions["agent"];
    assert_eq!(
        sent[0].url,
        format!("{BASE}{}", agent["path"].as_str().unwrap())
    );
    let mut want: Vec<String> = agent["body"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_owned())
        .collect();
    want.sort_unstable();
    assert_eq!(keys(&sent[0].body), want);
    let body: Value = serde_json::from_str(sent[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(body["agent"], OTHER);
    assert_eq!(body["action"], "do_work");
    assert_eq!(body["key"], "load-7-1");
}
