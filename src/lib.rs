//! Familiar: an AI agent runtime that compiles to WebAssembly and lives in the tab.
//!
//! The modules are the layers of ARCHITECTURE.md's table (rustfmt lists them in
//! alphabetical order; the table gives the order of layers, and a module imports only
//! from layers below its own): base; llm and store; tool, run, compose, workflow;
//! guild and world; app; web; demo, ui and js_api. Everything up to `app` is pure: it
//! compiles and tests natively. Browser effects live in `web`; the demo's wiring and
//! its Leptos interface (feature `ui`) and the JS API sit on top and exist only on
//! `wasm32`.

pub mod app;
pub mod base;
pub mod compose;
#[cfg(feature = "guild")]
pub mod guild;
pub mod llm;
pub mod run;
#[cfg(feature = "store")]
pub mod store;
pub mod tool;
pub mod trace;
#[cfg(feature = "workflows")]
pub mod workflow;
#[cfg(feature = "world")]
pub mod world;

#[cfg(all(target_arch = "wasm32", feature = "ui"))]
pub mod demo;
#[cfg(target_arch = "wasm32")]
pub mod js_api;
#[cfg(all(target_arch = "wasm32", feature = "ui"))]
pub mod ui;
#[cfg(target_arch = "wasm32")]
pub mod web;
