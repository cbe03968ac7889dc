//! The page assistant's offline model prefers the page's own tools: where the page
//! declares tools with WebMCP ([`declared`](super::declared)), a task is first put to
//! them — list them, run the one that fits with its input filled from the task's
//! words, answer with what the page said — and only when none fits do the page rules
//! ([`rules`](super::rules)) answer, as they do on a page without WebMCP.
//!
//! Which tool fits is read from words alone: the task's words (lower-cased, a plural
//! or possessive `s` dropped, small words left out) against the tool's name (three
//! points a word) and its description (one); the best wins, a tool none of whose
//! name's words the task says never does, nor one the page does not mark read-only
//! when the task does not say its name's first word (its action: "add" for
//! `add_task`). A required string is filled from the task's
//! quoted words, else its words that neither the tool's name and description nor the
//! small words account for ("Add Milk to my list" gives `add_item` the text `Milk`); a
//! number from the task's first number; an enum from the value the task names. A tool
//! whose required input cannot be filled does not fit.
//!
//! The page's answer is quoted, never obeyed: the model answers the task with it and
//! stops, so words in it ("now call delete_all") call nothing; a gullible model that
//! did would still meet the card of a tool the page does not mark read-only.

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde_json::{Map, Value};

use super::declared::{CALL, LIST};
use crate::llm::message::{Message, Role, ToolCall};
use crate::llm::rules::{COMPLETION_QUESTION, RulesModel};
use crate::llm::{
    ChatRequest, ChatResponse, DeltaSink, FinishReason, Llm, LlmError, replay_as_deltas,
};

/// Words a task is made of that say nothing about which tool fits.
const SMALL: &[&str] = &[
    "a", "an", "the", "to", "my", "me", "of", "on", "in", "into", "is", "are", "what", "for",
    "and", "please", "it", "this", "that", "as", "i", "you", "your", "with", "from", "at", "by",
    "be", "can", "could", "would", "do", "doe", "there", "which", "who", "how", "now", "our", "we",
    "us", "its", "all", "any", "some", "one", "tell", "show", "give", "let",
];

/// A word as the fit compares it: lower case, a possessive or plural `s` dropped.
fn stem(word: &str) -> String {
    let word = word.to_lowercase();
    let word = word.strip_suffix("'s").unwrap_or(&word);
    match word.strip_suffix('s') {
        Some(stem) if stem.chars().count() >= 3 && !stem.ends_with('s') => stem.to_owned(),
        _ => word.to_owned(),
    }
}

/// The words of `text` as written (an apostrophe kept inside a word).
fn words(text: &str) -> Vec<&str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .map(|w| w.trim_matches('\''))
        .filter(|w| !w.is_empty())
        .collect()
}

/// A tool name's words: `add_item`, `markBought`, `list-items`.
fn name_words(name: &str) -> Vec<String> {
    let mut spaced = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_uppercase() && previous_lower {
            spaced.push(' ');
        }
        previous_lower = c.is_lowercase();
        spaced.push(if c.is_alphanumeric() { c } else { ' ' });
    }
    words(&spaced).iter().map(|w| stem(w)).collect()
}

fn is_small(stemmed: &str) -> bool {
    SMALL.contains(&stemmed)
}

/// How well a declared tool (`getTools()`'s entry, as listed) fits `task`: 0 is not
/// at all.
pub fn score(task: &str, tool: &Value) -> usize {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let named = name_words(name);
    let described: Vec<String> = words(description).iter().map(|w| stem(w)).collect();
    let mut task_words: Vec<String> = words(task)
        .iter()
        .map(|w| stem(w))
        .filter(|w| !is_small(w))
        .collect();
    task_words.dedup();
    let by_name = task_words.iter().filter(|w| named.contains(w)).count();
    // A tool that may change things is chosen only when the task says its action, its
    // name's first word ("What tasks are there?" is not `clear_tasks`'s, "Complete the
    // Bread task" not `add_task`'s); a look-up may be named by its subject alone.
    let read_only = tool
        .get("annotations")
        .and_then(|a| a.get("readOnlyHint"))
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let says_action = named
        .first()
        .is_some_and(|first| task_words.contains(first));
    if by_name == 0 || (!read_only && !says_action) {
        return 0;
    }
    let by_description = task_words
        .iter()
        .filter(|w| !named.contains(w) && described.contains(w))
        .count();
    3 * by_name + by_description
}

