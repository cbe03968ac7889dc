//! The tracer's tool spans: an `execute_tool {tool}` span per call (under its run, or
//! under the composite's sub-agent that owns the tool, an `invoke_agent {sub}` span
//! opened at its first call), its result or error, and the decisions about it.

use super::span::{Attribute, Kind, Span, Status, Value};
use super::tracer::{Parent, Tracer};
use crate::run::event::Decided;
use crate::tool::ToolKind;

impl Tracer {
    pub(super) fn open_tool(
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
        let named = |s: &Span| s.attribute("gen_ai.agent.name") == Some(&Value::Text(agent.into()));
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

    pub(super) fn tool_returned(
        &mut self,
        call_id: &str,
        tool: &str,
        result: &Result<serde_json::Value, String>,
        duration_ms: i64,
        at_ms: i64,
    ) {
        let index =
            match self.tools.iter().position(|t| {
                t.attribute("gen_ai.tool.call.id") == Some(&Value::Text(call_id.into()))
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

    pub(super) fn decided(&mut self, call_id: &str, decision: &Decided, at_ms: i64) {
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
}

/// A call's id and tool name, as the conventions key them.
pub(super) fn call_attributes(call_id: &str, tool: &str) -> Vec<Attribute> {
    vec![
        Attribute::text("gen_ai.tool.call.id", call_id),
        Attribute::text("gen_ai.tool.name", tool),
    ]
}

pub(super) fn grant_name(grant: crate::run::event::Grant) -> &'static str {
    use crate::run::event::Grant;
    match grant {
        Grant::Task => "task",
        Grant::Site => "site",
        Grant::Always => "always",
    }
}
