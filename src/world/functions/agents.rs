//! Agents a player owns, offline: the twin of `act_as`, `owns_agent` and the agent
//! branch of `acting_user()` in `migrations/0009_world_triggers.sql`, and of
//! `claim_agents()` and `ledger_owner()` in `migrations/0012_claim_agents.sql`. A
//! player acts as an agent only when `agent_owners` says they own it (or it is
//! themselves); only the game writes that table. A new player claims their own copies
//! of the starter agents; an agent's actions are recorded in its own ledger, and held
//! to its owner's standing orders (`set_standing_orders`, the twin of
//! `migrations/0018_standing_orders.sql`).

use std::collections::HashMap;

use serde_json::Value;

use serde_json::json;

use super::super::actions::ACTIONS;
use super::{Outcome, Rule, exists, first, insert, int, not_entered};
use crate::base::clock::Instant;
use crate::run::orders::StandingOrders;
use crate::store::local::Function;
use crate::store::{Delete, Filtered, LocalStore, Row, Select, StoreError};

/// The ledger an action run as `agent` through `act_as` is recorded in (the database's
/// `ledger_owner()`): the agent's own, so the same key used by two agents is two
/// actions.
pub fn ledger_owner(agent: i64) -> String {
    format!("agent:{agent}")
}

/// The agent's user row, when `player` (the signed-in user's row) owns it.
pub(super) fn owned(store: &LocalStore, player: &Row, agent: i64) -> Result<Row, StoreError> {
    let owner = int(player, "id");
    let owns = agent == owner
        || first(
            store,
            Select::from("agent_owners")
                .eq("agent_id", agent)
                .eq("owner_id", owner),
        )?
        .is_some();
    if !owns {
        return Err(StoreError::PermissionDenied(format!(
            "you do not own agent {agent}"
        )));
    }
    first(store, Select::from("users").eq("id", agent))?
        .ok_or_else(|| StoreError::Rule(format!("there is no user {agent}")))
}

