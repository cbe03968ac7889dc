//! `AgentRun`: the universal observe → reason → act → loop workflow as a sans-IO,
//! serializable state machine.
//!
//! The run's state is its record: the observation it started from, the transcript,
//! the plan and context memory, every action with its result, and where it is in the
//! loop. [`AgentRun::next_step`] says what to do next as plain data; the caller (the
//! `driver`) does it and feeds the result back. Being plain data, a run can be saved
//! after any step and resumed, and each action call carries an idempotency key that
//! survives the round trip, so a resumed run never applies an action twice.

mod act;
mod after_action;
mod calls;
mod context;
mod conversation;
pub mod driver;
pub mod event;
mod fit;
pub mod interaction;
mod kept;
mod limits;
mod meter;
mod observation;
pub mod orders;
mod owners;
pub mod provenance;
mod relevance;
mod reload;
mod result_message;
mod review;
mod room;
mod step;
mod transcript;

use crate::base::text::Text;
use std::rc::Rc;

use act::{Act, act_step};
use transcript::Transcript;

use crate::base::json::Read;
use serde::Serialize;
use serde_json::Value;

pub use after_action::{AfterAction, after_action, says_yes, verdict_explained};
pub use context::{ContextMemory, FollowUp, PLAN_TOOL, PlanStep, PlanUpdate};
pub use fit::{DoesNotFit, Fit, READ_RESULT_CHARS, Trim};
use limits::Limits;
pub use limits::{
    DEFAULT_MAX_ITERATIONS, DEFAULT_MAX_LOOKUPS, DEFAULT_REASON_TOKENS, DEFAULT_TIME_BUDGET_MS,
    MAX_CALLS_PER_REPLY, MAX_RESULT_CHARS,
};
pub use meter::{Allowance, Limit, stop_words};
pub use observation::{Actor, Boundaries, Observation, Perception, Subject, Trigger};
pub use owners::Owners;
pub use review::{GoalGuess, Review, Verdict};
pub use step::{Invocation, ModelCall, NextStep, Outcome, Purpose, ToolResult};

use crate::llm::message::{Message, ToolCall};
use crate::llm::{
    ChatRequest, ChatResponse, FinishReason, LlmError, ResponseFormat, ToolChoice, ToolSpec,
};
use crate::run::event::{Event, Thought};
use crate::tool::{Approval, ToolInfo, ToolKind};

/// What `with_planning` adds to the instructions.
const PLANNING_PROMPT: &str = "\n\nFetch what you need with data tools, then take one action \
     per step. When a task takes several steps, or something must be done at the end (such as \
     a reply), record it with the `plan` tool.";

/// The run's instructions: the agent's, the situation the observation describes, and
/// the planning note when `planning`.
fn compose_system(mut system: String, observation: &Observation, planning: bool) -> String {
    if let Some(situation) = observation.situation() {
        system.push_str("\n\n");
        system.push_str(&situation);
    }
    if planning {
        system.push_str(PLANNING_PROMPT);
    }
    system
}

/// One tool call in the run's history.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct ActionRecord {
    pub iteration: u32,
    pub tool: Text,
    pub arguments: Text,
    pub kind: Option<ToolKind>,
    #[serde(with = "crate::run::event::tool_result")]
    pub result: Result<Value, String>,
    pub duration_ms: i64,
    /// When it finished, in milliseconds since the epoch (0: in a run saved before
    /// actions were stamped).
    #[serde(default)]
    pub at_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Read)]
#[serde(tag = "phase", rename_all = "snake_case")]
enum Phase {
    GuessGoal,
    Reason,
    Act(Act),
    CheckGoal,
    Reflect { draft: String },
    Done(Outcome),
}

