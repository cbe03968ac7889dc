//! An owner's standing orders for their agents, as the world keeps them: in its
//! `standing_orders` table, written only through `set_standing_orders` (the database's,
//! or its twin in the page's world), which holds every agent's actions to them. The
//! engine reads them back so a run keeps the same bounds before a call goes out
//! ([`crate::run::orders`]).

use serde_json::{Map, Value, json};

use super::triggers::WorldAgent;
use crate::run::orders::StandingOrders;
use crate::store::{Filtered, Row, Rpc, Select, Store, StoreError};

/// The orders kept for those of `agents` that have them, by agent name. Orders the
/// engine cannot read are an error naming the agent, never dropped: dropped, the
/// agent would act with no bounds at all.
pub async fn kept(
    store: &dyn Store,
    agents: &[WorldAgent],
) -> Result<Vec<(String, StandingOrders)>, StoreError> {
    let ids: Vec<Value> = agents.iter().map(|a| json!(a.id)).collect();
    if ids.is_empty() {
        return Ok(Vec::new());
    }
    let rows = store
        .select(&Select::from("standing_orders").in_list("agent_id", ids))
        .await?;
    let mut kept = Vec::new();
    for row in rows {
        let id = row.get("agent_id").and_then(Value::as_i64);
        let Some(who) = agents.iter().find(|a| Some(a.id) == id) else {
            continue;
        };
        let orders = row.get("orders").cloned().unwrap_or(Value::Null);
        let orders = StandingOrders::read(orders)
            .map_err(|e| StoreError::Server(format!("{}'s standing orders: {e}", who.name)))?;
        kept.push((who.name.clone(), orders));
    }
    Ok(kept)
}

/// The call that gives `agent` the standing orders `orders` (JSON in
/// [`StandingOrders`]' shape), or lifts them (`None`).
pub fn set(agent: i64, orders: Option<Value>) -> Rpc {
    let mut args = Row::new();
    args.insert("agent".into(), json!(agent));
    args.insert("orders".into(), orders.unwrap_or(Value::Null));
    Rpc {
        function: "set_standing_orders".into(),
        args,
    }
}

/// Standing orders as an owner types them in a form: the actions ticked, and each
/// other bound as text, empty for none.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Typed {
    pub actions: Vec<String>,
    pub gold: String,
    pub energy: String,
    pub communities: String,
    pub battles: String,
    pub message: String,
}

impl Typed {
    pub fn of(orders: &StandingOrders) -> Self {
        let ids = |list: &Option<Vec<i64>>| {
            list.iter()
                .flatten()
                .map(i64::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        };
        let party = |v: &Value| v.as_str().map_or_else(|| v.to_string(), str::to_owned);
        Self {
            actions: orders.actions.clone().unwrap_or_default(),
            gold: orders
                .gold_per_day
                .map(|n| n.to_string())
                .unwrap_or_default(),
            energy: orders
                .energy_per_day
                .map(|n| n.to_string())
                .unwrap_or_default(),
            communities: ids(&orders.communities),
            battles: ids(&orders.battles),
            message: orders
                .message
                .iter()
                .flatten()
                .map(party)
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The orders these fields say, as `set_standing_orders` takes them: the actions
    /// ticked (none: it acts on nothing unasked), and each other bound only when
    /// filled in; or which field is wrong.
    pub fn orders(&self) -> Result<Value, String> {
        let mut orders = Map::new();
        orders.insert("actions".into(), json!(self.actions));
        for (key, typed, label) in [
            ("gold_per_day", &self.gold, "Gold a day"),
            ("energy_per_day", &self.energy, "Energy a day"),
        ] {
            let typed = typed.trim();
            if !typed.is_empty() {
                let n: i64 = typed
                    .parse()
                    .map_err(|_| format!("{label} is a whole number, not “{typed}”"))?;
                orders.insert(key.into(), json!(n));
            }
        }
        for (key, typed, label) in [
            ("communities", &self.communities, "Communities"),
            ("battles", &self.battles, "Battles"),
        ] {
            if let Some(items) = listed(typed) {
                let ids = items
                    .iter()
                    .map(|s| s.parse::<i64>().map(Value::from))
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|_| format!("{label} lists ids, such as 1, 2; not “{typed}”"))?;
                orders.insert(key.into(), Value::Array(ids));
            }
        }
        if let Some(items) = listed(&self.message) {
            let parties = items.into_iter().map(|s| {
                s.parse::<i64>()
                    .map_or_else(|_| Value::String(s.clone()), Value::from)
            });
            orders.insert("message".into(), Value::Array(parties.collect()));
        }
        let orders = Value::Object(orders);
        StandingOrders::read(orders.clone())?;
        Ok(orders)
    }
}

/// The comma-separated items of `typed`; `None` when it holds none (no bound).
fn listed(typed: &str) -> Option<Vec<String>> {
    let items: Vec<String> = typed
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    (!items.is_empty()).then_some(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fields_say_the_orders_they_show() {
        let fields = Typed {
            actions: vec!["do_work".into(), "buy_item".into()],
            gold: " 30 ".into(),
            energy: String::new(),
            communities: "1, 2".into(),
            battles: String::new(),
            message: "Tom, 3".into(),
        };
        let orders = fields.orders().unwrap();
        assert_eq!(
            orders,
            json!({"actions": ["do_work", "buy_item"], "gold_per_day": 30,
                   "communities": [1, 2], "message": ["Tom", 3]})
        );
        let read = StandingOrders::read(orders).unwrap();
        let again = Typed::of(&read);
        assert_eq!(again.communities, "1, 2");
        assert_eq!(again.message, "Tom, 3");
        assert_eq!(again.gold, "30");
    }

    #[test]
    fn a_bad_field_is_named() {
        let bad = |f: Typed| f.orders().unwrap_err();
        let gold = bad(Typed {
            gold: "lots".into(),
            ..Typed::default()
        });
        assert!(gold.contains("Gold a day"), "{gold}");
        let battles = bad(Typed {
            battles: "1, two".into(),
            ..Typed::default()
        });
        assert!(battles.contains("Battles"), "{battles}");
        let negative = bad(Typed {
            energy: "-5".into(),
            ..Typed::default()
        });
        assert!(negative.contains("energy_per_day"), "{negative}");
    }
}
