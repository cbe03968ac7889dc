//! The demo agent's parts: its system prompt, its rules model, its world and its
//! tools. The UI and the real-model check assemble the same agent from them.

use std::rc::Rc;

use super::{BrowserClock, LocalStorage, PageTitle};
use crate::ledger::Ledger;
use crate::rules::RulesModel;
use crate::store::{LocalStore, Store, StoreError};
use crate::tool::ToolRegistry;
use crate::tools::{CurrentTime, Recall, Remember};
use crate::world;

const RULES: &str = include_str!("../../public/rules/demo.json");
/// The `localStorage` key of the demo world.
pub const WORLD_KEY: &str = "familiar.world";
/// The demo agent's own user in the world (Dotty, the tavern keeper).
const AGENT_ID: i64 = 1;

/// The demo agent's instructions to its model.
pub const SYSTEM_PROMPT: &str = "You are Familiar, an assistant that lives in the user's \
    browser tab. Use the tools to read the page and the clock, and to remember and recall \
    facts; answer briefly.";

/// The no-key model of the demo. A broken rules file still yields a model, one that
/// says what is wrong with the file.
pub fn rules_model() -> RulesModel {
    RulesModel::from_json(RULES).unwrap_or_else(|error| RulesModel {
        rules: Vec::new(),
        fallback: error.to_string(),
    })
}

/// The demo world: the migrations' tables in the page, seeded on first use and kept in
/// `localStorage` across reloads.
pub fn world() -> Result<LocalStore, StoreError> {
    let store = LocalStore::new(world::schemas()?)
        .with_clock(Rc::new(BrowserClock))
        .with_persistence(Box::new(LocalStorage::new(WORLD_KEY)))?;
    store.seed(world::SEED)?;
    Ok(store)
}

/// The demo's tools: the clock, the page, and memory in the demo world. If the saved
/// world cannot be read, the memory tools are left out (and the saved world untouched)
/// rather than overwriting it.
pub fn tools() -> ToolRegistry {
    let mut tools = ToolRegistry::new();
    tools
        .register(CurrentTime::new(Rc::new(BrowserClock)))
        .register(PageTitle);
    match world() {
        Ok(world) => {
            let world: Rc<dyn Store> = Rc::new(world);
            tools.with_ledger(Ledger::new(Rc::clone(&world), AGENT_ID.to_string()));
            tools
                .register(Remember::new(
                    world.clone(),
                    Rc::new(BrowserClock),
                    AGENT_ID,
                ))
                .register(Recall::new(world, AGENT_ID));
        }
        Err(error) => {
            web_sys::console::error_1(
                &format!("familiar: the demo world is unavailable: {error}").into(),
            );
        }
    }
    tools
}