/// One run of the agent loop, from a trigger to an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct AgentRun {
    id: String,
    observation: Observation,
    system: Rc<str>,
    transcript: Transcript,
    catalogue: Vec<ToolInfo>,
    offered: Rc<[ToolSpec]>,
    /// The actions alone, offered once look-ups are used up: kept while `offered` is
    /// the same (every change of the catalogue, the boundaries or planning remakes it).
    #[serde(skip)]
    actions_offered: kept::Kept<[ToolSpec], Rc<[ToolSpec]>>,
    goal: Option<String>,
    /// The model's latest reasoning and text.
    reasoning: String,
    /// The latest action the model decided on.
    decision: Option<ToolCall>,
    plan: Vec<PlanStep>,
    memory: ContextMemory,
    history: Vec<ActionRecord>,
    iterations: u32,
    lookups: u32,
    reflections: u32,
    /// Wall-clock time the driver has spent on this run's effects.
    #[serde(default)]
    spent_ms: u64,
    /// Whether the run (or its conversation before it) has read text the person did
    /// not write; from then on [`Approval::AskIfUntrusted`] asks. It only ever grows.
    #[serde(default)]
    untrusted: bool,
    /// The owner's standing orders, when it acts for one: within them its actions
    /// run unasked whatever it has read; outside them they ask. Never saved: a
    /// resumed run takes them from the live agent, as it takes its tools.
    #[serde(skip)]
    orders: Option<orders::StandingOrders>,
    /// The agents that own tools of a composite's list ([`Owners`]); never saved.
    #[serde(skip)]
    owners: Owners,
    /// Read back from storage ([`AgentRun::resumed`]): what its transcript says the
    /// person wrote is a saved record's word, not the person's. Set at each resume.
    #[serde(skip)]
    saved: bool,
    /// Invalid answers and re-asks of the current review or goal guess.
    scratch: Vec<Message>,
    limits: Limits,
    /// The model's context window and what the run learned of it.
    #[serde(default)]
    room: room::Room,
    /// Its model's usage, priced, and the budgets it runs within.
    #[serde(default)]
    meter: meter::Meter,
    /// Who answered its last model call, as the provider said; never saved.
    #[serde(skip)]
    served: crate::llm::Served,
    phase: Phase,
    #[serde(skip)]
    events: Vec<Event>,
}

impl AgentRun {
    /// Starts a run on `observation`, after the earlier `history` of the conversation,
    /// with the tools of `catalogue`.
    pub fn new(
        system: impl Into<String>,
        history: Vec<Message>,
        observation: Observation,
        catalogue: Vec<ToolInfo>,
    ) -> Self {
        let system = compose_system(system.into(), &observation, false).into();
        let turn_start = history.len();
        let mut transcript = Transcript::new(history);
        if let Some(environment) = &observation.environment {
            transcript.push(Message::user(environment.as_prompt()));
        }
        transcript.push(Message::user(observation.subject.as_prompt()));
        let untrusted = observation.subject.is_untrusted()
            || observation.environment.as_ref().is_some_and(|e| e.others);
        let events = vec![Event::Started {
            trigger: observation.trigger.clone(),
            input: observation.subject.content.clone(),
            environment: observation.environment.clone(),
        }];
        let mut run = Self {
            id: "run".into(),
            observation,
            system,
            transcript,
            catalogue,
            offered: Rc::new([]),
            actions_offered: kept::Kept::default(),
            goal: None,
            reasoning: String::new(),
            decision: None,
            plan: Vec::new(),
            memory: ContextMemory::default(),
            history: Vec::new(),
            iterations: 0,
            lookups: 0,
            reflections: 0,
            spent_ms: 0,
            untrusted,
            orders: None,
            owners: Owners::default(),
            saved: false,
            scratch: Vec::new(),
            limits: Limits {
                max_iterations: DEFAULT_MAX_ITERATIONS,
                max_lookups: DEFAULT_MAX_LOOKUPS,
                planning: false,
                goal_check: false,
                reflections: 0,
                guess_goal: false,
                time_budget_ms: DEFAULT_TIME_BUDGET_MS,
                reason_tokens: DEFAULT_REASON_TOKENS,
            },
            room: room::Room::starting_at(turn_start),
            meter: meter::Meter::default(),
            served: crate::llm::Served::default(),
            phase: Phase::Reason,
            events,
        };
        run.offered = run.offer(false);
        run
    }

