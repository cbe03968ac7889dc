//! Agents a player owns, offline: the twin of `act_as`, `owns_agent` and the agent
//! branch of `acting_user()` in `migrations/0009_world_triggers.sql`, and of
//! `claim_agents()` and `ledger_owner()` in `migrations/0012_claim_agents.sql`. A
//! player acts as an agent only when `agent_owners` says they own it (or it is
//! themselves); only the game writes that table. A new player claims their own copies
//! of the starter agents; an agent's actions are recorded in its own ledger.

use std::collections::HashMap;

use serde_json::Value;

use serde_json::json;

use super::{Outcome, Rule, exists, first, insert, int, not_entered};
use crate::store::local::Function;
use crate::store::{Filtered, LocalStore, Row, Select, StoreError};

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
        if let Some(key) = call.get("key").filter(|k| !k.is_null()) {
            args.insert("key".into(), key.clone());
        }
        rule(store, &args, Some(agent))
    })
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
