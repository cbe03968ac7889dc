//! The act phase: the model's calls sorted into data calls (run concurrently), one
//! action (with its idempotency key, after its approval) and refusals; results fed
//! back; a person's approval or denial.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{AgentRun, Invocation, NextStep, Phase, ToolResult, memory, tool_message};
use crate::event::{Event, Thought};
use crate::message::{Message, ToolCall};
use crate::run::{ActionRecord, PLAN_TOOL};
use crate::tool::{Approval, RunsOn, ToolError, ToolKind};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(super) struct Act {
    pub(super) data: Vec<Invocation>,
    pub(super) action: Option<Invocation>,
    pub(super) approved: bool,
    /// The model sent a new plan with this action, so it does not use up a step.
    pub(super) plan_sent: bool,
}

impl AgentRun {
    /// Sorts the model's calls: `plan` is applied at once, data calls gathered, the
    /// first allowed action kept and every other action refused.
    pub(super) fn decide(&mut self, calls: Vec<ToolCall>) {
        let acts = calls
            .iter()
            .any(|c| self.kind_of(&c.name) == Some(ToolKind::Action));
        if acts {
            self.iterations += 1;
            self.lookups = 0;
        } else {
            self.lookups += 1;
        }
        let mut act = Act::default();
        let mut refused = None;
        for call in calls {
            if self.limits.planning && call.name == PLAN_TOOL {
                act.plan_sent = true;
                self.apply_plan(&call);
                continue;
            }
            let info = self.catalogue.iter().find(|t| t.spec.name == call.name);
            let invocation = Invocation {
                kind: info.map(|t| t.kind),
                runs_on: info.map_or(RunsOn::Page, |t| t.runs_on),
                approval: info.map_or(Approval::Auto, |t| t.approval),
                timeout_ms: info.map_or(crate::tool::DEFAULT_TOOL_TIMEOUT_MS, |t| t.timeout_ms),
                idempotency_key: None,
                call,
            };
            if invocation.kind != Some(ToolKind::Action) {
                act.data.push(invocation);
            } else if let Some(reason) = self.refusal(&invocation, act.action.is_some()) {
                refused = Some(invocation.call.name.clone());
                self.refuse(&invocation, reason);
            } else {
                let key = format!("{}/{}/{}", self.id, self.iterations, invocation.call.id);
                self.decision = Some(invocation.call.clone());
                act.action = Some(Invocation {
                    idempotency_key: Some(key),
                    ..invocation
                });
            }
        }
        match refused {
            Some(tool) if act.data.is_empty() && act.action.is_none() => {
                let error = self.last_error().unwrap_or_default();
                self.after_action(&tool, Some(&error), false);
            }
            _ => self.phase = Phase::Act(act),
        }
    }

    pub(super) fn kind_of(&self, name: &str) -> Option<ToolKind> {
        self.catalogue
            .iter()
            .find(|t| t.spec.name == name)
            .map(|t| t.kind)
    }

    /// Why an action may not run: outside the boundaries, denied, or a second action.
    pub(super) fn refusal(&self, invocation: &Invocation, has_action: bool) -> Option<String> {
        let name = &invocation.call.name;
        if !self.observation.boundaries.allows(name) {
            let allowed = self
                .observation
                .boundaries
                .allowed_actions
                .as_deref()
                .unwrap_or_default();
            return Some(format!(
                "the `{}` trigger does not allow it; allowed actions: {}",
                self.observation.trigger.event,
                if allowed.is_empty() {
                    "none".to_owned()
                } else {
                    allowed.join(", ")
                }
            ));
        }
        if invocation.approval == Approval::Deny {
            return Some("this tool is switched off".into());
        }
        has_action.then(|| "one action per step; call it again in the next step".to_owned())
    }

    pub(super) fn refuse(&mut self, invocation: &Invocation, reason: String) {
        let error = ToolError::Refused {
            tool: invocation.call.name.clone(),
            reason,
        };
        self.record(invocation, Err(error), 0);
    }

    pub(super) fn last_error(&self) -> Option<String> {
        self.history.last().and_then(|r| r.result.clone().err())
    }

