//! Agents a player owns, offline: the twin of `act_as`, `owns_agent` and the agent
//! branch of `acting_user()` in `migrations/0009_world_triggers.sql`. A player acts as
//! an agent only when `agent_owners` says they own it (or it is themselves); only the
//! game writes that table.

use std::collections::HashMap;

use serde_json::Value;

use super::{Rule, first, int, not_entered};
use crate::store::local::Function;
use crate::store::{Filtered, LocalStore, Row, Select, StoreError};

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
