//! The played character: a turn in character (its workflows around the model), and
//! outside a turn its transactions with the player, the stale ones expired whenever a
//! front end loads the page or opens the character (so neither the demo's inspector
//! nor a host's page shows an order that already timed out, with no next message
//! needed), and how a character file's problems read to its author.

use std::rc::Rc;

use super::turn::{Place, StopSignal};
use super::{AppError, Play, Session, Update, character_prompt};
use crate::compose::agent::Agent;
use crate::llm::message::Message;
use crate::llm::rules::RulesModel;
use crate::run::event::Event;
use crate::run::{Observation, Outcome};
use crate::tool::ToolRegistry;
use crate::workflow::{Character, Transaction, inject};

impl Session {
    /// A message to the character: its workflows first (intent, transaction,
    /// injection), then the model in character (its offline lines with no model),
    /// then the transaction recorded.
    pub(super) async fn in_character(
        &self,
        place: &Place,
        history: Vec<Message>,
        text: String,
        play: &Play,
        signal: StopSignal,
    ) -> Outcome {
        let clock = &*self.inner.config.clock;
        let character = &play.character;
        let prepared = character
            .before(
                &*play.world,
                clock,
                play.llm.as_deref(),
                &play.player,
                &text,
            )
            .await;
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(error) => {
                let outcome = Outcome::Failed {
                    error: format!("the character's transactions are unavailable: {error}"),
                };
                self.event(place, Event::Done(outcome.clone()));
                return outcome;
            }
        };
        for transaction in &prepared.expired {
            self.tell(&Update::TransactionExpired {
                transaction: transaction.clone(),
            });
        }
        self.tell(&Update::CharacterPrepared {
            conversation: place.conversation.clone(),
            turn: place.turn,
            injection: prepared.injection.clone(),
        });
        let llm = play.llm.clone().unwrap_or_else(|| {
            Rc::new(RulesModel {
                rules: Vec::new(),
                fallback: character.offline_reply(&prepared).unwrap_or_default(),
            })
        });
        let who = &character.identity;
        let agent = Rc::new(Agent::new(
            who.name.clone(),
            who.occupation.clone(),
            inject(&character_prompt(character), prepared.injection.as_deref()),
            llm,
            Rc::new(ToolRegistry::new()),
        ));
        let run = self.build_run(place, &agent, Observation::chat(text), history, false);
        let outcome = self.drive(place, &agent, run, true, signal).await;
        if matches!(
            outcome,
            Outcome::Failed { .. } | Outcome::Aborted { .. } | Outcome::BudgetReached { .. }
        ) {
            return outcome;
        }
        let recorded = character
            .after(&*play.world, clock, &play.player, &prepared)
            .await;
        let (transaction, error) = match recorded {
            Ok(transaction) => (transaction, None),
            Err(error) => (None, Some(error.to_string())),
        };
        self.tell(&Update::TransactionRecorded {
            conversation: place.conversation.clone(),
            turn: place.turn,
            transaction,
            error,
        });
        outcome
    }

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
