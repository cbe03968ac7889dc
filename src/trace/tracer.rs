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
//! stay out because the page walk never reads them, not because of this list.
//!
//! Usage is not in the events: the run takes a model's answer before the session counts
//! its usage, so a model call that answered waits among the finished spans
//! ([`Tracer::take_settled`] leaves it) until [`Tracer::settle`] hands it its tokens.
//! A supervisor's stages, model calls outside a run's steps, are [`Tracer::stage`]s.
//! What a tracer is told is `about`'s; its tool spans, `tools`'; the runs made inside
//! its tool calls (agents called as tools), `within`'s; sending spans is the
//! exporter's; encoding them, `otlp`'s.

use crate::base::json::Read;
use serde::Serialize;

pub use super::about::{Agent, Capture, MAX_CAPTURED_CHARS, ModelUsage, Parent};
use super::mask::MASKED;
use super::span::{Attribute, Ids, Kind, Span, SpanEvent, Status};
use super::tools::{call_attributes, grant_name};
use crate::run::event::{Event, Thought};
use crate::run::{Outcome, Purpose};

/// Spans from a run's events. Serializes with its open spans and its id source, so a
/// run saved mid-way and resumed continues the same trace.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Tracer {
    pub(super) ids: Ids,
    pub(super) agent: Agent,
    #[serde(default)]
    pub(super) capture: Capture,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) parent: Option<Parent>,
    /// The trace its runs' spans go in when they have no parent (a conversation's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) trace: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) run: Option<Span>,
    /// A composite's sub-agents at work in the open run: an `invoke_agent {sub}` span
    /// each, their tool calls under it.
    #[serde(default)]
    pub(super) subs: Vec<Span>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) chat: Option<Span>,
    #[serde(default)]
    pub(super) tools: Vec<Span>,
    #[serde(default)]
    pub(super) finished: Vec<Span>,
    /// The model call that answered last, among `finished`, until its usage is known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) awaiting: Option<String>,
    /// The runs made inside its open tool calls (agents called as tools), by call id,
    /// each traced under its call's span (`within`). Not saved: such a run does not
    /// outlive a reload.
    #[serde(skip)]
    pub(super) within: Vec<(String, Tracer)>,
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
            awaiting: None,
            within: Vec::new(),
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
        let mut spans = std::mem::take(&mut self.finished);
        self.mask_secrets(&mut spans);
        spans
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
    /// one awaiting its usage, else the last one ended and not yet taken): tokens, the
    /// response's id and model, and its finish reasons, as the provider reported them.
    pub fn model_usage(&mut self, usage: &ModelUsage) {
        let awaiting = self.awaiting.take();
        let chat = match self.chat.as_mut() {
            Some(chat) => Some(chat),
            None => self.finished.iter_mut().rev().find(|s| match &awaiting {
                Some(id) => s.span_id == *id,
                None => s.kind == Kind::Client,
            }),
        };
        if let Some(chat) = chat {
            with_usage(chat, usage);
        }
    }

    /// The model call that last answered has its usage now, if it reported any (the
    /// session counts it once the run has taken the answer): its span goes out with it.
    pub fn settle(&mut self, usage: Option<&ModelUsage>) {
        let Some(id) = self.awaiting.take() else {
            return;
        };
        let chat = self.finished.iter_mut().find(|s| s.span_id == id);
        if let (Some(chat), Some(usage)) = (chat, usage) {
            with_usage(chat, usage);
        }
    }

    /// [`Tracer::take_finished`], but a model call that answered and awaits its usage
    /// ([`Tracer::settle`]) stays until it has it.
    pub fn take_settled(&mut self) -> Vec<Span> {
        let Some(id) = self.awaiting.clone() else {
            return self.take_finished();
        };
        let (held, mut settled): (Vec<Span>, Vec<Span>) = std::mem::take(&mut self.finished)
            .into_iter()
            .partition(|s| s.span_id == id);
        self.finished = held;
        self.mask_secrets(&mut settled);
        settled
    }

    /// Every [`Capture::secrets`] in `spans` masked wherever it appears, content or not:
    /// a name, an attribute (a conversation id, a trigger's event), an event's
    /// attribute, a status. Content was masked as it was captured; this catches the rest.
    fn mask_secrets(&self, spans: &mut [Span]) {
        let secrets: Vec<&str> = self
            .capture
            .secrets
            .iter()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
            .collect();
        if secrets.is_empty() {
            return;
        }
        let mask = |text: &mut String| {
            for secret in &secrets {
                if text.contains(secret) {
                    *text = text.replace(secret, MASKED);
                }
            }
        };
        let mask_value = |value: &mut super::span::Value| match value {
            super::span::Value::Text(text) => mask(text),
            super::span::Value::Texts(texts) => texts.iter_mut().for_each(&mask),
            _ => {}
        };
        for span in spans {
            mask(&mut span.name);
            span.attributes
                .iter_mut()
                .for_each(|a| mask_value(&mut a.value));
            for event in &mut span.events {
                mask(&mut event.name);
                event
                    .attributes
                    .iter_mut()
                    .for_each(|a| mask_value(&mut a.value));
            }
            if let Status::Error(message) = &mut span.status {
                mask(message);
            }
        }
    }

    /// A model call made outside a run's steps, from `start_ms` to `end_ms` (a
    /// supervisor's stage: `complexity`, `plan`, `decision`): a `chat {model}` span of
    /// its own in the trace, under the open run if there is one; `error` marks it failed.
    pub fn stage(
        &mut self,
        step: &str,
        (start_ms, end_ms): (i64, i64),
        usage: &ModelUsage,
        error: Option<&str>,
    ) {
        let parent = self.current();
        let mut chat = self.span(
            Self::named("chat", &self.agent.model),
            Kind::Client,
            start_ms,
            parent,
        );
        chat.set(Attribute::text("gen_ai.operation.name", "chat"));
        self.describe_agent(&mut chat);
        chat.set(Attribute::text("familiar.step", step));
        with_usage(&mut chat, usage);
        if let Some(error) = error {
            chat.set(Attribute::text("error.type", "model_error"));
            chat.status = Status::Error(self.error_text(error, "the model call failed"));
        }
        chat.end_ms = Some(end_ms.max(start_ms));
        self.finished.push(chat);
    }

    /// `text` with every secret masked, when content is captured; else nothing.
    pub(super) fn content(&self, text: &str) -> Option<String> {
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
    pub(super) fn error_text(&self, text: &str, fixed: &str) -> String {
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

    pub(super) fn span(
        &mut self,
        name: String,
        kind: Kind,
        at_ms: i64,
        parent: Option<Parent>,
    ) -> Span {
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

    pub(super) fn named(operation: &str, what: &str) -> String {
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
    pub(super) fn run_parent(&mut self, at_ms: i64) -> Option<Parent> {
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
            match error {
                Some(error) => {
                    chat.set(Attribute::text("error.type", "model_error"));
                    chat.status = Status::Error(self.error_text(error, "the model call failed"));
                }
                None => self.awaiting = Some(chat.span_id.clone()),
            }
            chat.end_ms = Some(at_ms.max(chat.start_ms));
            self.finished.push(chat);
        }
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

    pub(super) fn run_event(&mut self, name: &str, attributes: Vec<Attribute>, at_ms: i64) {
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
            Outcome::BudgetReached { .. } => "budget_reached",
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
    pub(super) fn close_run(&mut self, at_ms: i64, error: Option<(&str, &str)>) {
        self.close_chat(at_ms, error.map(|(_, message)| message));
        self.close_within(at_ms);
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

/// `usage`'s tokens, response and finish reasons on the model call `chat`.
fn with_usage(chat: &mut Span, usage: &ModelUsage) {
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

/// One text message in the conventions' message shape, as JSON text.
fn messages(role: &str, text: &str) -> String {
    serde_json::json!([{"role": role, "parts": [{"type": "text", "content": text}]}]).to_string()
}
