//! The act phase: the model's calls sorted into data calls (run concurrently), one
//! action (with its idempotency key, after its approval) and refusals; results fed
//! back; a person's approval or denial.

use crate::base::json::Read;
use crate::base::text::Text;
use serde::Serialize;
use serde_json::Value;

use super::result_message::{declined_message, tool_message};
use super::step::idempotency_key;
use super::{
    AgentRun, Invocation, MAX_CALLS_PER_REPLY, NextStep, Phase, ToolResult, calls, context,
};
use crate::llm::message::{Message, ToolCall};
use crate::run::event::{Decided, Event, Thought};
use crate::run::{ActionRecord, PLAN_TOOL};
use crate::tool::{Approval, Author, RunsOn, ToolError, ToolKind};

#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub(super) struct Act {
    pub(super) data: Vec<Invocation>,
    pub(super) action: Option<Invocation>,
    pub(super) approved: bool,
    /// The model sent a new plan with this action, so it does not use up a step.
    pub(super) plan_sent: bool,
    /// The step's call ids in the model's order.
    #[serde(default)]
    order: Vec<Text>,
    /// Look-ups a person approved (their tools ask first).
    #[serde(default)]
    approved_data: Vec<Text>,
    /// Results held until every call of the step has one, then recorded in call order.
    #[serde(default)]
    settled: Vec<Settled>,
}

/// A call's result as the transcript and the history will hold it.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
struct Settled {
    call_id: Text,
    message: Message,
    /// `None` for the built-in `plan`, which the history does not list.
    record: Option<ActionRecord>,
}

impl Act {
    fn is_settled(&self) -> bool {
        self.data.is_empty() && self.action.is_none()
    }

    /// The error a settled call of `tool` ended with.
    fn error_of(&self, tool: &str) -> Option<String> {
        self.settled
            .iter()
            .filter_map(|s| s.record.as_ref())
            .rfind(|r| r.tool == tool)
            .and_then(|r| r.result.clone().err())
    }
}

