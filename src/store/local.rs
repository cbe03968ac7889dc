//! [`LocalStore`]: the store in the page. It runs the query model in memory with the
//! answers and error kinds PostgREST gives for the same requests, and hands a
//! snapshot to a [`Persist`] after every write so the world survives a reload.

use crate::base::json::Read;
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::Serialize;
use serde_json::Value;

use super::embed;
use super::eval::{compile, order_values, sort};
use super::query::{Cardinality, Delete, Insert, Patch, Rpc, Select};
use super::table::{Default, TableSchema, coerce};
use super::{Row, Store, StoreError};
use crate::base::clock::{Clock, Instant};

/// Where the local store keeps its snapshot (browser storage in the page).
pub trait Persist {
    fn load(&self) -> Option<String>;
    fn save(&self, snapshot: &str);
}

/// A database function the local store can call, as `rpc` would.
pub type Function = Rc<dyn Fn(&LocalStore, &Row) -> Result<Value, StoreError>>;

#[derive(Debug, Clone, Serialize, Read)]
struct Table {
    rows: Vec<Row>,
    next_id: i64,
}

/// Tables in memory.
pub struct LocalStore {
    clock: Option<Rc<dyn Clock>>,
    schemas: BTreeMap<String, TableSchema>,
    tables: RefCell<BTreeMap<String, Table>>,
    functions: BTreeMap<String, Function>,
    persist: Option<Box<dyn Persist>>,
    /// Tables that came back from a snapshot: the seed never touches them again.
    restored: std::collections::BTreeSet<String>,
    /// Who is signed in (a JWT's `sub` online), for functions that act as them.
    signed_in: RefCell<Option<String>>,
    /// Writes so far ([`Store::writes`]).
    writes: std::cell::Cell<u64>,
}

impl LocalStore {
    /// Empty tables of these shapes.
    pub fn new(schemas: Vec<TableSchema>) -> Self {
        // Maps are extended rather than collected: collecting sorts (see `crate::base::sort`).
        let mut tables = BTreeMap::new();
        let mut by_name = BTreeMap::new();
        for schema in schemas {
            let table = Table {
                rows: Vec::new(),
                next_id: 1,
            };
            tables.insert(schema.name.clone(), table);
            by_name.insert(schema.name.clone(), schema);
        }
        Self {
            clock: None,
            schemas: by_name,
            tables: RefCell::new(tables),
            functions: BTreeMap::new(),
            persist: None,
            restored: std::collections::BTreeSet::new(),
            signed_in: RefCell::new(None),
            writes: std::cell::Cell::new(0),
        }
    }

    /// The clock for `now()` defaults and fresh UUIDs; without one, `now()` is the
    /// epoch.
    pub fn with_clock(mut self, clock: Rc<dyn Clock>) -> Self {
        self.clock = Some(clock);
        self
    }

    /// Acts as the user `sub` (as a JWT's `sub` claim does online), or as no one with
    /// `None`. Functions read it through [`LocalStore::signed_in`].
    pub fn sign_in_as(&self, sub: Option<String>) {
        *self.signed_in.borrow_mut() = sub;
    }

    /// The user the store acts as, if any.
    pub fn signed_in(&self) -> Option<String> {
        self.signed_in.borrow().clone()
    }

    /// Registers a function for `rpc`.
    pub fn with_function(mut self, name: &str, function: Function) -> Self {
        self.functions.insert(name.to_owned(), function);
        self
    }

    /// Keeps the tables in `persist`, restoring them from its snapshot if it has one.
    /// A snapshot that cannot be read is an error, never silently dropped.
    pub fn with_persistence(mut self, persist: Box<dyn Persist>) -> Result<Self, StoreError> {
        if let Some(snapshot) = persist.load() {
            let restored = self.restore(&snapshot)?;
            self.restored.extend(restored);
        }
        self.persist = Some(persist);
        Ok(self)
    }

    /// Reads the tables again from the persisted snapshot, which another tab sharing
    /// the storage may have written since: a writer that takes the tabs' lock calls
    /// this first, so its write starts from the latest tables and loses none of theirs.
    pub fn reload(&self) -> Result<(), StoreError> {
        if let Some(snapshot) = self.persist.as_ref().and_then(|p| p.load()) {
            self.restore(&snapshot)?;
        }
        Ok(())
    }

    /// The tables as a snapshot: what the persisted copy holds after each write.
    pub fn snapshot(&self) -> Option<String> {
        serde_json::to_string(&*self.tables.borrow()).ok()
    }

