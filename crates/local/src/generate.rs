//! One chat request, from transcript to finished answer, a unit of work at a time.
//!
//! The request arrives as Familiar's `ChatRequest` JSON (system, messages, tools,
//! tool choice, response format); the answer leaves as its `Delta` and `ChatResponse`
//! JSON, so the page's client needs no second vocabulary. [`Generation::next`] does one
//! bounded piece of work (a chunk of the prompt, or one token) and returns, so the
//! worker can read an abort between any two of them.
//!
//! How a small model is made to call tools: it is not asked to volunteer a call in free
//! text, which models of this size do not do. When tools are offered, the answer
//! starts with the call's opening, `<tool_call>{"name":"`, and the model picks, under
//! the constraint, one of the tools' names or `none`: the choice every reply must make
//! anyway, made where the model's probabilities can make it. On `none` the opening is
//! taken back (the KV cache cut to the prompt) and the model answers in plain text; on
//! a name, the arguments are decoded under that tool's JSON Schema, so the call always
//! parses and validates. The names on offer are those the latest message relates to
//! ([`shortlist`]): a small model cannot choose among thirty. A response format constrains the whole answer the same way.
//!
//! The parts: [`wire`] holds the request and the answer as they cross to the page,
//! [`prompt`] writes the transcript and the tools as the model reads them; this module
//! holds the engine between requests and walks one request through its phases.

mod prompt;
pub(crate) mod wire;

use serde_json::Value;

use std::sync::Arc;

use crate::constraint::{Constraint, Grammar, Vocabulary};
use crate::llama::{Model, Session};
use crate::sample::Sampler;
use crate::shortlist;
use crate::template::ChatTemplate;
use crate::tokenizer::Tokenizer;

pub use prompt::{CALL_CLOSE, CALL_OPEN, system_prompt};
pub use wire::{Event, GenerateError, Message, Request, ResponseFormat, Tool, ToolCall, Usage};

use prompt::prompt_tokens;

/// Prompt tokens read per call of [`Generation::next`]: small enough that an abort is
/// seen within a fraction of a second, large enough to batch the weights' reads.
pub const PREFILL_CHUNK: usize = 16;
/// The answer's length when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 512;
/// The name that means "no tool: answer in text".
const NO_TOOL: &str = "none";

/// Everything about a model that stays between requests: the KV cache too, so a
/// request that shares its start with the last (the system prompt, the tools, earlier
/// turns) reads only what is new.
pub struct Engine {
    pub tokenizer: Tokenizer,
    pub template: ChatTemplate,
    pub vocabulary: Vocabulary,
    session: Session,
}

impl Engine {
    /// The model, its tokenizer, template and constraint vocabulary, from a GGUF file.
    pub fn load(bytes: Vec<u8>, context: usize) -> Result<Engine, String> {
        let gguf = crate::gguf::Gguf::parse(bytes).map_err(|e| e.to_string())?;
        let tokenizer = Tokenizer::from_gguf(&gguf).map_err(|e| e.to_string())?;
        let template = ChatTemplate::from_gguf(&gguf, &tokenizer).map_err(|e| e.to_string())?;
        let model = Model::load(gguf, context).map_err(|e| e.to_string())?;
        let vocabulary = Vocabulary::from_tokenizer(&tokenizer, template.stop_tokens());
        let session = Session::new(Arc::new(model));
        Ok(Engine {
            tokenizer,
            template,
            vocabulary,
            session,
        })
    }

    /// The window, in tokens.
    pub fn context(&self) -> usize {
        self.session.model().config().context
    }

    /// The model.
    pub fn model(&self) -> &Model {
        self.session.model()
    }

    /// The tokens the KV cache holds.
    pub fn cached(&self) -> &[u32] {
        self.session.tokens()
    }

    /// Begins answering `request` (Familiar's `ChatRequest` JSON).
    pub fn start(&mut self, request: &str) -> Result<Generation, GenerateError> {
        let request: Request =
            serde_json::from_str(request).map_err(|e| GenerateError::Request(e.to_string()))?;
        Generation::new(self, request)
    }
}