/// `act_as(agent, action, args, key)`: runs the action `action` as `agent`.
pub(super) fn act_as(rules: Vec<(&'static str, Rule)>) -> Function {
    let rules: HashMap<&'static str, Rule> = rules.into_iter().collect();
    std::rc::Rc::new(move |store: &LocalStore, call: &Row| {
        let agent = call
            .get("agent")
            .and_then(Value::as_i64)
            .ok_or_else(|| StoreError::Invalid("act_as needs the agent's id".into()))?;
        let action = call
            .get("action")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let sub = store.signed_in().ok_or_else(not_entered)?;
        let player = first(store, Select::from("users").eq("auth_id", sub.as_str()))?
            .ok_or_else(not_entered)?;
        owned(store, &player, agent)?;
        let rule = rules
            .get(action)
            .ok_or_else(|| StoreError::Rule(format!("there is no action {action}")))?;
        let mut args = match call.get("args") {
            None | Some(Value::Null) => Row::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(_) => {
                return Err(StoreError::Rule(format!(
                    "the arguments of {action} must be an object"
                )));
            }
        };
        args.remove("key");
        // A call its owner approved runs past the orders (0021_approved_agent_calls.sql).
        let approved = call.get("approved").and_then(Value::as_bool) == Some(true);
        let orders = orders_of(store, agent)?.filter(|_| !approved);
        if let Some(orders) = &orders {
            obey(store, orders, agent, action, &args)?;
        }
        if let Some(key) = call.get("key").filter(|k| !k.is_null()) {
            args.insert("key".into(), key.clone());
        }
        let before = first(store, Select::from("users").eq("id", agent))?.unwrap_or_default();
        let result = rule(store, &args, Some(agent))?;
        if let Some(orders) = &orders {
            spend_within(store, orders, agent, &before)?;
        }
        Ok(result)
    })
}

/// `set_standing_orders(agent, orders)`: sets (or, with null, lifts) the standing
/// orders of an agent the signed-in player owns, held to the same shape; answers them
/// as kept. The twin of `migrations/0018_standing_orders.sql`.
pub(super) fn set_standing_orders(store: &LocalStore, args: &Row) -> Outcome {
    let agent = args
        .get("agent")
        .and_then(Value::as_i64)
        .ok_or_else(|| StoreError::Invalid("set_standing_orders needs the agent's id".into()))?;
    let sub = store.signed_in().ok_or_else(not_entered)?;
    let player =
        first(store, Select::from("users").eq("auth_id", sub.as_str()))?.ok_or_else(not_entered)?;
    let owner = Select::from("agent_owners")
        .eq("agent_id", agent)
        .eq("owner_id", int(&player, "id"));
    if !exists(store, owner)? {
        return Err(StoreError::PermissionDenied(format!(
            "you do not own agent {agent}"
        )));
    }
    let kept = Delete {
        table: "standing_orders".into(),
        filters: Vec::new(),
        returning: false,
    }
    .eq("agent_id", agent);
    store.run_delete(&kept)?;
    let orders = match args.get("orders") {
        None | Some(Value::Null) => return Ok(Value::Null),
        Some(orders) => orders.clone(),
    };
    let read = StandingOrders::read(orders.clone())
        .map_err(|e| StoreError::Rule(format!("standing orders: {e}")))?;
    if let Some(unknown) = read
        .actions
        .iter()
        .flatten()
        .find(|a| !ACTIONS.contains(&a.as_str()))
    {
        return Err(StoreError::Rule(format!(
            "standing orders' actions are among {}, not {unknown}",
            ACTIONS.join(", ")
        )));
    }
    let mut row = Row::new();
    row.insert("agent_id".into(), json!(agent));
    row.insert("orders".into(), orders.clone());
    insert(store, "standing_orders", row)?;
    Ok(orders)
}

/// The standing orders kept for `agent`, if any.
fn orders_of(store: &LocalStore, agent: i64) -> Result<Option<StandingOrders>, StoreError> {
    let Some(row) = first(store, Select::from("standing_orders").eq("agent_id", agent))? else {
        return Ok(None);
    };
    let orders = row.get("orders").cloned().unwrap_or(Value::Null);
    StandingOrders::read(orders)
        .map(Some)
        .map_err(|e| StoreError::Server(format!("agent {agent}'s standing orders: {e}")))
}

/// Refuses `action` when `agent`'s orders do not allow it: its name, its community
/// (a vote's, its proposal's), its battle, its recipient (a reply's, the message's
/// other party); in the database's words.
fn obey(
    store: &LocalStore,
    orders: &StandingOrders,
    agent: i64,
    action: &str,
    args: &Row,
) -> Result<(), StoreError> {
    let who = name_of(store, agent)?;
    let refuse = |why: String| Err(StoreError::Rule(format!("{who}'s standing orders {why}")));
    let number = |key: &str| args.get(key).and_then(Value::as_i64);
    let listed = |list: &[Value]| {
        let said = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        list.iter().map(said).collect::<Vec<_>>().join(", ")
    };
    if let Some(actions) = &orders.actions
        && !actions.iter().any(|a| a == action)
    {
        return refuse(format!(
            "do not let it {action}; they allow {}",
            if actions.is_empty() {
                "no action".into()
            } else {
                actions.join(", ")
            }
        ));
    }
    let in_community = [
        "create_post",
        "join_community",
        "leave_community",
        "create_proposal",
        "vote_on_proposal",
        "abstain_from_vote",
    ];
    if let Some(allowed) = &orders.communities
        && in_community.contains(&action)
    {
        let community = match action {
            "vote_on_proposal" | "abstain_from_vote" => {
                let proposal = number("proposal_id").unwrap_or_default();
                first(store, Select::from("proposals").eq("id", proposal))?
                    .map(|p| int(&p, "community_id"))
            }
            _ => number("community_id"),
        };
        if !community.is_some_and(|c| allowed.contains(&c)) {
            let ids: Vec<Value> = allowed.iter().map(|c| json!(c)).collect();
            let named = community.map_or("no community".into(), |c| c.to_string());
            return refuse(format!(
                "keep it to communities {}; {named} is not one of them",
                listed(&ids)
            ));
        }
    }
    if let Some(allowed) = &orders.battles
        && matches!(action, "join_battle" | "ignore_battle")
        && !number("battle_id").is_some_and(|b| allowed.contains(&b))
    {
        let ids: Vec<Value> = allowed.iter().map(|b| json!(b)).collect();
        return refuse(format!(
            "keep it to battles {}; battle {} is not one of them",
            listed(&ids),
            number("battle_id").unwrap_or_default()
        ));
    }
    if let Some(allowed) = &orders.message
        && matches!(action, "send_message" | "reply_to_message")
    {
        let recipient = if action == "send_message" {
            number("user_id")
        } else {
            let message = number("message_id").unwrap_or_default();
            first(store, Select::from("messages").eq("id", message))?.map(|m| {
                match int(&m, "sender_id") {
                    sender if sender == agent => int(&m, "receiver_id"),
                    sender => sender,
                }
            })
        };
        let name = match recipient {
            Some(id) => Some(name_of(store, id)?),
            None => None,
        };
        let allowed_one = |a: &Value| {
            a.as_i64().is_some_and(|a| Some(a) == recipient)
                || a.as_str().zip(name.as_deref()).is_some_and(|(a, n)| a == n)
        };
        if recipient.is_none() || !allowed.iter().any(allowed_one) {
            return refuse(format!(
                "let it message only {}; {} is not one of them",
                listed(allowed),
                name.unwrap_or_else(|| "that user".into())
            ));
        }
    }
    Ok(())
}

/// Counts what the call took from `agent` (its row `before`) against its orders'
/// daily gold and energy, or refuses the call (the store then undoes it).
fn spend_within(
    store: &LocalStore,
    orders: &StandingOrders,
    agent: i64,
    before: &Row,
) -> Result<(), StoreError> {
    let after = first(store, Select::from("users").eq("id", agent))?.unwrap_or_default();
    let took = |stat: &str| (int(before, stat) - int(&after, stat)).max(0);
    let (gold, energy) = (took("gold"), took("energy"));
    if gold == 0 && energy == 0 {
        return Ok(());
    }
    let mut row = Row::new();
    row.insert("agent_id".into(), json!(agent));
    row.insert("gold".into(), json!(gold));
    row.insert("energy".into(), json!(energy));
    insert(store, "agent_spending", row)?;
    let day_ago = Instant {
        epoch_ms: store.now().epoch_ms - DAY_MS,
        utc_offset_minutes: 0,
    };
    let spent = store.run_select(
        &Select::from("agent_spending")
            .eq("agent_id", agent)
            .gt("spent_at", day_ago.rfc3339()),
    )?;
    for (resource, most, now) in [
        ("gold", orders.gold_per_day, gold),
        ("energy", orders.energy_per_day, energy),
    ] {
        let total: i64 = spent.iter().map(|s| int(s, resource)).sum();
        if let Some(most) = most
            && total > most
        {
            let left = (most - (total - now)).max(0);
            return Err(StoreError::Rule(format!(
                "{}'s standing orders let it spend {most} {resource} a day, and {left} of it is left",
                name_of(store, agent)?
            )));
        }
    }
    Ok(())
}

const DAY_MS: i64 = 86_400_000;

fn name_of(store: &LocalStore, id: i64) -> Result<String, StoreError> {
    Ok(first(store, Select::from("users").eq("id", id))?
        .and_then(|u| u.get("username").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| format!("user {id}")))
}

/// `claim_agents()`: the signed-in player's agents, one per starter, as
/// `[{template_id, agent_id, username}]`; copies are made on the first call (see
/// `migrations/0012_claim_agents.sql` for what a copy takes from its starter).
pub(super) fn claim_agents(store: &LocalStore, _args: &Row) -> Outcome {
    let sub = store.signed_in().ok_or_else(not_entered)?;
    let me =
        first(store, Select::from("users").eq("auth_id", sub.as_str()))?.ok_or_else(not_entered)?;
    let my_id = int(&me, "id");
    let starters = store.run_select(&Select::from("starter_agents").order("agent_id", true))?;
    let mut made = Vec::new();
    let mut fresh = Vec::new();
    for starter in starters {
        let template = int(&starter, "agent_id");
        let owned = template == my_id
            || exists(
                store,
                Select::from("agent_owners")
                    .eq("agent_id", template)
                    .eq("owner_id", my_id),
            )?;
        let copied = first(
            store,
            Select::from("agent_copies")
                .eq("owner_id", my_id)
                .eq("template_id", template),
        )?;
        let agent = match (owned, copied) {
            (true, _) => template,
            (false, Some(copy)) => int(&copy, "agent_id"),
            (false, None) => {
                let copy = copy_of(store, template, &me)?;
                fresh.push((copy, template));
                copy
            }
        };
        let name = first(store, Select::from("users").eq("id", agent))?
            .and_then(|row| row.get("username").cloned())
            .unwrap_or_default();
        made.push(json!({"template_id": template, "agent_id": agent, "username": name}));
    }
    for (copy, template) in fresh {
        relate(store, copy, template, my_id)?;
    }
    Ok(Value::Array(made))
}

/// A new agent owned by `me`, copied from the starter `template`: its stats,
/// communities, standing toward the factions and inventory.
fn copy_of(store: &LocalStore, template: i64, me: &Row) -> Result<i64, StoreError> {
    let starter = first(store, Select::from("users").eq("id", template))?
        .ok_or_else(|| StoreError::Rule(format!("there is no user {template}")))?;
    let my_id = int(me, "id");
    let base = starter
        .get("username")
        .and_then(Value::as_str)
        .unwrap_or("agent");
    let mut name = format!("{base}-{my_id}");
    if exists(store, Select::from("users").eq("username", name.as_str()))? {
        name = format!("{name}-{template}");
    }
    let mut user = Row::new();
    user.insert("username".into(), json!(name));
    user.insert("is_agent".into(), json!(true));
    for stat in ["health", "energy", "morale", "gold"] {
        user.insert(stat.into(), json!(int(&starter, stat)));
    }
    let copy = int(&insert(store, "users", user)?, "id");
    let row = |pairs: Vec<(&str, Value)>| -> Row {
        pairs.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
    };
    insert(
        store,
        "agent_owners",
        row(vec![("agent_id", json!(copy)), ("owner_id", json!(my_id))]),
    )?;
    insert(
        store,
        "agent_copies",
        row(vec![
            ("agent_id", json!(copy)),
            ("template_id", json!(template)),
            ("owner_id", json!(my_id)),
        ]),
    )?;
    let copied: [(&str, &[&str]); 3] = [
        (
            "user_communities",
            &["community_id", "is_primary", "loyalty"],
        ),
        (
            "faction_relations",
            &["community_id", "sentiment", "trust", "loyalty"],
        ),
        ("inventory", &["item_name", "quantity"]),
    ];
    for (table, columns) in copied {
        for from in store.run_select(&Select::from(table).eq("user_id", template))? {
            let mut new = Row::new();
            new.insert("user_id".into(), json!(copy));
            for column in columns {
                new.insert(
                    (*column).into(),
                    from.get(*column).cloned().unwrap_or(Value::Null),
                );
            }
            insert(store, table, new)?;
        }
    }
    Ok(copy)
}

/// The copy's relationships, from its starter's: toward the player where they were
/// toward the starter's owner, toward the player's copy where they were toward a
/// starter.
fn relate(store: &LocalStore, copy: i64, template: i64, me: i64) -> Result<(), StoreError> {
    for from in store.run_select(&Select::from("relationships").eq("user_id", template))? {
        let target = int(&from, "target_id");
        let target_copy = first(
            store,
            Select::from("agent_copies")
                .eq("owner_id", me)
                .eq("template_id", target),
        )?;
        let target = match target_copy {
            Some(row) => int(&row, "agent_id"),
            None if exists(
                store,
                Select::from("agent_owners")
                    .eq("agent_id", template)
                    .eq("owner_id", target),
            )? =>
            {
                me
            }
            None => target,
        };
        if exists(
            store,
            Select::from("relationships")
                .eq("user_id", copy)
                .eq("target_id", target),
        )? {
            continue;
        }
        let mut new = Row::new();
        new.insert("user_id".into(), json!(copy));
        new.insert("target_id".into(), json!(target));
        new.insert(
            "affinity".into(),
            from.get("affinity").cloned().unwrap_or(json!(0)),
        );
        new.insert(
            "kind".into(),
            from.get("kind").cloned().unwrap_or(json!("acquaintance")),
        );
        insert(store, "relationships", new)?;
    }
    Ok(())
}
