//! The page tools: what the agent reads of the page it sits on, and what it may do to
//! it (feature `page`).
//!
//! This module owns the decisions — which text is readable (hidden text is left out),
//! which elements are interactive and how they are numbered, what an action must find
//! before it runs and how its effect is reported (a field judged by what it shows once
//! the page settled), and the size limits the model is told about. The browser's part
//! is behind [`PageDom`]: it reads the page into a plain [`Snapshot`] and performs an
//! [`Act`] on a numbered element — the page's own window in the one-tag build
//! (`familiar_page::PageDomAdapter`), the tab's frames over the extension's messaging
//! from its side panel (`js_api::page`). The snapshot's types and the walk are the
//! `familiar-page` crate's (`crates/page`).
//!
//! Page text is another party's words: every tool here is [`Author::Others`], so once a
//! conversation has read the page, any action asks first; the page actions ask
//! always ([`Approval::Ask`]), whatever the conversation has read.
//!
//! [`Author::Others`]: crate::tool::Author::Others
//! [`Approval::Ask`]: crate::tool::Approval::Ask

mod act;
mod actions;
pub mod consequence;
pub mod declared;
mod forms;
mod index;
mod overview;
pub mod prefer;
mod read;
mod settled;
mod tools;

use futures::future::LocalBoxFuture;

pub use familiar_page::{
    Act, Appearance, Block, Control, Form, Hidden, Region, Snapshot, clip, hidden, squash,
};

pub use act::{changes, check, describe, prepare};
pub use actions::ACTIONS;
pub use declared::DeclaredTools;
pub use forms::{forms, links};
pub use index::{ElementIndex, role_of};
pub use overview::{COMMANDS, rules};
pub use read::{find, outline, readable, summary};
pub use tools::{LOOKUPS, READ_LIMIT, register};

/// The browser behind the page tools: the page's window, or a tab's frames reached
/// over messaging; either way a read or an act may wait.
pub trait PageDom {
    /// Reads the page as it is now.
    fn snapshot(&self) -> LocalBoxFuture<'_, Result<Snapshot, String>>;
    /// The page as last read (or read now, when that costs no wait): what an
    /// approval card describes before the action runs and checks it again.
    fn last(&self) -> Option<Snapshot>;
    /// Does `act` to the element numbered `element`; [`check`] has already found it
    /// there, visible and enabled.
    fn perform<'a>(&'a self, element: u32, act: &'a Act) -> LocalBoxFuture<'a, Result<(), String>>;
    /// Waits for the page to react (handlers scheduled by the action, a widget's own
    /// events, a navigation it started) before the report of what changed is read and
    /// a field is held to what was asked of it.
    fn settle(&self) -> LocalBoxFuture<'static, ()>;
}
