//! Apply-once for actions: the results of applied action calls, by idempotency key, in
//! the `applied_actions` table of the [`Store`]. A run that is resumed or retried
//! calls the same action with the same key and gets the recorded result back instead
//! of changing the world twice. Failed calls are not recorded: they changed nothing
//! and may be tried again.
//!
//! A record the store refuses is not dropped: it is held in memory, so apply-once
//! still holds in this page, and written with the next record.

use std::cell::RefCell;
use std::rc::Rc;

use serde_json::{Map, Value, json};

use futures::future::LocalBoxFuture;

use super::ToolError;
use crate::llm::message::ToolCall;
use crate::store::{Filtered, Insert, Select, Store, StoreError};

const TABLE: &str = "applied_actions";

/// The record of applied actions of one owner (the signed-in user: keys are theirs
/// alone, so another user's key never hides one of theirs).
#[derive(Clone)]
pub struct Ledger {
    store: Rc<dyn Store>,
    owner: String,
    /// Records the store refused, oldest first: (key, tool, result).
    unsaved: Rc<RefCell<Vec<(String, String, Value)>>>,
}

impl Ledger {
    pub fn new(store: Rc<dyn Store>, owner: impl Into<String>) -> Self {
        Self {
            store,
            owner: owner.into(),
            unsaved: Rc::default(),
        }
    }

    /// How many records wait to be written (the store refused them so far).
    pub fn unsaved(&self) -> usize {
        self.unsaved.borrow().len()
    }

    /// The result recorded under `key`, if that call was applied.
    pub async fn applied(&self, key: &str) -> Result<Option<Value>, StoreError> {
        let held = self
            .unsaved
            .borrow()
            .iter()
            .find(|(k, ..)| k == key)
            .map(|(.., result)| result.clone());
        if held.is_some() {
            return Ok(held);
        }
        let select = Select::from(TABLE)
            .columns("result")
            .eq("user_id", self.owner.as_str())
            .eq("key", key)
            .maybe_single();
        let mut rows = self.store.select(&select).await?;
        Ok(rows.pop().and_then(|mut row| row.remove("result")))
    }

    /// Records that `key` was applied with `result`; recording it twice keeps the
    /// first. Records refused earlier are written first; a refused one is held (see
    /// [`Self::unsaved`]) and its error returned.
    pub async fn record(&self, key: &str, tool: &str, result: &Value) -> Result<(), StoreError> {
        let held = std::mem::take(&mut *self.unsaved.borrow_mut());
        for (key, tool, result) in held {
            if self.write(&key, &tool, &result).await.is_err() {
                self.unsaved.borrow_mut().push((key, tool, result));
            }
        }
        let written = self.write(key, tool, result).await;
        if written.is_err() {
            self.unsaved
                .borrow_mut()
                .push((key.to_owned(), tool.to_owned(), result.clone()));
        }
        written
    }

    /// Writes one record, unless the store has it already: a database function
    /// records its own call in the same transaction, and an insert refused as a
    /// duplicate would be noise (a 409 in the browser's console).
    async fn write(&self, key: &str, tool: &str, result: &Value) -> Result<(), StoreError> {
        let select = Select::from(TABLE)
            .columns("key")
            .eq("user_id", self.owner.as_str())
            .eq("key", key)
            .maybe_single();
        if !self.store.select(&select).await?.is_empty() {
            return Ok(());
        }
        let mut row = Map::new();
        row.insert("key".into(), json!(key));
        row.insert("user_id".into(), json!(self.owner));
        row.insert("tool".into(), json!(tool));
        row.insert("result".into(), result.clone());
        let insert = Insert {
            table: TABLE.into(),
            rows: vec![row],
            on_conflict: None,
            client_key: Some(vec!["user_id".into(), "key".into()]),
            returning: false,
        };
        match self.store.insert(&insert).await {
            Ok(_) | Err(StoreError::Duplicate(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }
}

/// Runs an action under `key` at most once: a key the ledger has recorded returns the
/// recorded result instead.
pub(super) async fn once(
    ledger: &Ledger,
    key: &str,
    call: &ToolCall,
    run: LocalBoxFuture<'_, Result<Value, ToolError>>,
) -> Result<Value, ToolError> {
    let unreadable = |e: StoreError| ToolError::Failed {
        tool: call.name.to_string(),
        message: format!("its record of applied calls could not be read: {e}"),
    };
    if let Some(recorded) = ledger.applied(key).await.map_err(unreadable)? {
        return Ok(recorded);
    }
    let result = run.await?;
    // The action happened: a record the store refuses must not turn it into a
    // failure the model would retry. The ledger holds it in memory (apply-once holds
    // in this page) and writes it with its next record; only a reload before then
    // loses it. The world's actions close that too: their database functions write
    // the action and its record in one transaction (migrations/0006_actions.sql).
    if ledger.record(key, &call.name, &result).await.is_err() {
        return Ok(unrecorded(result, ledger.unsaved()));
    }
    Ok(result)
}

/// An applied action's result, noting that its record is not saved yet (an object
/// result gets the note as `ledger`; others are left as they are).
fn unrecorded(mut result: Value, waiting: usize) -> Value {
    if let Value::Object(fields) = &mut result {
        fields.insert(
            "ledger".into(),
            Value::String(format!(
                "applied; its record could not be saved yet ({waiting} waiting) and is kept \
                 in this page"
            )),
        );
    }
    result
}
