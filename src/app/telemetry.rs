//! Every run of a session traced (feature `telemetry`): a chat turn, a resident's
//! trigger, a schedule, a composite's sub-agent, an agent called as an opaque tool (its
//! events relayed by the call, [`Within`]: under the call's span) and a supervisor's
//! executor rounds all record their events into a [`Tracer`] as they happen, and the
//! spans each event ends go to the host's sink (the web exporter's outbox, a host's own pipeline). Every run
//! of a conversation is in the conversation's one trace: its id is drawn the first
//! time and kept with the conversation's spans. A run's tracer is saved with the run
//! before every step, so a run resumed after a reload continues its open spans in the
//! same trace. The conversation's last [`KEEP_SPANS`] spans are kept (under
//! [`Keys::trace`]) for the inspector's download.
//!
//! What leaves is the tracer's to decide: names, ids and times; content only when
//! asked; secrets and card numbers never.

use std::rc::Rc;

use crate::base::json::Read;
use serde::Serialize;

use super::Session;
use super::keys::{Keys, Loaded, load_kept};
use super::turn::Place;
use super::update::{Notice, Update};
use crate::llm::Served;
use crate::llm::usage::Tally;
use crate::run::driver::Relay;
use crate::run::event::Event;
use crate::trace::{Agent, Capture, ModelUsage, Span, Tracer};

/// The most spans a conversation keeps for its download.
pub const KEEP_SPANS: usize = 100;

/// Gets the spans each event ended, oldest first.
pub type SpanSink = Rc<dyn Fn(&[Span])>;

/// What tracing a session needs from its host.
#[derive(Clone)]
pub struct Telemetry {
    /// What leaves besides names, ids and times.
    pub capture: Capture,
    /// `gen_ai.provider.name` and `gen_ai.request.model` of its runs.
    pub provider: String,
    pub model: String,
    pub sink: SpanSink,
}

/// A conversation's trace as kept: its id and its last spans.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct ConversationTrace {
    pub trace_id: String,
    pub spans: Vec<Span>,
}

/// A run's tracer as saved beside the run.
#[derive(Serialize, Read)]
struct SavedTracer {
    turn: u64,
    tracer: Tracer,
}

/// The session's tracing: its host's telemetry, the tracers of the runs in flight, and
/// the conversations' traces read so far.
pub(super) struct Tracing {
    telemetry: Telemetry,
    tracers: Vec<(Place, Tracer)>,
    traces: Vec<(String, ConversationTrace, bool)>,
}

impl Tracing {
    pub(super) fn new(telemetry: Telemetry) -> Self {
        Self {
            telemetry,
            tracers: Vec::new(),
            traces: Vec::new(),
        }
    }
}

/// A call's usage on its span: none when it counted nothing.
fn model_usage(call: &Tally, served: &Served) -> Option<ModelUsage> {
    let counted = !call.is_empty();
    (counted || served != &Served::default()).then(|| ModelUsage {
        input_tokens: counted.then_some(call.prompt_tokens),
        output_tokens: counted.then_some(call.completion_tokens),
        response_id: served.id.clone(),
        response_model: served.model.clone(),
        ..ModelUsage::default()
    })
}

/// The tool calls of the run at `place` that run runs of their own, traced under their
/// calls' spans in its tracer.
struct Within {
    session: Session,
    place: Place,
}

impl Relay for Within {
    fn started(&self, call_id: &str, model: Option<&str>) {
        self.session.begin_within(&self.place, call_id, model);
    }

    fn event(&self, call_id: &str, event: &Event) {
        self.session.trace_within(&self.place, call_id, event);
    }

    fn usage(&self, call_id: &str, used: &Tally) {
        self.session.settle_within(&self.place, call_id, used);
    }
}

impl Session {
    /// Traces every run from now on with `telemetry` (`None`: no longer).
    pub fn set_telemetry(&self, telemetry: Option<Telemetry>) {
        *self.inner.tracing.borrow_mut() = telemetry.map(Tracing::new);
    }

    /// Whether its runs are traced.
    pub fn traced(&self) -> bool {
        self.inner.tracing.borrow().is_some()
    }

    /// The spans kept of conversation `id`'s trace, oldest first (empty when it has
    /// none, or tracing is off).
    pub fn trace_of(&self, id: &str) -> Vec<Span> {
        let mut tracing = self.inner.tracing.borrow_mut();
        let Some(tracing) = tracing.as_mut() else {
            return Vec::new();
        };
        self.conversation_trace(tracing, id)
            .map(|trace| trace.spans.clone())
            .unwrap_or_default()
    }

