//! Runs made inside a tool call (an agent called as an opaque tool,
//! `compose::agent::register_as_tool`): their events, relayed by the call's id as they
//! happen, traced by a tracer of their own whose `invoke_agent {tool}` span is the
//! child of the call's `execute_tool {tool}` span, in the same trace, with its own
//! `chat` and `execute_tool` children. Its model calls wait for their usage as the
//! caller's do ([`Tracer::settle_within`]); its spans join the caller's finished ones.

use super::span::{Ids, Value};
use super::tracer::{Agent, ModelUsage, Parent, Tracer};
use crate::llm::usage::IN_PAGE;
use crate::run::event::Event;

impl Tracer {
    /// A run on `model` (as [`crate::llm::Llm::model`] names it) is made inside call
    /// `call_id`: its spans name that model, and its provider when it is not the
    /// caller's (`openai` for a proxy's, `familiar.{model}` for one in the page).
    pub fn begin_within(&mut self, call_id: &str, model: Option<&str>) {
        self.inner_of(call_id, model);
    }

    /// Records `event` of the run made inside call `call_id`, at `at_ms`. An event for a
    /// call that is not open (its span already ended) is dropped.
    pub fn record_within(&mut self, call_id: &str, event: &Event, at_ms: i64) {
        if let Some(inner) = self.inner_of(call_id, None) {
            inner.record(event, at_ms);
        }
        self.gather_within();
    }

    /// The run made inside call `call_id` took in the usage of its model call that
    /// answered last (see [`Tracer::settle`]).
    pub fn settle_within(&mut self, call_id: &str, usage: Option<&ModelUsage>) {
        if let Some((_, inner)) = self.within.iter_mut().find(|(id, _)| id == call_id) {
            inner.settle(usage);
        }
        self.gather_within();
    }

    /// Ends every run made inside a call, with whatever it still holds (the caller's
    /// run ends).
    pub(super) fn close_within(&mut self, at_ms: i64) {
        for (_, mut inner) in std::mem::take(&mut self.within) {
            inner.close_run(
                at_ms,
                Some(("interrupted", "the calling run ended before it did")),
            );
            inner.settle(None);
            self.finished.extend(inner.take_finished());
        }
    }

    /// The tracer of the run inside call `call_id`, made under the call's span when
    /// the call is open (on `model`; none: the caller's).
    fn inner_of(&mut self, call_id: &str, model: Option<&str>) -> Option<&mut Tracer> {
        if !self.within.iter().any(|(id, _)| id == call_id) {
            let call = Value::Text(call_id.into());
            let tool = self
                .tools
                .iter()
                .find(|t| t.attribute("gen_ai.tool.call.id") == Some(&call))?;
            let parent = Parent {
                trace_id: tool.trace_id.clone(),
                span_id: tool.span_id.clone(),
            };
            let name = match tool.attribute("gen_ai.tool.name") {
                Some(Value::Text(name)) => name.clone(),
                _ => String::new(),
            };
            let mut agent = Agent {
                name,
                id: None,
                ..self.agent.clone()
            };
            if let Some(model) = model.filter(|m| *m != agent.model) {
                agent.provider = if IN_PAGE.contains(&model) {
                    format!("familiar.{model}")
                } else {
                    "openai".to_owned()
                };
                agent.model = model.to_owned();
            }
            let mut inner = Tracer::new(0, agent, self.capture.clone()).under(parent);
            inner.ids = Ids::new(self.ids.draw());
            self.within.push((call_id.to_owned(), inner));
        }
        self.within
            .iter_mut()
            .find(|(id, _)| id == call_id)
            .map(|(_, inner)| inner)
    }

    /// Moves what the runs inside calls have settled to the caller's finished spans,
    /// and lets go of each run that ended with nothing left waiting.
    fn gather_within(&mut self) {
        for (_, inner) in &mut self.within {
            self.finished.extend(inner.take_settled());
        }
        self.within
            .retain(|(_, inner)| inner.run.is_some() || inner.awaiting.is_some());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::message::ToolCall;
    use crate::run::event::Thought;
    use crate::run::{Outcome, Purpose, Trigger};
    use crate::trace::Span;
    use crate::trace::about::Capture;

    fn started() -> Event {
        Event::Started {
            trigger: Trigger {
                kind: "chat".into(),
                event: "message.received".into(),
                timestamp: None,
            },
            input: "ask the scout".into(),
            environment: None,
        }
    }

    fn text<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
        match span.attribute(key) {
            Some(Value::Text(text)) => Some(text),
            _ => None,
        }
    }

    #[test]
    fn a_run_inside_a_call_the_caller_ends_first_ends_interrupted_under_the_call() {
        let agent = Agent {
            name: "guide".into(),
            provider: "familiar.rules".into(),
            model: "rules".into(),
            ..Agent::default()
        };
        let mut tracer = Tracer::new(7, agent, Capture::default());
        let ask = ToolCall {
            id: "c1".into(),
            name: "scout".into(),
            arguments: "{}".into(),
        };
        tracer.record(&started(), 1);
        tracer.record(
            &Event::ToolStarted {
                call: ask,
                kind: None,
                agent: None,
            },
            2,
        );
        // An event for a call that is not open has nowhere to go.
        tracer.record_within("c9", &started(), 3);
        tracer.begin_within("c1", Some("scripted"));
        tracer.record_within("c1", &started(), 3);
        tracer.record_within(
            "c1",
            &Event::StepStarted(Purpose::Reason { iteration: 1 }),
            4,
        );
        let answered = Thought::Message {
            text: "Seen.".into(),
        };
        tracer.record_within("c1", &Event::Thought(answered), 5);
        assert!(
            tracer.take_settled().is_empty(),
            "its model call waits for its usage"
        );
        tracer.record(
            &Event::Done(Outcome::Aborted {
                reason: "stopped".into(),
            }),
            6,
        );
        let spans = tracer.take_finished();
        let named = |name: &str| spans.iter().filter(|s| s.name == name).collect::<Vec<_>>();
        assert_eq!(
            named("invoke_agent scout").len(),
            1,
            "not the unknown call's"
        );
        let (call, scout, chat) = (
            named("execute_tool scout")[0],
            named("invoke_agent scout")[0],
            named("chat scripted")[0],
        );
        assert_eq!(scout.parent_span_id.as_ref(), Some(&call.span_id));
        assert_eq!(chat.parent_span_id.as_ref(), Some(&scout.span_id));
        assert_eq!(text(scout, "error.type"), Some("interrupted"));
        assert_eq!(text(chat, "gen_ai.provider.name"), Some("openai"));
        assert_eq!(scout.end_ms, Some(6));
        assert!(spans.iter().all(|s| s.end_ms.is_some()));
        assert!(tracer.within.is_empty(), "let go with its caller's run");
    }
}