impl AgentRun {
    /// Sorts the model's calls: `plan` is applied at once, data calls gathered, the
    /// first allowed action kept and every other action refused. A turn that only
    /// looks up counts against the iteration's look-ups; past them its calls are
    /// refused and the turn uses up an iteration, so no model can loop forever.
    pub(super) fn sort_calls(&mut self, calls: Vec<ToolCall>) {
        let acts = calls
            .iter()
            .any(|c| self.kind_of(&c.name) == Some(ToolKind::Action));
        let lookups_used_up = !acts && self.lookups >= self.limits.max_lookups;
        if acts {
            self.iterations += 1;
            self.lookups = 0;
        } else if lookups_used_up {
            // Refused, and its look-ups stay used up: until the model acts or answers,
            // every turn uses up an iteration.
            self.iterations += 1;
        } else {
            self.lookups += 1;
        }
        let mut act = Act {
            order: calls.iter().map(|c| c.id.clone()).collect(),
            ..Act::default()
        };
        let mut refused_action = None;
        for (index, call) in calls.into_iter().enumerate() {
            if index >= MAX_CALLS_PER_REPLY {
                let invocation = Invocation {
                    kind: self.kind_of(&call.name),
                    runs_on: RunsOn::Page,
                    approval: Approval::Auto,
                    timeout_ms: 0,
                    idempotency_key: None,
                    approved: None,
                    owner: self.owner_of(&call.name).map(str::to_owned),
                    call,
                };
                let reason = format!("at most {MAX_CALLS_PER_REPLY} calls per reply");
                self.refuse(&mut act, &invocation, reason);
                continue;
            }
            if self.limits.planning && call.name == PLAN_TOOL {
                act.plan_sent = true;
                self.apply_plan(&mut act, &call);
                continue;
            }
            let info = self.catalogue.iter().find(|t| t.spec.name == call.name);
            let invocation = Invocation {
                kind: info.map(|t| t.kind),
                runs_on: info.map_or(RunsOn::Page, |t| t.runs_on),
                approval: info.map_or(Approval::Auto, |t| t.approval),
                timeout_ms: info.map_or(crate::tool::DEFAULT_TOOL_TIMEOUT_MS, |t| t.timeout_ms),
                idempotency_key: None,
                approved: None,
                owner: self.owner_of(&call.name).map(str::to_owned),
                call,
            };
            let invalid = || calls::invalid_arguments(&invocation.call, info);
            if invocation.kind != Some(ToolKind::Action) {
                match self
                    .data_refusal(&invocation, lookups_used_up)
                    .or_else(invalid)
                {
                    Some(error) => self.record(&mut act, &invocation, Err(error), (0, 0)),
                    None => {
                        // Unique per look-up turn: models reuse call ids across turns.
                        let key = idempotency_key(
                            &self.id,
                            self.iterations,
                            Some(self.lookups),
                            &invocation.call.id,
                        );
                        act.data.push(Invocation {
                            idempotency_key: Some(key),
                            ..invocation
                        });
                    }
                }
            } else if let Some(reason) = self.refusal(&invocation, act.action.is_some()) {
                refused_action = Some(invocation.call.name.clone());
                self.refuse(&mut act, &invocation, reason);
            } else if let Some(error) = invalid() {
                // Refused before anyone is asked: a card never shows what cannot run.
                refused_action = Some(invocation.call.name.clone());
                self.record(&mut act, &invocation, Err(error), (0, 0));
            } else {
                let key = idempotency_key(&self.id, self.iterations, None, &invocation.call.id);
                self.decision = Some(invocation.call.clone());
                act.action = Some(Invocation {
                    idempotency_key: Some(key),
                    ..invocation
                });
            }
        }
        self.settle(act, refused_action);
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

    /// Who may have written `name`'s results (a tool the run does not know: others).
    pub(super) fn author_of(&self, name: &str) -> Author {
        self.catalogue
            .iter()
            .find(|t| t.spec.name == name)
            .map_or(Author::Others, |t| t.author)
    }

    /// Reading `result` of `invocation` makes the run untrusted when the tool's
    /// results may carry another party's text; errors the run or the registry made
    /// themselves (a refusal, a timeout, bad arguments) carry none.
    fn read(&mut self, invocation: &Invocation, result: &Result<Value, ToolError>) {
        let foreign = match result {
            Ok(_) | Err(ToolError::Failed { .. }) => true,
            Err(_) => false,
        };
        if foreign && self.author_of(&invocation.call.name) == Author::Others {
            self.untrusted = true;
        }
    }

    /// Why a look-up may not run: its iteration's look-ups are used up, the tool is
    /// switched off, or no such tool was given to the run.
    fn data_refusal(&self, invocation: &Invocation, lookups_used_up: bool) -> Option<ToolError> {
        let tool = invocation.call.name.clone();
        if invocation.kind.is_none() {
            return Some(ToolError::Unknown(tool.to_string()));
        }
        let boundaries = &self.observation.boundaries;
        let reason = if invocation.approval == Approval::Deny {
            "this tool is switched off".to_owned()
        } else if invocation.kind == Some(ToolKind::Data) && !boundaries.may_read(&tool) {
            format!(
                "the `{}` trigger may not read it; its data scope: {}",
                self.observation.trigger.event,
                boundaries
                    .data_scopes
                    .as_deref()
                    .unwrap_or_default()
                    .join(", ")
            )
        } else if lookups_used_up {
            format!(
                "look-ups are used up for this step ({} turns); take an action or answer \
                 with what you know",
                self.limits.max_lookups
            )
        } else {
            return None;
        };
        Some(ToolError::Refused {
            tool: tool.to_string(),
            reason,
        })
    }

    pub(super) fn refuse(&mut self, act: &mut Act, invocation: &Invocation, reason: String) {
        let error = ToolError::Refused {
            tool: invocation.call.name.to_string(),
            reason,
        };
        self.record(act, invocation, Err(error), (0, 0));
    }

    fn apply_plan(&mut self, act: &mut Act, call: &ToolCall) {
        let result = context::apply_plan(&call.arguments, &mut self.plan, &mut self.memory);
        if result.is_ok() {
            self.events.push(Event::PlanUpdated {
                plan: self.plan.clone(),
                memory: self.memory.clone(),
            });
        }
        act.settled.push(Settled {
            call_id: call.id.clone(),
            message: Message::tool(&call.id, tool_message(&result)),
            record: None,
        });
        self.events.push(Event::Thought(Thought::ToolReturn {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            result,
            duration_ms: 0,
        }));
    }

    /// Reports a call's result as it comes, and holds it for the transcript and the
    /// history until the step is settled.
    fn record(
        &mut self,
        act: &mut Act,
        invocation: &Invocation,
        result: Result<Value, ToolError>,
        (duration_ms, at_ms): (i64, i64),
    ) {
        let message = match &result {
            Err(ToolError::Declined { .. }) => declined_message(&result),
            _ => None,
        };
        let result = result.map_err(|e| e.to_string());
        let message = message.unwrap_or_else(|| tool_message(&result));
        self.events.push(Event::Thought(Thought::ToolReturn {
            call_id: invocation.call.id.clone(),
            tool: invocation.call.name.clone(),
            result: result.clone(),
            duration_ms,
        }));
        act.settled.push(Settled {
            call_id: invocation.call.id.clone(),
            message: Message::tool(&invocation.call.id, message),
            record: Some(ActionRecord {
                iteration: self.iterations,
                tool: invocation.call.name.clone(),
                arguments: invocation.call.arguments.clone(),
                kind: invocation.kind,
                result,
                duration_ms,
                at_ms,
            }),
        });
    }

    /// Writes a settled step's results into the transcript and the history in the
    /// order the model made the calls.
    fn flush(&mut self, act: Act) {
        let Act {
            order, mut settled, ..
        } = act;
        let position = |id: &str| order.iter().position(|o| o == id).unwrap_or(order.len());
        crate::base::sort::sort_by_key(&mut settled, |s| position(&s.call_id));
        for Settled {
            message, record, ..
        } in settled
        {
            self.push(message);
            self.history.extend(record);
        }
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
            at_ms,
            usage,
        } in results
        {
            self.record_spent(&usage);
            if let Some(index) = act.data.iter().position(|i| i.call.id == call_id) {
                let invocation = act.data.remove(index);
                self.read(&invocation, &result);
                self.record(&mut act, &invocation, result, (duration_ms, at_ms));
            } else if let Some(invocation) = act.action.take_if(|i| i.call.id == call_id) {
                self.read(&invocation, &result);
                let error = result.as_ref().err().map(ToString::to_string);
                self.record(&mut act, &invocation, result, (duration_ms, at_ms));
                action_done = Some((invocation.call.name, error));
            }
        }
        if !act.is_settled() {
            self.phase = Phase::Act(act);
            return;
        }
        let step_used = !act.plan_sent;
        self.flush(act);
        match action_done {
            Some((tool, error)) => self.after_action(&tool, error.as_deref(), step_used),
            None => self.phase = Phase::Reason,
        }
    }