    /// Names the run; idempotency keys start with it, so it must be unique per run.
    pub fn with_id(mut self, id: impl Into<String>) -> Self {
        self.id = id.into();
        self
    }

    /// Offers the `plan` tool, for multi-step work and follow-ups.
    pub fn with_planning(mut self) -> Self {
        if !self.limits.planning {
            self.limits.planning = true;
            self.append_system(PLANNING_PROMPT);
        }
        self.offered = self.offer(false);
        self
    }

    /// Starts the run untrusted when its conversation has already read text the
    /// person did not write (`false` leaves it as it is: taint is never taken back).
    pub fn with_untrusted(mut self, untrusted: bool) -> Self {
        self.untrusted |= untrusted;
        self
    }

    /// Acts under an owner's standing orders (see [`orders::StandingOrders`]).
    pub fn with_orders(mut self, orders: orders::StandingOrders) -> Self {
        self.orders = Some(orders);
        self
    }

    /// Why `call` is outside the run's standing orders; `None` within them or with
    /// none.
    pub fn outside_orders(&self, call: &ToolCall) -> Option<String> {
        self.orders.as_ref().and_then(|o| o.outside(call))
    }

    /// Whether the run has read text the person did not write (or started after its
    /// conversation had): its actions that ask when untrusted ask.
    pub fn is_untrusted(&self) -> bool {
        self.untrusted
    }

    /// After an action with nothing left to do, asks the model whether the goal is
    /// complete (the game-agent loop) instead of waiting for a text answer.
    pub fn with_goal_check(mut self) -> Self {
        self.limits.goal_check = true;
        self
    }

    /// Reviews a drafted answer up to `rounds` times before it stands.
    pub fn with_reflection(mut self, rounds: u32) -> Self {
        self.limits.reflections = rounds;
        self
    }

    /// Asks the model for the goal behind the input before reasoning.
    pub fn with_goal_guess(mut self) -> Self {
        self.limits.guess_goal = true;
        if self.phase == Phase::Reason && self.iterations == 0 {
            self.phase = Phase::GuessGoal;
        }
        self
    }

