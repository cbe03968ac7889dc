//! Fitting a request into the model's context window before it is sent, in a fixed
//! order: shorten the tool schemas (descriptions first), cut long tool results the
//! model has already read, leave out the oldest turns of the conversation (never the
//! pinned facts, never this turn's messages), and only then refuse, saying what would
//! not fit. Each trim is reported, so the run's steps show what the model did not see.
//!
//! Pure: the estimate is `llm::window`'s, the window the model client's; the run
//! (`AgentRun::fit`, in `room`) calls this before every model call and learns from a
//! refusal.

use crate::base::json::Read;
use std::rc::Rc;

use serde::Serialize;
use serde_json::Value;

use super::relevance;
use crate::llm::message::{Message, Role};
use crate::llm::window::{
    ContextWindow, estimate_message, estimate_request, estimate_tokens, estimate_tool,
};
use crate::llm::{ChatRequest, ToolSpec};

/// A tool result the model has read is cut to this many characters when room runs out.
pub const READ_RESULT_CHARS: usize = 200;

/// What fitting a request did, for the run's steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Fit {
    /// The model's window and the part of it the prompt may take, in tokens.
    pub window: u32,
    pub room: usize,
    /// The prompt's estimated tokens before and after.
    pub before: usize,
    pub after: usize,
    pub trims: Vec<Trim>,
}

/// One kind of trim, in the order they are tried.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
#[serde(tag = "trim", rename_all = "snake_case")]
pub enum Trim {
    /// The server refused the last try as too long; the window and estimate were
    /// corrected from what it said, and the request is sent once more.
    Refused {
        /// The window the server named, if it did.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        window: Option<u32>,
        /// Real tokens per estimated token, in thousandths, from now on.
        scale: u32,
    },
    /// Tools the trigger does not allow were not offered at all.
    ToolsNotOffered { count: usize },
    /// The offered tools' schemas were shortened (`level` 1: argument descriptions
    /// dropped; 2: tool descriptions to their first sentence; 3: schemas to their
    /// types; 4: tool descriptions dropped, names and argument types left).
    SchemasShortened {
        tools: usize,
        level: u8,
        saved: usize,
    },
    /// Long tool results the model had already read were cut to their start.
    ResultsCut { results: usize, saved: usize },
    /// The oldest turns of the conversation were left out.
    TurnsDropped { turns: usize, saved: usize },
    /// Even at their shortest not every tool's schema fit: those least related to
    /// this turn's words were not offered (`kept` were).
    ToolsLeftOut {
        count: usize,
        kept: usize,
        saved: usize,
    },
}

impl Trim {
    /// The trim in a few words, for a step's line.
    pub fn describe(&self) -> String {
        match self {
            Self::Refused {
                window: Some(window),
                ..
            } => format!("the model refused the request: its window is {window} tokens"),
            Self::Refused { window: None, .. } => {
                "the model refused the request as too long".to_owned()
            }
            Self::ToolsNotOffered { count } => {
                format!("{count} tools the trigger does not allow left out")
            }
            Self::SchemasShortened {
                tools,
                level,
                saved,
            } => format!("{tools} tool schemas shortened (level {level}, ~{saved} tokens)"),
            Self::ResultsCut { results, saved } => {
                format!("{results} tool results already read cut (~{saved} tokens)")
            }
            Self::TurnsDropped { turns, saved } => {
                format!("{turns} oldest turns left out (~{saved} tokens)")
            }
            Self::ToolsLeftOut { count, kept, saved } => {
                format!(
                    "{count} tools least related to this turn not offered, {kept} kept (~{saved} tokens)"
                )
            }
        }
    }
}

