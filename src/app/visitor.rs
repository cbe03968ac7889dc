//! A call another agent makes to one of the session's tools from outside (a browser's
//! agent through WebMCP, when `createAgent({webmcp: true})` published the host's
//! tools): it is taken as a turn of its own, so it goes through the same registry,
//! boundaries, approvals and provenance as the agent's own calls and is kept in the
//! conversation where a person sees it.
//!
//! The turn's trigger is text another party wrote (a subject with an author), so the
//! run is untrusted from its start: an action asks as any action does after reading
//! others' words (`Approval::asks`), and a consequential value it carries is traced to
//! that party (`run::provenance`), not to the person. No rule here decides; the run's
//! own do. The turn's model is [`Visitor`]: it makes the one call asked for, then
//! answers with what the call returned; the optional phases' contracts (the goal
//! check) are the rules model's.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde_json::Value;

use super::address::Input;
use super::{AppError, Session};
use crate::compose::agent::Agent;
use crate::llm::message::{Role, ToolCall};
use crate::llm::rules::RulesModel;
use crate::llm::{
    ChatRequest, ChatResponse, DeltaSink, FinishReason, Llm, LlmError, replay_as_deltas,
};
use crate::run::interaction::Step;
use crate::run::{Boundaries, Observation, Subject, Trigger};

/// Who made a visitor's call, as the conversation and the card say it.
pub const VISITOR: &str = "a browser agent (WebMCP)";

/// The trigger kind of a visitor's turn.
const VISIT: &str = "webmcp";

/// Whether `observation` is a visitor's call (see [`visit_of`]).
pub(super) fn is_visit(observation: &Observation) -> bool {
    observation.trigger.kind == VISIT
}

/// Why a visitor's call asks whatever the person granted before.
pub(super) fn visit_asks() -> String {
    format!("{VISITOR} asked for it, and no grant covers another party's calls")
}

/// What a visitor's call came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Visited {
    /// The tool ran; its result as the model would have read it.
    Ran(String),
    /// It did not run (refused, denied, or the run ended first), and why.
    Refused(String),
}

impl Session {
    /// Runs `tool` with `arguments` for an agent outside the session, in a turn of the
    /// open conversation that the run's own rules judge (see the module's words).
    pub async fn visit(&self, tool: &str, arguments: &Value) -> Result<Visited, AppError> {
        let call = ToolCall {
            // A visit is a turn of its own: the call is the only one in it.
            id: "webmcp_call".into(),
            name: tool.into(),
            arguments: arguments.to_string().into(),
        };
        // One call at a time: a flood of them is refused in words, and leaves no turns.
        let Some(_visiting) = Visiting::begin(self) else {
            return Ok(Visited::Refused(format!(
                "`{tool}` was not run: another browser agent's call is in progress; try again once it is done"
            )));
        };
        let observation = visit_of(&call);
        let asked = Input::Observation(Box::new(observation));
        let (mut address, lock) = self.addressed(&asked)?;
        if !self
            .catalogue(&address.agent)
            .iter()
            .any(|t| t.spec.name == tool)
        {
            return Ok(Visited::Refused(format!(
                "`{tool}` was not run: no tool of that name is offered here"
            )));
        }
        let conversation = address.conversation.clone();
        let visitor = Rc::new(Visitor::new(call));
        address.agent = Rc::new(with_model(
            &address.agent,
            Rc::clone(&visitor) as Rc<dyn Llm>,
        ));
        let _turn = lock.lock().await;
        if self.inner.state.borrow().destroyed {
            return Err(AppError::Destroyed);
        }
        // Through a boxed future: the turn's code is the one `send` and `trigger` run,
        // not a copy of it inlined here.
        let turn: LocalBoxFuture<'_, _> = Box::pin(self.run_turn(address, asked, None));
        let outcome = turn.await;
        let ran = self.call_ran(&conversation, &visitor.call.id);
        Ok(match visitor.result.borrow_mut().take() {
            Some(result) if ran => Visited::Ran(result),
            Some(result) => Visited::Refused(refusal(&result)),
            None => Visited::Refused(outcome.text().to_owned()),
        })
    }

    /// Whether the call `id` of `conversation`'s last turn ran: the run recorded its
    /// tool's own result, not a refusal, a person's no or a failure (those it records
    /// as errors, whatever the tool's result would have looked like).
    fn call_ran(&self, conversation: &str, id: &str) -> bool {
        let state = self.inner.state.borrow();
        let turn = state
            .conversations
            .get(conversation)
            .and_then(|c| c.interactions.last());
        turn.is_some_and(|turn| {
            turn.steps.iter().any(|step| match step {
                Step::ToolCall { call, result, .. } => {
                    call.id.as_ref() == id && matches!(result, Some(Ok(_)))
                }
                _ => false,
            })
        })
    }
}

