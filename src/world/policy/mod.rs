//! The offline world policy: a deterministic [`Llm`] that plays seed 000's world with
//! no network and no key. It reads each request as a model would — the situation the
//! observation describes (event, the actor's identity, subject, message to answer),
//! the calls it made and what its data tools returned, the loop's notes (a failure to
//! replan, the next plan step, a reminder of what is owed) — and decides the next
//! turn: look-ups (chained, several per turn), or one action with a `plan` call
//! recording the steps left and the follow-ups owed, or an answer. It keeps no state
//! of its own: everything it knows is in the transcript, so a run it plays can be
//! saved, reloaded and resumed like any other.
//!
//! What it decides is in [`decide`]; this module reads the request.

mod decide;

use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::{
    ChatRequest, ChatResponse, DeltaSink, FinishReason, Llm, LlmError, ToolChoice, replay_as_deltas,
};
use crate::run::PLAN_TOOL;
use decide::{Turn, decide};

/// The world policy; it has no settings: the world and the observation decide.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorldPolicy;

impl Llm for WorldPolicy {
    fn model(&self) -> Option<&str> {
        Some("rules")
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        let mut response = respond(request);
        // Rules, no provider: no tokens, no cost, said as such.
        response.usage = Some(crate::llm::Usage::default());
        replay_as_deltas(&response, sink);
        Box::pin(async move { Ok(response) })
    }
}

/// The policy's answer to one request.
pub fn respond(request: &ChatRequest) -> ChatResponse {
    // A review or a goal guess, when the session turns them on: answered as the rules
    // model answers them.
    if let Some(answer) = crate::llm::rules::phases::answer(request) {
        return answer;
    }
    let seen = Seen::read(request);
    if request.tool_choice == ToolChoice::None {
        let text = if seen.goal_question {
            format!("YES. {}", seen.summary())
        } else {
            seen.summary()
        };
        return text_only(text);
    }
    match decide(&seen) {
        Turn::Look(calls) => calls_response(&seen, calls, None),
        Turn::Act { why, call, plan } => calls_response(&seen, vec![call], Some((why, plan))),
        Turn::Answer(text) => text_only(text),
    }
}

fn text_only(text: String) -> ChatResponse {
    ChatResponse {
        text,
        reasoning: String::new(),
        tool_calls: Vec::new(),
        finish: FinishReason::Stop,
        usage: None,
        served: Default::default(),
    }
}

/// The response making `calls` (each `(tool, arguments)`), after a `plan` call when
/// the turn acts with a plan to record.
fn calls_response(
    seen: &Seen,
    calls: Vec<(String, Value)>,
    acting: Option<(String, Option<Value>)>,
) -> ChatResponse {
    let turn = seen.turns + 1;
    let mut tool_calls = Vec::new();
    let mut reasoning = String::from("Looking up what I need.");
    if let Some((why, plan)) = acting {
        reasoning = why;
        if let Some(plan) = plan.filter(|_| seen.offers(PLAN_TOOL)) {
            tool_calls.push(ToolCall {
                id: format!("w{turn}-plan").into(),
                name: PLAN_TOOL.into(),
                arguments: plan.to_string().into(),
            });
        }
    }
    for (index, (name, arguments)) in calls.into_iter().enumerate() {
        tool_calls.push(ToolCall {
            id: format!("w{turn}-{index}").into(),
            name: name.into(),
            arguments: arguments.to_string().into(),
        });
    }
    ChatResponse {
        text: String::new(),
        reasoning,
        tool_calls,
        finish: FinishReason::ToolCalls,
        usage: None,
        served: Default::default(),
    }
}

/// One call of this run with its result (`None` while it has none).
#[derive(Debug, Clone)]
pub struct Called {
    id: String,
    pub name: String,
    pub args: Value,
    pub result: Option<Result<Value, String>>,
}

impl Called {
    fn ok(&self) -> Option<&Value> {
        self.result.as_ref().and_then(|r| r.as_ref().ok())
    }

