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
//! starts with the call's opening in the form the model was trained on (`prompt`), and
//! the model picks, under the constraint, one of the tools or none: the choice every
//! reply must make anyway, made where the model's probabilities can make it. On none
//! the opening is taken back and the model answers in plain text, from the transcript
//! without the tools (the KV cache keeps what the two share), and a repetition guard
//! ends it where it starts saying again what it said (`repetition`); on a tool, the
//! arguments are decoded under that tool's JSON Schema narrowed to the values the
//! conversation offers ([`grounding`]), so the call always parses and validates. The
//! tools on offer are those the latest message relates to ([`shortlist`]): a small
//! model cannot choose among thirty. A response format constrains the whole answer the
//! same way.
//!
//! The parts: [`wire`] holds the request and the answer as they cross to the page,
//! `prompt` writes the transcript and the tools as the model reads them, [`forward`]
//! the forward pass on either backend and [`backend`] which one a load takes; this
//! module holds the engine between requests and walks one request through its phases.
//! The walk is one async step ([`Generation::advance`]) because the GPU's logits come
//! back asynchronously; on the CPU it never waits, and [`Generation::next`] runs it
//! where nothing can.

pub mod backend;
mod choice;
pub mod forward;
mod prompt;
mod repetition;
pub(crate) mod wire;

use serde_json::Value;

use std::sync::Arc;

use crate::constraint::{Constraint, Grammar, Vocabulary};
use crate::grounding;
use crate::llama::{Model, Session};

use crate::sample::Sampler;
use crate::shortlist;
use crate::template::ChatTemplate;
use crate::tokenizer::Tokenizer;
use backend::Backend;
use forward::{Forward, now};

pub use prompt::{CALL_CLOSE, CALL_OPEN, tools_prompt};
pub use wire::{Event, GenerateError, Message, Request, ResponseFormat, Tool, ToolCall, Usage};

use prompt::{arguments_key, call_choice, call_opening, prompt_tokens};

/// Prompt tokens read per call of [`Generation::next`]: small enough that an abort is
/// seen within a fraction of a second, large enough to batch the weights' reads.
pub const PREFILL_CHUNK: usize = 16;
/// The answer's length when the request sets none.
pub const DEFAULT_MAX_TOKENS: u32 = 512;

/// Everything about a model that stays between requests: the KV cache too, so a
/// request that shares its start with the last (the system prompt, the tools, earlier
/// turns) reads only what is new.
pub struct Engine {
    pub tokenizer: Tokenizer,
    pub template: ChatTemplate,
    pub vocabulary: Vocabulary,
    model: Arc<Model>,
    forward: Forward,
}

impl Engine {
    /// The model, its tokenizer, template and constraint vocabulary, from a GGUF file;
    /// on the CPU until [`Engine::run_on`] says otherwise.
    pub fn load(bytes: Vec<u8>, context: usize) -> Result<Engine, String> {
        let gguf = crate::gguf::Gguf::parse(bytes).map_err(|e| e.to_string())?;
        let tokenizer = Tokenizer::from_gguf(&gguf).map_err(|e| e.to_string())?;
        let template = ChatTemplate::from_gguf(&gguf, &tokenizer).map_err(|e| e.to_string())?;
        let model = Model::load(gguf, context).map_err(|e| e.to_string())?;
        let vocabulary = Vocabulary::from_tokenizer(&tokenizer, template.stop_tokens());
        let model = Arc::new(model);
        let forward = Forward::Cpu(Session::new(Arc::clone(&model)));
        Ok(Engine {
            tokenizer,
            template,
            vocabulary,
            model,
            forward,
        })
    }

    /// The window, in tokens.
    pub fn context(&self) -> usize {
        self.model.config().context
    }

    /// The model.
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The model, shared: what a forward pass on another backend is made from.
    pub fn shared_model(&self) -> Arc<Model> {
        Arc::clone(&self.model)
    }

    /// Runs the forward pass on `forward` from now on (the cache starts empty).
    pub fn run_on(&mut self, forward: Forward) {
        self.forward = forward;
    }

    /// Shares the CPU's products with `helpers` ([`crate::llama::team`]); false on
    /// WebGPU, which keeps them on the device.
    pub fn share_with(&mut self, helpers: Box<dyn crate::llama::team::Helpers>) -> bool {
        match &mut self.forward {
            Forward::Cpu(session) => {
                session.share_with(helpers);
                true
            }
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(_) => false,
        }
    }

