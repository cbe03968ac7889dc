//! The inspector's view of the latest run and of the world: what it shows, and the
//! reads (the agent's memories, the character's pending transactions) that fill it.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::Chat;
use super::transaction::describe;
use crate::demo;
use crate::run::{Boundaries, ContextMemory};
use crate::store::{Filtered, Select};

/// What the inspector shows about the latest run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inspector {
    pub trigger: String,
    pub boundaries: Boundaries,
    pub plan: Vec<String>,
    pub memory: ContextMemory,
    pub iterations: u32,
    pub cap: u32,
    /// The agent's memories in the world, newest first.
    pub world: Vec<String>,
    /// The character's transaction with the player, when a character is played.
    pub transaction: String,
    /// What the character's workflows injected into the last prompt.
    pub injection: String,
    /// Every pending transaction with the character, newest first.
    pub pending: Vec<String>,
}

impl Chat {
    /// Reads the agent's memories and the character's pending transaction for the
    /// inspector.
    pub(super) fn refresh_world(&self) {
        self.refresh(true);
    }

    /// Reads the agent's memories and the character's pending transactions (the
    /// controller expires the stale ones first); the newest pending one becomes the
    /// inspector's transaction when `transaction`.
    pub(super) fn refresh(&self, transaction: bool) {
        let (Some(world), Some(app)) = (self.world(), self.app()) else {
            return;
        };
        let inspector = self.inspector;
        let who = demo::identity_for(&self.settings.with_untracked(|s| s.backend.clone()));
        spawn_local(async move {
            let select = Select::from("memories")
                .columns("content")
                .eq("user_id", who.owner)
                .order("id", false)
                .limit(20);
            if let Ok(rows) = world.select(&select).await {
                let memories = rows
                    .iter()
                    .filter_map(|r| r.get("content")?.as_str().map(str::to_owned))
                    .collect();
                inspector.update(|i| i.world = memories);
            }
            match app.transactions().await {
                Ok(pending) => inspector.update(|i| {
                    i.pending = pending.iter().map(describe).collect();
                    if transaction {
                        i.transaction = pending
                            .first()
                            .map_or_else(|| "none pending".to_owned(), describe);
                    }
                }),
                Err(error) => inspector.update(|i| i.transaction = error.to_string()),
            }
        });
    }
}