/// Even trimmed, the request does not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the request does not fit the model's context window of {window} tokens ({reserve} kept \
     for the answer): even trimmed it needs about {needed} — the system prompt {system}, \
     {tools} tool schemas {tools_tokens}, this turn's messages {turn}{earlier}; set a \
     larger `contextTokens` if the model has more, or shorten the instructions"
)]
pub struct DoesNotFit {
    pub window: u32,
    pub reserve: u32,
    pub needed: usize,
    pub system: usize,
    pub tools: usize,
    pub tools_tokens: usize,
    pub turn: usize,
    /// ", and the pinned facts N" when there are any.
    pub earlier: String,
}

/// What is fitted: the request, where this turn begins in its messages, and how many
/// tools the trigger kept from being offered.
pub struct Fitting<'a> {
    pub request: ChatRequest,
    /// The request's estimate as it is (`estimate_request`'s figure, which the run
    /// keeps as it goes rather than counting every message again).
    pub estimate: usize,
    pub turn_start: usize,
    pub not_offered: usize,
    pub window: &'a ContextWindow,
    /// Set when this is the retry after a refusal: its trim comes first.
    pub refused: Option<Trim>,
}

/// Fits the request, or says why it cannot. `Ok((request, None))`: it fit as it was.
pub fn fit(fitting: Fitting<'_>) -> Result<(ChatRequest, Option<Fit>), DoesNotFit> {
    let Fitting {
        mut request,
        estimate,
        turn_start,
        not_offered,
        window,
        refused,
    } = fitting;
    let room = window.prompt_room();
    let cost = |r: &ChatRequest| window.scaled(estimate_request(r));
    let before = window.scaled(estimate);
    if before <= room && refused.is_none() {
        answer_within(&mut request, window, before);
        return Ok((request, None));
    }
    let mut trims: Vec<Trim> = refused.into_iter().collect();
    if not_offered > 0 {
        trims.push(Trim::ToolsNotOffered { count: not_offered });
    }
    shorten_schemas(&mut request, room, &cost, &mut trims);
    cut_read_results(&mut request, room, &cost, &mut trims);
    let turn_start = drop_oldest_turns(&mut request, turn_start, room, &cost, &mut trims);
    leave_out_tools(&mut request, turn_start, room, &cost, &mut trims);
    let after = cost(&request);
    if after > room {
        return Err(does_not_fit(&request, turn_start, window, after));
    }
    answer_within(&mut request, window, after);
    let fit = Fit {
        window: window.tokens,
        room,
        before,
        after,
        trims,
    };
    Ok((request, Some(fit)))
}

/// Lowers the request's cap on its answer to what the window leaves after `prompt`
/// tokens (never below the window's reserve, which the prompt was fit to leave): a
/// server refuses a prompt and cap longer than its window.
fn answer_within(request: &mut ChatRequest, window: &ContextWindow, prompt: usize) {
    let prompt = u32::try_from(prompt).unwrap_or(u32::MAX);
    let left = window.tokens.saturating_sub(prompt).max(window.reserve);
    request.max_tokens = request.max_tokens.map(|cap| cap.min(left));
}

fn shorten_schemas(
    request: &mut ChatRequest,
    room: usize,
    cost: &dyn Fn(&ChatRequest) -> usize,
    trims: &mut Vec<Trim>,
) {
    let start = cost(request);
    let mut reached = 0;
    for level in 1..=4u8 {
        if cost(request) <= room || request.offered_tools().is_empty() {
            break;
        }
        let shorter: Vec<ToolSpec> = request.tools.iter().map(|t| shorten(t, level)).collect();
        request.tools = Rc::from(shorter);
        reached = level;
    }
    if reached > 0 {
        trims.push(Trim::SchemasShortened {
            tools: request.tools.len(),
            level: reached,
            saved: start.saturating_sub(cost(request)),
        });
    }
}