    /// How many threads the forward pass runs on (1 on WebGPU).
    pub fn threads(&self) -> usize {
        match &self.forward {
            Forward::Cpu(session) => session.threads(),
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(_) => 1,
        }
    }

    /// Where the forward pass runs.
    pub fn backend(&self) -> Backend {
        self.forward.backend()
    }

    /// The tokens the KV cache holds.
    pub fn cached(&self) -> &[u32] {
        self.forward.tokens()
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
    /// Choosing a tool, or none.
    Choosing(choice::Choice),
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
    /// The prompt without the tools: what a text answer follows.
    plain: Vec<u32>,
    /// The choice's options, each with the tool it names (`None`: no tool).
    options: Vec<(String, Option<String>)>,
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
    /// A free answer's tokens, and the text's length after each: the repetition
    /// guard's.
    answer: Vec<u32>,
    ends: Vec<usize>,
    call: Option<ToolCall>,
    tools: Vec<Tool>,
    /// What the conversation offers the chosen tool's arguments.
    offered: grounding::Offered,
    format: Option<Grammar>,
    stops: Vec<u32>,
}

impl Generation {
    fn new(engine: &mut Engine, request: Request) -> Result<Generation, GenerateError> {
        // The choice is among the tools the latest message relates to, unless a tool is
        // required; the prompt lists those only: a small model reads four tools' schemas
        // better than thirty, and sooner.
        let tools = if request.requires_tool() {
            request.offered().to_vec()
        } else {
            shortlist::relevant(request.offered(), &request.messages)
        };
        let prompt = prompt_tokens(&engine.template, &engine.tokenizer, &request, &tools);
        let plain = match tools.is_empty() {
            true => prompt.clone(),
            false => prompt_tokens(&engine.template, &engine.tokenizer, &request, &[]),
        };
        let dialect = engine.template.dialect();
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
        let offered = offered_values(&request);
        let format = match &request.response_format {
            Some(format) => Some(
                Grammar::json(&format.schema).map_err(|e| GenerateError::Schema(e.to_string()))?,
            ),
            None => None,
        };
        let mut options: Vec<(String, Option<String>)> = tools
            .iter()
            .map(|t| (call_choice(dialect, Some(&t.name)), Some(t.name.clone())))
            .collect();
        if !request.requires_tool() {
            options.push((call_choice(dialect, None), None));
        }
        let (target, next_phase) = if tools.is_empty() {
            (prompt.clone(), None)
        } else {
            let tokens = options
                .iter()
                .map(|(text, _)| engine.tokenizer.encode(text))
                .collect();
            let mut target = prompt.clone();
            target.extend(engine.tokenizer.encode(&call_opening(dialect)));
            let none = options.iter().position(|(_, name)| name.is_none());
            let phase = Phase::Choosing(choice::Choice::new(tokens, none, target.len()));
            (target, Some(phase))
        };
        Ok(Generation {
            prompt,
            plain,
            options,
            target,
            phase: Phase::Prompt,
            next_phase,
            logits: Vec::new(),
            sampler: Sampler::new(request.temperature.unwrap_or(0.0), 40, 0.95, 0x5eed),
            max_tokens,
            generated: 0,
            text: Vec::new(),
            sent: 0,
            answer: Vec::new(),
            ends: Vec::new(),
            call: None,
            tools,
            offered,
            format,
            stops: engine.template.stop_tokens().to_vec(),
        })
    }

    /// [`Generation::advance`] on a backend that never waits (the CPU's): what native
    /// callers and the benches use. On one that would wait, an error.
    pub fn next(&mut self, engine: &mut Engine) -> Result<Vec<Event>, GenerateError> {
        now(self.advance(engine)).unwrap_or_else(|| {
            Err(GenerateError::Model(
                "this backend's forward pass waits: await Generation::advance".into(),
            ))
        })
    }

