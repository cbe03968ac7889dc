//! The world's data tools: read-only look-ups the model makes to decide (seed 000's
//! "the AI decides what it needs"). Those whose rows only the world's rules write
//! (your stats, inventory and relationships, battles, the market, jobs) are marked
//! [`Author::Own`]; the rest carry text players wrote (posts, messages, names,
//! community descriptions, memories) and make the conversation untrusted once read.

use crate::base::json::Read;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Value, json};

use super::rows::{Refusal, World, add, one, select};
use crate::store::{Filter, Filtered, Op, Select};
use crate::tool::{Author, NoArgs, ToolKind, ToolRegistry};

pub fn register(registry: &mut ToolRegistry, world: &World) {
    let data = ToolKind::Data;
    add(
        registry,
        world,
        data,
        "get_my_stats",
        "Your own health, energy, gold and morale.",
        my_stats,
    );
    add(
        registry,
        world,
        data,
        "get_my_inventory",
        "The items you carry and how many.",
        my_inventory,
    );
    add(
        registry,
        world,
        data,
        "get_user_profile",
        "A user's public profile by id.",
        user_profile,
    );
    add(
        registry,
        world,
        data,
        "get_user_community",
        "A user's primary community, with their loyalty to it (0-100).",
        user_community,
    );
    add(
        registry,
        world,
        data,
        "get_community_members",
        "The members of a community, with their loyalty.",
        community_members,
    );
    add(
        registry,
        world,
        data,
        "get_relationship",
        "How you stand toward another user (affinity -100 to 100, and kind) or toward a \
         faction (a community, by its name as target_id or by community_id: sentiment \
         -100 to 100, trust and loyalty 0-100); all 0 when you have no standing.",
        relationship,
    );
    add(
        registry,
        world,
        data,
        "get_faction_relationship",
        "How you stand toward a faction (a community): sentiment (-100 to 100), trust \
         and loyalty (0-100); all 0 when you have no standing with it.",
        faction_relationship,
    );
    add(
        registry,
        world,
        data,
        "get_battle_details",
        "A battle: its two communities, status and damage so far.",
        battle_details,
    );
    add(
        registry,
        world,
        data,
        "get_active_battles",
        "The active battles a community fights in.",
        active_battles,
    );
    add(
        registry,
        world,
        data,
        "get_market_items",
        "The items for sale, with prices and effects.",
        market_items,
    );
    add(
        registry,
        world,
        data,
        "get_item_price",
        "One market item's price and effects, by name.",
        item_price,
    );
    add(
        registry,
        world,
        data,
        "get_available_jobs",
        "The jobs you can do, with their pay and energy cost.",
        jobs,
    );
    add(
        registry,
        world,
        data,
        "search_memories",
        "Your memories that mention some words, most important first.",
        search_memories,
    );
    add(
        registry,
        world,
        data,
        "search_knowledge",
        "The world's rules and lore that mention some words.",
        search_knowledge,
    );
    add(
        registry,
        world,
        data,
        "get_conversation_history",
        "Your recent direct messages with a user, newest first.",
        conversation_history,
    );
    add(
        registry,
        world,
        data,
        "get_recent_posts",
        "Recent posts, by a user or in a community.",
        recent_posts,
    );
    for name in OWN {
        registry.set_author(name, Author::Own);
    }
}

/// The look-ups whose rows no player can write (no row-level policy lets them: see
/// `migrations/0004_security.sql`) and which return no names or free text of others.
const OWN: [&str; 9] = [
    "get_faction_relationship",
    "search_knowledge",
    "get_my_stats",
    "get_item_price",
    "get_my_inventory",
    "get_relationship",
    "get_active_battles",
    "get_market_items",
    "get_available_jobs",
];

#[derive(JsonSchema, Read)]
pub struct UserArgs {
    /// The user's id.
    pub user_id: i64,
}

#[derive(Serialize, JsonSchema, Read)]
pub struct CommunityArgs {
    /// The community's id.
    pub community_id: i64,
}

/// The other party of a relationship, as the seed's `get_relationship(targetId)`
/// names it: a user by id, or a faction by name ("Chaos Horde").
#[derive(Debug, Clone, PartialEq, JsonSchema)]
#[serde(untagged)]
pub enum Party {
    /// A user's id (a number, or a number written as text).
    User(i64),
    /// A faction (a community) by its name.
    Faction(String),
}

impl<'de> serde::Deserialize<'de> for Party {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        match Value::deserialize(deserializer)? {
            Value::Number(id) => id
                .as_i64()
                .map(Party::User)
                .ok_or_else(|| D::Error::custom("a user's id is a whole number")),
            Value::String(name) => Ok(match name.trim().parse() {
                Ok(id) => Party::User(id),
                Err(_) => Party::Faction(name.trim().to_owned()),
            }),
            _ => Err(D::Error::custom(
                "target_id is a user's id or a faction's name",
            )),
        }
    }
}

