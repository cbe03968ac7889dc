//! The [`Tracer`]: a run's [`Event`]s, each with its time, turned into spans named and
//! attributed as OpenTelemetry's GenAI semantic conventions say: `invoke_agent {agent}`
//! for a run (a turn or a trigger), a child `chat {model}` per model call, a child
//! `execute_tool {tool}` per tool call carrying `gen_ai.tool.call.id` (the request id a
//! host sees); approvals, grants, decisions and recorded errors as span events; an error
//! status where something failed.
//!
//! What it leaves out: prompts, answers, arguments and results, unless [`Capture`] asks
//! for them (an error's own text too); payment card numbers, replaced wherever they
//! would appear, asked for or not; and any value in [`Capture::secrets`], masked the
//! same way and never saved with the tracer. No host or Settings field fills
//! `secrets` yet (only tests and embedding Rust code do): passwords and a card's fields
//! stay out because the page walk never reads them, not because of this list. Usage is not in the events: whoever reads the provider's response hands it
//! to [`Tracer::model_usage`]. Sending spans is the exporter's; encoding them, `otlp`'s.

use crate::base::json::Read;
use serde::Serialize;

use super::mask::MASKED;
use super::span::{Attribute, Ids, Kind, Span, SpanEvent, Status};
use crate::run::event::{Decided, Event, Thought};
use crate::run::{Outcome, Purpose};
use crate::tool::ToolKind;

/// The longest captured text (a prompt, arguments, a result), in characters.
pub const MAX_CAPTURED_CHARS: usize = 8192;

/// Who runs, as the spans name it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Agent {
    /// `gen_ai.agent.name`, and the `invoke_agent` span's name.
    #[serde(default)]
    pub name: String,
    /// `gen_ai.agent.id`, when the host gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `gen_ai.provider.name`: `openai` for the proxy, `familiar.rules`, …
    #[serde(default)]
    pub provider: String,
    /// `gen_ai.request.model`, and the `chat` spans' name.
    #[serde(default)]
    pub model: String,
    /// `gen_ai.conversation.id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub conversation: Option<String>,
}

/// What leaves besides names, ids and times.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Capture {
    /// Prompts, answers, tool arguments and results (the conventions' opt-in content
    /// attributes). Off unless the host or the person asks.
    #[serde(default)]
    pub content: bool,
    /// Values that never leave, asked for or not: replaced by [`MASKED`] in everything
    /// exported. Not saved with the tracer: given again after a reload. Filled by Rust
    /// callers only; createAgent and the demo have no field for it yet.
    #[serde(skip)]
    pub secrets: Vec<String>,
}

/// The span a run's spans hang under when it is part of a larger one (a sub-agent, a
/// supervisor stage, a resident's trigger): its trace goes on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Parent {
    pub trace_id: String,
    pub span_id: String,
}

/// A model call's usage as its provider counted it, for [`Tracer::model_usage`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelUsage {
    pub input_tokens: Option<u64>,
    pub output_tokens: Option<u64>,
    pub response_id: Option<String>,
    pub response_model: Option<String>,
    pub finish_reasons: Vec<String>,
}

/// Spans from a run's events. Serializes with its open spans and its id source, so a
/// run saved mid-way and resumed continues the same trace.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Tracer {
    ids: Ids,
    agent: Agent,
    #[serde(default)]
    capture: Capture,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    parent: Option<Parent>,
    /// The trace its runs' spans go in when they have no parent (a conversation's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    run: Option<Span>,
    /// A composite's sub-agents at work in the open run: an `invoke_agent {sub}` span
    /// each, their tool calls under it.
    #[serde(default)]
    subs: Vec<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    chat: Option<Span>,
    #[serde(default)]
    tools: Vec<Span>,
    #[serde(default)]
    finished: Vec<Span>,
}

impl Tracer {
    /// A tracer drawing ids from `seed` (the browser draws it from
    /// `crypto.getRandomValues`; tests pick one).
    pub fn new(seed: u64, agent: Agent, capture: Capture) -> Self {
        Self {
            ids: Ids::new(seed),
            agent,
            capture,
            parent: None,
            trace: None,
            run: None,
            subs: Vec::new(),
            chat: None,
            tools: Vec::new(),
            finished: Vec::new(),
        }
    }

    /// Its runs' spans hang under `parent`, in its trace.
    pub fn under(mut self, parent: Parent) -> Self {
        self.parent = Some(parent);
        self
    }

