//! The world's rows the World view shows, read in one go after each run that acts,
//! and what they say in words: names for ids, effects and standings as phrases.

use std::rc::Rc;

use serde_json::Value;

use crate::store::{Filtered, Row, Select, Store};

/// The world's rows the view shows.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Snapshot {
    pub(super) users: Vec<Row>,
    pub(super) inventory: Vec<Row>,
    pub(super) memberships: Vec<Row>,
    pub(super) relationships: Vec<Row>,
    pub(super) factions: Vec<Row>,
    pub(super) battles: Vec<Row>,
    pub(super) market: Vec<Row>,
    pub(super) jobs: Vec<Row>,
    pub(super) messages: Vec<Row>,
    pub(super) posts: Vec<Row>,
    pub(super) proposals: Vec<Row>,
}

pub(super) async fn rows(store: &dyn Store, select: Select) -> Vec<Row> {
    store.select(&select).await.unwrap_or_default()
}

pub(super) async fn snapshot(store: Rc<dyn Store>) -> Snapshot {
    let s = &*store;
    Snapshot {
        // Named columns: a player's sign-in id (`auth_id`) is no one else's, so
        // Supabase refuses `*` on users (migrations/0020_private_auth_id.sql).
        users: rows(
            s,
            Select::from("users")
                .columns("id,username,health,energy,morale,gold")
                .order("id", true),
        )
        .await,
        inventory: rows(s, Select::from("inventory").gt("quantity", 0)).await,
        memberships: rows(
            s,
            Select::from("user_communities")
                .columns("user_id,loyalty,is_primary,communities(id,name)"),
        )
        .await,
        relationships: rows(s, Select::from("relationships")).await,
        factions: rows(
            s,
            Select::from("faction_relations")
                .columns("user_id,sentiment,trust,loyalty,communities(name)"),
        )
        .await,
        battles: rows(
            s,
            Select::from("battles")
                .columns(
                    "id,status,community1_damage,community2_damage,\
                     community1:communities!battles_community1_id_fkey(id,name),\
                     community2:communities!battles_community2_id_fkey(id,name)",
                )
                .order("id", true),
        )
        .await,
        market: rows(
            s,
            Select::from("market_items")
                .eq("available", true)
                .order("name", true),
        )
        .await,
        jobs: rows(s, Select::from("jobs").order("name", true)).await,
        messages: rows(s, Select::from("messages").order("id", false).limit(6)).await,
        posts: rows(s, Select::from("posts").order("id", false).limit(4)).await,
        proposals: rows(s, Select::from("proposals").order("id", false).limit(4)).await,
    }
}

pub(super) fn text(row: &Row, column: &str) -> String {
    match row.get(column) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

pub(super) fn int(row: &Row, column: &str) -> i64 {
    row.get(column).and_then(Value::as_i64).unwrap_or(0)
}

pub(super) fn int_of(value: &Value, key: &str) -> i64 {
    value.get(key).and_then(Value::as_i64).unwrap_or(0)
}

/// Where an agent stands between order (+1) and chaos (−1), in words.
pub(super) fn leaning(order_chaos: f64) -> String {
    match order_chaos {
        x if x >= 0.3 => "orderly".into(),
        x if x <= -0.3 => "chaotic".into(),
        _ => "between order and chaos".into(),
    }
}

/// A world user's name: "you" for the player, the agent's name capitalised, or
/// "user N" for one the view has not read.
pub(super) fn name_of(w: &Snapshot, id: i64, me: i64) -> String {
    if id == me {
        return "you".into();
    }
    w.users
        .iter()
        .find(|u| int(u, "id") == id)
        .map(|u| capitalised(&text(u, "username")))
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| format!("user {id}"))
}

pub(super) fn capitalised(name: &str) -> String {
    let mut chars = name.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// The name of an embedded row (`community1: {id, name}`).
pub(super) fn embedded_name(row: &Row, key: &str) -> String {
    row.get(key)
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned()
}

/// A market item's effects in words: `{"morale": 5}` is "+5 morale".
pub(super) fn effects(value: Option<&Value>) -> String {
    let parsed;
    let value = match value {
        Some(Value::String(s)) => {
            parsed = serde_json::from_str::<Value>(s).unwrap_or(Value::Null);
            &parsed
        }
        Some(v) => v,
        None => return String::new(),
    };
    match value.as_object() {
        Some(object) => object
            .iter()
            .map(|(stat, n)| match n.as_i64() {
                Some(n) if n >= 0 => format!("+{n} {stat}"),
                Some(n) => format!("−{} {stat}", n.abs()),
                None => format!("{stat} {n}"),
            })
            .collect::<Vec<_>>()
            .join(", "),
        None => String::new(),
    }
}

pub(super) fn proposal_status(p: &Row) -> String {
    match text(p, "status") {
        s if s.is_empty() => "open".into(),
        s => s,
    }
}

pub(super) fn community_of(w: &Snapshot, id: i64) -> String {
    w.memberships
        .iter()
        .filter(|m| int(m, "user_id") == id)
        .map(|m| {
            let name = m
                .get("communities")
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!("{name} (loyalty {})", int(m, "loyalty"))
        })
        .collect::<Vec<_>>()
        .join(" and ")
}

pub(super) fn inventory_of(w: &Snapshot, id: i64) -> Vec<String> {
    w.inventory
        .iter()
        .filter(|i| int(i, "user_id") == id)
        .map(|i| format!("{} × {}", text(i, "item_name"), int(i, "quantity")))
        .collect()
}

pub(super) fn relationships_of(w: &Snapshot, id: i64, me: i64) -> Vec<String> {
    let people = w
        .relationships
        .iter()
        .filter(|r| int(r, "user_id") == id)
        .map(|r| {
            format!(
                "{}: {} ({})",
                capitalised(&name_of(w, int(r, "target_id"), me)),
                text(r, "kind"),
                int(r, "affinity"),
            )
        });
    let factions = w
        .factions
        .iter()
        .filter(|f| int(f, "user_id") == id)
        .map(|f| {
            let name = f
                .get("communities")
                .and_then(|c| c.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            format!(
                "{name}: sentiment {}, trust {}, loyalty {}",
                int(f, "sentiment"),
                int(f, "trust"),
                int(f, "loyalty")
            )
        });
    people.chain(factions).collect()
}
