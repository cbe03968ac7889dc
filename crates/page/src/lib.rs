//! The page as the page tools see it, and the browser side that reads and acts on it.
//!
//! This crate owns what crosses between a document and the agent: the [`Snapshot`] of a
//! page (visible text by block, every interactive element with a stable number, the
//! forms), the [`Act`]s the agent may do to a numbered element, and the pure decisions
//! a walk needs (what [`hidden`] means and what a [`Sight`] sees of text, an element's
//! [`role_of`], or the role it is [`inferred_role`] when only its cues say a person
//! operates it). On `wasm32` it also holds the walk itself ([`PageDomAdapter`]: the
//! live DOM into a snapshot, and an act onto an element), so the same code serves the
//! one-tag build, where the agent shares
//! the page's window, and the extension, where the agent lives in the side panel and a
//! small frame build of this crate (feature `frame`, `familiar_page.wasm`) answers it
//! from each frame of the tab. The agent's side (the tools, their limits, what the
//! model reads) is `familiar::tool::page`.

mod key;
mod name;
mod operable;
mod role;
mod sensitive;
mod visibility;

#[cfg(target_arch = "wasm32")]
mod act;
#[cfg(target_arch = "wasm32")]
mod dom;
#[cfg(all(target_arch = "wasm32", feature = "frame"))]
mod frame;
#[cfg(target_arch = "wasm32")]
mod realm;
#[cfg(target_arch = "wasm32")]
mod watch;

// Read as the root crate reads every type (`familiar_json`'s derive): one shared call
// per field, not serde's derived visitor per struct, in the page build that reads a
// frame's snapshot; the frame writes them with the derived `Serialize`.
use familiar_json::Read;
use serde::{Deserialize, Serialize};

#[cfg(target_arch = "wasm32")]
pub use dom::{PageDomAdapter, place_among_frames};
pub use key::{KEYS, Key, key};
pub use name::{UNSEEN_LIMIT, spoken};
pub use operable::{Cues, MAX_INFERRED, beside, inferred_role, passes_pointer_on, position};
pub use role::role_of;
pub use sensitive::{Sensitive, mask, sensitive};
pub use visibility::{
    Appearance, Hidden, Inside, Position, Rect, Rgba, Sight, clip_path, clip_rect, clip_shapes,
    contrast, covers, filter_opacity, frame_hidden, hidden,
};
#[cfg(target_arch = "wasm32")]
pub use watch::settle;

/// Where a block of text sits: what decides whether it is the page's content.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// Inside `main`, `article` or `role="main"`.
    Main,
    /// Navigation, banners, footers and asides: not what the page is about.
    Boilerplate,
    /// Anywhere else.
    Other,
}

/// A run of visible text, as one paragraph, heading or list item.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Block {
    /// `Some(1..=6)` for a heading.
    pub heading: Option<u8>,
    pub text: String,
    pub region: Region,
    /// The origin of the frame it is in (`https://ads.example`) when that is not the
    /// page's own: another site's words, which the model reads marked as theirs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
}

/// An interactive element as the model sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Control {
    /// Its number: the same for the same element on every read.
    pub id: u32,
    /// `button`, `link`, `textbox`, `checkbox`, `radio`, `combobox`, …
    pub role: String,
    /// Its accessible name (label, `aria-label`, text, placeholder, …).
    pub name: String,
    /// What a field holds, or a list's chosen option; a slider's value
    /// (`aria-valuetext`, `aria-valuenow`, or where a role-less handle sits, `"40%"`).
    pub value: Option<String>,
    /// A slider's or number field's least and greatest value, where the page says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
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
    /// A password, payment-card or one-time-code field: its value is masked
    /// ([`mask`]) and only the person types into it.
    #[serde(default)]
    pub sensitive: bool,
    /// Whether it has the keyboard focus.
    #[serde(default)]
    pub focused: bool,
    /// The number of the field whose popup it is in (the list a combobox's
    /// `aria-controls` names, the suggestions shown under the focused field).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub popup_of: Option<u32>,
    /// The origin of the frame it is in (`https://ads.example`) when that is not the
    /// page's own: another site's element, which the page's grants never cover.
    /// `None` for the page's own elements (and the frames of its origin).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<String>,
}

/// A form of the page: its fields are the controls whose `form` is its number.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
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
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Read)]
#[serde(default)]
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
    /// Whether the walk stopped before the end of a page too deep or too large to
    /// read whole (what it read is here).
    pub truncated: bool,
    /// Counts the changes seen on the page (its content, fields, navigation); two
    /// reads with the same count saw the same page.
    pub version: u64,
}

/// What an action does to an element.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "act", content = "value", rename_all = "snake_case")]
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
    /// Presses a key (a [`key`] name) on the element, with the browser's default
    /// for it: Enter submits a field's form, Space and Enter click a button, Tab
    /// moves the focus on.
    Press(String),
    /// Submits the form the element is (or is a field of), as its submit button would.
    Submit,
    DoubleClick,
    /// Moves the pointer over the element (a menu that opens on hover opens).
    Hover,
    /// Moves the keyboard focus out of the element, as a person moving on does: its
    /// `blur` handlers run (a widget that rewrites or refuses a typed value does so
    /// then). No tool of its own: the page actions do it after a fill.
    Leave,
}

/// How a refused fill of a read-only field begins (`readonly`, `aria-readonly`): the
/// page actions add the controls beside it, where its widget is worked.
pub const READ_ONLY: &str = "the field is read-only";

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