    /// Its runs' spans go in the trace `trace_id` (32 lowercase hex digits), so every
    /// run of a conversation shares one trace.
    pub fn in_trace(mut self, trace_id: String) -> Self {
        self.trace = Some(trace_id);
        self
    }

    /// A new trace id from its id source (a conversation's, the first time it is traced).
    pub fn new_trace_id(&mut self) -> String {
        self.ids.trace_id()
    }

    /// What to capture, again after a reload: the host's setting now, not the one the
    /// run was saved with (content turned off since stays off; secrets are never saved).
    pub fn set_capture(&mut self, capture: Capture) {
        self.capture = capture;
    }

    /// The open run's span, as a parent for a sub-agent's tracer.
    pub fn current(&self) -> Option<Parent> {
        self.run.as_ref().map(|run| Parent {
            trace_id: run.trace_id.clone(),
            span_id: run.span_id.clone(),
        })
    }

    /// The spans ended since the last call, oldest first, for the exporter.
    pub fn take_finished(&mut self) -> Vec<Span> {
        std::mem::take(&mut self.finished)
    }

    /// Records `event`, which happened at `at_ms` (milliseconds since the Unix epoch).
    pub fn record(&mut self, event: &Event, at_ms: i64) {
        match event {
            Event::Started { trigger, input, .. } => {
                self.close_run(
                    at_ms,
                    Some(("interrupted", "a new run began before this one ended")),
                );
                self.open_run(at_ms);
                let content = self.content(input);
                if let Some(run) = self.run.as_mut() {
                    run.set(Attribute::text("familiar.trigger.kind", &trigger.kind));
                    run.set(Attribute::text("familiar.trigger.event", &trigger.event));
                    if let Some(input) = content {
                        run.set(Attribute::text(
                            "gen_ai.input.messages",
                            messages("user", &input),
                        ));
                    }
                }
            }
            Event::StepStarted(purpose) => self.open_chat(*purpose, at_ms),
            Event::Thought(thought) => self.thought(thought, at_ms),
            Event::ToolStarted { call, kind, agent } => {
                self.open_tool(&call.id, &call.name, *kind, agent.as_deref(), at_ms);
                let arguments = self.content(&call.arguments);
                if let (Some(arguments), Some(tool)) = (arguments, self.tools.last_mut()) {
                    tool.set(Attribute::text("gen_ai.tool.call.arguments", arguments));
                }
            }
            Event::ApprovalNeeded { call, agent, .. } => {
                let mut attributes = call_attributes(&call.id, &call.name);
                attributes.extend(
                    agent
                        .as_deref()
                        .map(|a| Attribute::text("familiar.agent", a)),
                );
                self.run_event("familiar.approval_needed", attributes, at_ms);
            }
            Event::Allowed {
                call, by, agent, ..
            } => {
                let mut attributes = call_attributes(&call.id, &call.name);
                attributes.push(Attribute::text("familiar.grant", grant_name(*by)));
                attributes.extend(
                    agent
                        .as_deref()
                        .map(|a| Attribute::text("familiar.agent", a)),
                );
                self.run_event("familiar.allowed", attributes, at_ms);
            }
            Event::Decided { call_id, decision } => self.decided(call_id, decision, at_ms),
            Event::Fitted(_) => self.run_event("familiar.context_trimmed", Vec::new(), at_ms),
            Event::Reflection(_) | Event::GoalGuessed { .. } | Event::GoalChecked { .. } => {
                self.close_chat(at_ms, None)
            }
            Event::Done(outcome) => self.done(outcome, at_ms),
            Event::Delta(_) | Event::PlanUpdated { .. } => {}
        }
    }

    /// The usage of the model call in flight (or, once its answer is recorded, of the
    /// last one ended and not yet taken): tokens, the response's id and model, and its
    /// finish reasons, as the provider reported them.
    pub fn model_usage(&mut self, usage: &ModelUsage) {
        let chat = match self.chat.as_mut() {
            Some(chat) => Some(chat),
            None => self
                .finished
                .iter_mut()
                .rev()
                .find(|s| s.kind == Kind::Client),
        };
        let Some(chat) = chat else { return };
        let count = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
        if let Some(n) = usage.input_tokens {
            chat.set(Attribute::int("gen_ai.usage.input_tokens", count(n)));
        }
        if let Some(n) = usage.output_tokens {
            chat.set(Attribute::int("gen_ai.usage.output_tokens", count(n)));
        }
        if let Some(id) = &usage.response_id {
            chat.set(Attribute::text("gen_ai.response.id", id));
        }
        if let Some(model) = &usage.response_model {
            chat.set(Attribute::text("gen_ai.response.model", model));
        }
        if !usage.finish_reasons.is_empty() {
            chat.set(Attribute::texts(
                "gen_ai.response.finish_reasons",
                usage.finish_reasons.clone(),
            ));
        }
    }