#[derive(JsonSchema, Read)]
pub struct TargetArgs {
    /// The other party: a user's id, or a faction (a community) by its name.
    #[serde(default)]
    pub target_id: Option<Party>,
    /// A faction (a community) by its id, instead of `target_id`.
    #[serde(default)]
    pub community_id: Option<i64>,
}

#[derive(JsonSchema, Read)]
pub struct BattleIdArgs {
    /// The battle's id.
    pub battle_id: i64,
}

#[derive(JsonSchema, Read)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
    /// At most this many (1-20, default 5).
    #[serde(default)]
    pub limit: Option<u64>,
}

#[derive(JsonSchema, Read)]
pub struct HistoryArgs {
    pub user_id: i64,
    /// At most this many (1-50, default 10).
    #[serde(default)]
    pub limit: Option<u64>,
}

#[derive(JsonSchema, Read)]
pub struct PostsArgs {
    #[serde(default)]
    pub user_id: Option<i64>,
    #[serde(default)]
    pub community_id: Option<i64>,
    /// At most this many (1-20, default 5).
    #[serde(default)]
    pub limit: Option<u64>,
}

fn rows(rows: Vec<crate::store::Row>) -> Value {
    Value::Array(rows.into_iter().map(Value::Object).collect())
}

async fn my_stats(w: World, _: NoArgs) -> Result<Value, Refusal> {
    let query = Select::from("users")
        .columns("health,energy,gold,morale")
        .eq("id", w.me);
    Ok(Value::Object(
        one(&*w.store, query, "you are not in this world").await?,
    ))
}

async fn my_inventory(w: World, _: NoArgs) -> Result<Value, Refusal> {
    let query = Select::from("inventory")
        .columns("item_name,quantity")
        .eq("user_id", w.me)
        .gt("quantity", 0)
        .order("item_name", true);
    Ok(rows(select(&*w.store, query).await?))
}

async fn user_profile(w: World, args: UserArgs) -> Result<Value, Refusal> {
    let query = Select::from("users")
        .columns("id,username,is_agent,health,energy,morale")
        .eq("id", args.user_id);
    let missing = format!("there is no user {}", args.user_id);
    Ok(Value::Object(one(&*w.store, query, missing).await?))
}

async fn user_community(w: World, args: UserArgs) -> Result<Value, Refusal> {
    let query = Select::from("user_communities")
        .columns("loyalty,communities(id,name,description)")
        .eq("user_id", args.user_id)
        .eq("is_primary", true);
    let found = select(&*w.store, query.maybe_single()).await?;
    Ok(found.into_iter().next().map_or(Value::Null, Value::Object))
}

async fn community_members(w: World, args: CommunityArgs) -> Result<Value, Refusal> {
    let query = Select::from("user_communities")
        .columns("loyalty,is_primary,users(id,username,morale)")
        .eq("community_id", args.community_id)
        .order("user_id", true);
    Ok(rows(select(&*w.store, query).await?))
}

/// How the agent stands toward a user or a faction: the seed's one look-up for both
/// (example 4 asks it of the enemy faction, example 5 of its own community). With no
/// standing it answers as the seed's does, `{sentiment: 0, trust: 0, loyalty: 0}`
/// (a user's also with affinity 0, a stranger), never null.
async fn relationship(w: World, args: TargetArgs) -> Result<Value, Refusal> {
    match (args.community_id, args.target_id) {
        (Some(community_id), _) => faction_relationship(w, CommunityArgs { community_id }).await,
        (None, Some(Party::Faction(name))) => {
            let community_id = faction_named(&w, &name).await?;
            faction_relationship(w, CommunityArgs { community_id }).await
        }
        (None, Some(Party::User(user))) => user_relationship(&w, user).await,
        (None, None) => Err(
            "name the other party: target_id (a user's id or a faction's name) or \
             community_id"
                .into(),
        ),
    }
}

async fn user_relationship(w: &World, target: i64) -> Result<Value, Refusal> {
    let query = Select::from("relationships")
        .columns("target_id,affinity,kind")
        .eq("user_id", w.me)
        .eq("target_id", target);
    let found = select(&*w.store, query.maybe_single()).await?;
    Ok(found.into_iter().next().map_or_else(
        || {
            json!({"target_id": target, "affinity": 0, "kind": "stranger", "sentiment": 0,
                   "trust": 0, "loyalty": 0})
        },
        Value::Object,
    ))
}

/// The community named `name`: as written, else ignoring case.
async fn faction_named(w: &World, name: &str) -> Result<i64, Refusal> {
    let exact = Select::from("communities")
        .columns("id")
        .eq("name", name)
        .order("id", true)
        .limit(1);
    let mut found = select(&*w.store, exact).await?;
    if found.is_empty() {
        let any_case = Select::from("communities")
            .columns("id")
            .ilike("name", name)
            .order("id", true)
            .limit(1);
        found = select(&*w.store, any_case).await?;
    }
    found
        .first()
        .and_then(|row| row.get("id")?.as_i64())
        .ok_or_else(|| format!("there is no faction named {name}"))
}

