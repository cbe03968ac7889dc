//! Standing orders: what an owner lets a resident or an NPC do unasked. Within them the
//! agent acts on its own whatever it has read; outside them its call waits for its
//! owner (see [`crate::run::provenance`] for how calls are judged without orders).
//!
//! The engine judges each call by its arguments: which actions, which communities and
//! battles, whom it may message, how much energy one call may spend. The day's totals
//! of gold and energy need the world's ledger, so the database enforces them for a
//! shared world (`migrations/0018_standing_orders.sql`, the same JSON shape).

use serde_json::Value;

use crate::base::json::Read;
use crate::llm::message::ToolCall;

/// An owner's standing orders, as `createAgent`'s `agents[].allow` and the database's
/// `set_standing_orders` take them. An absent bound does not bound.
#[derive(Debug, Clone, Default, PartialEq, Read)]
#[serde(deny_unknown_fields)]
pub struct StandingOrders {
    /// The actions it may take (tool names); absent: any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actions: Option<Vec<String>>,
    /// The communities it may act in (`community_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub communities: Option<Vec<i64>>,
    /// The battles it may fight in (`battle_id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub battles: Option<Vec<i64>>,
    /// Whom it may message (`user_id` or `to`: ids or names).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<Vec<Value>>,
    /// Gold it may spend a day (the database holds the day's total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_per_day: Option<i64>,
    /// Energy it may spend a day: no one call spends more (the database holds the
    /// day's total).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub energy_per_day: Option<i64>,
}

/// The most a daily bound may be, and the most items a list may hold (the database's
/// `checked_orders`).
const MOST_PER_DAY: i64 = 1_000_000;
const MOST_LISTED: usize = 100;

impl StandingOrders {
    /// Orders read from `value` and held to the database's shape: known keys only,
    /// daily bounds whole numbers from 0 to 1,000,000, lists of at most 100, ids
    /// positive, names 1 to 64 characters; or why not.
    pub fn read(value: Value) -> Result<Self, String> {
        let orders: Self = crate::base::json::from_value(value).map_err(|e| e.to_string())?;
        orders.checked()
    }

    fn checked(self) -> Result<Self, String> {
        for (field, most) in [
            ("gold_per_day", self.gold_per_day),
            ("energy_per_day", self.energy_per_day),
        ] {
            if let Some(n) = most.filter(|n| !(0..=MOST_PER_DAY).contains(n)) {
                return Err(format!(
                    "{field} is a whole number from 0 to {MOST_PER_DAY}, not {n}"
                ));
            }
        }
        let lengths = [
            ("actions", self.actions.as_ref().map(Vec::len)),
            ("communities", self.communities.as_ref().map(Vec::len)),
            ("battles", self.battles.as_ref().map(Vec::len)),
            ("message", self.message.as_ref().map(Vec::len)),
        ];
        if let Some((field, n)) = lengths
            .into_iter()
            .find_map(|(f, n)| n.filter(|n| *n > MOST_LISTED).map(|n| (f, n)))
        {
            return Err(format!("{field} lists at most {MOST_LISTED}, not {n}"));
        }
        let ids = self.communities.iter().chain(&self.battles).flatten();
        if let Some(id) = ids.into_iter().find(|id| **id <= 0) {
            return Err(format!("communities and battles are ids, not {id}"));
        }
        let party = |v: &Value| match v {
            Value::String(s) => (1..=64).contains(&s.trim().chars().count()),
            Value::Number(n) => n.as_i64().is_some_and(|n| n > 0),
            _ => false,
        };
        if let Some(bad) = self.message.iter().flatten().find(|v| !party(v)) {
            return Err(format!("message lists user ids or usernames, not {bad}"));
        }
        Ok(self)
    }

