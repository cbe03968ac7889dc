//! Compositions of agents built from the run and its tools: an [`agent`] (a named run
//! with its model and tools, usable as an opaque sub-agent tool), the seed's
//! [`composite`] (its sub-agents' tools in its own list, each call routed to its
//! owner), the [`delegate`] router (`/command`, `@agent`, chit-chat, and the commands
//! listed as `{value, label}`) and the [`supervisor`] preset.

pub mod agent;
pub mod composite;
pub mod delegate;
pub mod supervisor;