    /// Takes the tables from `snapshot` (another tab's, handed over with the tabs'
    /// lock), and keeps them in the persisted snapshot too.
    pub fn adopt(&self, snapshot: &str) -> Result<(), StoreError> {
        self.restore(snapshot)?;
        self.save();
        Ok(())
    }

    /// Replaces the tables the snapshot holds; the names of those replaced.
    fn restore(&self, snapshot: &str) -> Result<Vec<String>, StoreError> {
        let saved: BTreeMap<String, Table> = crate::base::json::from_text(snapshot)
            .map_err(|e| StoreError::Invalid(format!("the saved tables cannot be read ({e})")))?;
        let mut tables = self.tables.borrow_mut();
        let mut restored = Vec::new();
        for (name, table) in saved {
            if let Some(slot) = tables.get_mut(&name) {
                *slot = table;
                restored.push(name);
            }
        }
        Ok(restored)
    }

    /// Fills tables from a seed file, `{"table": [rows…]}`, on first use: a table
    /// restored from a snapshot keeps what the user left in it, even if that is
    /// nothing. Like `setval` after a SQL seed, identities continue after the highest
    /// seeded id. A table the schema lacks is an error.
    pub fn seed(&self, seed: &str) -> Result<(), StoreError> {
        let seed: BTreeMap<String, Vec<Row>> = crate::base::json::from_text(seed)
            .map_err(|e| StoreError::Invalid(format!("the seed file cannot be read ({e})")))?;
        let mut seeded = false;
        for (table, rows) in seed {
            self.schema(&table)?;
            if self.restored.contains(&table) {
                continue;
            }
            seeded = true;
            let insert = Insert {
                table: table.clone(),
                rows,
                on_conflict: None,
                client_key: None,
                returning: false,
            };
            // Seeding is the owner's work: its ids stand (`overriding system value`).
            self.write(&insert, true)?;
            let schema = self.schema(&table)?;
            let mut tables = self.tables.borrow_mut();
            if let Some(t) = tables.get_mut(&table) {
                let highest = schema
                    .columns
                    .iter()
                    .filter(|c| c.default.as_ref().is_some_and(Default::is_identity))
                    .flat_map(|c| t.rows.iter().filter_map(|row| row.get(&c.name)?.as_i64()))
                    .max();
                if let Some(highest) = highest {
                    t.next_id = t.next_id.max(highest + 1);
                }
            }
        }
        // A world restored whole is already saved as it is.
        if seeded {
            self.save();
        }
        Ok(())
    }

    /// The store's clock now (the epoch without one), as `now()` reads it.
    pub fn now(&self) -> Instant {
        self.clock.as_ref().map_or(
            Instant {
                epoch_ms: 0,
                utc_offset_minutes: 0,
            },
            |c| c.now(),
        )
    }

    /// A full row: given values, then defaults, then nulls.
    fn with_defaults(
        &self,
        schema: &TableSchema,
        mut given: Row,
        next_id: &mut i64,
    ) -> Result<Row, StoreError> {
        let now = self.now();
        for column in &schema.columns {
            if given.contains_key(&column.name) {
                continue;
            }
            let value = match &column.default {
                Some(Default::Identity | Default::AlwaysIdentity) => {
                    let id = *next_id;
                    *next_id += 1;
                    Value::from(id)
                }
                Some(Default::Value(value)) => coerce(column.kind, value)?,
                Some(Default::Now) => Value::String(
                    Instant {
                        utc_offset_minutes: 0,
                        ..now
                    }
                    .rfc3339(),
                ),
                Some(Default::Uuid) => {
                    *next_id += 1;
                    Value::String(uuid_v4(now.epoch_ms, *next_id))
                }
                None => Value::Null,
            };
            given.insert(column.name.clone(), value);
        }
        Ok(given)
    }

    fn schema(&self, table: &str) -> Result<&TableSchema, StoreError> {
        self.schemas
            .get(table)
            .ok_or_else(|| StoreError::UnknownTable(table.to_owned()))
    }

    /// Every write ends here: counted, then kept when the store persists.
    fn save(&self) {
        self.writes.set(self.writes.get().wrapping_add(1));
        if let Some(persist) = &self.persist
            && let Some(snapshot) = self.snapshot()
        {
            persist.save(&snapshot);
        }
    }