    /// `text` with every secret masked, when content is captured; else nothing.
    fn content(&self, text: &str) -> Option<String> {
        self.capture.content.then(|| {
            let masked = self.masked(text);
            match masked.char_indices().nth(MAX_CAPTURED_CHARS) {
                Some((cut, _)) => format!("{}…", masked.get(..cut).unwrap_or_default()),
                None => masked,
            }
        })
    }

    /// An error's own text when content is captured (it can quote the model's output or a
    /// provider's body); else `fixed`, so only the error's type and a set phrase leave.
    fn error_text(&self, text: &str, fixed: &str) -> String {
        self.content(text).unwrap_or_else(|| fixed.to_owned())
    }

    /// `text` with every secret, and every payment card number, replaced by [`MASKED`].
    fn masked(&self, text: &str) -> String {
        let text = self
            .capture
            .secrets
            .iter()
            .filter(|s| !s.is_empty())
            .fold(text.to_owned(), |text, secret| {
                text.replace(secret.as_str(), MASKED)
            });
        super::mask::card_numbers(&text)
    }

    fn span(&mut self, name: String, kind: Kind, at_ms: i64, parent: Option<Parent>) -> Span {
        let (trace_id, parent_span_id) = match parent {
            Some(parent) => (parent.trace_id, Some(parent.span_id)),
            None => match &self.trace {
                Some(trace) => (trace.clone(), None),
                None => (self.ids.trace_id(), None),
            },
        };
        Span {
            trace_id,
            span_id: self.ids.span_id(),
            parent_span_id,
            name,
            kind,
            start_ms: at_ms,
            end_ms: None,
            attributes: Vec::new(),
            events: Vec::new(),
            status: Status::Unset,
        }
    }

    fn named(operation: &str, what: &str) -> String {
        match what {
            "" => operation.to_owned(),
            what => format!("{operation} {what}"),
        }
    }

    fn open_run(&mut self, at_ms: i64) {
        let name = Self::named("invoke_agent", &self.agent.name);
        let mut run = self.span(name, Kind::Internal, at_ms, self.parent.clone());
        run.set(Attribute::text("gen_ai.operation.name", "invoke_agent"));
        self.describe_agent(&mut run);
        if !self.agent.name.is_empty() {
            run.set(Attribute::text("gen_ai.agent.name", &self.agent.name));
        }
        if let Some(id) = &self.agent.id {
            run.set(Attribute::text("gen_ai.agent.id", id));
        }
        self.run = Some(run);
    }

    /// The provider, model and conversation, on a run's span and its model calls'.
    fn describe_agent(&self, span: &mut Span) {
        if !self.agent.provider.is_empty() {
            span.set(Attribute::text(
                "gen_ai.provider.name",
                &self.agent.provider,
            ));
        }
        if !self.agent.model.is_empty() {
            span.set(Attribute::text("gen_ai.request.model", &self.agent.model));
        }
        if let Some(conversation) = &self.agent.conversation {
            span.set(Attribute::text("gen_ai.conversation.id", conversation));
        }
    }

    /// The run's span, opened when events arrive without a `Started` (a run resumed
    /// from a save made before it was traced).
    fn run_parent(&mut self, at_ms: i64) -> Option<Parent> {
        if self.run.is_none() {
            self.open_run(at_ms);
        }
        self.current()
    }

    fn open_chat(&mut self, purpose: Purpose, at_ms: i64) {
        self.close_chat(at_ms, None);
        let parent = self.run_parent(at_ms);
        let name = Self::named("chat", &self.agent.model);
        let mut chat = self.span(name, Kind::Client, at_ms, parent);
        chat.set(Attribute::text("gen_ai.operation.name", "chat"));
        self.describe_agent(&mut chat);
        let (step, round) = match purpose {
            Purpose::GuessGoal => ("guess_goal", None),
            Purpose::Reason { iteration } => ("reason", Some(iteration)),
            Purpose::FinalAnswer => ("final_answer", None),
            Purpose::CheckGoal => ("check_goal", None),
            Purpose::Reflect { round } => ("reflect", Some(round)),
        };
        chat.set(Attribute::text("familiar.step", step));
        if let Some(round) = round {
            chat.set(Attribute::int("familiar.step.round", i64::from(round)));
        }
        self.chat = Some(chat);
    }