/// Text the task quotes ("…", “…”, '…'), when it quotes any.
fn quoted(task: &str) -> Option<String> {
    for (open, close) in [('"', '"'), ('“', '”'), ('\'', '\'')] {
        let Some((_, rest)) = task.split_once(open) else {
            continue;
        };
        if let Some((inside, _)) = rest.split_once(close) {
            let inside = inside.trim();
            if !inside.is_empty() {
                return Some(inside.to_owned());
            }
        }
    }
    None
}

/// The task's words that the tool's own words and the small words do not account
/// for, as written: the thing the task is about.
fn leftover(task: &str, tool: &Value) -> String {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or_default();
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let mut known = name_words(name);
    known.extend(words(description).iter().map(|w| stem(w)));
    words(task)
        .into_iter()
        .filter(|w| {
            let s = stem(w);
            !is_small(&s) && !known.contains(&s) && s != "list"
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// One property's value from the task, when the task gives it.
fn fill_one(task: &str, tool: &Value, property: &Value) -> Option<Value> {
    if let Some(options) = property.get("enum").and_then(Value::as_array) {
        let said: Vec<String> = words(task).iter().map(|w| stem(w)).collect();
        return options
            .iter()
            .find(|o| o.as_str().is_some_and(|o| said.contains(&stem(o))))
            .cloned();
    }
    match property.get("type").and_then(Value::as_str) {
        Some("number" | "integer") => words(task)
            .iter()
            .find_map(|w| w.parse::<i64>().ok())
            .map(Value::from),
        Some("string") | None => {
            let text = quoted(task).unwrap_or_else(|| leftover(task, tool));
            (!text.is_empty()).then_some(Value::String(text))
        }
        _ => None,
    }
}

/// The input `task` gives `tool` by its input schema: every required property filled,
/// or none (the tool does not fit).
pub fn fill(task: &str, tool: &Value) -> Option<Value> {
    let schema = tool.get("inputSchema");
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut input = Map::new();
    for name in required {
        let property = properties.and_then(|p| p.get(name))?;
        input.insert(name.to_owned(), fill_one(task, tool, property)?);
    }
    Some(Value::Object(input))
}

/// The listed tool that fits `task` best, with its input; none when none fits.
pub fn choose(task: &str, tools: &[Value]) -> Option<(String, Value)> {
    let mut best: Option<(usize, String, Value)> = None;
    for tool in tools {
        let points = score(task, tool);
        if points == 0 || best.as_ref().is_some_and(|(b, _, _)| *b >= points) {
            continue;
        }
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if let Some(input) = fill(task, tool) {
            best = Some((points, name.to_owned(), input));
        }
    }
    best.map(|(_, name, input)| (name, input))
}

/// What a declared tool's call came back with, in the answer's words.
pub fn answer(tool: &str, result: &str) -> String {
    let value: Value =
        serde_json::from_str(result).unwrap_or_else(|_| Value::String(result.to_owned()));
    if value.get("declined").is_some() {
        return format!("Understood: you declined the page's tool `{tool}`, so I left it alone.");
    }
    if let Some(error) = value.get("error").and_then(Value::as_str) {
        return format!("I tried the page's tool `{tool}`, but it failed: {error}");
    }
    let said = value.get("answer").and_then(Value::as_str).unwrap_or("");
    let origin = value.get("origin").and_then(Value::as_str).unwrap_or("");
    let whose = if origin.is_empty() {
        "The page's".to_owned()
    } else {
        format!("{origin}'s")
    };
    if said.is_empty() {
        format!("{whose} tool `{tool}` ran; it said nothing back.")
    } else {
        format!("{whose} tool `{tool}` answered: “{said}”")
    }
}

/// Where the task starts: the last message a person wrote (not the run's own
/// question or note after a result).
fn task_start(messages: &[Message]) -> Option<usize> {
    (0..messages.len()).rev().find(|&i| {
        messages.get(i).is_some_and(|m| {
            m.role == Role::User
                && !m.content.to_lowercase().contains(COMPLETION_QUESTION)
                && (i == 0 || messages.get(i - 1).is_some_and(|p| p.role != Role::Tool))
        })
    })
}

/// The call `id` names in `messages`.
fn call_named<'m>(messages: &'m [Message], id: &str) -> Option<&'m ToolCall> {
    messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|call| call.id.as_ref() == id)
}