    /// Runs a select now.
    pub fn run_select(&self, query: &Select) -> Result<Vec<Row>, StoreError> {
        let schema = self.schema(&query.table)?;
        let columns = embed::plan(&self.schemas, &query.table, &query.columns)?;
        for order in &query.order {
            schema.column(&order.column)?;
        }
        let tables = self.tables.borrow();
        let rows = tables
            .get(&query.table)
            .map(|t| t.rows.as_slice())
            .unwrap_or_default();
        // Filter and sort references; only the rows returned are copied.
        let filters = compile(schema, &query.filters)?;
        let mut found: Vec<&Row> = rows.iter().filter(|row| filters.matches(row)).collect();
        sort(&mut found, &query.order);
        let skip = usize::try_from(query.offset.unwrap_or(0)).unwrap_or(usize::MAX);
        let take = query
            .limit
            .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
        let found: Vec<&Row> = found.into_iter().skip(skip).take(take).collect();
        match (query.cardinality, found.len()) {
            (Cardinality::Single, n) if n != 1 => return Err(StoreError::NotSingle(n)),
            (Cardinality::MaybeSingle, n) if n > 1 => return Err(StoreError::NotSingle(n)),
            _ => {}
        }
        let rows_of = |table: &str| {
            tables
                .get(table)
                .map(|t| t.rows.as_slice())
                .unwrap_or_default()
        };
        Ok(found
            .into_iter()
            .map(|row| embed::apply(&columns, row, &rows_of))
            .collect())
    }

    /// Runs an insert (or upsert) now; all rows or none.
    pub fn run_insert(&self, query: &Insert) -> Result<Vec<Row>, StoreError> {
        self.write(query, false)
    }

    /// An insert; `overriding` lets given values stand in `generated always` columns.
    fn write(&self, query: &Insert, overriding: bool) -> Result<Vec<Row>, StoreError> {
        let schema = self.schema(&query.table)?;
        same_columns(&query.rows)?;
        if !overriding {
            always_generated_untouched(schema, &query.rows)?;
        }
        let conflict_key = match &query.on_conflict {
            Some(columns) => Some(conflict_key(schema, columns)?),
            None => None,
        };
        let mut tables = self.tables.borrow_mut();
        let table = tables
            .get_mut(&query.table)
            .ok_or_else(|| StoreError::UnknownTable(query.table.clone()))?;
        let mut draft = table.clone();
        let mut written = Vec::new();
        for given in &query.rows {
            let given = typed(schema, given)?;
            let existing = conflict_key
                .as_ref()
                .and_then(|key| draft.rows.iter().position(|row| same_key(row, &given, key)));
            let row = match existing.and_then(|at| draft.rows.get_mut(at)) {
                Some(row) => {
                    row.extend(given);
                    row.clone()
                }
                None => {
                    let row = self.with_defaults(schema, given, &mut draft.next_id)?;
                    draft.rows.push(row.clone());
                    row
                }
            };
            written.push(row);
        }
        check_constraints(schema, &draft.rows)?;
        *table = draft;
        drop(tables);
        self.save();
        Ok(if query.returning { written } else { Vec::new() })
    }

    /// Runs an update now; all matching rows or none.
    pub fn run_update(&self, query: &Patch) -> Result<Vec<Row>, StoreError> {
        let schema = self.schema(&query.table)?;
        let set = typed(schema, &query.set)?;
        let filters = compile(schema, &query.filters)?;
        let mut tables = self.tables.borrow_mut();
        let table = tables
            .get_mut(&query.table)
            .ok_or_else(|| StoreError::UnknownTable(query.table.clone()))?;
        let mut rows = table.rows.clone();
        let mut written = Vec::new();
        for row in &mut rows {
            if filters.matches(row) {
                row.extend(set.clone());
                written.push(row.clone());
            }
        }
        check_constraints(schema, &rows)?;
        table.rows = rows;
        drop(tables);
        self.save();
        Ok(if query.returning { written } else { Vec::new() })
    }

    /// Runs a delete now.
    pub fn run_delete(&self, query: &Delete) -> Result<Vec<Row>, StoreError> {
        let schema = self.schema(&query.table)?;
        let mut tables = self.tables.borrow_mut();
        let table = tables
            .get_mut(&query.table)
            .ok_or_else(|| StoreError::UnknownTable(query.table.clone()))?;
        let filters = compile(schema, &query.filters)?;
        let mut removed = Vec::new();
        let mut kept = Vec::with_capacity(table.rows.len());
        for row in std::mem::take(&mut table.rows) {
            if filters.matches(&row) {
                removed.push(row);
            } else {
                kept.push(row);
            }
        }
        table.rows = kept;
        drop(tables);
        self.save();
        Ok(if query.returning { removed } else { Vec::new() })
    }