    pub(super) fn apply_plan(&mut self, call: &ToolCall) {
        let result = memory::apply_plan(&call.arguments, &mut self.plan, &mut self.memory);
        if result.is_ok() {
            self.events.push(Event::PlanUpdated {
                plan: self.plan.clone(),
                memory: self.memory.clone(),
            });
        }
        self.push(Message::tool(&call.id, tool_message(&result)));
        self.events.push(Event::Thought(Thought::ToolReturn {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            result,
            duration_ms: 0,
        }));
    }

    /// Puts a call's result in the transcript, the history and the events.
    pub(super) fn record(
        &mut self,
        invocation: &Invocation,
        result: Result<Value, ToolError>,
        duration_ms: i64,
    ) {
        let result = result.map_err(|e| e.to_string());
        self.push(Message::tool(&invocation.call.id, tool_message(&result)));
        self.events.push(Event::Thought(Thought::ToolReturn {
            call_id: invocation.call.id.clone(),
            tool: invocation.call.name.clone(),
            result: result.clone(),
            duration_ms,
        }));
        self.history.push(ActionRecord {
            iteration: self.iterations,
            tool: invocation.call.name.clone(),
            arguments: invocation.call.arguments.clone(),
            kind: invocation.kind,
            result,
            duration_ms,
        });
    }

    /// Feeds back results of the last [`NextStep::CallTools`] or
    /// [`NextStep::AwaitHost`], keyed by call id; results for calls not asked for are
    /// ignored.
    pub fn tools_returned(&mut self, results: Vec<ToolResult>) {
        let mut act = match std::mem::replace(&mut self.phase, Phase::Reason) {
            Phase::Act(act) => act,
            other => return self.phase = other,
        };
        let mut action_done = None;
        for ToolResult {
            call_id,
            result,
            duration_ms,
        } in results
        {
            if let Some(index) = act.data.iter().position(|i| i.call.id == call_id) {
                let invocation = act.data.remove(index);
                self.record(&invocation, result, duration_ms);
            } else if let Some(invocation) = act.action.take_if(|i| i.call.id == call_id) {
                let error = result.as_ref().err().map(ToString::to_string);
                self.record(&invocation, result, duration_ms);
                action_done = Some((invocation.call.name, error));
            }
        }
        if !act.data.is_empty() || act.action.is_some() {
            self.phase = Phase::Act(act);
            return;
        }
        match action_done {
            Some((tool, error)) => self.after_action(&tool, error.as_deref(), !act.plan_sent),
            None => self.phase = Phase::Reason,
        }
    }

    /// A person approved the pending action: it runs next.
    pub fn approve(&mut self, call_id: &str) {
        if let Phase::Act(act) = &mut self.phase
            && act.action.as_ref().is_some_and(|i| i.call.id == call_id)
        {
            act.approved = true;
        }
    }

    /// A person denied the pending action: the model hears why and replans.
    pub fn deny(&mut self, call_id: &str, reason: &str) {
        let Phase::Act(act) = &mut self.phase else {
            return;
        };
        let Some(invocation) = act.action.take_if(|i| i.call.id == call_id) else {
            return;
        };
        let data_left = !act.data.is_empty();
        self.refuse(&invocation, format!("a person denied it: {reason}"));
        let error = self.last_error();
        if !data_left {
            self.after_action(&invocation.call.name, error.as_deref(), false);
        }
    }
}

/// The next effect of an act phase: page calls, then host calls, then the action
/// (after its approval).
pub(super) fn act_step(act: &Act) -> NextStep {
    let (page, host): (Vec<_>, Vec<_>) = act
        .data
        .iter()
        .cloned()
        .partition(|i| i.runs_on == RunsOn::Page);
    if !page.is_empty() {
        return NextStep::CallTools(page);
    }
    if !host.is_empty() {
        return NextStep::AwaitHost(host);
    }
    match &act.action {
        Some(action) if action.approval == Approval::Ask && !act.approved => {
            NextStep::AwaitApproval(action.call.clone())
        }
        Some(action) if action.runs_on == RunsOn::Host => NextStep::AwaitHost(vec![action.clone()]),
        Some(action) => NextStep::CallTools(vec![action.clone()]),
        None => NextStep::CallTools(Vec::new()),
    }
}