/// A tool's schema at a level of shortening (see [`Trim::SchemasShortened`]).
fn shorten(tool: &ToolSpec, level: u8) -> ToolSpec {
    let description = match level {
        1 => tool.description.clone(),
        2 => first_sentence(&tool.description, 120),
        3 => first_sentence(&tool.description, 60),
        // The name says what it does.
        _ => String::new(),
    };
    let mut parameters = tool.parameters.clone();
    strip(&mut parameters, level >= 3);
    ToolSpec {
        name: tool.name.clone(),
        description,
        parameters,
    }
}

/// Removes descriptions and titles from a schema; with `to_types`, its constraints too.
fn strip(schema: &mut Value, to_types: bool) {
    const WORDS: [&str; 4] = ["description", "title", "examples", "$schema"];
    const CONSTRAINTS: [&str; 10] = [
        "format",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "minItems",
        "maxItems",
        "default",
        "additionalProperties",
    ];
    match schema {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                // Inside `properties` the keys are argument names, never keywords.
                let is_names = key == "properties" || key == "$defs" || key == "definitions";
                let drop = !is_names
                    && (WORDS.contains(&key.as_str())
                        || (to_types && CONSTRAINTS.contains(&key.as_str())));
                if drop {
                    map.remove(&key);
                } else if let Some(value) = map.get_mut(&key) {
                    if is_names {
                        strip_each(value, to_types);
                    } else {
                        strip(value, to_types);
                    }
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| strip(v, to_types)),
        _ => {}
    }
}

/// Strips each schema of a map of names to schemas.
fn strip_each(names: &mut Value, to_types: bool) {
    if let Value::Object(map) = names {
        map.values_mut().for_each(|v| strip(v, to_types));
    }
}

/// The first sentence of `text`, at most `max` characters.
fn first_sentence(text: &str, max: usize) -> String {
    let end = text
        .find(". ")
        .map(|i| i + 1)
        .or_else(|| text.find('\n'))
        .unwrap_or(text.len());
    let sentence = text.get(..end).unwrap_or(text).trim();
    if sentence.chars().count() <= max {
        return sentence.to_owned();
    }
    let mut short: String = sentence.chars().take(max.saturating_sub(1)).collect();
    short.push('…');
    short
}

/// Cuts tool results the model has read (an assistant message follows them), oldest
/// first, until the request fits.
fn cut_read_results(
    request: &mut ChatRequest,
    room: usize,
    cost: &dyn Fn(&ChatRequest) -> usize,
    trims: &mut Vec<Trim>,
) {
    let start = cost(request);
    if start <= room {
        return;
    }
    let last_answer = request
        .messages
        .iter()
        .rposition(|m| m.role == Role::Assistant);
    let Some(last_answer) = last_answer else {
        return;
    };
    let mut cut = 0;
    let mut now = start;
    for index in 0..last_answer {
        if now <= room {
            break;
        }
        let messages = Rc::make_mut(&mut request.messages);
        let Some(message) = messages.get_mut(index) else {
            break;
        };
        if message.role != Role::Tool || message.content.chars().count() <= READ_RESULT_CHARS {
            continue;
        }
        let old = estimate_message(message);
        let shorter = cut_result(&message.content);
        message.set_content(shorter);
        now = now.saturating_sub(old.saturating_sub(estimate_message(message)));
        cut += 1;
    }
    if cut > 0 {
        trims.push(Trim::ResultsCut {
            results: cut,
            saved: start.saturating_sub(cost(request)),
        });
    }
}

/// A read result as it stays in the transcript: its start and how long it was.
fn cut_result(content: &str) -> String {
    let total = content.chars().count();
    let start: String = content.chars().take(READ_RESULT_CHARS).collect();
    serde_json::json!({
        "cut": format!("already read; {total} characters, these are the first {READ_RESULT_CHARS}"),
        "start": start,
    })
    .to_string()
}

