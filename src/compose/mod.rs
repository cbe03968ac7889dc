//! Compositions of agents built from the run and its tools: an [`agent`] (a named run
//! with its model and tools, usable as a sub-agent tool), the [`delegate`] router
//! (`/command`, `@agent`, chit-chat) and the [`supervisor`] preset.

pub mod agent;
pub mod delegate;
pub mod supervisor;