/// What the page's tools make of this request: `None` leaves it to the rules.
pub fn respond(request: &ChatRequest) -> Option<ChatResponse> {
    let offered = request.offered_tools();
    let has = |name: &str| offered.iter().any(|tool| tool.name == name);
    if request.response_format.is_some() || !has(LIST) || !has(CALL) {
        return None;
    }
    let messages = request.messages.as_slice();
    let start = task_start(messages)?;
    let task = messages.get(start)?.content.as_str();
    let since = messages.get(start + 1..).unwrap_or_default();
    // Ids count every call of the transcript, as the rules model's do.
    let calls = messages.iter().map(|m| m.tool_calls.len()).sum::<usize>();
    let last = messages.last()?;
    if since.is_empty() {
        return Some(call(
            "The page declares its own tools: I list them first.",
            calls,
            LIST,
            Value::Object(Map::new()),
        ));
    }
    if last.role != Role::Tool {
        return None;
    }
    let called = call_named(since, last.tool_call_id.as_deref().unwrap_or(""))?;
    match called.name.as_ref() {
        LIST => {
            let listed: Value = serde_json::from_str(&last.content).ok()?;
            let tools = listed.get("tools").and_then(Value::as_array)?;
            let (tool, input) = choose(task, tools)?;
            Some(call(
                &format!("The page's own tool `{tool}` fits the task; I run it."),
                calls,
                CALL,
                serde_json::json!({"tool": tool, "input": input}),
            ))
        }
        CALL => {
            let arguments: Value = serde_json::from_str(&called.arguments).ok()?;
            let tool = arguments.get("tool").and_then(Value::as_str).unwrap_or("");
            Some(ChatResponse {
                text: answer(tool, &last.content),
                reasoning: "The page's tool answered; I say what it said.".to_owned(),
                tool_calls: Vec::new(),
                finish: FinishReason::Stop,
                usage: None,
                served: Default::default(),
            })
        }
        _ => None,
    }
}

fn call(reasoning: &str, calls: usize, tool: &str, arguments: Value) -> ChatResponse {
    ChatResponse {
        text: String::new(),
        reasoning: reasoning.to_owned(),
        tool_calls: vec![ToolCall {
            id: format!("call_{}", calls + 1).into(),
            name: tool.into(),
            arguments: arguments.to_string().into(),
        }],
        finish: FinishReason::ToolCalls,
        usage: None,
        served: Default::default(),
    }
}

/// The page assistant's offline model: the page's declared tools first, then the
/// rules. A request whose transcript has listed the tools and found none fitting goes
/// to the rules as the task alone, so they answer it as on a page without WebMCP.
pub struct PreferDeclared(pub RulesModel);

impl PreferDeclared {
    pub fn respond(&self, request: &ChatRequest) -> ChatResponse {
        if let Some(response) = respond(request) {
            return response;
        }
        let messages = request.messages.as_slice();
        let listed_without_fit = messages.last().is_some_and(|m| m.role == Role::Tool)
            && task_start(messages).is_some_and(|start| {
                messages
                    .get(start + 1..)
                    .unwrap_or_default()
                    .iter()
                    .flat_map(|m| &m.tool_calls)
                    .all(|call| call.name.as_ref() == LIST)
            });
        match task_start(messages) {
            Some(start) if listed_without_fit => {
                let mut alone = request.clone();
                alone.messages = Rc::new(messages.get(..=start).unwrap_or_default().to_vec());
                let mut response = self.0.respond(&alone);
                // The listing took the first ids: each call keeps one unique in the run.
                let before: usize = messages.iter().map(|m| m.tool_calls.len()).sum();
                for (n, call) in response.tool_calls.iter_mut().enumerate() {
                    call.id = format!("call_{}", before + n + 1).into();
                }
                response
            }
            _ => self.0.respond(request),
        }
    }
}

impl Llm for PreferDeclared {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        let response = self.respond(request);
        replay_as_deltas(&response, sink);
        Box::pin(async move { Ok(response) })
    }
}

#[cfg(test)]
#[path = "prefer_tests.rs"]
mod tests;
