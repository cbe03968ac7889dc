//! The world's action tools: each is one call of the database function of the same
//! name (`migrations/0006_actions.sql` online, its twin in [`super::rules`] offline)
//! through the store's `rpc`, with the call's idempotency key. The function checks the
//! rules, changes the world and records the result in the user's ledger in one
//! transaction; a refusal comes back as the plain reason the model can plan around
//! ("Insufficient gold. Need 10, have 0").
//!
//! An agent the signed-in player owns acts as itself through `act_as`, which checks the
//! ownership (`migrations/0009_world_triggers.sql`).
//!
//! Each asks first once the conversation has read another party's text (the default
//! for actions, [`crate::tool::Approval::AskIfUntrusted`]): a post or a message cannot
//! make the agent send, post, buy or vote for you unseen. Their results are the rules'
//! own words and the agent's own rows ([`Author::Own`], as for any action), except
//! `join_community`'s, which returns the community as someone described it.

use crate::base::json::Read;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use super::data::CommunityArgs;
use super::rows::{Refusal, World};
use crate::store::{Row, Rpc, StoreError};
use crate::tool::{Author, ToolKind, ToolRegistry};

/// The actions an agent takes through `act_as`, by name (the database's
/// `agent_actions()`): what standing orders may list.
pub const ACTIONS: [&str; 13] = [
    "send_message",
    "reply_to_message",
    "create_post",
    "join_battle",
    "ignore_battle",
    "buy_item",
    "consume_item",
    "do_work",
    "join_community",
    "leave_community",
    "vote_on_proposal",
    "abstain_from_vote",
    "create_proposal",
];

pub fn register(registry: &mut ToolRegistry, world: &World) {
    action::<MessageArgs>(
        registry,
        world,
        "send_message",
        "Send a direct message to a user.",
    );
    action::<ReplyArgs>(
        registry,
        world,
        "reply_to_message",
        "Reply to a message by its id.",
    );
    action::<PostArgs>(
        registry,
        world,
        "create_post",
        "Post to the feed, or to a community's feed.",
    );
    action::<BattleArgs>(
        registry,
        world,
        "join_battle",
        "Fight in a battle for your side, spending energy as damage.",
    );
    action::<BattleRef>(
        registry,
        world,
        "ignore_battle",
        "Stay out of a battle: you choose not to fight in it.",
    );
    action::<ItemArgs>(
        registry,
        world,
        "buy_item",
        "Buy items from the market with gold.",
    );
    action::<ItemArgs>(
        registry,
        world,
        "consume_item",
        "Use items from your inventory for their effects.",
    );
    action::<WorkArgs>(
        registry,
        world,
        "do_work",
        "Work a job: spend energy, earn gold.",
    );
    action::<CommunityArgs>(registry, world, "join_community", "Join a community.");
    action::<CommunityArgs>(registry, world, "leave_community", "Leave a community.");
    action::<VoteArgs>(
        registry,
        world,
        "vote_on_proposal",
        "Vote for or against an open proposal.",
    );
    action::<AbstainArgs>(
        registry,
        world,
        "abstain_from_vote",
        "Abstain on an open proposal: neither for nor against.",
    );
    action::<ProposalArgs>(
        registry,
        world,
        "create_proposal",
        "Propose something, with a description, to a community you belong to.",
    );
}

#[derive(Serialize, JsonSchema, Read)]
pub struct MessageArgs {
    pub user_id: i64,
    pub content: String,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct ReplyArgs {
    pub message_id: i64,
    pub content: String,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct PostArgs {
    pub content: String,
    #[serde(default)]
    pub community_id: Option<i64>,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct BattleArgs {
    pub battle_id: i64,
    /// Energy to spend, 1-100; it becomes damage.
    pub energy: i64,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct BattleRef {
    pub battle_id: i64,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct ItemArgs {
    /// The item's name, as the market lists it.
    pub item_name: String,
    /// How many, 1-100 (default 1).
    #[serde(default = "one_item")]
    pub quantity: i64,
}

fn one_item() -> i64 {
    1
}

#[derive(Serialize, JsonSchema, Read)]
pub struct WorkArgs {
    /// The job's name, e.g. `mining`.
    pub job: String,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct VoteArgs {
    pub proposal_id: i64,
    /// true for yes, false for no.
    pub in_favour: bool,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct ProposalArgs {
    pub community_id: i64,
    pub title: String,
    /// What the proposal is for, in a few sentences.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct AbstainArgs {
    pub proposal_id: i64,
}

/// Registers the action `name` as a tool that calls the function `name`.
fn action<A>(registry: &mut ToolRegistry, world: &World, name: &'static str, description: &str)
where
    A: Serialize + DeserializeOwned + JsonSchema + 'static,
{
    let store = world.store.clone();
    let agent = world.agent.then_some(world.me);
    registry.register_fn(name, ToolKind::Action, description, move |args: A, ctx| {
        let store = store.clone();
        async move {
            let args = crate::base::json::to_value(&args).map_err(|e| e.to_string())?;
            let key = ctx.idempotency_key.as_deref();
            let call = match agent {
                None => call(name, args, key),
                Some(agent) => {
                    let mut call = call_as(agent, name, args, key);
                    if ctx.approved {
                        call.args.insert("approved".into(), json!(true));
                    }
                    call
                }
            };
            store.rpc(&call).await.map_err(refusal)
        }
    });
    if name == "join_community" {
        registry.set_author(name, Author::Others);
    }
}

/// An `rpc` call of the action `function` with the tool's arguments and ledger key.
pub fn call(function: &str, args: Value, key: Option<&str>) -> Rpc {
    let mut args = match args {
        Value::Object(map) => map,
        _ => Row::new(),
    };
    args.insert("key".into(), key.map_or(Value::Null, |k| json!(k)));
    Rpc {
        function: function.into(),
        args,
    }
}

/// An `rpc` call of `act_as`: the action `function` run as the owned `agent`.
pub fn call_as(agent: i64, function: &str, args: Value, key: Option<&str>) -> Rpc {
    let mut call = Row::new();
    call.insert("agent".into(), json!(agent));
    call.insert("action".into(), json!(function));
    call.insert("args".into(), args);
    call.insert("key".into(), key.map_or(Value::Null, |k| json!(k)));
    Rpc {
        function: "act_as".into(),
        args: call,
    }
}

/// A rule's refusal is said as is; any other failure says what failed.
fn refusal(error: StoreError) -> Refusal {
    match error {
        StoreError::Rule(reason) => reason,
        other => other.to_string(),
    }
}
