//! One suite of the world's tools for any store, signed in as a new player: every
//! action through its function, the rules' refusals, apply-once by key, and the
//! character transactions. Run over the local store natively, and over both stores
//! in the browser, where the two logs must be equal.

use std::rc::Rc;

use familiar::base::clock::Instant;
use familiar::llm::message::ToolCall;
use familiar::store::{Row, Rpc, Store};
use familiar::tool::ledger::Ledger;
use familiar::tool::{CallContext, ToolRegistry};
use familiar::workflow::{TransactionStatus, Transactions};
use serde_json::{Map, Value, json};

/// The columns that differ between two stores for the same story: ids and stamps
/// the database hands out, and the name a new player got.
const VARYING: [&str; 6] = [
    "id",
    "created_at",
    "updated_at",
    "auth_id",
    "username",
    "user_id",
];

/// Columns that name the acting user, whose id differs between stores.
const ACTOR: [&str; 2] = ["sender_id", "author_id"];

/// `value` with the varying columns left out and the acting user `me` named "me", at
/// any depth.
pub fn steady(value: Value, me: i64) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .filter(|(k, _)| !VARYING.contains(&k.as_str()))
                .map(|(k, v)| match v {
                    v if ACTOR.contains(&k.as_str()) && v == json!(me) => (k, json!("me")),
                    v => (k, steady(v, me)),
                })
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| steady(v, me)).collect()),
        other => other,
    }
}

fn outcome<T: Into<Value>, E: std::fmt::Display>(result: Result<T, E>, me: i64) -> Value {
    match result {
        Ok(value) => json!({ "ok": steady(value.into(), me) }),
        Err(error) => json!({ "error": error.to_string() }),
    }
}

