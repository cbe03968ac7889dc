//! The guild council of seed 001, a game beside the world: each player steers their own
//! guild's four resources through proposals their guild's agent drafts, an oracle
//! scries, and they decree; a tick applies what was accepted, once, and the natural
//! pressures every time.
//!
//! Its rules are database functions (`migrations/0010_guild_council.sql`) with Rust
//! twins for the page's own store ([`rules`]); [`council`] asks the model (or, with
//! none configured, deterministic rules) for drafts and forecasts through the JSON
//! contract; [`game`] is the client a view drives. Views and the browser's cross-tab
//! lock live above (`ui::guild`, `web::lock`).

pub mod council;
pub mod game;
pub mod rules;

use crate::base::json::Read;
use std::rc::Rc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::base::clock::Clock;
use crate::store::{LocalStore, Persist, StoreError, TableSchema, tables_from_sql};

pub use council::{Council, Draft, Drafts, Forecast};
pub use game::{Board, Exclusive, Game, GameError, Unlocked};

/// The guild's tables, as the migration defines them.
const TABLES: &str = include_str!("../../migrations/0010_guild_council.sql");

/// Whom the page's own store plays the guild as, offline.
pub const LOCAL_OWNER: &str = "local-player";

/// One of the guild's resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Resource {
    /// The treasury; wages are paid from it. 0-9999.
    Gold,
    /// The stores; the guild eats every tick. 0-999.
    Food,
    /// The members' spirit; hunger and unpaid wages sap it. 0-100.
    Morale,
    /// Standing in the town; it fades unless tended. 0-100.
    Influence,
}

/// Every resource, in the order the page shows them.
pub const RESOURCES: [Resource; 4] = [
    Resource::Gold,
    Resource::Food,
    Resource::Morale,
    Resource::Influence,
];

impl Resource {
    /// Its column and JSON name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Gold => "gold",
            Self::Food => "food",
            Self::Morale => "morale",
            Self::Influence => "influence",
        }
    }

    /// The resource called `name`, if there is one.
    pub fn named(name: &str) -> Option<Self> {
        RESOURCES.into_iter().find(|r| r.name() == name)
    }

    /// The most it can hold (the least is 0).
    pub fn most(self) -> i64 {
        match self {
            Self::Gold => 9999,
            Self::Food => 999,
            Self::Morale | Self::Influence => 100,
        }
    }

    /// `value` kept within the bounds: clamped, never refused.
    pub fn clamp(self, value: i64) -> i64 {
        value.clamp(0, self.most())
    }
}

/// The guild's resources at one tick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Read)]
pub struct Resources {
    pub gold: i64,
    pub food: i64,
    pub morale: i64,
    pub influence: i64,
}

impl Resources {
    /// The amount of `resource`.
    pub fn get(&self, resource: Resource) -> i64 {
        match resource {
            Resource::Gold => self.gold,
            Resource::Food => self.food,
            Resource::Morale => self.morale,
            Resource::Influence => self.influence,
        }
    }
}

/// The guild now: its tick and resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Guild {
    pub owner: String,
    pub tick: i64,
    #[serde(flatten)]
    pub resources: Resources,
}

/// Where a proposal stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Pending,
    Accepted,
    Rejected,
    Applied,
}

/// A proposal on the council's table.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Proposal {
    pub id: i64,
    /// The tick it was drafted at.
    pub tick: i64,
    pub title: String,
    pub description: String,
    /// Resource name to change; the oracle's forecast replaces the draft's guess.
    pub predicted_delta: serde_json::Map<String, Value>,
    pub risk_note: Option<String>,
    pub status: Status,
    /// The tick that applied it, once applied.
    pub applied_tick: Option<i64>,
}

impl Proposal {
    /// Its predicted change to `resource` (0 when it names none).
    pub fn change(&self, resource: Resource) -> i64 {
        self.predicted_delta
            .get(resource.name())
            .and_then(Value::as_i64)
            .unwrap_or(0)
    }
}

/// One tick's record: the resources after it, the proposals it applied and what the
/// natural pressures did (`fresh` is false when a repeated tick answered the record).
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Record {
    pub tick: i64,
    #[serde(flatten)]
    pub resources: Resources,
    #[serde(default)]
    pub applied: Vec<i64>,
    #[serde(default)]
    pub pressures: Value,
    #[serde(default)]
    pub fresh: Option<bool>,
}

/// The guild's tables.
pub fn schemas() -> Result<Vec<TableSchema>, StoreError> {
    tables_from_sql(TABLES)
}

/// The guild in the page: its tables with their functions, played as
/// [`LOCAL_OWNER`], kept through `persist` across reloads or in memory only.
pub fn local(
    clock: Rc<dyn Clock>,
    persist: Option<Box<dyn Persist>>,
) -> Result<LocalStore, StoreError> {
    let store = rules::install(LocalStore::new(schemas()?).with_clock(clock));
    let store = match persist {
        Some(persist) => store.with_persistence(persist)?,
        None => store,
    };
    store.sign_in_as(Some(LOCAL_OWNER.into()));
    Ok(store)
}