    /// Records `event` of the run at `place` into its tracer, and hands the spans it
    /// ended to the sink (a model call that answered waits for its usage:
    /// [`Session::settle_trace`]).
    pub(super) fn trace(&self, place: &Place, event: &Event) {
        let now = self.inner.config.clock.now().epoch_ms;
        self.with_tracer(place, |tracer| {
            tracer.record(event, now);
            tracer.take_settled()
        });
    }

    /// The usage the run at `place` reported since it was last counted, `call`, is the
    /// model call's that answered last, which `served` answered: on its span, which
    /// goes out with it.
    pub(super) fn settle_trace(&self, place: &Place, call: &Tally, served: &Served) {
        let usage = model_usage(call, served);
        self.with_tracer(place, |tracer| {
            tracer.settle(usage.as_ref());
            tracer.take_settled()
        });
    }

    /// A run on `model` is made inside call `call_id` of the run at `place`.
    fn begin_within(&self, place: &Place, call_id: &str, model: Option<&str>) {
        self.with_tracer(place, |tracer| {
            tracer.begin_within(call_id, model);
            Vec::new()
        });
    }

    /// Records `event` of the run made inside call `call_id` of the run at `place` (an
    /// agent called as a tool), under that call's span.
    fn trace_within(&self, place: &Place, call_id: &str, event: &Event) {
        let now = self.inner.config.clock.now().epoch_ms;
        self.with_tracer(place, |tracer| {
            tracer.record_within(call_id, event, now);
            tracer.take_settled()
        });
    }

    /// What the model call that answered last in the run inside call `call_id` used,
    /// on its span, which goes out with it.
    fn settle_within(&self, place: &Place, call_id: &str, used: &Tally) {
        let usage = model_usage(used, &Served::default());
        self.with_tracer(place, |tracer| {
            tracer.settle_within(call_id, usage.as_ref());
            tracer.take_settled()
        });
    }

    /// The relay for the run at `place`'s tool calls that run runs of their own, when
    /// its runs are traced: their events and usage go to its tracer.
    pub(super) fn relay(&self, place: &Place) -> Option<Rc<dyn Relay>> {
        self.traced().then(|| {
            Rc::new(Within {
                session: self.clone(),
                place: place.clone(),
            }) as Rc<dyn Relay>
        })
    }

    /// A supervisor's stage `step` (a model call outside the run's steps) from
    /// `start_ms` to now, with what it used, as a span of its own in the turn's trace.
    #[cfg(feature = "supervisor")]
    pub(super) fn trace_stage(
        &self,
        place: &Place,
        step: &str,
        start_ms: i64,
        used: &Tally,
        error: Option<&str>,
    ) {
        let now = self.inner.config.clock.now().epoch_ms;
        let usage = ModelUsage {
            input_tokens: Some(used.prompt_tokens),
            output_tokens: Some(used.completion_tokens),
            ..ModelUsage::default()
        };
        self.with_tracer(place, |tracer| {
            tracer.stage(step, (start_ms, now), &usage, error);
            tracer.take_settled()
        });
    }

    /// Runs `f` on the tracer of the run at `place` (made when missing), keeps the
    /// spans it returns with the conversation's trace and hands them to the sink.
    fn with_tracer(&self, place: &Place, f: impl FnOnce(&mut Tracer) -> Vec<Span>) {
        let (spans, sink) = {
            let mut tracing = self.inner.tracing.borrow_mut();
            let Some(tracing) = tracing.as_mut() else {
                return;
            };
            let index = match tracing.tracers.iter().position(|(p, _)| p == place) {
                Some(index) => index,
                None => {
                    let tracer = self.tracer_for(tracing, place);
                    tracing.tracers.push((place.clone(), tracer));
                    tracing.tracers.len() - 1
                }
            };
            let Some((_, tracer)) = tracing.tracers.get_mut(index) else {
                return;
            };
            let spans = f(tracer);
            if spans.is_empty() {
                return;
            }
            if let Some(trace) = self.conversation_trace(tracing, &place.conversation) {
                trace.spans.extend(spans.iter().cloned());
                let over = trace.spans.len().saturating_sub(KEEP_SPANS);
                trace.spans.drain(..over);
            }
            if let Some(entry) = tracing
                .traces
                .iter_mut()
                .find(|(id, ..)| *id == place.conversation)
            {
                entry.2 = true;
            }
            (spans, Rc::clone(&tracing.telemetry.sink))
        };
        sink(&spans);
    }

