//! An agent: a name, a purpose, instructions, a model and tools — everything a run
//! needs besides its trigger. The compositions are made of agents: the seed's
//! composite (`composite`: its sub-agents' tools in its own list), another agent's
//! opaque tool ([`register_as_tool`]), a router (`delegate`), a supervisor
//! (`supervisor`).

use crate::base::json::{Read, SchemaText};
use std::rc::Rc;

use schemars::JsonSchema;

use crate::base::clock::Clock;
use crate::llm::Llm;
use crate::llm::message::Message;
use crate::run::driver::{Caller, Seams, Stop, drive};
use crate::run::event::Event;
use crate::run::orders::StandingOrders;
use crate::run::{
    Actor, AgentRun, Boundaries, DEFAULT_MAX_ITERATIONS, Observation, Outcome, Owners,
};
use crate::tool::{Author, ToolKind, ToolRegistry};

/// Everything a run needs besides the trigger.
pub struct Agent {
    /// How others call it: `@name`, or the tool name when it serves another agent.
    pub name: String,
    /// What it is good for, for routers and for the model that may call it.
    pub description: String,
    pub system: String,
    pub llm: Rc<dyn Llm>,
    pub tools: Rc<ToolRegistry>,
    pub max_iterations: u32,
    /// A resident keeps one memory of its own (a conversation of its own, with its
    /// context memory) that its triggers and `@name` messages share; other agents
    /// answer in whichever conversation is open.
    pub own_memory: bool,
    /// Its owner's standing orders: what it may do unasked whatever it has read.
    pub orders: Option<StandingOrders>,
    /// No one is there to ask (an NPC the host runs alone): a call that would wait for
    /// a person is refused instead, saying why.
    pub unattended: bool,
    /// Who it is in a world (a resident): a person's message to it is observed as the
    /// world's triggers are, stamped and with this actor, whose stats the session's
    /// environment reads as the message arrives.
    pub actor: Option<Actor>,
    /// A composite's tools that its sub-agents own ([`super::composite::gather`]):
    /// their calls and steps are tagged with the owner.
    pub owners: Owners,
}

impl Agent {
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        system: impl Into<String>,
        llm: Rc<dyn Llm>,
        tools: Rc<ToolRegistry>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            system: system.into(),
            llm,
            tools,
            max_iterations: DEFAULT_MAX_ITERATIONS,
            own_memory: false,
            orders: None,
            unattended: false,
            actor: None,
            owners: Owners::default(),
        }
    }

    /// Gives the agent a memory of its own (see [`Agent::own_memory`]).
    pub fn with_own_memory(mut self) -> Self {
        self.own_memory = true;
        self
    }

    /// A run of this agent on `observation`, after `history`.
    pub fn run(&self, observation: Observation, history: Vec<Message>) -> AgentRun {
        AgentRun::new(
            self.system.clone(),
            history,
            observation,
            self.tools.catalogue(),
        )
        .with_max_iterations(self.max_iterations)
        .with_owners(self.owners.clone())
    }

    /// Runs the agent on a chat message to its end or its first pause.
    pub async fn chat(
        &self,
        run_id: &str,
        input: &str,
        clock: &dyn Clock,
        emit: &mut dyn FnMut(Event),
    ) -> Stop {
        self.chat_within(run_id, input, Boundaries::default(), clock, emit)
            .await
    }

    /// [`Agent::chat`] under `boundaries`: the actions its run may take.
    pub async fn chat_within(
        &self,
        run_id: &str,
        input: &str,
        boundaries: Boundaries,
        clock: &dyn Clock,
        emit: &mut dyn FnMut(Event),
    ) -> Stop {
        let mut observation = Observation::chat(input);
        observation.boundaries = boundaries;
        let mut run = self.run(observation, Vec::new()).with_id(run_id);
        let seams = Seams {
            llm: &*self.llm,
            tools: &self.tools,
            clock,
            host: None,
            checkpoint: None,
            relay: None,
        };
        drive(&mut run, &seams, emit).await
    }

    /// [`Agent::chat_within`] as a tool of `caller`'s run: held to what is left of the
    /// caller's budgets, its events told to the caller's relay as they happen, and what
    /// its model calls used told as each is taken in (before every step) and at its end.
    pub async fn serve(
        &self,
        run_id: &str,
        input: &str,
        boundaries: Boundaries,
        clock: &dyn Clock,
        caller: &Caller,
    ) -> Stop {
        let mut observation = Observation::chat(input);
        observation.boundaries = boundaries;
        let mut run = self.run(observation, Vec::new()).with_id(run_id);
        run.meter_with(caller.price_of(self.llm.model()), caller.allowances());
        let used = |run: &AgentRun| caller.used(run.usage());
        let seams = Seams {
            llm: &*self.llm,
            tools: &self.tools,
            clock,
            host: None,
            checkpoint: Some(&used),
            relay: None,
        };
        caller.started(self.llm.model());
        let stop = drive(&mut run, &seams, &mut |event| caller.event(&event)).await;
        used(&run);
        stop
    }
}