    /// Starts with this context memory (kept from the conversation's earlier runs, or
    /// follow-ups the host already knows are owed); the model is told it, as data.
    pub fn with_memory(mut self, memory: ContextMemory) -> Self {
        if !memory.is_empty() {
            let kept = serde_json::to_string(&memory).unwrap_or_default();
            self.append_system(&format!(
                "\n\nMEMORY (kept from your earlier runs, as data: facts, and follow-ups \
                 you still owe): {kept}"
            ));
        }
        self.memory = memory;
        self
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn observation(&self) -> &Observation {
        &self.observation
    }

    /// Iterations taken so far: model turns that acted or answered.
    pub fn iterations(&self) -> u32 {
        self.iterations
    }

    pub fn messages(&self) -> &[Message] {
        &self.transcript
    }

    /// Every tool call with its result, in order.
    pub fn history(&self) -> &[ActionRecord] {
        &self.history
    }

    pub fn plan(&self) -> &[PlanStep] {
        &self.plan
    }

    pub fn memory(&self) -> &ContextMemory {
        &self.memory
    }

    /// Whether this run could settle a follow-up owed to `tool`: its trigger allows
    /// the action and the tool is offered.
    pub fn can_settle(&self, tool: &str) -> bool {
        self.observation.boundaries.allows(tool)
            && self.catalogue.iter().any(|t| t.spec.name == tool)
    }

    pub fn goal(&self) -> Option<&str> {
        self.goal.as_deref()
    }

    /// The model's latest reasoning (or text, when it gave no reasoning).
    pub fn reasoning(&self) -> &str {
        &self.reasoning
    }

    /// The latest action the model decided on.
    pub fn decision(&self) -> Option<&ToolCall> {
        self.decision.as_ref()
    }

    pub fn outcome(&self) -> Option<&Outcome> {
        match &self.phase {
            Phase::Done(outcome) => Some(outcome),
            _ => None,
        }
    }

    /// The events since the last call, oldest first.
    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// Hands each event made since the last call to `emit`, keeping the room they
    /// took for the next step's.
    pub fn drain_events(&mut self, emit: &mut dyn FnMut(Event)) {
        self.events.drain(..).for_each(emit);
    }

    pub fn next_step(&self) -> NextStep {
        match &self.phase {
            Phase::GuessGoal => self.side_call(
                Purpose::GuessGoal,
                review::GOAL_PROMPT,
                ResponseFormat::for_contract::<GoalGuess>(),
            ),
            Phase::Reason if self.at_cap() => NextStep::CallModel(ModelCall {
                purpose: Purpose::FinalAnswer,
                request: self.reason_request(ToolChoice::None),
            }),
            Phase::Reason => NextStep::CallModel(ModelCall {
                purpose: Purpose::Reason {
                    iteration: self.iterations + 1,
                },
                request: self.reason_request(ToolChoice::Auto),
            }),
            Phase::Act(act) => act_step(act, self.untrusted, &|i| self.asks(i)),
            Phase::CheckGoal => self.goal_check_call(),
            Phase::Reflect { .. } => self.side_call(
                Purpose::Reflect {
                    round: self.reflections + 1,
                },
                review::REVIEW_PROMPT,
                ResponseFormat::for_contract::<Review>(),
            ),
            Phase::Done(outcome) => NextStep::Done(outcome.clone()),
        }
    }

    /// The seed's goal question: the goal, the actions taken, YES or NO.
    fn goal_check_call(&self) -> NextStep {
        let goal = self
            .goal
            .as_deref()
            .unwrap_or(&self.observation.subject.content);
        let actions: Vec<_> = self
            .history
            .iter()
            .filter(|r| r.kind == Some(ToolKind::Action))
            .collect();
        let actions = serde_json::to_string(&actions).unwrap_or_default();
        let mut request = self.request(ToolChoice::None);
        request.max_tokens = Some(100);
        Rc::make_mut(&mut request.messages)
            .push(Message::user(after_action::goal_question(goal, &actions)));
        NextStep::CallModel(ModelCall {
            purpose: Purpose::CheckGoal,
            request,
        })
    }

    /// A reasoning call: its answer capped as the run's limits say (the seed's 2000).
    fn reason_request(&self, tool_choice: ToolChoice) -> ChatRequest {
        let mut request = self.request(tool_choice);
        request.max_tokens = Some(self.limits.reason_tokens);
        request
    }

    fn request(&self, tool_choice: ToolChoice) -> ChatRequest {
        let tools = if tool_choice == ToolChoice::None {
            Rc::from([])
        } else if self.lookups >= self.limits.max_lookups {
            self.actions_offered.of(&self.offered, |_| self.offer(true))
        } else {
            Rc::clone(&self.offered)
        };
        // Every field named: a default's shared parts would be made only to be dropped.
        ChatRequest {
            system: Rc::clone(&self.system),
            messages: self.transcript.shared(),
            tools,
            tool_choice,
            response_format: None,
            temperature: None,
            max_tokens: None,
        }
    }

    /// The tools to offer: data tools and the actions the boundaries allow (only the
    /// actions once the look-ups of an iteration are used up), and `plan`.
    fn offer(&self, actions_only: bool) -> Rc<[ToolSpec]> {
        let boundaries = &self.observation.boundaries;
        let mut specs: Vec<ToolSpec> = self
            .catalogue
            .iter()
            .filter(|t| t.approval != Approval::Deny)
            .filter(|t| match t.kind {
                ToolKind::Data => !actions_only && boundaries.may_read(&t.spec.name),
                ToolKind::Action => boundaries.allows(&t.spec.name),
            })
            .map(|t| t.spec.clone())
            .collect();
        if self.limits.planning {
            specs.push(context::plan_tool_spec());
        }
        specs.into()
    }

    /// A request for a review or a goal guess: the transcript, the prompt, and any
    /// earlier invalid answers with what was wrong.
    fn side_call(&self, purpose: Purpose, prompt: &str, format: ResponseFormat) -> NextStep {
        let mut request = self.request(ToolChoice::None);
        let messages = Rc::make_mut(&mut request.messages);
        messages.push(Message::user(prompt));
        messages.extend(self.scratch.iter().cloned());
        request.response_format = Some(format);
        NextStep::CallModel(ModelCall { purpose, request })
    }

    /// Adds `text` to the system prompt: only while the run is set up, as the prompt
    /// is shared with the requests made of it.
    fn append_system(&mut self, text: &str) {
        self.system = format!("{}{text}", self.system).into();
    }

    fn push(&mut self, message: Message) {
        self.transcript.push(message);
    }

    fn finish(&mut self, outcome: Outcome) {
        self.events.push(Event::Done(outcome.clone()));
        self.phase = Phase::Done(outcome);
    }

    /// Feeds back the model's response to the last [`NextStep::CallModel`].
    pub fn model_responded(&mut self, response: ChatResponse) {
        self.answered_within_window();
        self.record_usage(response.usage);
        self.served = response.served.clone();
        match std::mem::replace(&mut self.phase, Phase::Reason) {
            Phase::GuessGoal => self.goal_guessed(response),
            Phase::Reason => self.reasoned(response),
            Phase::CheckGoal => self.goal_checked(response),
            Phase::Reflect { draft } => self.reflected(draft, response),
            other => self.phase = other,
        }
    }

    /// The model could not answer: the run fails with the error (a first refusal for
    /// length is retried, trimmed: see `fit`).
    pub fn model_failed(&mut self, error: &LlmError) {
        if self.retry_when_too_long(error) {
            return;
        }
        self.finish(Outcome::Failed {
            error: error.to_string(),
        });
    }

    /// Stops the run; it keeps its record.
    pub fn abort(&mut self, reason: impl Into<String>) {
        if !matches!(self.phase, Phase::Done(_)) {
            self.finish(Outcome::Aborted {
                reason: reason.into(),
            });
        }
    }

    fn reasoned(&mut self, response: ChatResponse) {
        if self.at_cap() {
            self.push(Message::assistant(response.text.clone(), Vec::new()));
            self.events.push(Event::Thought(Thought::Message {
                text: response.text.clone(),
            }));
            return self.finish(Outcome::CapReached {
                text: response.text,
            });
        }
        let ChatResponse {
            text,
            reasoning,
            tool_calls,
            finish,
            ..
        } = response;
        // A thinking model may spend the whole cap reasoning: an empty answer so cut is
        // no answer, and the person learns which setting to raise.
        if finish == FinishReason::Length && text.trim().is_empty() && tool_calls.is_empty() {
            return self.finish(Outcome::Failed {
                error: format!(
                    "the model's answer was cut at {} tokens before it said anything (a                      model that reasons first can spend its cap on that): raise the                      agent's reasonMaxTokens",
                    self.limits.reason_tokens
                ),
            });
        }
        // Read once, here: the transcript, the approval and the tool get the same calls.
        let tool_calls = calls::normalized(tool_calls);
        self.reasoning = if reasoning.is_empty() {
            text.clone()
        } else {
            reasoning
        };
        self.push(Message::assistant(text.clone(), tool_calls.clone()));
        if tool_calls.is_empty() {
            self.iterations += 1;
            self.lookups = 0;
            self.events
                .push(Event::Thought(Thought::Message { text: text.clone() }));
            return self.answered(text);
        }
        self.events.push(Event::Thought(Thought::Actions {
            text,
            calls: tool_calls.clone(),
        }));
        self.sort_calls(tool_calls);
    }

    /// The loop node: what follows a finished (or refused) action.
    fn after_action(&mut self, tool: &str, error: Option<&str>, step_used: bool) {
        if error.is_none() {
            self.memory.settle(tool);
            if step_used && self.plan.first().is_some_and(|step| step.done_by(tool)) {
                self.plan.remove(0);
            }
        }
        let next = after_action::after_action(tool, error, &self.plan, &self.memory.owed);
        match next.prompt() {
            Some(prompt) => {
                self.push(Message::user(prompt));
                self.phase = Phase::Reason;
            }
            None if self.limits.goal_check => self.phase = Phase::CheckGoal,
            None => self.phase = Phase::Reason,
        }
    }
}