/// Plays the suite as the signed-in user `sub` of `store`; each step's name and
/// outcome, with what varies between stores left out.
pub async fn world_suite(store: Rc<dyn Store>, sub: &str) -> Vec<(String, Value)> {
    let mut log = Vec::new();
    let mut args = Row::new();
    args.insert("username".into(), json!("conformance"));
    let enter = Rpc {
        function: "enter_world".into(),
        args,
    };
    let entered = store.rpc(&enter).await;
    let me = entered
        .as_ref()
        .ok()
        .and_then(|user| user.get("id"))
        .and_then(Value::as_i64)
        .unwrap_or_default();
    log.push(("enter the world".to_owned(), outcome(entered, me)));
    let again = store
        .rpc(&enter)
        .await
        .map(|user| user.get("id") == Some(&json!(me)));
    log.push(("enter again: the same user".to_owned(), outcome(again, me)));

    let mut tools = ToolRegistry::new();
    familiar::world::register_tools(&mut tools, Rc::clone(&store), me);
    tools.with_ledger(Ledger::new(Rc::clone(&store), sub));
    let steps: Vec<(&str, &str, Value, Option<&str>)> = vec![
        (
            "999 draughts",
            "buy_item",
            json!({"item_name": "healing draught", "quantity": 999}),
            None,
        ),
        (
            "beyond the purse",
            "buy_item",
            json!({"item_name": "healing draught", "quantity": 2}),
            None,
        ),
        (
            "not on sale",
            "buy_item",
            json!({"item_name": "old map"}),
            None,
        ),
        (
            "buy bread",
            "buy_item",
            json!({"item_name": "bread", "quantity": 2}),
            Some("buy-1"),
        ),
        (
            "the same purchase again",
            "buy_item",
            json!({"item_name": "bread", "quantity": 2}),
            Some("buy-1"),
        ),
        ("stats after buying once", "get_my_stats", json!({}), None),
        ("inventory", "get_my_inventory", json!({}), None),
        ("work", "do_work", json!({"job": "mining"}), Some("work-1")),
        (
            "eat the bread",
            "consume_item",
            json!({"item_name": "bread", "quantity": 2}),
            Some("eat-1"),
        ),
        (
            "eat bread that is gone",
            "consume_item",
            json!({"item_name": "bread"}),
            Some("eat-2"),
        ),
        (
            "an unknown job",
            "do_work",
            json!({"job": "smuggling"}),
            Some("work-2"),
        ),
        (
            "fight for no side",
            "join_battle",
            json!({"battle_id": 1, "energy": 10}),
            Some("fight-0"),
        ),
        (
            "join the Lantern Guild",
            "join_community",
            json!({"community_id": 1}),
            Some("join-1"),
        ),
        (
            "join it again",
            "join_community",
            json!({"community_id": 1}),
            Some("join-2"),
        ),
        (
            "two billion damage",
            "join_battle",
            json!({"battle_id": 1, "energy": 2_000_000_000}),
            Some("fight-1"),
        ),
        (
            "fight",
            "join_battle",
            json!({"battle_id": 1, "energy": 10}),
            Some("fight-2"),
        ),
        (
            "propose where not a member",
            "create_proposal",
            json!({"community_id": 2, "title": "Yield"}),
            Some("propose-1"),
        ),
        (
            "propose",
            "create_proposal",
            json!({"community_id": 1, "title": "  More lanterns  "}),
            Some("propose-2"),
        ),
        (
            "vote twice on the old proposal",
            "vote_on_proposal",
            json!({"proposal_id": 1, "in_favour": true}),
            Some("vote-1"),
        ),
        (
            "message no one",
            "send_message",
            json!({"user_id": 987_654, "content": "hello?"}),
            Some("message-1"),
        ),
        (
            "an empty message",
            "send_message",
            json!({"user_id": 1, "content": "  "}),
            Some("message-2"),
        ),
        (
            "message Dotty",
            "send_message",
            json!({"user_id": 1, "content": "A pint, please."}),
            Some("message-3"),
        ),
        (
            "post",
            "create_post",
            json!({"content": "Lanterns lit.", "community_id": 1}),
            Some("post-1"),
        ),
        (
            "leave the guild",
            "leave_community",
            json!({"community_id": 1}),
            Some("leave-1"),
        ),
        (
            "leave it again",
            "leave_community",
            json!({"community_id": 1}),
            Some("leave-2"),
        ),
        ("stats at the end", "get_my_stats", json!({}), None),
    ];
    for (n, (name, tool, args, key)) in steps.into_iter().enumerate() {
        let call = ToolCall {
            id: format!("call-{n}").into(),
            name: tool.into(),
            arguments: args.to_string().into(),
        };
        let cx = CallContext {
            idempotency_key: key.map(Into::into),
            approved: false,
            caller: None,
        };
        log.push((name.to_owned(), outcome(tools.call(&call, cx).await, me)));
    }
    let ledger = Ledger::new(Rc::clone(&store), sub);
    let recorded = ledger.applied("buy-1").await.map(|r| r.unwrap_or_default());
    log.push((
        "the ledger holds the purchase".to_owned(),
        outcome(recorded, me),
    ));
    let elsewhere = Ledger::new(Rc::clone(&store), "someone-else");
    let hidden = elsewhere.applied("buy-1").await.map(|r| json!(r.is_none()));
    log.push((
        "another user's key is not mine".to_owned(),
        outcome(hidden, me),
    ));

    // A character transaction: begun pending, moved on to completed.
    let dotty = Transactions {
        store: &*store,
        character: "dotty",
    };
    let now = Instant {
        epoch_ms: 1_795_320_964_000,
        utc_offset_minutes: 0,
    };
    let mut context = Map::new();
    context.insert("drink".into(), json!("ale"));
    let begun = dotty
        .create(sub, "drink_order", "awaiting_payment", context.clone(), now)
        .await;
    let pending = dotty.pending(sub).await;
    log.push((
        "a transaction begins".to_owned(),
        outcome(
            begun
                .as_ref()
                .map(|t| json!([t.state, t.status]))
                .map_err(|e| e.to_string()),
            me,
        ),
    ));
    log.push((
        "it is pending".to_owned(),
        outcome(pending.map(|t| json!(t.map(|t| t.state))), me),
    ));
    if let Ok(begun) = begun {
        let done = dotty
            .change(
                &begun,
                "completed",
                TransactionStatus::Completed,
                context,
                now,
            )
            .await
            .map(|t| json!(t.map(|t| [json!(t.state), json!(t.status)])));
        log.push(("it completes".to_owned(), outcome(done, me)));
    }
    log.push((
        "nothing is pending after".to_owned(),
        outcome(dotty.pending(sub).await.map(|t| json!(t.is_none())), me),
    ));
    log
}
