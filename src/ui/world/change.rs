//! The change log's entries: what a run did, as a sentence naming the agent, its
//! deed and why (the trigger), read from the turn's own steps.

use serde_json::Value;

use super::snapshot::capitalised;
use crate::run::interaction::Step;

/// One change a run made: its agent, turn and step, the action, and the sentence that
/// says what the agent did and why.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Change {
    pub(super) agent: String,
    pub(super) turn: u64,
    pub(super) step: usize,
    pub(super) tool: String,
    pub(super) sentence: String,
}

/// "At the market check, Mira bought 1 bread.": what `call_id` of `turn` in the
/// agent's `conversation` did and why, read from the turn's own steps.
pub(super) fn change_sentence(
    app: &crate::app::Session,
    agent: &str,
    conversation: &str,
    turn: u64,
    call_id: &str,
    tool: &str,
    result: &Result<Value, String>,
) -> String {
    let found = app.conversation_of(conversation).and_then(|c| {
        let turn = c.interactions.into_iter().find(|i| i.id == turn)?;
        let event = crate::world::told::trigger_of(&turn).map(|(_, event)| event);
        let arguments = turn.steps.iter().find_map(|step| match step {
            Step::ToolCall { call, .. } if call.id == call_id => Some(call.arguments.clone()),
            _ => None,
        });
        Some((event, arguments))
    });
    let (event, arguments) = found.unwrap_or_default();
    let deed = crate::world::told::deed(tool, arguments.as_deref().unwrap_or("{}"), Some(result));
    let why = crate::world::told::reason(event.as_deref().unwrap_or_default());
    let why = capitalised(why);
    format!("{why}, {agent} {deed}.").replace("”.", "”")
}