    /// Calls a registered function now, in one transaction as PostgreSQL does: if it
    /// fails, every write it made is undone.
    pub fn run_rpc(&self, query: &Rpc) -> Result<Value, StoreError> {
        let function = self
            .functions
            .get(&query.function)
            .ok_or_else(|| StoreError::UnknownFunction(query.function.clone()))?;
        let before = self.tables.borrow().clone();
        let result = function(self, &query.args);
        if result.is_err() {
            *self.tables.borrow_mut() = before;
            self.save();
        }
        result
    }
}

impl Store for LocalStore {
    fn select<'a>(&'a self, query: &'a Select) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move { self.run_select(query) })
    }

    fn insert<'a>(&'a self, query: &'a Insert) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move { self.run_insert(query) })
    }

    fn update<'a>(&'a self, query: &'a Patch) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move { self.run_update(query) })
    }

    fn delete<'a>(&'a self, query: &'a Delete) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move { self.run_delete(query) })
    }

    fn rpc<'a>(&'a self, query: &'a Rpc) -> LocalBoxFuture<'a, Result<Value, StoreError>> {
        Box::pin(async move { self.run_rpc(query) })
    }

    fn writes(&self) -> u64 {
        self.writes.get()
    }
}

/// PostgreSQL refuses a value for a `generated always` identity, in its words.
fn always_generated_untouched(schema: &TableSchema, rows: &[Row]) -> Result<(), StoreError> {
    let given = schema.columns.iter().find(|column| {
        column.default == Some(Default::AlwaysIdentity)
            && rows.iter().any(|row| row.contains_key(&column.name))
    });
    match given {
        Some(column) => Err(StoreError::Invalid(format!(
            "cannot insert a non-DEFAULT value into column \"{}\"",
            column.name
        ))),
        None => Ok(()),
    }
}

/// PostgREST refuses a bulk insert whose rows do not share their keys.
fn same_columns(rows: &[Row]) -> Result<(), StoreError> {
    let mut keys = rows.iter().map(|row| row.keys().collect::<Vec<_>>());
    let first = keys.next();
    if keys.any(|k| Some(&k) != first.as_ref()) {
        return Err(StoreError::Invalid(
            "all rows of a bulk insert must have the same columns".into(),
        ));
    }
    Ok(())
}

/// The unique key named by `on_conflict`, which must be one of the table's.
fn conflict_key(schema: &TableSchema, columns: &[String]) -> Result<Vec<String>, StoreError> {
    let mut wanted = columns.to_vec();
    crate::base::sort::sort(&mut wanted);
    schema
        .unique_keys()
        .find(|key| {
            let mut key = (*key).clone();
            crate::base::sort::sort(&mut key);
            key == wanted
        })
        .cloned()
        .ok_or_else(|| {
            StoreError::Invalid(format!(
                "no unique key of `{}` is ({})",
                schema.name,
                columns.join(", ")
            ))
        })
}

fn same_key(row: &Row, other: &Row, key: &[String]) -> bool {
    key.iter()
        .all(|column| match (row.get(column), other.get(column)) {
            (Some(a), Some(b)) if !a.is_null() && !b.is_null() => order_values(a, b).is_eq(),
            _ => false,
        })
}

/// The row's values read as their columns' types; unknown columns are errors.
fn typed(schema: &TableSchema, row: &Row) -> Result<Row, StoreError> {
    let mut typed = Row::new();
    for (name, value) in row {
        typed.insert(name.clone(), coerce(schema.column(name)?.kind, value)?);
    }
    Ok(typed)
}

/// A version-4-shaped UUID from the time and a per-table counter: unique within the
/// page, which is all the local store needs (it is not a secret).
fn uuid_v4(epoch_ms: i64, counter: i64) -> String {
    let mut state = (epoch_ms as u64) ^ (counter as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        // splitmix64
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let (a, b) = (next(), next());
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0x0FFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

/// Not-null columns hold values and unique keys hold no duplicates.
fn check_constraints(schema: &TableSchema, rows: &[Row]) -> Result<(), StoreError> {
    for column in schema.columns.iter().filter(|c| !c.nullable) {
        if rows
            .iter()
            .any(|row| row.get(&column.name).is_none_or(Value::is_null))
        {
            return Err(StoreError::NotNull(column.name.clone()));
        }
    }
    for key in schema.unique_keys() {
        let mut seen = std::collections::HashSet::with_capacity(rows.len());
        for row in rows {
            // Rows with a null in the key never conflict, as in PostgreSQL.
            let values: Option<Vec<&Value>> = key
                .iter()
                .map(|c| row.get(c).filter(|v| !v.is_null()))
                .collect();
            if let Some(values) = values
                && !seen.insert(serde_json::to_string(&values).unwrap_or_default())
            {
                return Err(StoreError::Duplicate(key.join(", ")));
            }
        }
    }
    Ok(())
}
