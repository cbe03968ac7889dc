//! Familiar: an AI agent runtime that compiles to WebAssembly and lives in the tab.
//!
//! The pure core — messages, models, tools, the agent state machine and its driver —
//! compiles and tests natively. Browser effects live in `web`, the Leptos interface
//! in `ui`; both exist only on `wasm32`.

pub mod agent;
pub mod app;
pub mod auth;
pub mod clock;
pub mod delegate;
pub mod driver;
pub mod event;
pub mod http;
pub mod interaction;
pub mod json;
pub mod ledger;
pub mod llm;
pub mod markdown;
pub mod message;
pub mod openai;
pub mod retry;
pub mod rules;
pub mod run;
pub mod scenario;
pub mod scripted;
pub mod secret;
pub mod settings;
pub mod sort;
pub mod sse;
pub mod store;
pub mod supervisor;
pub mod tool;
pub mod tools;
pub mod workflow;
pub mod world;

#[cfg(target_arch = "wasm32")]
pub mod embed;
#[cfg(all(target_arch = "wasm32", feature = "ui"))]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod web;
