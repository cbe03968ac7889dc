//! The loop's decisions, as small pure functions over the run record: what follows an
//! action, whether a goal check said yes, and what the model is told when the run goes
//! on.

use super::context::{FollowUp, PlanStep};

/// What follows an action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterAction {
    /// The action failed: reason again, with the error.
    Replan { tool: String, error: String },
    /// Plan steps are left: reason about the next one.
    Continue { next: String },
    /// Context memory owes a follow-up: remind the model and reason again.
    Remind(FollowUp),
    /// Nothing is left that the run knows of: ask whether the goal is complete.
    CheckGoal,
}

/// The seed's loop node: failure first, then the plan, then what is owed.
pub fn after_action(
    tool: &str,
    failed: Option<&str>,
    plan: &[PlanStep],
    owed: &[FollowUp],
) -> AfterAction {
    if let Some(error) = failed {
        return AfterAction::Replan {
            tool: tool.to_owned(),
            error: error.to_owned(),
        };
    }
    if let Some(next) = plan.first() {
        return AfterAction::Continue {
            next: next.to_string(),
        };
    }
    if let Some(follow_up) = owed.first() {
        return AfterAction::Remind(follow_up.clone());
    }
    AfterAction::CheckGoal
}

impl AfterAction {
    /// What the model is told before it reasons again; none for a goal check.
    pub fn prompt(&self) -> Option<String> {
        match self {
            Self::Replan { tool, error } => Some(format!(
                "The action `{tool}` failed: {error}. Adjust your plan and decide the next \
                 action."
            )),
            Self::Continue { next } => {
                Some(format!("That worked. Next step of your plan: {next}."))
            }
            Self::Remind(follow_up) => Some(format!(
                "Reminder: the original trigger still needs this before you are done: {} \
                 (with `{}`).",
                follow_up.note, follow_up.tool
            )),
            Self::CheckGoal => None,
        }
    }
}

/// The question that asks whether the goal is complete; the rules model recognises
/// its last words (`rules::COMPLETION_QUESTION`, in any case; a test keeps them equal).
pub fn goal_question(goal: &str, actions: &str) -> String {
    format!(
        "Original goal: {goal}\nActions so far: {actions}\nIs the original goal \
         complete? Answer YES or NO, with a brief explanation."
    )
}

/// What a goal-check answer says besides its verdict — "YES, the reply was sent." is
/// "The reply was sent." — to stand as the run's answer; the whole answer when it says
/// nothing else.
pub fn verdict_explained(answer: &str) -> String {
    let trimmed = answer.trim();
    let word: String = trimmed.chars().take_while(|c| c.is_alphabetic()).collect();
    if !["yes", "no"].contains(&word.to_lowercase().as_str()) {
        return trimmed.to_owned();
    }
    let rest = trimmed[word.len()..].trim_start_matches(|c: char| {
        c.is_whitespace() || matches!(c, ',' | '.' | ':' | ';' | '!' | '-' | '—' | '–')
    });
    // ASCII only: Unicode's upper-case table would cost the bundle 7 KB gzip.
    let mut chars = rest.chars();
    match chars.next() {
        Some(first) => std::iter::once(first.to_ascii_uppercase())
            .chain(chars)
            .collect(),
        None => trimmed.to_owned(),
    }
}

/// Whether a goal-check answer says yes: its first word decides, else the seed's rule
/// (any "yes" without a "no").
pub fn says_yes(answer: &str) -> bool {
    let lower = answer.to_lowercase();
    let first: String = lower
        .trim_start()
        .chars()
        .take_while(|c| c.is_alphabetic())
        .collect();
    match first.as_str() {
        "yes" => true,
        "no" => false,
        _ => lower.contains("yes") && !lower.contains("no"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn owed() -> Vec<FollowUp> {
        vec![FollowUp {
            tool: "reply_to_message".into(),
            note: "report back".into(),
        }]
    }

    #[test]
    fn failed_action_triggers_replan_with_the_error() {
        let next = after_action(
            "buy_item",
            Some("Insufficient gold"),
            &["eat".into()],
            &owed(),
        );
        assert_eq!(
            next,
            AfterAction::Replan {
                tool: "buy_item".into(),
                error: "Insufficient gold".into()
            }
        );
        assert!(next.prompt().unwrap().contains("Insufficient gold"));
    }

    #[test]
    fn plan_steps_left_continue_before_follow_ups() {
        let next = after_action("do_work", None, &["buy food".into()], &owed());
        assert_eq!(
            next,
            AfterAction::Continue {
                next: "buy food".into()
            }
        );
    }

    #[test]
    fn an_owed_follow_up_reminds_and_only_then_the_goal_is_checked() {
        let next = after_action("join_battle", None, &[], &owed());
        assert_eq!(next, AfterAction::Remind(owed()[0].clone()));
        assert!(next.prompt().unwrap().contains("reply_to_message"));
        assert_eq!(
            after_action("join_battle", None, &[], &[]),
            AfterAction::CheckGoal
        );
    }

    #[test]
    fn goal_answers_are_read_by_their_first_word() {
        assert!(says_yes("YES, the reply was sent."));
        assert_eq!(
            verdict_explained("YES, the reply was sent."),
            "The reply was sent."
        );
        assert_eq!(
            verdict_explained(" yes — spawned goblin. "),
            "Spawned goblin."
        );
        assert_eq!(verdict_explained("YES."), "YES.", "nothing else to say");
        assert_eq!(
            verdict_explained("Yesterday it was sent."),
            "Yesterday it was sent."
        );
        assert_eq!(verdict_explained("The answer is yes"), "The answer is yes");
        assert!(!says_yes("No. Nothing is done yet, yes?"));
        assert!(says_yes("The answer is yes"));
        assert!(!says_yes("unclear"));
        assert!(
            goal_question("x", "[]")
                .to_lowercase()
                .contains(crate::llm::rules::COMPLETION_QUESTION)
        );
    }
}