    /// The tracer of the run at `place`: the one saved with it (a run resumed after a
    /// reload), else a new one in the conversation's trace.
    fn tracer_for(&self, tracing: &mut Tracing, place: &Place) -> Tracer {
        let disk = self.disk();
        let key = disk.keys.run_tracer(&place.conversation);
        if let Loaded::Found(saved) = load_kept::<SavedTracer>(disk.storage, &key)
            && saved.turn == place.turn
        {
            let mut tracer = saved.tracer;
            tracer.set_capture(tracing.telemetry.capture.clone());
            return tracer;
        }
        let agent = Agent {
            name: self.agent_of(place),
            id: None,
            provider: tracing.telemetry.provider.clone(),
            model: tracing.telemetry.model.clone(),
            conversation: Some(place.conversation.clone()),
        };
        let word = || ((self.inner.config.random)().clamp(0.0, 1.0) * f64::from(u32::MAX)) as u64;
        let seed = (word() << 32) | word();
        let mut tracer = Tracer::new(seed, agent, tracing.telemetry.capture.clone());
        let drawn = tracer.new_trace_id();
        let trace_id = match self.conversation_trace(tracing, &place.conversation) {
            Some(trace) if trace.trace_id.is_empty() => {
                trace.trace_id = drawn.clone();
                drawn
            }
            Some(trace) => trace.trace_id.clone(),
            None => drawn,
        };
        tracer.in_trace(trace_id)
    }

    /// The agent the turn at `place` went to.
    fn agent_of(&self, place: &Place) -> String {
        let state = self.inner.state.borrow();
        let conversation = state.conversations.get(&place.conversation);
        let turn = conversation.and_then(|c| c.interactions.iter().find(|i| i.id == place.turn));
        turn.map(|i| i.agent.clone()).unwrap_or_default()
    }

    /// Conversation `id`'s trace, read from storage the first time.
    fn conversation_trace<'t>(
        &self,
        tracing: &'t mut Tracing,
        id: &str,
    ) -> Option<&'t mut ConversationTrace> {
        let position = match tracing.traces.iter().position(|(c, ..)| c == id) {
            Some(position) => position,
            None => {
                let disk = self.disk();
                let trace = match load_kept(disk.storage, &disk.keys.trace(id)) {
                    Loaded::Found(trace) => trace,
                    _ => ConversationTrace::default(),
                };
                tracing.traces.push((id.to_owned(), trace, false));
                tracing.traces.len() - 1
            }
        };
        tracing.traces.get_mut(position).map(|(_, trace, _)| trace)
    }

    /// Saves the tracer of the run at `place` beside its run, and the conversation's
    /// trace when it has new spans (before every step, and as a turn ends).
    pub(super) fn save_tracing(&self, place: &Place) {
        let mut written = Vec::new();
        {
            let mut tracing = self.inner.tracing.borrow_mut();
            let Some(tracing) = tracing.as_mut() else {
                return;
            };
            let keys = Keys::new(&self.inner.config.namespace);
            if let Some((_, tracer)) = tracing.tracers.iter().find(|(p, _)| p == place) {
                let saved = SavedTracer {
                    turn: place.turn,
                    tracer: tracer.clone(),
                };
                written.push((
                    keys.run_tracer(&place.conversation),
                    serde_json::to_string(&saved),
                ));
            }
            if let Some((_, trace, dirty)) = tracing
                .traces
                .iter_mut()
                .find(|(id, ..)| *id == place.conversation)
                && *dirty
            {
                *dirty = false;
                written.push((
                    keys.trace(&place.conversation),
                    serde_json::to_string(trace),
                ));
            }
        }
        let storage = &self.inner.config.storage;
        for (key, text) in written {
            let saved = text
                .map_err(|e| e.to_string())
                .and_then(|text| storage.save(&key, &text));
            if let Err(error) = saved {
                self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
            }
        }
    }

    /// Forgets conversation `id`'s trace (the conversation was deleted).
    pub(super) fn forget_trace(&self, id: &str) {
        if let Some(tracing) = self.inner.tracing.borrow_mut().as_mut() {
            tracing.traces.retain(|(c, ..)| c != id);
        }
        let keys = Keys::new(&self.inner.config.namespace);
        self.inner.config.storage.remove(&keys.trace(id));
    }

    /// The run at `place` is over: its tracer goes, with its saved copy, once its
    /// conversation's trace is saved.
    pub(super) fn end_tracing(&self, place: &Place) {
        // Whatever still waits (a call whose usage was never counted) goes as it is.
        let open = self
            .inner
            .tracing
            .borrow()
            .as_ref()
            .is_some_and(|tracing| tracing.tracers.iter().any(|(p, _)| p == place));
        if open {
            self.with_tracer(place, |tracer| {
                tracer.settle(None);
                tracer.take_finished()
            });
        }
        self.save_tracing(place);
        let mut tracing = self.inner.tracing.borrow_mut();
        if let Some(tracing) = tracing.as_mut() {
            tracing.tracers.retain(|(p, _)| p != place);
            let keys = Keys::new(&self.inner.config.namespace);
            self.inner
                .config
                .storage
                .remove(&keys.run_tracer(&place.conversation));
        }
    }
}
