//! Apply-once for actions: the results of applied action calls, by idempotency key, in
//! the `applied_actions` table of the [`Store`]. A run that is resumed or retried
//! calls the same action with the same key and gets the recorded result back instead
//! of changing the world twice. Failed calls are not recorded: they changed nothing
//! and may be tried again.

use std::rc::Rc;

use serde_json::{Map, Value, json};

use crate::store::{Filtered, Insert, Select, Store, StoreError};

const TABLE: &str = "applied_actions";

/// The record of applied actions of one owner (the agent's user id).
#[derive(Clone)]
pub struct Ledger {
    store: Rc<dyn Store>,
    owner: String,
}

impl Ledger {
    pub fn new(store: Rc<dyn Store>, owner: impl Into<String>) -> Self {
        Self {
            store,
            owner: owner.into(),
        }
    }

    /// The result recorded under `key`, if that call was applied.
    pub async fn applied(&self, key: &str) -> Result<Option<Value>, StoreError> {
        let select = Select::from(TABLE)
            .columns("result")
            .eq("key", key)
            .maybe_single();
        let mut rows = self.store.select(&select).await?;
        Ok(rows.pop().and_then(|mut row| row.remove("result")))
    }

    /// Records that `key` was applied with `result`; recording it twice keeps the
    /// first.
    pub async fn record(&self, key: &str, tool: &str, result: &Value) -> Result<(), StoreError> {
        let mut row = Map::new();
        row.insert("key".into(), json!(key));
        row.insert("user_id".into(), json!(self.owner));
        row.insert("tool".into(), json!(tool));
        row.insert("result".into(), result.clone());
        let insert = Insert {
            table: TABLE.into(),
            rows: vec![row],
            on_conflict: None,
            client_key: Some(vec!["key".into()]),
            returning: false,
        };
        match self.store.insert(&insert).await {
            Ok(_) | Err(StoreError::Duplicate(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }
}
