//! The `Store` seam: every read and write of the world goes through it, in PostgREST's
//! vocabulary (`query`), answered by Supabase/PostgREST over HTTP or by the local store
//! in the page (`local`) with the same rows and the same kinds of errors.

#[cfg(feature = "supabase")]
pub mod auth;
mod ddl;
mod embed;
mod eval;
pub mod local;
#[cfg(feature = "supabase")]
pub mod postgrest;
#[cfg(feature = "supabase")]
pub mod project;
pub mod query;
pub mod table;

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

pub use ddl::tables as tables_from_sql;
pub use local::{LocalStore, Persist};
#[cfg(feature = "supabase")]
pub use postgrest::PostgrestStore;
pub use query::{Cardinality, Delete, Filter, Filtered, Insert, Op, Order, Patch, Rpc, Select};
pub use table::{ColumnSchema, ColumnType, Default as ColumnDefault, Reference, TableSchema};

/// A row: column name to value.
pub type Row = Map<String, Value>;

/// A row from `(column, value)` pairs. (Extended, not collected: collecting a map
/// sorts its entries, and each such sort is compiled anew; see `crate::base::sort`.)
pub fn row<const N: usize>(pairs: [(&str, Value); N]) -> Row {
    let mut row = Map::new();
    row.extend(pairs.into_iter().map(|(k, v)| (k.to_owned(), v)));
    row
}

/// What went wrong in a store, the same kinds whichever store answered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    #[error("there is no table `{0}`")]
    UnknownTable(String),
    #[error("`{table}` has no column `{column}`")]
    UnknownColumn { table: String, column: String },
    #[error("there is no function `{0}`")]
    UnknownFunction(String),
    #[error("a row with the same {0} already exists")]
    Duplicate(String),
    #[error("exactly one row was expected, but {0} matched")]
    NotSingle(usize),
    #[error("`{0}` cannot be empty")]
    NotNull(String),
    #[error("the request is invalid: {0}")]
    Invalid(String),
    #[error("not allowed: {0}")]
    PermissionDenied(String),
    /// A game rule refused the call (a database function raised it): said as is, for
    /// the model to plan around ("Insufficient gold. Need 10, have 0").
    #[error("{0}")]
    Rule(String),
    #[error("the store could not be reached: {0}")]
    Unreachable(String),
    #[error("the store failed: {0}")]
    Server(String),
}

impl StoreError {
    /// A failure that may have happened after the store applied the request: a lost
    /// connection or a server error. Only these are worth retrying.
    pub fn is_transient(&self) -> bool {
        matches!(self, Self::Unreachable(_) | Self::Server(_))
    }

    /// A stable name for the kind of error, for comparing stores.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::UnknownTable(_) => "unknown_table",
            Self::UnknownColumn { .. } => "unknown_column",
            Self::UnknownFunction(_) => "unknown_function",
            Self::Duplicate(_) => "duplicate",
            Self::NotSingle(_) => "not_single",
            Self::NotNull(_) => "not_null",
            Self::Invalid(_) => "invalid",
            Self::PermissionDenied(_) => "permission_denied",
            Self::Rule(_) => "rule",
            Self::Unreachable(_) => "unreachable",
            Self::Server(_) => "server",
        }
    }
}

/// A store of tables, in PostgREST's terms.
pub trait Store {
    /// The selected rows (one at most for single and maybe-single selects).
    fn select<'a>(&'a self, query: &'a Select) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>>;
    /// The inserted (or upserted) rows when `returning`, else none.
    fn insert<'a>(&'a self, query: &'a Insert) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>>;
    /// The updated rows when `returning`, else none.
    fn update<'a>(&'a self, query: &'a Patch) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>>;
    /// The deleted rows when `returning`, else none.
    fn delete<'a>(&'a self, query: &'a Delete) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>>;
    /// The function's result.
    fn rpc<'a>(&'a self, query: &'a Rpc) -> LocalBoxFuture<'a, Result<Value, StoreError>>;
    /// How many writes went through this store so far (every insert, update, delete
    /// and function call, answered or refused), so a reader can tell that rows it read
    /// may have changed since (a run's kept look-ups, `run::driver::cache`). Writes
    /// other clients make are not seen; 0 from a store that does not count.
    fn writes(&self) -> u64 {
        0
    }
}
