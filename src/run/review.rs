//! The run's optional self-review phases, as typed JSON contracts: reflection on a
//! drafted answer (finished / revise / more actions) and guessing the goal first.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::json::Contract;

/// What a reflection decided about the draft answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Review {
    pub verdict: Verdict,
    /// What to change or do; may be empty when finished.
    #[serde(default)]
    pub feedback: String,
}

impl Contract for Review {
    fn validate(&self) -> Result<(), String> {
        if self.verdict != Verdict::Finished && self.feedback.trim().is_empty() {
            return Err("feedback must say what to revise or do".into());
        }
        Ok(())
    }
}

/// The goal behind the user's words.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct GoalGuess {
    /// One sentence: what the user wants to have at the end.
    pub goal: String,
}

impl Contract for GoalGuess {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::parse;

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