    fn error(&self) -> Option<&str> {
        self.result
            .as_ref()
            .and_then(|r| r.as_ref().err())
            .map(String::as_str)
    }
}

/// What the request says: the situation, and the run so far.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// e.g. `battle.started`.
    pub event: String,
    /// The actor as the situation gives it (`{id, name, state: {identity}}`).
    pub actor: Value,
    pub subject_id: Option<Value>,
    pub message_id: Option<Value>,
    /// The text that started the run (the message, the event's description).
    pub text: String,
    /// This run's calls, in order (`plan` left out).
    pub calls: Vec<Called>,
    /// Model turns this run has taken.
    pub turns: usize,
    /// The facts and follow-ups recorded with `plan`, merged.
    pub remembered: serde_json::Map<String, Value>,
    /// The loop's latest note, when it is the last message.
    pub note: Option<String>,
    pub goal_question: bool,
    offered: Vec<String>,
}

/// The loop's own notes, which are not a new request.
const NOTES: [&str; 4] = [
    "The action `",
    "That worked.",
    "Reminder:",
    "Original goal:",
];

fn is_note(text: &str) -> bool {
    NOTES.iter().any(|note| text.starts_with(note))
}

impl Seen {
    fn read(request: &ChatRequest) -> Self {
        let mut seen = Self {
            offered: request.tools.iter().map(|t| t.name.clone()).collect(),
            ..Self::default()
        };
        seen.read_situation(&request.system);
        let messages = &request.messages[..];
        let start = messages
            .iter()
            .rposition(|m| m.role == Role::User && !is_note(&m.content))
            .unwrap_or(0);
        let run = messages.get(start..).unwrap_or_default();
        if let Some(first) = run.first() {
            seen.text = unquoted(&first.content);
        }
        for message in run {
            seen.read_message(message);
        }
        if let Some(last) = run
            .last()
            .filter(|m| m.role == Role::User && is_note(&m.content))
        {
            seen.note = Some(last.content.clone());
        }
        seen.goal_question = request.messages.last().is_some_and(|m| {
            m.role == Role::User && m.content.to_lowercase().contains("answer yes or no")
        });
        seen
    }

    fn read_situation(&mut self, system: &str) {
        for line in system.lines() {
            if let Some(rest) = line.strip_prefix("SITUATION: ") {
                self.event = rest.split(' ').next().unwrap_or_default().to_owned();
            } else if let Some(rest) = line.strip_prefix("YOU: ") {
                self.actor = serde_json::from_str(rest).unwrap_or(Value::Null);
            } else if let Some(rest) = line.strip_prefix("SUBJECT: ") {
                let id = rest.split(' ').nth(1).unwrap_or_default();
                self.subject_id = serde_json::from_str(id).ok();
            } else if let Some(rest) = line.strip_prefix("MESSAGE ID: ") {
                self.message_id = serde_json::from_str(rest).ok();
            }
        }
    }

    fn read_message(&mut self, message: &Message) {
        match message.role {
            Role::Assistant => {
                self.turns += 1;
                for call in &message.tool_calls {
                    let args = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
                    if call.name == PLAN_TOOL {
                        self.remember(&args);
                        continue;
                    }
                    self.calls.push(Called {
                        id: call.id.to_string(),
                        name: call.name.to_string(),
                        args,
                        result: None,
                    });
                }
            }
            Role::Tool => {
                let id = message.tool_call_id.as_deref().unwrap_or_default();
                let value: Value =
                    serde_json::from_str(&message.content).unwrap_or(json!(message.content));
                let result = match value.get("error").and_then(Value::as_str) {
                    Some(error) if value.as_object().is_some_and(|o| o.len() == 1) => {
                        Err(error.to_owned())
                    }
                    _ => Ok(value),
                };
                let slot = self
                    .calls
                    .iter_mut()
                    .rev()
                    .find(|c| c.id == id && c.result.is_none());
                if let Some(slot) = slot {
                    slot.result = Some(result);
                }
            }
            _ => {}
        }
    }

