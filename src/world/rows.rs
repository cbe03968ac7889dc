//! What the world's tools are made of: the store and the acting user, a way to
//! register an `async fn` as a tool, and the few store operations they use, with
//! errors as the model should read them.

use std::future::Future;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::store::{Delete, Filter, Insert, Row, Select, Store, Update};
use crate::tool::{ToolKind, ToolRegistry};

/// The world as one user's tools see it.
#[derive(Clone)]
pub struct World {
    pub store: Rc<dyn Store>,
    /// The acting user's id.
    pub me: i64,
}

/// Registers `f(world, args)` as the tool `name`.
pub fn add<A, F, Fut>(
    registry: &mut ToolRegistry,
    world: &World,
    kind: ToolKind,
    name: &str,
    description: &str,
    f: F,
) where
    A: DeserializeOwned + JsonSchema + 'static,
    F: Fn(World, A) -> Fut + 'static,
    Fut: Future<Output = Result<Value, Refusal>> + 'static,
{
    let world = world.clone();
    registry.register_fn(name, kind, description, move |args: A, _| {
        f(world.clone(), args)
    });
}

/// A tool's failure, said plainly for the model ("Insufficient gold. Need 10, have 0").
pub type Refusal = String;

pub async fn select(store: &dyn Store, select: Select) -> Result<Vec<Row>, Refusal> {
    store.select(&select).await.map_err(|e| e.to_string())
}

/// The one row `select` matches, or `missing` as the error.
pub async fn one(
    store: &dyn Store,
    select: Select,
    missing: impl Into<String>,
) -> Result<Row, Refusal> {
    let select = select.maybe_single();
    let mut rows = store.select(&select).await.map_err(|e| e.to_string())?;
    rows.pop().ok_or_else(|| missing.into())
}

/// Inserts one row and returns it as stored.
pub async fn insert(store: &dyn Store, table: &str, row: Row) -> Result<Value, Refusal> {
    let insert = Insert {
        table: table.into(),
        rows: vec![row],
        on_conflict: None,
        client_key: None,
        returning: true,
    };
    let mut rows = store.insert(&insert).await.map_err(|e| e.to_string())?;
    Ok(rows.pop().map_or(Value::Null, Value::Object))
}

/// Sets `set` on the rows `filters` match; returns how many matched.
pub async fn update(
    store: &dyn Store,
    table: &str,
    set: Row,
    filters: Vec<Filter>,
) -> Result<usize, Refusal> {
    let update = Update {
        table: table.into(),
        set,
        filters,
        returning: true,
    };
    store
        .update(&update)
        .await
        .map(|rows| rows.len())
        .map_err(|e| e.to_string())
}

pub async fn delete(
    store: &dyn Store,
    table: &str,
    filters: Vec<Filter>,
) -> Result<usize, Refusal> {
    let delete = Delete {
        table: table.into(),
        filters,
        returning: true,
    };
    store
        .delete(&delete)
        .await
        .map(|rows| rows.len())
        .map_err(|e| e.to_string())
}

pub fn eq(column: &str, value: impl Into<Value>) -> Filter {
    Filter::compare(column, crate::store::Op::Eq, value)
}

/// An integer column, 0 when absent.
pub fn int(row: &Row, column: &str) -> i64 {
    row.get(column).and_then(Value::as_i64).unwrap_or(0)
}

/// A stat after a change, kept within 0..=100.
pub fn clamp_stat(value: i64) -> Value {
    json!(value.clamp(0, 100))
}
