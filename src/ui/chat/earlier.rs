//! A long conversation opens on its newest turns: drawing hundreds of turns (each with
//! its markdown and steps) is what made opening one slow, and only the last few are on
//! screen. The older ones are drawn on request, a batch at a time.

use leptos::prelude::*;

use super::{Chat, TurnHandle};

/// How many turns a conversation opens on (40 messages, more than a tall window
/// shows), and how many more each "Show earlier" draws. Each turn drawn costs about
/// 1.6 ms of mounting (bench/ui).
pub const SHOWN_TURNS: usize = 20;

impl Chat {
    /// Draws up to [`SHOWN_TURNS`] more of the turns before those on screen.
    pub fn show_earlier(&self) {
        self.hidden.update(|h| *h = h.saturating_sub(SHOWN_TURNS));
    }

    /// The turns drawn: all but the oldest [`Chat::hidden`].
    pub fn shown_turns(&self) -> Vec<TurnHandle> {
        let hidden = self.hidden.get();
        self.turns
            .with(|turns| turns.iter().skip(hidden).copied().collect())
    }

    /// How many messages (a person's and an answer per turn) are not drawn.
    pub fn earlier_messages(&self) -> usize {
        let hidden = self.hidden.get();
        self.turns.with(|turns| hidden.min(turns.len())) * 2
    }
}
