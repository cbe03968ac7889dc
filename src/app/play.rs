//! The played character outside a turn: its transactions with the player, the stale
//! ones expired whenever a front end loads the page or opens the character (so neither
//! the demo's inspector nor a host's page shows an order that already timed out, with
//! no next message needed), and how a character file's problems read to its author.

use super::{AppError, Session, Update};
use crate::workflow::{Character, Transaction};

impl Session {
    /// Expires the player's stale transactions with the played character, telling
    /// the listeners of each ([`Update::TransactionExpired`]); the expired ones. Front
    /// ends call it when the page loads and when the character is opened.
    pub async fn expire_stale(&self) -> Result<Vec<Transaction>, AppError> {
        Ok(self.character_transactions().await?.1)
    }

    /// The player's pending transactions with the played character (one per
    /// workflow type, newest first), once the stale ones have expired; none when no
    /// character is played.
    pub async fn transactions(&self) -> Result<Vec<Transaction>, AppError> {
        Ok(self.character_transactions().await?.0)
    }

    /// (pending, expired now).
    async fn character_transactions(
        &self,
    ) -> Result<(Vec<Transaction>, Vec<Transaction>), AppError> {
        let config = &self.inner.config;
        let Some(play) = &config.play else {
            return Ok((Vec::new(), Vec::new()));
        };
        let (pending, expired) = play
            .character
            .current(&*play.world, config.clock.now(), &play.player)
            .await
            .map_err(|e| AppError::Transactions(e.to_string()))?;
        for transaction in &expired {
            self.tell(&Update::TransactionExpired {
                transaction: transaction.clone(),
            });
        }
        Ok((pending, expired))
    }
}

/// A character file read for its author: the character, or one message naming the
/// file (`from`: its URL, file name or config field) and every problem with its path.
pub fn load_character(text: &str, from: &str) -> Result<Character, String> {
    Character::from_json(text).map_err(|problems| {
        let lines: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
        format!(
            "the character file {from} has problems:\n{}",
            lines.join("\n")
        )
    })
}
