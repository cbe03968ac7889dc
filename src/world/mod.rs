//! The world the demos share: its tables as the migrations define them, and the seed
//! rows the page starts from. One definition for the local store, the demo and tests.

use crate::store::{StoreError, TableSchema, tables_from_sql};

/// The migrations that create tables (security and the SQL seed are for PostgreSQL).
/// 0002's guild tables are gone (0010 replaced them with the guild council's, which
/// `crate::guild` keeps in a store of its own).
const TABLES: [&str; 5] = [
    include_str!("../../migrations/0001_world.sql"),
    include_str!("../../migrations/0003_workflows.sql"),
    include_str!("../../migrations/0009_world_triggers.sql"),
    include_str!("../../migrations/0011_agent_copies.sql"),
    include_str!("../../migrations/0018_standing_orders.sql"),
];

/// The seed rows, equal to `migrations/0005_seed.sql` (a test compares them).
pub const SEED: &str = include_str!("../../public/seed/world.json");

/// Every table of the world.
pub fn schemas() -> Result<Vec<TableSchema>, StoreError> {
    let mut schemas = Vec::new();
    for sql in TABLES {
        schemas.extend(tables_from_sql(sql)?);
    }
    Ok(schemas)
}

mod actions;
mod data;
pub mod functions;
pub mod orders;
pub mod perceive;
pub mod policy;
pub mod residents;
mod rows;
pub mod scenario;
pub mod told;
pub mod triggers;

pub use actions::ACTIONS;
pub use perceive::{Stats, perceive};

use std::rc::Rc;

use crate::base::clock::Clock;
use crate::store::{LocalStore, Persist, Store};
use crate::tool::ToolRegistry;

/// The seeded world user the agent is in the page's own world (Dotty, the tavern
/// keeper): the owner of its memories.
pub const AGENT_ID: i64 = 1;
/// The seeded world user the person plays in the page's own world.
pub const PLAYER_ID: i64 = 3;

/// Registers the game world's tools (seed 000) over `store`, acting as user `me`:
/// read-only data tools to look things up, and action tools that change the world
/// through its functions, which check its rules (gold and energy are checked, stats
/// stay within 0-100). The store must act as `me`: signed in as them online, or
/// [`functions::play_as`] offline.
///
/// Other players write into this world: the look-ups that return their text (posts,
/// messages, names) make the conversation untrusted, and every action then asks first
/// (`ask_if_untrusted`). An operator whose agent may act on its own — an NPC with no
/// one to ask — says so per tool with [`ToolRegistry::set_approval`].
pub fn register_tools(registry: &mut ToolRegistry, store: Rc<dyn Store>, me: i64) {
    watch(registry, &store);
    let world = rows::World {
        store,
        me,
        agent: false,
    };
    data::register(registry, &world);
    actions::register(registry, &world);
}

/// Registers the world's tools for `agent`, an agent the store's signed-in player owns
/// (or the player themselves): look-ups read as the agent, and actions change the
/// agent's rows through `act_as`, which checks the ownership.
pub fn register_agent_tools(registry: &mut ToolRegistry, store: Rc<dyn Store>, agent: i64) {
    watch(registry, &store);
    let world = rows::World {
        store,
        me: agent,
        agent: true,
    };
    data::register(registry, &world);
    actions::register(registry, &world);
}

/// Lets a run keep the world's look-ups only while no one writes through `store`:
/// other residents act in the same world while a run goes on (`run::driver::cache`).
fn watch(registry: &mut ToolRegistry, store: &Rc<dyn Store>) {
    let store = Rc::clone(store);
    registry.watch_writes(Rc::new(move || store.writes()));
}

/// The world's tables in the page with their functions, seeded on first use and played
/// as [`PLAYER_ID`]: kept through `persist` across reloads, or in memory only.
pub fn local(
    clock: Rc<dyn Clock>,
    persist: Option<Box<dyn Persist>>,
) -> Result<LocalStore, StoreError> {
    let store = functions::install(LocalStore::new(schemas()?).with_clock(clock));
    let store = match persist {
        Some(persist) => store.with_persistence(persist)?,
        None => store,
    };
    store.seed(SEED)?;
    functions::play_as(&store, PLAYER_ID)?;
    Ok(store)
}