/// Where a generation is. A constrained phase keeps its grammar and what it wrote;
/// the constraint's state is those bytes read again at each token (a few hundred at
/// most, against a forward pass of the model).
enum Phase {
    /// Reading the prompt (and, for a tool decision, the call's opening).
    Prompt,
    /// Choosing a tool's name, or `none`.
    Choosing {
        grammar: Grammar,
        chosen: Vec<u8>,
    },
    /// Decoding the chosen tool's arguments.
    Arguments {
        name: String,
        grammar: Grammar,
        written: Vec<u8>,
    },
    /// Free text, or text under the response format's grammar.
    Answer {
        grammar: Option<Grammar>,
    },
    Finished,
}

/// The constraint of `grammar` after `written`.
fn replay<'g>(grammar: &'g Grammar, written: &[u8]) -> Result<Constraint<'g>, GenerateError> {
    let mut constraint = Constraint::new(grammar);
    if constraint.advance_bytes(written) {
        Ok(constraint)
    } else {
        Err(GenerateError::Model(
            "the constrained output lost its grammar".into(),
        ))
    }
}

/// One request being answered.
pub struct Generation {
    /// The prompt, without the tool call's opening.
    prompt: Vec<u32>,
    /// What the session is asked to hold before the next phase.
    target: Vec<u32>,
    phase: Phase,
    /// After the prompt: the phase to enter.
    next_phase: Option<Phase>,
    logits: Vec<f32>,
    sampler: Sampler,
    max_tokens: u32,
    generated: u32,
    text: Vec<u8>,
    /// Bytes of `text` already sent (the rest may end inside a UTF-8 character).
    sent: usize,
    call: Option<ToolCall>,
    tools: Vec<(String, Value)>,
    format: Option<Grammar>,
    stops: Vec<u32>,
}

impl Generation {
    fn new(engine: &mut Engine, request: Request) -> Result<Generation, GenerateError> {
        let prompt = prompt_tokens(&engine.template, &engine.tokenizer, &request);
        let window = engine.context();
        let max_tokens = request.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
        // The answer needs room too; a prompt that leaves less than a tenth of the
        // window, or 64 tokens, is refused as too long.
        let room = (window / 10).clamp(16, 64);
        if prompt.len() + room > window {
            return Err(GenerateError::TooLong {
                prompt: prompt.len(),
                window,
            });
        }
        // The prompt lists every offered tool (the same prefix turn after turn, so the
        // KV cache keeps it); the choice is among those the latest message relates
        // to, unless a tool is required.
        let choices = if request.requires_tool() {
            request.offered().to_vec()
        } else {
            shortlist::relevant(request.offered(), &request.messages)
        };
        let tools: Vec<(String, Value)> = choices
            .into_iter()
            .map(|t| (t.name, t.parameters))
            .collect();
        let format = match &request.response_format {
            Some(format) => Some(
                Grammar::json(&format.schema).map_err(|e| GenerateError::Schema(e.to_string()))?,
            ),
            None => None,
        };
        let (target, next_phase) = if tools.is_empty() {
            (prompt.clone(), None)
        } else {
            let mut names: Vec<String> = tools.iter().map(|(n, _)| format!("{n}\"")).collect();
            if !request.requires_tool() {
                names.push(format!("{NO_TOOL}\""));
            }
            let options: Vec<&str> = names.iter().map(String::as_str).collect();
            let mut target = prompt.clone();
            target.extend(
                engine
                    .tokenizer
                    .encode(&format!("{CALL_OPEN}{{\"name\":\"")),
            );
            let phase = Phase::Choosing {
                grammar: Grammar::choice(&options),
                chosen: Vec::new(),
            };
            (target, Some(phase))
        };
        Ok(Generation {
            prompt,
            target,
            phase: Phase::Prompt,
            next_phase,
            logits: Vec::new(),
            sampler: Sampler::new(request.temperature.unwrap_or(0.0), 40, 0.95, 0x5eed),
            max_tokens,
            generated: 0,
            text: Vec::new(),
            sent: 0,
            call: None,
            tools,
            format,
            stops: engine.template.stop_tokens().to_vec(),
        })
    }