    /// Does one piece of work: a chunk of prompt or one token. Returns the events it
    /// produced; the last is [`Event::Done`], after which there is nothing more to do.
    pub async fn advance(&mut self, engine: &mut Engine) -> Result<Vec<Event>, GenerateError> {
        match std::mem::replace(&mut self.phase, Phase::Finished) {
            Phase::Prompt => {
                match engine.forward.prefill(&self.target, PREFILL_CHUNK).await? {
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
            Phase::Choosing(mut choice) => {
                let (chosen, logits) = choice.step(&mut engine.forward, &self.logits).await?;
                self.generated += 1;
                let Some(chosen) = chosen else {
                    self.logits = logits;
                    self.phase = Phase::Choosing(choice);
                    return Ok(Vec::new());
                };
                let option = self.options.get(chosen).cloned();
                let Some((text, Some(name))) = option else {
                    // No tool: the opening is taken back, and the answer is text, from
                    // the transcript without the tools (the cache keeps what the two
                    // share).
                    self.target = self.plain.clone();
                    self.next_phase = Some(self.answer_phase());
                    self.phase = Phase::Prompt;
                    return Ok(Vec::new());
                };
                let tool = self.tools.iter().find(|t| t.name == name);
                let schema = tool.map_or(Value::Null, |t| t.parameters.clone());
                let schema = grounding::narrow(&arguments_schema(&schema), &self.offered);
                let grammar = Grammar::json(&schema)
                    .map_err(|e| GenerateError::Schema(format!("{name}: {e}")))?;
                // The chosen option, then the arguments' key, are read before the first
                // token of the arguments.
                let mut target = self.target.clone();
                target.extend(engine.tokenizer.encode(&text));
                let key = arguments_key(engine.template.dialect());
                target.extend(engine.tokenizer.encode(key));
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
                self.answer.push(token);
                self.ends.push(written.len());
                if let Some(start) = repetition::repeat_start(&self.answer) {
                    // A value going round in circles ends before it repeats, as the
                    // budget would end it.
                    let kept = start.checked_sub(1).and_then(|i| self.ends.get(i));
                    written.truncate(kept.copied().unwrap_or(0));
                    let cut = replay(&grammar, &written)?;
                    written.extend(cut.completion());
                } else if self.generated + 1 >= self.max_tokens && !constraint.is_complete() {
                    // Out of budget: the shortest valid ending, so the call still parses.
                    written.extend(constraint.completion());
                } else if !constraint.is_complete() {
                    drop(constraint);
                    self.logits = engine.forward.step(token).await?;
                    self.phase = Phase::Arguments {
                        name,
                        grammar,
                        written,
                    };
                    return Ok(Vec::new());
                } else {
                    // Keep the cache holding the whole call for the next step's prompt.
                    drop(constraint);
                    engine.forward.step(token).await?;
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
            Phase::Answer { grammar } => self.answer_step(engine, grammar).await,
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

    async fn answer_step(
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
        if grammar.is_none() {
            self.answer.push(token);
            self.ends.push(self.text.len());
            if let Some(start) = repetition::repeat_start(&self.answer) {
                let kept = start.checked_sub(1).and_then(|i| self.ends.get(i));
                self.text.truncate(kept.copied().unwrap_or(0));
                return Ok(self.finish_text("stop"));
            }
        }
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
        if engine.cached().len() + 1 >= engine.context() {
            events.extend(self.finish_text("length"));
            return Ok(events);
        }
        drop(constraint);
        self.logits = engine.forward.step(token).await?;
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
    /// A free answer's last tokens wait for the repetition guard.
    fn flush_text(&mut self, all: bool) -> Vec<Event> {
        let held = match (all, self.format.is_none()) {
            (false, true) => repetition::streamable(&self.ends),
            _ => self.text.len(),
        };
        let rest = self.text.get(self.sent..held).unwrap_or_default();
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

/// What a request's conversation offers a call's arguments: the instructions and the
/// messages (earlier calls' arguments too); the offered tools' names and the format
/// example's placeholders are what no argument may be.
fn offered_values(request: &Request) -> grounding::Offered {
    let calls = request
        .messages
        .iter()
        .flat_map(|m| m.tool_calls.iter().map(|c| c.arguments.as_str()));
    let texts = std::iter::once(request.system.as_str())
        .chain(request.messages.iter().map(|m| m.content.as_str()))
        .chain(calls);
    let names: Vec<&str> = request
        .offered()
        .iter()
        .map(|t| t.name.as_str())
        .chain(prompt::EXAMPLE_VALUES)
        .collect();
    let latest = request.messages.iter().rev().find(|m| m.role == "user");
    grounding::Offered::new(texts, latest.map_or("", |m| m.content.as_str()), &names)
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
