//! The run's optional self-review phases, as typed JSON contracts: reflection on a
//! drafted answer (finished / revise / more actions) and guessing the goal first.

use crate::base::json::{Read, SchemaText};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{
    AgentRun, Outcome, Phase,
    after_action::{says_yes, verdict_explained},
};
use crate::base::json::{self, Contract};
use crate::llm::ChatResponse;
use crate::llm::contract::DEFAULT_REASKS;
use crate::llm::message::Message;
use crate::run::event::{Event, Thought};

/// What a reflection decided about the draft answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema, SchemaText)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The answer stands.
    Finished,
    /// Rewrite the answer as the feedback says.
    Revise,
    /// The task needs more tool calls before answering.
    MoreActions,
}

/// A reflection on the draft answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, Read, SchemaText)]
pub struct Review {
    pub verdict: Verdict,
    /// What to change or do; may be empty when finished.
    #[serde(default)]
    pub feedback: String,
}

impl Contract for Review {
    fn schema() -> serde_json::Value {
        json::schema::whole::<Self>()
    }

    fn validate(&self) -> Result<(), String> {
        if self.verdict != Verdict::Finished && self.feedback.trim().is_empty() {
            return Err("feedback must say what to revise or do".into());
        }
        Ok(())
    }
}

/// The goal behind the user's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema, Read, SchemaText)]
pub struct GoalGuess {
    /// One sentence: what the user wants to have at the end.
    pub goal: String,
}

impl Contract for GoalGuess {
    fn schema() -> serde_json::Value {
        json::schema::whole::<Self>()
    }

    fn validate(&self) -> Result<(), String> {
        if self.goal.trim().is_empty() {
            return Err("goal must not be empty".into());
        }
        Ok(())
    }
}

pub const REVIEW_PROMPT: &str = "Review your last answer against the request. Reply with \
    JSON: {\"verdict\": \"finished\" | \"revise\" | \"more_actions\", \"feedback\": \
    \"...\"}.";

pub const GOAL_PROMPT: &str = "Before acting, say in one sentence what the user wants to \
    have at the end. Reply with JSON: {\"goal\": \"...\"}.";

impl AgentRun {
    pub(super) fn goal_checked(&mut self, response: ChatResponse) {
        let complete = says_yes(&response.text);
        self.events.push(Event::GoalChecked {
            complete,
            answer: response.text.clone(),
        });
        if complete {
            return self.finish(Outcome::GoalComplete {
                text: verdict_explained(&response.text),
            });
        }
        self.push(Message::user(format!(
            "The goal is not complete yet: {}. Decide the next step.",
            response.text.trim()
        )));
        self.phase = Phase::Reason;
    }

    /// A text answer stands, unless reflection is on and has rounds left.
    pub(super) fn answered(&mut self, text: String) {
        if self.reflections < self.limits.reflections {
            self.phase = Phase::Reflect { draft: text };
        } else {
            self.finish(Outcome::Answered { text });
        }
    }

    pub(super) fn reflected(&mut self, draft: String, response: ChatResponse) {
        let review = match self.contract_answer::<Review>(&response, "review") {
            Some(Ok(review)) => review,
            Some(Err(())) => return self.phase = Phase::Reflect { draft },
            None => return self.finish(Outcome::Answered { text: draft }),
        };
        self.reflections += 1;
        self.events.push(Event::Reflection(review.clone()));
        let instruction = match review.verdict {
            Verdict::Finished => return self.finish(Outcome::Answered { text: draft }),
            Verdict::Revise => format!("Revise your answer: {}", review.feedback),
            Verdict::MoreActions => format!("Do more before answering: {}", review.feedback),
        };
        self.push(Message::user(instruction));
        self.phase = Phase::Reason;
    }

    pub(super) fn goal_guessed(&mut self, response: ChatResponse) {
        match self.contract_answer::<GoalGuess>(&response, "goal guess") {
            Some(Ok(guess)) => {
                self.events.push(Event::GoalGuessed {
                    goal: guess.goal.clone(),
                });
                self.goal = Some(guess.goal);
            }
            Some(Err(())) => return self.phase = Phase::GuessGoal,
            None => {}
        }
        self.phase = Phase::Reason;
    }

    /// The typed answer of a review or goal guess (`what`): `Err` means "re-ask" (the
    /// problem is in the scratch messages), `None` means it stayed invalid and is
    /// dropped, with an error thought.
    pub(super) fn contract_answer<T: Contract>(
        &mut self,
        response: &ChatResponse,
        what: &str,
    ) -> Option<Result<T, ()>> {
        match json::parse::<T>(&response.text) {
            Ok(value) => {
                self.scratch.clear();
                Some(Ok(value))
            }
            Err(error) if self.scratch.len() < 2 * DEFAULT_REASKS as usize => {
                self.scratch
                    .push(Message::assistant(response.text.clone(), Vec::new()));
                self.scratch.push(Message::user(format!(
                    "Your previous reply could not be used: {error}. Reply again with only \
                     the JSON."
                )));
                Some(Err(()))
            }
            Err(error) => {
                self.scratch.clear();
                self.events.push(Event::Thought(Thought::Error {
                    message: format!("the model's {what} was unusable and is skipped: {error}"),
                }));
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schemas_written_at_compile_time_are_the_derived_ones() {
        assert_eq!(Review::schema(), schemars::schema_for!(Review).to_value());
        assert_eq!(
            GoalGuess::schema(),
            schemars::schema_for!(GoalGuess).to_value()
        );
    }
    use crate::base::json::parse;

    #[test]
    fn a_review_must_say_what_to_change_unless_finished() {
        assert!(parse::<Review>(r#"{"verdict": "finished"}"#).is_ok());
        assert!(parse::<Review>(r#"{"verdict": "revise", "feedback": " "}"#).is_err());
        let review = parse::<Review>(
            "Sure: {\"verdict\": \"more_actions\", \"feedback\": \"check the clock\"}",
        );
        assert_eq!(review.unwrap().verdict, Verdict::MoreActions);
    }
}