    /// A person approved the pending call (the action, or a look-up whose tool asks
    /// first) as the run asked for it: it runs next, with those arguments.
    pub fn approve(&mut self, call_id: &str) {
        let pending = match &self.phase {
            Phase::Act(act) => act
                .data
                .iter()
                .chain(act.action.iter())
                .find(|i| i.call.id == call_id)
                .map(|i| i.call.clone()),
            _ => None,
        };
        if let Some(call) = pending {
            self.approve_as(&call);
        }
    }

    /// A person approved `call` as they were shown it: the pending call of that id
    /// runs next, and only with `call`'s arguments (compared as values when it runs:
    /// other arguments are refused, not run).
    pub fn approve_as(&mut self, call: &ToolCall) {
        let Phase::Act(act) = &mut self.phase else {
            return;
        };
        let call_id = call.id.as_str();
        // What cannot be read cannot be approved (the run refuses it before asking).
        let Some(arguments) = calls::arguments_of(call) else {
            return;
        };
        let approved = Some(Box::new(arguments));
        if let Some(action) = act.action.as_mut().filter(|i| i.call.id == call_id) {
            act.approved = true;
            action.approved = approved;
        } else if let Some(look_up) = act.data.iter_mut().find(|i| i.call.id == call_id) {
            act.approved_data.push(call_id.into());
            look_up.approved = approved;
        } else {
            return;
        }
        self.events.push(Event::Decided {
            call_id: call_id.to_owned(),
            decision: Decided::Approved,
        });
    }

    /// A person denied the pending call: it does not run, and the model hears why
    /// (and replans, after a denied action).
    pub fn deny(&mut self, call_id: &str, reason: &str) {
        let mut act = match std::mem::replace(&mut self.phase, Phase::Reason) {
            Phase::Act(act) => act,
            other => return self.phase = other,
        };
        let action = act.action.take_if(|i| i.call.id == call_id);
        let look_up = act
            .data
            .iter()
            .position(|i| i.call.id == call_id)
            .map(|index| act.data.remove(index));
        let denied_action = action.is_some();
        let Some(invocation) = action.or(look_up) else {
            self.phase = Phase::Act(act);
            return;
        };
        self.events.push(Event::Decided {
            call_id: call_id.to_owned(),
            decision: Decided::Denied {
                reason: reason.to_owned(),
            },
        });
        let declined = ToolError::Declined {
            tool: invocation.call.name.to_string(),
            reason: reason.to_owned(),
        };
        self.record(&mut act, &invocation, Err(declined), (0, 0));
        if !act.is_settled() {
            self.phase = Phase::Act(act);
            return;
        }
        let tool = invocation.call.name;
        let error = act.error_of(&tool);
        self.flush(act);
        if denied_action {
            self.after_action(&tool, error.as_deref(), false);
        }
    }
}

