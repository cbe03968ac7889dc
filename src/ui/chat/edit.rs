//! Editing a sent message and asking again in its place: ↑ in an empty composer (the
//! last message) or an answer's Edit button puts the message back in the composer;
//! sending it replaces that turn, and the turns after it are dropped from the
//! conversation (the controller's `Session::edit`, saved at once). Dropping later turns
//! takes a second Send, which the note above the composer asks for.

use leptos::prelude::*;
use leptos::task::spawn_local;

use super::Chat;

impl Chat {
    /// Starts editing turn `id`; its message, for the composer. Not while a run is in
    /// flight or waits for a decision.
    pub fn start_editing(&self, id: u64) -> Option<String> {
        if self.busy.get_untracked() || self.pending.with_untracked(Option::is_some) {
            return None;
        }
        let input = self.turns.with_untracked(|turns| {
            turns
                .iter()
                .find(|t| t.id == id)
                .map(|t| t.interaction.with_untracked(|i| i.input.clone()))
        })?;
        self.editing.set(Some(id));
        self.confirming.set(false);
        Some(input)
    }

    /// Starts editing the last message (↑ in an empty composer).
    pub fn edit_last(&self) -> Option<String> {
        let last = self
            .turns
            .with_untracked(|turns| turns.last().map(|t| t.id))?;
        self.start_editing(last)
    }

    /// Leaves the message as it was.
    pub fn cancel_editing(&self) {
        self.editing.set(None);
        self.confirming.set(false);
    }

    /// What the note above the composer says while a message is edited.
    pub fn editing_note(&self) -> Option<String> {
        let id = self.editing.get()?;
        let later = self.turns_after(id);
        let dropped = match later {
            1 => "the turn after it".to_owned(),
            n => format!("the {n} turns after it"),
        };
        Some(match (later, self.confirming.get()) {
            (0, _) => "Editing your message: sending it asks again in its place.".to_owned(),
            (_, false) => format!(
                "Editing your message: sending it asks again in its place and drops {dropped}."
            ),
            (_, true) => format!("Send again to drop {dropped} and ask again, or cancel."),
        })
    }

    /// What the composer sends: an edit while one is under way, else a new message.
    /// False when the text stays in the composer (a second Send must confirm dropping
    /// later turns, or the edit was refused).
    pub fn submit(&self, text: String) -> bool {
        match self.editing.get_untracked() {
            Some(id) => self.send_edit(id, text),
            None => {
                self.send(text);
                true
            }
        }
    }

    fn turns_after(&self, id: u64) -> usize {
        self.turns.with(|turns| {
            turns
                .iter()
                .position(|t| t.id == id)
                .map_or(0, |at| turns.len() - at - 1)
        })
    }

    fn send_edit(&self, id: u64, text: String) -> bool {
        if self.busy.get_untracked() {
            return false;
        }
        if self.turns_after(id) > 0 && !self.confirming.get_untracked() {
            self.confirming.set(true);
            return false;
        }
        let Some(app) = self.app() else {
            return false;
        };
        match app.edit(id, &text) {
            Ok(run) => {
                self.cancel_editing();
                self.turns.update(|turns| {
                    if let Some(at) = turns.iter().position(|t| t.id == id) {
                        turns.truncate(at);
                    }
                });
                self.busy.set(true);
                let chat = *self;
                spawn_local(async move {
                    let _ = run.await;
                    chat.refresh(false);
                });
                true
            }
            Err(error) => {
                self.notices
                    .update(|n| n.push(format!("The message could not be edited: {error}.")));
                false
            }
        }
    }
}