/// Leaves out the conversation's oldest turns (a turn: a person's message and what
/// followed it) before this one, until the request fits; a note in the system prompt
/// says so.
/// System messages (the pinned facts) stay. Returns where this turn now begins.
fn drop_oldest_turns(
    request: &mut ChatRequest,
    turn_start: usize,
    room: usize,
    cost: &dyn Fn(&ChatRequest) -> usize,
    trims: &mut Vec<Trim>,
) -> usize {
    let start = cost(request);
    if start <= room {
        return turn_start;
    }
    let mut current = turn_start.min(request.messages.len());
    let mut dropped = 0;
    while cost(request) > room {
        let messages = Rc::make_mut(&mut request.messages);
        let earlier = messages.get(..current).unwrap_or_default();
        let Some(first) = earlier.iter().position(|m| m.role == Role::User) else {
            break;
        };
        let end = earlier
            .iter()
            .skip(first + 1)
            .position(|m| m.role == Role::User)
            .map_or(current, |i| first + 1 + i);
        // The pinned facts are system messages: they stay where they were.
        let kept: Vec<Message> = earlier
            .get(first..end)
            .unwrap_or_default()
            .iter()
            .filter(|m| m.role == Role::System)
            .cloned()
            .collect();
        current = current - (end - first) + kept.len();
        messages.splice(first..end, kept);
        dropped += 1;
        if dropped == 1 {
            request.system = format!("{}\n\n{NOTE}", request.system).into();
        }
    }
    if dropped > 0 {
        trims.push(Trim::TurnsDropped {
            turns: dropped,
            saved: start.saturating_sub(cost(request)),
        });
    }
    current
}

/// Offers fewer tools, the least related to this turn's words first out, until the
/// request fits (the last resort: a tool not offered cannot be chosen this step).
fn leave_out_tools(
    request: &mut ChatRequest,
    turn_start: usize,
    room: usize,
    cost: &dyn Fn(&ChatRequest) -> usize,
    trims: &mut Vec<Trim>,
) {
    let start = cost(request);
    if start <= room || request.offered_tools().is_empty() {
        return;
    }
    let turn: Vec<&str> = request
        .messages
        .get(turn_start..)
        .unwrap_or_default()
        .iter()
        .filter(|m| m.role == Role::User)
        .map(|m| m.content.as_str())
        .collect();
    let ranked = relevance::ranked(&request.tools, &turn.join(" "));
    let all: Vec<ToolSpec> = request.tools.to_vec();
    let mut kept = all.len();
    while kept > 0 && cost(request) > room {
        kept -= 1;
        let mut keep: Vec<usize> = ranked.iter().take(kept).copied().collect();
        crate::base::sort::sort(&mut keep);
        let tools: Vec<ToolSpec> = keep.iter().filter_map(|i| all.get(*i).cloned()).collect();
        request.tools = Rc::from(tools);
    }
    trims.push(Trim::ToolsLeftOut {
        count: all.len() - kept,
        kept,
        saved: start.saturating_sub(cost(request)),
    });
}

/// Added to the system prompt (not a message of its own: some servers' templates
/// repeat every tool schema in each system message) when turns were left out.
const NOTE: &str = "(Earlier turns of this conversation were left out to fit the model's \
                    context window.)";

fn does_not_fit(
    request: &ChatRequest,
    turn_start: usize,
    window: &ContextWindow,
    needed: usize,
) -> DoesNotFit {
    let system = window.scaled(estimate_tokens(&request.system));
    let tools = request.offered_tools();
    let tools_tokens = window.scaled(tools.iter().map(estimate_tool).sum());
    let (earlier, turn) = request
        .messages
        .split_at(turn_start.min(request.messages.len()));
    let turn = window.scaled(turn.iter().map(estimate_message).sum());
    let earlier = window.scaled(earlier.iter().map(estimate_message).sum());
    DoesNotFit {
        window: window.tokens,
        reserve: window.reserve,
        needed,
        system,
        tools: tools.len(),
        tools_tokens,
        turn,
        earlier: if earlier > 0 {
            format!(", and the pinned facts {earlier}")
        } else {
            String::new()
        },
    }
}