    /// Why `call` is outside these orders; `None` when they cover it.
    pub fn outside(&self, call: &ToolCall) -> Option<String> {
        let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
        let name = call.name.as_str();
        if let Some(actions) = &self.actions
            && !actions.iter().any(|a| a == name)
        {
            return Some(format!(
                "its standing orders do not allow `{name}` (they allow: {})",
                listed(actions.iter().map(String::as_str))
            ));
        }
        let number = |key: &str| args.get(key).and_then(Value::as_i64);
        if let (Some(allowed), Some(id)) = (&self.communities, number("community_id"))
            && !allowed.contains(&id)
        {
            return Some(format!("its standing orders do not allow community {id}"));
        }
        if let (Some(allowed), Some(id)) = (&self.battles, number("battle_id"))
            && !allowed.contains(&id)
        {
            return Some(format!("its standing orders do not allow battle {id}"));
        }
        let recipient = args.get("user_id").or_else(|| args.get("to"));
        if let (Some(allowed), Some(to)) = (&self.message, recipient)
            && !allowed.iter().any(|a| same_party(a, to))
        {
            return Some(format!("its standing orders do not allow messaging {to}"));
        }
        if let (Some(most), Some(energy)) = (self.energy_per_day, number("energy"))
            && energy > most
        {
            return Some(format!(
                "it would spend {energy} energy; its standing orders allow {most} a day"
            ));
        }
        None
    }
}

/// Whether `a` and `b` name the same player: the same id, or the same name whatever
/// its case.
fn same_party(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::String(a), Value::String(b)) => a.trim().eq_ignore_ascii_case(b.trim()),
        (Value::String(s), Value::Number(n)) | (Value::Number(n), Value::String(s)) => {
            s.trim() == n.to_string()
        }
        _ => a == b,
    }
}

fn listed<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let items: Vec<&str> = items.collect();
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(name: &str, arguments: Value) -> ToolCall {
        ToolCall {
            id: "c".into(),
            name: name.into(),
            arguments: arguments.to_string().into(),
        }
    }

    fn orders() -> StandingOrders {
        crate::base::json::from_value(serde_json::json!({
            "actions": ["do_work", "buy_item", "join_battle", "send_message"],
            "battles": [7], "message": ["Tom", 3], "energy_per_day": 40
        }))
        .unwrap()
    }

    #[test]
    fn a_call_within_every_bound_is_covered() {
        let orders = orders();
        for (name, args) in [
            ("do_work", serde_json::json!({"job": "mining"})),
            (
                "join_battle",
                serde_json::json!({"battle_id": 7, "energy": 40}),
            ),
            (
                "send_message",
                serde_json::json!({"user_id": 3, "content": "hi"}),
            ),
            (
                "send_message",
                serde_json::json!({"to": "tom", "content": "hi"}),
            ),
        ] {
            assert_eq!(
                orders.outside(&call(name, args.clone())),
                None,
                "{name} {args}"
            );
        }
    }

    #[test]
    fn each_bound_refuses_by_name_what_it_does_not_allow() {
        let orders = orders();
        let cases = [
            (
                "vote_on_proposal",
                serde_json::json!({"proposal_id": 1}),
                "do not allow `vote_on_proposal`",
            ),
            (
                "join_battle",
                serde_json::json!({"battle_id": 8, "energy": 5}),
                "battle 8",
            ),
            (
                "join_battle",
                serde_json::json!({"battle_id": 7, "energy": 41}),
                "spend 41 energy",
            ),
            (
                "send_message",
                serde_json::json!({"user_id": 9, "content": "x"}),
                "messaging 9",
            ),
        ];
        for (name, args, why) in cases {
            let outside = orders.outside(&call(name, args)).unwrap_or_default();
            assert!(outside.contains(why), "{name}: {outside}");
        }
    }

    #[test]
    fn no_orders_bound_nothing() {
        let none = StandingOrders::default();
        assert_eq!(
            none.outside(&call("anything", serde_json::json!({"battle_id": 1}))),
            None
        );
    }
}
