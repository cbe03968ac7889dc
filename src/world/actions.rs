//! The world's action tools: each changes the world by its rules and fails with a
//! plain reason the model can plan around ("Insufficient gold. Need 10, have 0").
//! Stats stay within 0..=100; quantities and amounts are bounded.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use super::data::CommunityArgs;
use super::rows::{Refusal, World, add, clamp_stat, delete, eq, insert, int, one, select, update};
use crate::store::{Filtered, Row, Select, row};
use crate::tool::{ToolKind, ToolRegistry};

pub fn register(registry: &mut ToolRegistry, world: &World) {
    let action = ToolKind::Action;
    add(
        registry,
        world,
        action,
        "send_message",
        "Send a direct message to a user.",
        send_message,
    );
    add(
        registry,
        world,
        action,
        "reply_to_message",
        "Reply to a message by its id.",
        reply_to_message,
    );
    add(
        registry,
        world,
        action,
        "create_post",
        "Post to the feed, or to a community's feed.",
        create_post,
    );
    add(
        registry,
        world,
        action,
        "join_battle",
        "Fight in a battle for your side, spending energy as damage.",
        join_battle,
    );
    add(
        registry,
        world,
        action,
        "buy_item",
        "Buy items from the market with gold.",
        buy_item,
    );
    add(
        registry,
        world,
        action,
        "consume_item",
        "Use items from your inventory for their effects.",
        consume_item,
    );
    add(
        registry,
        world,
        action,
        "do_work",
        "Work a job: spend energy, earn gold.",
        do_work,
    );
    add(
        registry,
        world,
        action,
        "join_community",
        "Join a community.",
        join_community,
    );
    add(
        registry,
        world,
        action,
        "leave_community",
        "Leave a community.",
        leave_community,
    );
    add(
        registry,
        world,
        action,
        "vote_on_proposal",
        "Vote for or against an open proposal.",
        vote_on_proposal,
    );
    add(
        registry,
        world,
        action,
        "create_proposal",
        "Propose something to a community you belong to.",
        create_proposal,
    );
}