impl AgentRun {
    /// Re-reads the pending step's calls from the run's (live) catalogue, as after a
    /// reload: each takes its tool's policy now, approvals given before are forgotten
    /// (they were given in another page, and a saved run is data), and a call whose
    /// tool is gone, switched off or outside the boundaries is refused instead of run.
    pub(super) fn recheck_pending(&mut self) {
        let mut act = match std::mem::replace(&mut self.phase, Phase::Reason) {
            Phase::Act(act) => act,
            other => return self.phase = other,
        };
        act.approved = false;
        act.approved_data.clear();
        for invocation in act.data.iter_mut().chain(act.action.iter_mut()) {
            invocation.approved = None;
            self.relive(invocation);
        }
        for invocation in std::mem::take(&mut act.data) {
            let refused = match self.data_refusal(&invocation, false) {
                None if invocation.kind == Some(ToolKind::Data) => None,
                None => Some(ToolError::Refused {
                    tool: invocation.call.name.to_string(),
                    reason: "it is no longer a look-up".into(),
                }),
                error => error,
            };
            match refused {
                Some(error) => self.record(&mut act, &invocation, Err(error), (0, 0)),
                None => act.data.push(invocation),
            }
        }
        let mut refused_action = None;
        if let Some(invocation) = act.action.take() {
            let reason = match invocation.kind {
                Some(ToolKind::Action) => self.refusal(&invocation, false),
                _ => Some("it is no longer an action of this agent".to_owned()),
            };
            match reason {
                Some(reason) => {
                    refused_action = Some(invocation.call.name.clone());
                    self.refuse(&mut act, &invocation, reason);
                }
                None => act.action = Some(invocation),
            }
        }
        self.settle(act, refused_action);
    }

    /// Takes a pending call's kind, place, policy and timeout from the catalogue.
    fn relive(&self, invocation: &mut Invocation) {
        let info = self
            .catalogue
            .iter()
            .find(|t| t.spec.name == invocation.call.name);
        invocation.kind = info.map(|t| t.kind);
        invocation.runs_on = info.map_or(RunsOn::Page, |t| t.runs_on);
        invocation.approval = info.map_or(Approval::Deny, |t| t.approval);
        invocation.timeout_ms = info.map_or(crate::tool::DEFAULT_TOOL_TIMEOUT_MS, |t| t.timeout_ms);
    }
}

/// The next effect of an act phase: approvals of look-ups that ask first, page
/// calls, then host calls, then the action (after its approval). `untrusted`: the run
/// has read another party's text by now (the step's look-ups included, as they run
/// before its action), so tools that ask when untrusted ask; `asks`: whether the
/// action waits for a person ([`AgentRun::asks`]: by its approval, or by where its
/// consequential values came from).
pub(super) fn act_step(act: &Act, untrusted: bool, asks: &dyn Fn(&Invocation) -> bool) -> NextStep {
    // A look-up whose tool asks first waits for its person before anything runs.
    let unapproved = act
        .data
        .iter()
        .find(|i| i.approval.asks(untrusted) && !act.approved_data.contains(&i.call.id));
    if let Some(look_up) = unapproved {
        return NextStep::AwaitApproval(look_up.call.clone());
    }
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
        Some(action) if !act.approved && asks(action) => {
            NextStep::AwaitApproval(action.call.clone())
        }
        Some(action) if action.runs_on == RunsOn::Host => NextStep::AwaitHost(vec![action.clone()]),
        Some(action) => NextStep::CallTools(vec![action.clone()]),
        None => NextStep::CallTools(Vec::new()),
    }
}

impl AgentRun {
    /// Waits while calls of `act` are out; once all are back, records them and goes on:
    /// past a refused action with its error, else back to reasoning.
    fn settle(&mut self, act: Act, refused_action: Option<Text>) {
        if !act.is_settled() {
            self.phase = Phase::Act(act);
            return;
        }
        let error = refused_action.as_ref().and_then(|tool| act.error_of(tool));
        self.flush(act);
        match refused_action {
            Some(tool) => self.after_action(&tool, error.as_deref(), false),
            None => self.phase = Phase::Reason,
        }
    }
}