    /// Does one piece of work: a chunk of prompt or one token. Returns the events it
    /// produced; the last is [`Event::Done`], after which there is nothing more to do.
    pub fn next(&mut self, engine: &mut Engine) -> Result<Vec<Event>, GenerateError> {
        match std::mem::replace(&mut self.phase, Phase::Finished) {
            Phase::Prompt => {
                match engine.session.prefill(&self.target, PREFILL_CHUNK)? {
                    None => self.phase = Phase::Prompt,
                    Some(logits) => {
                        self.logits = logits;
                        self.phase = match self.next_phase.take() {
                            Some(phase) => phase,
                            None => self.answer_phase(),
                        };
                    }
                }
                Ok(Vec::new())
            }
            Phase::Choosing {
                grammar,
                mut chosen,
            } => {
                let mut constraint = replay(&grammar, &chosen)?;
                let token = self.pick(engine, Some(&constraint))?;
                constraint
                    .advance(&engine.vocabulary, token)
                    .map_err(|e| GenerateError::Model(e.to_string()))?;
                chosen.extend_from_slice(engine.tokenizer.token_bytes(token));
                if !constraint.is_complete() {
                    self.logits = engine.session.step(token)?;
                    self.phase = Phase::Choosing { grammar, chosen };
                    return Ok(Vec::new());
                }
                let name = String::from_utf8_lossy(&chosen)
                    .trim_end_matches('"')
                    .to_owned();
                if name == NO_TOOL {
                    // Take the opening back: the answer is text, from the prompt's
                    // end (the cache keeps the prompt and reads its last token again).
                    self.target = self.prompt.clone();
                    self.next_phase = Some(self.answer_phase());
                    self.phase = Phase::Prompt;
                    return Ok(Vec::new());
                }
                let schema = self
                    .tools
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, s)| s.clone())
                    .unwrap_or(Value::Null);
                let grammar = Grammar::json(&arguments_schema(&schema))
                    .map_err(|e| GenerateError::Schema(format!("{name}: {e}")))?;
                // The chosen name's last token, then the arguments' key, are read
                // before the first token of the arguments.
                let mut target = engine.session.tokens().to_vec();
                target.push(token);
                target.extend(engine.tokenizer.encode(",\"arguments\":"));
                self.target = target;
                self.next_phase = Some(Phase::Arguments {
                    name,
                    grammar,
                    written: Vec::new(),
                });
                self.phase = Phase::Prompt;
                Ok(Vec::new())
            }
            Phase::Arguments {
                name,
                grammar,
                mut written,
            } => {
                let mut constraint = replay(&grammar, &written)?;
                let token = self.pick(engine, Some(&constraint))?;
                constraint
                    .advance(&engine.vocabulary, token)
                    .map_err(|e| GenerateError::Model(e.to_string()))?;
                written.extend_from_slice(engine.tokenizer.token_bytes(token));
                if self.generated + 1 >= self.max_tokens && !constraint.is_complete() {
                    // Out of budget: the shortest valid ending, so the call still parses.
                    written.extend(constraint.completion());
                } else if !constraint.is_complete() {
                    self.logits = engine.session.step(token)?;
                    drop(constraint);
                    self.phase = Phase::Arguments {
                        name,
                        grammar,
                        written,
                    };
                    return Ok(Vec::new());
                } else {
                    // Keep the cache holding the whole call for the next step's prompt.
                    engine.session.step(token)?;
                }
                let call = ToolCall {
                    id: format!("call_{}", self.prompt.len()),
                    name,
                    arguments: String::from_utf8_lossy(&written).into_owned(),
                };
                let delta = Event::ToolCall {
                    index: 0,
                    id: Some(call.id.clone()),
                    name: Some(call.name.clone()),
                    arguments: call.arguments.clone(),
                };
                self.call = Some(call);
                Ok(vec![delta, self.done("tool_calls")])
            }
            Phase::Answer { grammar } => self.answer_step(engine, grammar),
            Phase::Finished => Ok(Vec::new()),
        }
    }

    /// True once [`Event::Done`] was returned.
    pub fn is_finished(&self) -> bool {
        matches!(self.phase, Phase::Finished)
    }

    fn answer_phase(&self) -> Phase {
        Phase::Answer {
            grammar: self.format.clone(),
        }
    }

    fn answer_step(
        &mut self,
        engine: &mut Engine,
        grammar: Option<Grammar>,
    ) -> Result<Vec<Event>, GenerateError> {
        let mut constraint = match &grammar {
            Some(grammar) => Some(replay(grammar, &self.text)?),
            None => None,
        };
        let token = self.pick(engine, constraint.as_ref())?;
        let stop = self.stops.contains(&token);
        if let Some(c) = constraint.as_mut()
            && !stop
        {
            c.advance(&engine.vocabulary, token)
                .map_err(|e| GenerateError::Model(e.to_string()))?;
        }
        if stop {
            return Ok(self.finish_text("stop"));
        }
        self.text
            .extend_from_slice(engine.tokenizer.token_bytes(token));
        let mut events = self.flush_text(false);
        let complete = constraint.as_ref().is_some_and(Constraint::is_complete);
        if complete {
            events.extend(self.finish_text("stop"));
            return Ok(events);
        }
        if self.generated >= self.max_tokens {
            if let Some(c) = &constraint {
                self.text.extend(c.completion());
            }
            events.extend(self.finish_text("length"));
            return Ok(events);
        }
        if engine.session.tokens().len() + 1 >= engine.context() {
            events.extend(self.finish_text("length"));
            return Ok(events);
        }
        self.logits = engine.session.step(token)?;
        drop(constraint);
        self.phase = Phase::Answer { grammar };
        Ok(events)
    }

    /// The next token, under the constraint when there is one.
    fn pick(
        &mut self,
        engine: &Engine,
        constraint: Option<&Constraint>,
    ) -> Result<u32, GenerateError> {
        self.generated += 1;
        let allowed = constraint.map(|c| (c, &engine.vocabulary));
        self.sampler
            .sample(&mut self.logits, allowed)
            .ok_or_else(|| GenerateError::Model("no token is allowed here".into()))
    }

    /// Text not yet sent, up to the last whole character (all of it at the end).
    fn flush_text(&mut self, all: bool) -> Vec<Event> {
        let rest = self.text.get(self.sent..).unwrap_or_default();
        let whole = if all {
            rest.len()
        } else {
            match std::str::from_utf8(rest) {
                Ok(_) => rest.len(),
                Err(e) if e.error_len().is_none() => e.valid_up_to(),
                // Bytes that can never be a character: sent replaced, not held forever.
                Err(_) => rest.len(),
            }
        };
        if whole == 0 {
            return Vec::new();
        }
        let piece = String::from_utf8_lossy(rest.get(..whole).unwrap_or_default()).into_owned();
        self.sent += whole;
        vec![Event::Text { text: piece }]
    }

    fn finish_text(&mut self, finish: &'static str) -> Vec<Event> {
        let mut events = self.flush_text(true);
        events.push(self.done(finish));
        events
    }

    fn done(&mut self, finish: &'static str) -> Event {
        self.phase = Phase::Finished;
        Event::Done {
            text: String::from_utf8_lossy(&self.text).into_owned(),
            reasoning: String::new(),
            tool_calls: self.call.iter().cloned().collect(),
            finish,
            usage: Usage {
                prompt_tokens: u32::try_from(self.prompt.len()).unwrap_or(u32::MAX),
                completion_tokens: self.generated,
            },
        }
    }
}

/// A tool's parameters as a schema the constraint compiles: an object, even when the
/// tool declares nothing.
fn arguments_schema(parameters: &Value) -> Value {
    match parameters {
        Value::Object(map) if !map.is_empty() => parameters.clone(),
        _ => serde_json::json!({"type": "object", "properties": {}}),
    }
}

#[cfg(test)]
mod tests;