/// A browser agent's call in flight, until dropped (the call ended, or its future
/// was dropped).
struct Visiting(Session);

impl Visiting {
    /// The call's turn to be in flight; `None` while another is.
    fn begin(session: &Session) -> Option<Self> {
        let mut state = session.inner.state.borrow_mut();
        if state.visiting {
            return None;
        }
        state.visiting = true;
        Some(Self(session.clone()))
    }
}

impl Drop for Visiting {
    fn drop(&mut self) {
        if let Ok(mut state) = self.0.inner.state.try_borrow_mut() {
            state.visiting = false;
        }
    }
}

/// The turn's trigger: the call asked for, quoted as another party's words, with
/// that one tool allowed.
pub fn visit_of(call: &ToolCall) -> Observation {
    let mut observation = Observation::chat(format!(
        "Run the tool `{}` with {}.",
        call.name, call.arguments
    ));
    observation.trigger = Trigger {
        kind: VISIT.into(),
        event: "tool.called".into(),
        timestamp: None,
    };
    observation.subject = Subject {
        kind: "webmcp".into(),
        author: Some(VISITOR.into()),
        ..observation.subject
    };
    observation.boundaries = Boundaries {
        allowed_actions: Some(vec![call.name.to_string()]),
        data_scopes: Some(vec![call.name.to_string()]),
    };
    observation
}

/// `agent` answering with `llm`, the rest of it (tools, orders, name) as it is.
fn with_model(agent: &Agent, llm: Rc<dyn Llm>) -> Agent {
    Agent {
        name: agent.name.clone(),
        description: agent.description.clone(),
        system: agent.system.clone(),
        llm,
        tools: Rc::clone(&agent.tools),
        max_iterations: agent.max_iterations,
        own_memory: agent.own_memory,
        orders: agent.orders.clone(),
        unattended: agent.unattended,
        actor: agent.actor.clone(),
        owners: agent.owners.clone(),
    }
}

/// The model of a visitor's turn: the one call, then its result as the answer.
pub struct Visitor {
    call: ToolCall,
    asked: Cell<bool>,
    /// The call's result, once the run fed it back.
    result: RefCell<Option<String>>,
    contracts: RulesModel,
}

impl Visitor {
    pub fn new(call: ToolCall) -> Self {
        Self {
            call,
            asked: Cell::new(false),
            result: RefCell::new(None),
            contracts: RulesModel {
                rules: Vec::new(),
                fallback: String::new(),
            },
        }
    }

    /// What the run fed back for the call.
    fn read_result(&self, request: &ChatRequest) {
        let id = self.call.id.as_ref();
        let fed = request
            .messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Tool && m.tool_call_id.as_deref() == Some(id));
        if let Some(fed) = fed {
            *self.result.borrow_mut() = Some(fed.content.clone());
        }
    }
}

/// The words of a refusal the run fed back (`{"declined": "…"}`), or the whole text.
fn refusal(content: &str) -> String {
    let fed = serde_json::from_str::<Value>(content).ok();
    let words = fed
        .as_ref()
        .and_then(Value::as_object)
        .and_then(|o| o.values().next());
    words
        .and_then(Value::as_str)
        .map_or_else(|| content.to_owned(), str::to_owned)
}

impl Llm for Visitor {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            if request.response_format.is_some() {
                return self.contracts.chat(request, sink).await;
            }
            let offered = request
                .offered_tools()
                .iter()
                .any(|t| t.name == *self.call.name);
            let response = if !self.asked.get() && offered {
                self.asked.set(true);
                ChatResponse {
                    text: String::new(),
                    reasoning: String::new(),
                    tool_calls: vec![self.call.clone()],
                    finish: FinishReason::ToolCalls,
                    usage: None,
                    served: Default::default(),
                }
            } else {
                self.read_result(request);
                let text = self.result.borrow().clone().unwrap_or_else(|| {
                    format!("The tool `{}` is not offered to this call.", self.call.name)
                });
                ChatResponse {
                    text,
                    reasoning: String::new(),
                    tool_calls: Vec::new(),
                    finish: FinishReason::Stop,
                    usage: None,
                    served: Default::default(),
                }
            };
            replay_as_deltas(&response, sink);
            Ok(response)
        })
    }
}