async fn faction_relationship(w: World, args: CommunityArgs) -> Result<Value, Refusal> {
    let query = Select::from("faction_relations")
        .columns("community_id,sentiment,trust,loyalty")
        .eq("user_id", w.me)
        .eq("community_id", args.community_id);
    let found = select(&*w.store, query.maybe_single()).await?;
    Ok(found.into_iter().next().map_or_else(
        || json!({"community_id": args.community_id, "sentiment": 0, "trust": 0, "loyalty": 0}),
        Value::Object,
    ))
}

async fn battle_details(w: World, args: BattleIdArgs) -> Result<Value, Refusal> {
    let query = Select::from("battles")
        .columns(
            "id,status,community1_damage,community2_damage,\
             community1:communities!battles_community1_id_fkey(id,name),\
             community2:communities!battles_community2_id_fkey(id,name)",
        )
        .eq("id", args.battle_id);
    let missing = format!("there is no battle {}", args.battle_id);
    Ok(Value::Object(one(&*w.store, query, missing).await?))
}

async fn active_battles(w: World, args: CommunityArgs) -> Result<Value, Refusal> {
    let query = Select::from("battles")
        .or(vec![
            Filter::compare("community1_id", Op::Eq, args.community_id),
            Filter::compare("community2_id", Op::Eq, args.community_id),
        ])
        .eq("status", "active")
        .order("id", false);
    Ok(rows(select(&*w.store, query).await?))
}

async fn market_items(w: World, _: NoArgs) -> Result<Value, Refusal> {
    let query = Select::from("market_items")
        .columns("name,price,effects")
        .eq("available", true)
        .order("name", true);
    Ok(rows(select(&*w.store, query).await?))
}

#[derive(JsonSchema, Read)]
pub struct ItemNameArgs {
    /// The item's name, as the market lists it.
    pub item_name: String,
}

async fn item_price(w: World, args: ItemNameArgs) -> Result<Value, Refusal> {
    let query = Select::from("market_items")
        .columns("name,price,effects,available")
        .eq("name", args.item_name.as_str());
    let missing = format!("Item {} not found in the market", args.item_name);
    Ok(Value::Object(one(&*w.store, query, missing).await?))
}

async fn jobs(w: World, _: NoArgs) -> Result<Value, Refusal> {
    let query = Select::from("jobs").order("name", true);
    Ok(rows(select(&*w.store, query).await?))
}

async fn search_memories(w: World, args: SearchArgs) -> Result<Value, Refusal> {
    let words: Vec<Filter> = args
        .query
        .split_whitespace()
        .filter(|word| word.chars().count() > 2)
        .map(|word| {
            let word: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
            Filter::compare("content", Op::Ilike, format!("*{word}*"))
        })
        .collect();
    let mut query = Select::from("memories")
        .columns("content,importance")
        .eq("user_id", w.me)
        .order("importance", false)
        .order("id", false)
        .limit(args.limit.unwrap_or(5).clamp(1, 20));
    if !words.is_empty() {
        query = query.or(words);
    }
    Ok(rows(select(&*w.store, query).await?))
}

async fn search_knowledge(w: World, args: SearchArgs) -> Result<Value, Refusal> {
    let mut words = Vec::new();
    for word in args.query.split_whitespace() {
        let word: String = word.chars().filter(|c| c.is_alphanumeric()).collect();
        if word.chars().count() > 2 {
            words.push(Filter::compare("content", Op::Ilike, format!("*{word}*")));
            words.push(Filter::compare("topic", Op::Ilike, format!("*{word}*")));
        }
    }
    let mut query = Select::from("knowledge")
        .columns("topic,content")
        .order("id", true)
        .limit(args.limit.unwrap_or(3).clamp(1, 20));
    if !words.is_empty() {
        query = query.or(words);
    }
    Ok(rows(select(&*w.store, query).await?))
}

async fn conversation_history(w: World, args: HistoryArgs) -> Result<Value, Refusal> {
    let between = |from: i64, to: i64| {
        Filter::And(vec![
            Filter::compare("sender_id", Op::Eq, from),
            Filter::compare("receiver_id", Op::Eq, to),
        ])
    };
    let query = Select::from("messages")
        .columns("id,sender_id,receiver_id,reply_to,content")
        .or(vec![
            between(w.me, args.user_id),
            between(args.user_id, w.me),
        ])
        .order("id", false)
        .limit(args.limit.unwrap_or(10).clamp(1, 50));
    Ok(rows(select(&*w.store, query).await?))
}

async fn recent_posts(w: World, args: PostsArgs) -> Result<Value, Refusal> {
    let mut query = Select::from("posts")
        .columns("id,author_id,community_id,content")
        .order("id", false)
        .limit(args.limit.unwrap_or(5).clamp(1, 20));
    if let Some(user) = args.user_id {
        query = query.eq("author_id", user);
    }
    if let Some(community) = args.community_id {
        query = query.eq("community_id", community);
    }
    Ok(rows(select(&*w.store, query).await?))
}