    fn close_chat(&mut self, at_ms: i64, error: Option<&str>) {
        if let Some(mut chat) = self.chat.take() {
            if let Some(error) = error {
                chat.set(Attribute::text("error.type", "model_error"));
                chat.status = Status::Error(self.error_text(error, "the model call failed"));
            }
            chat.end_ms = Some(at_ms.max(chat.start_ms));
            self.finished.push(chat);
        }
    }

    fn open_tool(
        &mut self,
        call_id: &str,
        tool: &str,
        kind: Option<ToolKind>,
        agent: Option<&str>,
        at_ms: i64,
    ) {
        let parent = match agent {
            Some(agent) => self.sub_parent(agent, at_ms),
            None => self.run_parent(at_ms),
        };
        let mut span = self.span(
            Self::named("execute_tool", tool),
            Kind::Internal,
            at_ms,
            parent,
        );
        span.set(Attribute::text("gen_ai.operation.name", "execute_tool"));
        span.attributes.extend(call_attributes(call_id, tool));
        span.set(Attribute::text("gen_ai.tool.type", "function"));
        if let Some(kind) = kind {
            let kind = match kind {
                ToolKind::Data => "data",
                ToolKind::Action => "action",
            };
            span.set(Attribute::text("familiar.tool.kind", kind));
        }
        if let Some(agent) = agent {
            span.set(Attribute::text("familiar.agent", agent));
        }
        self.tools.push(span);
    }

    /// The span of the composite's sub-agent `agent` in the open run, opened at its
    /// first call: an `invoke_agent {agent}` child of the run's span.
    fn sub_parent(&mut self, agent: &str, at_ms: i64) -> Option<Parent> {
        let named = |s: &Span| {
            s.attribute("gen_ai.agent.name") == Some(&super::span::Value::Text(agent.into()))
        };
        if !self.subs.iter().any(named) {
            let parent = self.run_parent(at_ms);
            let mut sub = self.span(
                Self::named("invoke_agent", agent),
                Kind::Internal,
                at_ms,
                parent,
            );
            sub.set(Attribute::text("gen_ai.operation.name", "invoke_agent"));
            sub.set(Attribute::text("gen_ai.agent.name", agent));
            if let Some(conversation) = &self.agent.conversation {
                sub.set(Attribute::text("gen_ai.conversation.id", conversation));
            }
            sub.set(Attribute::text("familiar.composite", &self.agent.name));
            self.subs.push(sub);
        }
        self.subs.iter().find(|s| named(s)).map(|s| Parent {
            trace_id: s.trace_id.clone(),
            span_id: s.span_id.clone(),
        })
    }

    fn thought(&mut self, thought: &Thought, at_ms: i64) {
        match thought {
            Thought::Actions { .. } | Thought::Message { .. } => {
                let (reason, text) = match thought {
                    Thought::Message { text } => ("stop", text.as_str()),
                    _ => ("tool_calls", ""),
                };
                let output = self.content(text).filter(|t| !t.is_empty());
                if let Some(chat) = self.chat.as_mut() {
                    if chat.attribute("gen_ai.response.finish_reasons").is_none() {
                        chat.set(Attribute::texts(
                            "gen_ai.response.finish_reasons",
                            vec![reason.into()],
                        ));
                    }
                    if let Some(output) = output {
                        chat.set(Attribute::text(
                            "gen_ai.output.messages",
                            messages("assistant", &output),
                        ));
                    }
                }
                self.close_chat(at_ms, None);
            }
            Thought::ToolReturn {
                call_id,
                tool,
                result,
                duration_ms,
            } => self.tool_returned(call_id, tool, result, *duration_ms, at_ms),
            Thought::Error { message } => {
                let message = self.error_text(message, "the run met an error");
                let attributes = vec![Attribute::text("exception.message", message)];
                self.run_event("exception", attributes, at_ms);
            }
        }
    }