    fn remember(&mut self, plan: &Value) {
        if let Some(facts) = plan.get("remember").and_then(Value::as_object) {
            self.remembered
                .extend(facts.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }

    fn offers(&self, tool: &str) -> bool {
        self.offered.iter().any(|t| t == tool)
    }

    /// The actor's world user id.
    pub fn me(&self) -> Option<i64> {
        self.actor.get("id").and_then(Value::as_i64)
    }

    /// The latest successful result of `tool`.
    pub fn latest(&self, tool: &str) -> Option<&Value> {
        self.calls
            .iter()
            .rev()
            .filter(|c| c.name == tool)
            .find_map(Called::ok)
    }

    /// Whether `tool` was called after the last call of `after` (or at all, when
    /// `after` was never called).
    pub fn called_since(&self, tool: &str, after: &str) -> bool {
        let since = self
            .calls
            .iter()
            .rposition(|c| c.name == after)
            .map_or(0, |i| i + 1);
        self.calls
            .get(since..)
            .unwrap_or_default()
            .iter()
            .any(|c| c.name == tool)
    }

    /// The last action of the run: a call of a tool that is not a look-up.
    pub fn last_action(&self) -> Option<&Called> {
        self.calls.iter().rev().find(|c| !is_lookup(&c.name))
    }

    /// The actor's latest known value of `stat`, from its stats and its actions'
    /// results, else as the observation gave it when the trigger fired.
    pub fn stat(&self, stat: &str) -> Option<i64> {
        let latest = self.calls.iter().rev().find_map(|c| {
            let ok = c.ok()?;
            match c.name.as_str() {
                "get_my_stats" | "do_work" => ok.get(stat)?.as_i64(),
                "consume_item" => ok.get("now")?.get(stat)?.as_i64(),
                "buy_item" if stat == "gold" => ok.get("gold_left")?.as_i64(),
                "join_battle" if stat == "energy" => ok.get("energy_left")?.as_i64(),
                _ => None,
            }
        });
        latest.or_else(|| self.actor.get("state")?.get(stat)?.as_i64())
    }

    /// What the run did, in a sentence: its actions and how they went.
    fn summary(&self) -> String {
        let done: Vec<String> = self
            .calls
            .iter()
            .filter(|c| !is_lookup(&c.name))
            .map(|c| match c.error() {
                Some(error) => format!("{} failed ({error})", c.name),
                None => c.name.clone(),
            })
            .collect();
        if done.is_empty() {
            "Nothing needed doing.".into()
        } else {
            format!("Done: {}.", done.join(", then "))
        }
    }
}

/// Whether `tool` is a look-up (the world's data tools all start so).
pub fn is_lookup(tool: &str) -> bool {
    tool.starts_with("get_") || tool.starts_with("search_")
}

/// The text of the run's first message, unquoted when another party wrote it.
fn unquoted(prompt: &str) -> String {
    match prompt.split_once('\n') {
        Some((head, quoted)) if head.starts_with("Text written by ") => {
            serde_json::from_str(quoted).unwrap_or_else(|_| quoted.to_owned())
        }
        _ => prompt.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stat_is_the_latest_result_else_what_the_observation_gave() {
        let mut seen = Seen {
            actor: json!({"id": 1, "state": {"energy": 12, "gold": 3}}),
            ..Seen::default()
        };
        assert_eq!(seen.stat("energy"), Some(12), "observed when it fired");
        assert_eq!(seen.stat("morale"), None);
        seen.calls.push(Called {
            id: "c".into(),
            name: "do_work".into(),
            args: json!({"job": "farming"}),
            result: Some(Ok(json!({"energy": 2, "gold": 33}))),
        });
        assert_eq!(
            (seen.stat("energy"), seen.stat("gold")),
            (Some(2), Some(33))
        );
    }
}
