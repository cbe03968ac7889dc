//! The page tools: what the agent reads of the page it sits on, and what it may do to
//! it (feature `page`).
//!
//! This module owns the decisions — which text is readable (hidden text is left out),
//! which elements are interactive and how they are numbered, what an action must find
//! before it runs and how its effect is reported, and the size limits the model is told
//! about. The browser's part is behind [`PageDom`]: it walks the live DOM into a plain
//! [`Snapshot`] and performs an [`Act`] on a numbered element (`web::PageDomAdapter`).
//!
//! Page text is another party's words: every tool here is [`Author::Others`], so once a
//! conversation has read the page, any action asks first; the page actions ask
//! always ([`Approval::Ask`]), whatever the conversation has read.
//!
//! [`Author::Others`]: crate::tool::Author::Others
//! [`Approval::Ask`]: crate::tool::Approval::Ask

mod act;
mod forms;
mod index;
mod overview;
mod read;
mod tools;
mod visibility;

use futures::future::LocalBoxFuture;

pub use act::{changes, check, describe};
pub use forms::{forms, links};
pub use index::{ElementIndex, role_of};
pub use overview::{COMMANDS, rules};
pub use read::{find, outline, readable, summary};
pub use tools::{ACTIONS, LOOKUPS, READ_LIMIT, register};
pub use visibility::{Appearance, Hidden, hidden};

/// Where a block of text sits: what decides whether it is the page's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Inside `main`, `article` or `role="main"`.
    Main,
    /// Navigation, banners, footers and asides: not what the page is about.
    Boilerplate,
    /// Anywhere else.
    Other,
}

/// A run of visible text, as one paragraph, heading or list item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// `Some(1..=6)` for a heading.
    pub heading: Option<u8>,
    pub text: String,
    pub region: Region,
}

/// An interactive element as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Control {
    /// Its number: the same for the same element on every read.
    pub id: u32,
    /// `button`, `link`, `textbox`, `checkbox`, `radio`, `combobox`, …
    pub role: String,
    /// Its accessible name (label, `aria-label`, text, placeholder, …).
    pub name: String,
    /// What a field holds, or a list's chosen option.
    pub value: Option<String>,
    /// For checkboxes, radios and switches.
    pub checked: Option<bool>,
    pub disabled: bool,
    /// Whether a person could see it (not hidden, not off-screen).
    pub visible: bool,
    /// A list's options, by their text.
    pub options: Vec<String>,
    /// Where a link leads (its resolved address).
    pub href: Option<String>,
    /// The number of the form it belongs to.
    pub form: Option<u32>,
}

/// A form of the page: its fields are the controls whose `form` is its number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Form {
    /// Its number, from the same count as the controls'.
    pub id: u32,
    /// Its accessible name (`aria-label`, `name`, `id`, its first legend or heading).
    pub name: String,
    /// Where it is sent, and how (`get` or `post`).
    pub action: String,
    pub method: String,
    pub visible: bool,
}

/// The page as it is now.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    pub title: String,
    /// Visible text, in document order.
    pub blocks: Vec<Block>,
    /// Interactive elements, visible or not, in document order.
    pub controls: Vec<Control>,
    /// The page's forms, in document order.
    pub forms: Vec<Form>,
    /// The text the person has selected on the page (empty when none).
    pub selection: String,
    /// Where the page is: origin and path (no query, which may carry secrets).
    pub location: String,
    /// Counts the changes seen on the page (its content, fields, navigation); two
    /// reads with the same count saw the same page.
    pub version: u64,
}

/// What an action does to an element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Act {
    Click,
    /// Replaces a field's text, firing `input` and `change`.
    Fill(String),
    /// Chooses the option with this text, firing `input` and `change`.
    Select(String),
    /// Checks or unchecks a checkbox (or checks a radio) as a click would.
    Check(bool),
    ScrollTo,
    /// Outlines the element for a few seconds, for the person to see.
    Highlight,
}

/// The browser behind the page tools.
pub trait PageDom {
    /// Reads the page as it is now.
    fn snapshot(&self) -> Result<Snapshot, String>;
    /// Does `act` to the element numbered `element`; [`check`] has already found it
    /// there, visible and enabled.
    fn perform(&self, element: u32, act: &Act) -> Result<(), String>;
    /// Waits for the page to react (handlers scheduled by the action) before the
    /// report of what changed is read.
    fn settle(&self) -> LocalBoxFuture<'static, ()>;
}

/// Cuts `text` to at most `max` characters, on a character boundary, marking the cut.
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => format!("{}…", text.get(..end).unwrap_or(text)),
        None => text.to_owned(),
    }
}

/// Collapses runs of whitespace into one space and trims the ends.
pub fn squash(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}