/// What a coordinator sends an agent it calls as a tool.
#[derive(Debug, JsonSchema, Read, SchemaText)]
pub struct Request {
    /// The task, in plain words.
    pub request: String,
}

/// Registers `agent` as the tool `agent.name` of `registry` (the composite pattern):
/// the calling model hands it a request and reads its answer. `kind` says whether
/// the sub-agent may change the world; its actions take the call's idempotency key
/// as their run id, so a resumed coordinator does not repeat them. Its run is the
/// calling run's to count, hold and trace ([`Agent::serve`]): what its model calls used
/// comes back with the call's result and counts in the caller's meter, its budgets are
/// what is left of the caller's (one reached inside stops it, and the call fails with
/// the budget's sentence), and its events go to the caller's relay.
pub fn register_as_tool(
    registry: &mut ToolRegistry,
    agent: Rc<Agent>,
    clock: Rc<dyn Clock>,
    kind: ToolKind,
) {
    let name = agent.name.clone();
    let description = agent.description.clone();
    let parameters = crate::base::json::schema::parameters::<Request>();
    registry.register_with(
        &name,
        kind,
        description,
        parameters,
        move |args: Request, cx| {
            let agent = Rc::clone(&agent);
            let clock = Rc::clone(&clock);
            async move {
                let run_id = cx.idempotency_key.map_or_else(
                    || format!("{}-{}", agent.name, clock.now().epoch_ms),
                    String::from,
                );
                // A sub-agent serving as a data tool may only look things up.
                let boundaries = match kind {
                    ToolKind::Data => Boundaries {
                        allowed_actions: Some(Vec::new()),
                        ..Boundaries::default()
                    },
                    ToolKind::Action => Boundaries::default(),
                };
                // Called outside a run (a test, a host's own call): on its own.
                let caller = cx.caller.unwrap_or_default();
                match agent
                    .serve(&run_id, &args.request, boundaries, &*clock, &caller)
                    .await
                {
                    // Failed, stopped, or held by a budget: the caller reads why.
                    Stop::Done(
                        Outcome::Failed { error: why }
                        | Outcome::Aborted { reason: why }
                        | Outcome::BudgetReached { reason: why },
                    ) => Err(why),
                    Stop::Done(outcome) => Ok(outcome.text().to_owned()),
                    Stop::AwaitingApproval(call) => Err(format!(
                        "`{}` needs a person's approval, which a sub-agent cannot ask for",
                        call.name
                    )),
                }
            }
        },
    );
    // Its answer may echo whatever it read, whichever its kind.
    registry.set_author(&name, Author::Others);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_requests_schema_written_at_compile_time_is_the_derived_one() {
        let mut derived = schemars::schema_for!(Request).to_value();
        if let Some(object) = derived.as_object_mut() {
            object.remove("$schema");
            object.remove("title");
        }
        assert_eq!(crate::base::json::schema::parameters::<Request>(), derived);
    }
}
