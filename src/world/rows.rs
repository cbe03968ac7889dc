//! What the world's data tools are made of: the store and the acting user, a way to
//! register an `async fn` as a tool, and the reads they make, with errors as the
//! model should read them.

use std::future::Future;
use std::rc::Rc;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::store::{Row, Select, Store};
use crate::tool::{ToolKind, ToolRegistry};

/// The world as one user's tools see it.
#[derive(Clone)]
pub struct World {
    pub store: Rc<dyn Store>,
    /// The acting user's id.
    pub me: i64,
    /// Whether `me` is an agent the signed-in player owns (its actions go through
    /// `act_as`), rather than the signed-in user themselves.
    pub agent: bool,
}

/// Registers `f(world, args)` as the tool `name`. A look-up's answers a run may keep
/// until its next action ([`ToolRegistry::cache_results`]): it reads rows, which change
/// by actions.
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
    if kind == ToolKind::Data {
        registry.cache_results(name);
    }
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