    fn tool_returned(
        &mut self,
        call_id: &str,
        tool: &str,
        result: &Result<serde_json::Value, String>,
        duration_ms: i64,
        at_ms: i64,
    ) {
        let index = match self.tools.iter().position(|t| {
            t.attribute("gen_ai.tool.call.id") == Some(&super::span::Value::Text(call_id.into()))
        }) {
            Some(index) => index,
            // A result with no start (a denied call answered for the model).
            None => {
                self.open_tool(call_id, tool, None, None, at_ms - duration_ms.max(0));
                self.tools.len().saturating_sub(1)
            }
        };
        let written = match result {
            Ok(value) => value.to_string(),
            Err(error) => error.clone(),
        };
        let content = self.content(&written);
        if index >= self.tools.len() {
            return;
        }
        let mut span = self.tools.remove(index);
        if let Some(content) = content {
            span.set(Attribute::text("gen_ai.tool.call.result", content));
        }
        if result.is_err() {
            span.set(Attribute::text("error.type", "tool_error"));
            span.status = Status::Error("the tool returned an error".into());
        }
        span.end_ms = Some(at_ms.max(span.start_ms));
        self.finished.push(span);
    }

    fn decided(&mut self, call_id: &str, decision: &Decided, at_ms: i64) {
        let mut attributes = vec![Attribute::text("gen_ai.tool.call.id", call_id)];
        let (word, reason) = match decision {
            Decided::Approved => ("approved", None),
            Decided::Allowed { by } => {
                attributes.push(Attribute::text("familiar.grant", grant_name(*by)));
                ("allowed", None)
            }
            Decided::Denied { reason } => ("denied", self.content(reason)),
        };
        attributes.push(Attribute::text("familiar.decision", word));
        attributes.extend(reason.map(|r| Attribute::text("familiar.decision.reason", r)));
        self.run_event("familiar.decided", attributes, at_ms);
    }

    fn run_event(&mut self, name: &str, attributes: Vec<Attribute>, at_ms: i64) {
        self.run_parent(at_ms);
        if let Some(run) = self.run.as_mut() {
            run.events.push(SpanEvent {
                name: name.into(),
                at_ms,
                attributes,
            });
        }
    }

    fn done(&mut self, outcome: &Outcome, at_ms: i64) {
        let failed = match outcome {
            Outcome::Failed { error } => Some(error.as_str()),
            _ => None,
        };
        self.close_chat(at_ms, failed);
        let word = match outcome {
            Outcome::Answered { .. } => "answered",
            Outcome::GoalComplete { .. } => "goal_complete",
            Outcome::CapReached { .. } => "cap_reached",
            Outcome::Aborted { .. } => "aborted",
            Outcome::Failed { .. } => "failed",
        };
        let output = match outcome {
            Outcome::Answered { text }
            | Outcome::GoalComplete { text }
            | Outcome::CapReached { text } => self.content(text),
            _ => None,
        };
        self.run_parent(at_ms);
        if let Some(run) = self.run.as_mut() {
            run.set(Attribute::text("familiar.outcome", word));
            if let Some(output) = output {
                run.set(Attribute::text(
                    "gen_ai.output.messages",
                    messages("assistant", &output),
                ));
            }
        }
        self.close_run(at_ms, failed.map(|error| ("run_failed", error)));
    }

    /// Ends the open run and whatever is open in it; `error` (its `error.type` and
    /// message) marks the run and a model call in flight failed, and a tool still
    /// running, unfinished.
    fn close_run(&mut self, at_ms: i64, error: Option<(&str, &str)>) {
        self.close_chat(at_ms, error.map(|(_, message)| message));
        for mut tool in std::mem::take(&mut self.tools) {
            tool.set(Attribute::text("error.type", "unfinished"));
            tool.status = Status::Error("the run ended before the tool answered".into());
            tool.end_ms = Some(at_ms.max(tool.start_ms));
            self.finished.push(tool);
        }
        for mut sub in std::mem::take(&mut self.subs) {
            sub.end_ms = Some(at_ms.max(sub.start_ms));
            self.finished.push(sub);
        }
        if let Some(mut run) = self.run.take() {
            if let Some((kind, message)) = error {
                run.set(Attribute::text("error.type", kind));
                run.status = Status::Error(self.error_text(message, "the run failed"));
            }
            run.end_ms = Some(at_ms.max(run.start_ms));
            self.finished.push(run);
        }
    }
}

/// A call's id and tool name, as the conventions key them.
fn call_attributes(call_id: &str, tool: &str) -> Vec<Attribute> {
    vec![
        Attribute::text("gen_ai.tool.call.id", call_id),
        Attribute::text("gen_ai.tool.name", tool),
    ]
}

fn grant_name(grant: crate::run::event::Grant) -> &'static str {
    use crate::run::event::Grant;
    match grant {
        Grant::Task => "task",
        Grant::Site => "site",
        Grant::Always => "always",
    }
}

/// One text message in the conventions' message shape, as JSON text.
fn messages(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}]).to_string()
}