#[derive(Deserialize, JsonSchema)]
pub struct MessageArgs {
    pub user_id: i64,
    pub content: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct ReplyArgs {
    pub message_id: i64,
    pub content: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct PostArgs {
    pub content: String,
    #[serde(default)]
    pub community_id: Option<i64>,
}

#[derive(Deserialize, JsonSchema)]
pub struct BattleArgs {
    pub battle_id: i64,
    /// Energy to spend, 1-100; it becomes damage.
    pub energy: i64,
}

#[derive(Deserialize, JsonSchema)]
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

#[derive(Deserialize, JsonSchema)]
pub struct WorkArgs {
    /// The job's name, e.g. `mining`.
    pub job: String,
}

#[derive(Deserialize, JsonSchema)]
pub struct VoteArgs {
    pub proposal_id: i64,
    /// true for yes, false for no.
    pub in_favour: bool,
}

#[derive(Deserialize, JsonSchema)]
pub struct ProposalArgs {
    pub community_id: i64,
    pub title: String,
}

/// Trimmed text of 1 to `max` characters.
fn text(value: &str, what: &str, max: usize) -> Result<String, Refusal> {
    let value = value.trim();
    match value.chars().count() {
        0 => Err(format!("the {what} is empty")),
        n if n > max => Err(format!("the {what} is {n} characters; at most {max}")),
        _ => Ok(value.to_owned()),
    }
}

fn bounded(value: i64, what: &str, max: i64) -> Result<i64, Refusal> {
    if (1..=max).contains(&value) {
        Ok(value)
    } else {
        Err(format!("{what} must be 1 to {max}, not {value}"))
    }
}

async fn me(w: &World) -> Result<Row, Refusal> {
    let query = Select::from("users").eq("id", w.me);
    one(&*w.store, query, "you are not in this world").await
}

/// Sets columns of the acting user, if they still hold `before` (a concurrent change
/// makes the action fail rather than be lost).
async fn set_me(w: &World, before: &Row, set: Row) -> Result<(), Refusal> {
    let mut filters = vec![eq("id", w.me)];
    for column in set.keys() {
        filters.push(eq(
            column,
            before.get(column).cloned().unwrap_or(Value::Null),
        ));
    }
    match update(&*w.store, "users", set, filters).await? {
        0 => Err("your stats changed meanwhile; look again and retry".into()),
        _ => Ok(()),
    }
}

async fn user_exists(w: &World, id: i64) -> Result<(), Refusal> {
    let query = Select::from("users").columns("id").eq("id", id);
    one(&*w.store, query, format!("there is no user {id}"))
        .await
        .map(drop)
}

async fn send_message(w: World, args: MessageArgs) -> Result<Value, Refusal> {
    let content = text(&args.content, "message", 2000)?;
    user_exists(&w, args.user_id).await?;
    let message = row([
        ("sender_id", json!(w.me)),
        ("receiver_id", json!(args.user_id)),
        ("content", json!(content)),
    ]);
    insert(&*w.store, "messages", message).await
}

async fn reply_to_message(w: World, args: ReplyArgs) -> Result<Value, Refusal> {
    let content = text(&args.content, "reply", 2000)?;
    let query = Select::from("messages").eq("id", args.message_id);
    let original = one(
        &*w.store,
        query,
        format!("there is no message {}", args.message_id),
    )
    .await?;
    let sender = int(&original, "sender_id");
    let to = if sender == w.me {
        int(&original, "receiver_id")
    } else {
        sender
    };
    let reply = row([
        ("sender_id", json!(w.me)),
        ("receiver_id", json!(to)),
        ("reply_to", json!(args.message_id)),
        ("content", json!(content)),
    ]);
    insert(&*w.store, "messages", reply).await
}

async fn create_post(w: World, args: PostArgs) -> Result<Value, Refusal> {
    let content = text(&args.content, "post", 2000)?;
    let post = row([
        ("author_id", json!(w.me)),
        ("community_id", json!(args.community_id)),
        ("content", json!(content)),
    ]);
    insert(&*w.store, "posts", post).await
}

async fn join_battle(w: World, args: BattleArgs) -> Result<Value, Refusal> {
    let amount = bounded(args.energy, "energy", 100)?;
    let battle_query = Select::from("battles").eq("id", args.battle_id);
    let battle = one(
        &*w.store,
        battle_query,
        format!("there is no battle {}", args.battle_id),
    )
    .await?;
    if battle.get("status") != Some(&json!("active")) {
        return Err(format!("battle {} is over", args.battle_id));
    }
    let memberships = select(
        &*w.store,
        Select::from("user_communities")
            .eq("user_id", w.me)
            .order("is_primary", false),
    )
    .await?;
    let side = memberships.iter().find_map(|m| {
        let community = int(m, "community_id");
        [1, 2]
            .into_iter()
            .find(|side| int(&battle, &format!("community{side}_id")) == community)
    });
    let Some(side) = side else {
        return Err(format!(
            "you belong to neither side of battle {}",
            args.battle_id
        ));
    };
    let stats = me(&w).await?;
    let energy = int(&stats, "energy");
    if energy < amount {
        return Err(format!("Insufficient energy. Need {amount}, have {energy}"));
    }
    set_me(&w, &stats, row([("energy", json!(energy - amount))])).await?;
    let mine = vec![eq("battle_id", args.battle_id), eq("user_id", w.me)];
    let fought = Select::from("battle_participants")
        .eq("battle_id", args.battle_id)
        .eq("user_id", w.me);
    let before = select(&*w.store, fought).await?;
    if let Some(earlier) = before.first() {
        let damage = int(earlier, "damage_dealt") + amount;
        update(
            &*w.store,
            "battle_participants",
            row([("damage_dealt", json!(damage))]),
            mine,
        )
        .await?;
    } else {
        let joined = row([
            ("battle_id", json!(args.battle_id)),
            ("user_id", json!(w.me)),
            ("side", json!(side)),
            ("damage_dealt", json!(amount)),
        ]);
        insert(&*w.store, "battle_participants", joined).await?;
    }
    let column = format!("community{side}_damage");
    let total = int(&battle, &column) + amount;
    update(
        &*w.store,
        "battles",
        row([(column.as_str(), json!(total))]),
        vec![eq("id", args.battle_id)],
    )
    .await?;
    Ok(
        json!({"battle_id": args.battle_id, "side": side, "damage": amount, "energy_left": energy - amount}),
    )
}

async fn buy_item(w: World, args: ItemArgs) -> Result<Value, Refusal> {
    let quantity = bounded(args.quantity, "quantity", 100)?;
    let query = Select::from("market_items")
        .eq("name", args.item_name.as_str())
        .eq("available", true);
    let item = one(
        &*w.store,
        query,
        format!("Item {} not found in the market", args.item_name),
    )
    .await?;
    let cost = int(&item, "price") * quantity;
    let stats = me(&w).await?;
    let gold = int(&stats, "gold");
    if gold < cost {
        return Err(format!("Insufficient gold. Need {cost}, have {gold}"));
    }
    set_me(&w, &stats, row([("gold", json!(gold - cost))])).await?;
    add_to_inventory(&w, &args.item_name, quantity).await?;
    Ok(
        json!({"purchased": args.item_name, "quantity": quantity, "cost": cost, "gold_left": gold - cost}),
    )
}

async fn add_to_inventory(w: &World, item: &str, quantity: i64) -> Result<(), Refusal> {
    let held = Select::from("inventory")
        .eq("user_id", w.me)
        .eq("item_name", item);
    let slot = vec![eq("user_id", w.me), eq("item_name", item)];
    match select(&*w.store, held).await?.first() {
        Some(slot_row) => {
            let total = int(slot_row, "quantity") + quantity;
            update(
                &*w.store,
                "inventory",
                row([("quantity", json!(total))]),
                slot,
            )
            .await?;
        }
        None => {
            let new = row([
                ("user_id", json!(w.me)),
                ("item_name", json!(item)),
                ("quantity", json!(quantity)),
            ]);
            insert(&*w.store, "inventory", new).await?;
        }
    }
    Ok(())
}

async fn consume_item(w: World, args: ItemArgs) -> Result<Value, Refusal> {
    let quantity = bounded(args.quantity, "quantity", 100)?;
    let held = Select::from("inventory")
        .eq("user_id", w.me)
        .eq("item_name", args.item_name.as_str());
    let have = select(&*w.store, held)
        .await?
        .first()
        .map_or(0, |r| int(r, "quantity"));
    if have < quantity {
        return Err(format!(
            "Insufficient {} in inventory: need {quantity}, have {have}",
            args.item_name
        ));
    }
    let query = Select::from("market_items").eq("name", args.item_name.as_str());
    let item = one(
        &*w.store,
        query,
        format!("Item {} is unknown", args.item_name),
    )
    .await?;
    let effects = item.get("effects").cloned().unwrap_or(Value::Null);
    let stats = me(&w).await?;
    let mut set = Row::new();
    for stat in ["energy", "health", "morale"] {
        if let Some(change) = effects.get(stat).and_then(Value::as_i64) {
            set.insert(
                stat.into(),
                clamp_stat(int(&stats, stat) + change * quantity),
            );
        }
    }
    let after = set.clone();
    if !set.is_empty() {
        set_me(&w, &stats, set).await?;
    }
    let slot = vec![
        eq("user_id", w.me),
        eq("item_name", args.item_name.as_str()),
        eq("quantity", have),
    ];
    if update(
        &*w.store,
        "inventory",
        row([("quantity", json!(have - quantity))]),
        slot,
    )
    .await?
        == 0
    {
        return Err("your inventory changed meanwhile; look again and retry".into());
    }
    Ok(json!({"consumed": args.item_name, "quantity": quantity, "effects": effects, "now": after}))
}

async fn do_work(w: World, args: WorkArgs) -> Result<Value, Refusal> {
    let query = Select::from("jobs").eq("name", args.job.as_str());
    let job = one(&*w.store, query, format!("Unknown job type: {}", args.job)).await?;
    let (pay, cost) = (int(&job, "pay"), int(&job, "energy_cost"));
    let stats = me(&w).await?;
    let (energy, gold) = (int(&stats, "energy"), int(&stats, "gold"));
    if energy < cost {
        return Err(format!("Insufficient energy. Need {cost}, have {energy}"));
    }
    let set = row([
        ("energy", json!(energy - cost)),
        ("gold", json!(gold + pay)),
    ]);
    set_me(&w, &stats, set).await?;
    Ok(
        json!({"job": args.job, "earned": pay, "energy_spent": cost, "gold": gold + pay, "energy": energy - cost}),
    )
}

async fn join_community(w: World, args: CommunityArgs) -> Result<Value, Refusal> {
    let query = Select::from("communities")
        .columns("id,name")
        .eq("id", args.community_id);
    let community = one(
        &*w.store,
        query,
        format!("there is no community {}", args.community_id),
    )
    .await?;
    let member = row([
        ("user_id", json!(w.me)),
        ("community_id", json!(args.community_id)),
    ]);
    insert(&*w.store, "user_communities", member)
        .await
        .map_err(|_| {
            format!(
                "you already belong to {}",
                community.get("name").cloned().unwrap_or_default()
            )
        })?;
    Ok(json!({"joined": community}))
}

async fn leave_community(w: World, args: CommunityArgs) -> Result<Value, Refusal> {
    let membership = vec![eq("user_id", w.me), eq("community_id", args.community_id)];
    match delete(&*w.store, "user_communities", membership).await? {
        0 => Err(format!(
            "you are not a member of community {}",
            args.community_id
        )),
        _ => Ok(json!({"left": args.community_id})),
    }
}

async fn vote_on_proposal(w: World, args: VoteArgs) -> Result<Value, Refusal> {
    let query = Select::from("proposals").eq("id", args.proposal_id);
    let proposal = one(
        &*w.store,
        query,
        format!("there is no proposal {}", args.proposal_id),
    )
    .await?;
    if proposal.get("status") != Some(&json!("open")) {
        return Err(format!("proposal {} is closed", args.proposal_id));
    }
    let vote = row([
        ("proposal_id", json!(args.proposal_id)),
        ("user_id", json!(w.me)),
        ("in_favour", json!(args.in_favour)),
    ]);
    insert(&*w.store, "votes", vote)
        .await
        .map_err(|_| format!("you already voted on proposal {}", args.proposal_id))
}

async fn create_proposal(w: World, args: ProposalArgs) -> Result<Value, Refusal> {
    let title = text(&args.title, "title", 200)?;
    let membership = Select::from("user_communities")
        .eq("user_id", w.me)
        .eq("community_id", args.community_id);
    one(
        &*w.store,
        membership,
        format!("you are not a member of community {}", args.community_id),
    )
    .await?;
    let proposal = row([
        ("community_id", json!(args.community_id)),
        ("author_id", json!(w.me)),
        ("title", json!(title)),
    ]);
    insert(&*w.store, "proposals", proposal).await
}
