//! One turn of a conversation: a trigger becomes a run (routed through the delegate
//! for chat, through the character's workflows when one is played), the run is
//! driven to its end across approvals (saved before every step, see `resume`), and
//! every change is tagged with its conversation and turn.

use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::{Either, FutureExt, Shared, select};
use futures::lock::Mutex;

use super::address::Address;
use super::grants::offers;
use super::state::{Running, Waiting};
use super::update::{Decision, PendingApproval, Update};
#[cfg(feature = "webmcp")]
use super::visitor::{is_visit, visit_asks};
use super::{AppError, Perceived, Session};
use crate::compose::agent::Agent;
use crate::llm::message::{Message, ToolCall};
use crate::run::driver::{Seams, Stop, drive_until};
use crate::run::event::Event;
use crate::run::interaction::Conversation;
use crate::run::{AgentRun, ContextMemory, Observation, Outcome};
use crate::tool::{Reach, ToolInfo};

/// Who wrote `asked`, when another party did: the turn keeps it, so later turns read
/// its input quoted as theirs.
fn author_of(asked: &Input) -> Option<serde_json::Value> {
    let Input::Observation(observation) = asked else {
        return None;
    };
    let subject = &observation.subject;
    let another = || subject.is_untrusted().then(|| "another party".into());
    subject.author.clone().or_else(another)
}

/// Fires when the turn is stopped; never when its sender is merely dropped.
pub(super) type StopSignal = Shared<oneshot::Receiver<()>>;

pub(super) async fn stopped(signal: StopSignal) {
    if signal.await.is_err() {
        futures::future::pending::<()>().await;
    }
}

pub(super) use super::address::{Input, Place};

impl Session {
    /// Waits for the conversation's earlier turns, then takes this one. A message
    /// that cannot begin at once waits in the conversation's queue, behind what waits
    /// there already (see [`super::queue`]).
    pub(super) async fn take_turn(&self, asked: Input) -> Result<Outcome, AppError> {
        let (address, lock) = self.addressed(&asked)?;
        if let Input::Chat(text) = &asked
            && (lock.try_lock().is_none() || !self.queue(&address.conversation).is_empty())
        {
            let mine = self.enqueue(&address.conversation, text);
            return self.run_queue(&address.conversation, &lock, mine).await;
        }
        let _turn = lock.lock().await;
        if self.inner.state.borrow().destroyed {
            return Err(AppError::Destroyed);
        }
        Ok(self.run_turn(address, asked, None).await)
    }

    /// Where `asked` goes, and the lock its conversation's turns take one at a time.
    pub(super) fn addressed(&self, asked: &Input) -> Result<(Address, Rc<Mutex<()>>), AppError> {
        let (address, lock, opened) = {
            let mut state = self.inner.state.borrow_mut();
            if state.destroyed {
                return Err(AppError::Destroyed);
            }
            let (address, opened) = self.address(&mut state, asked);
            let lock = state.lock(&address.conversation);
            (address, lock, opened)
        };
        if let Some(notices) = opened {
            self.after_write(notices);
            self.tell(&Update::Opened {
                conversation: address.conversation.clone(),
            });
        }
        Ok((address, lock))
    }

    /// Runs the turn `asked` at `address`; `queued`: the queue (its conversation, and
    /// the message's number there) it leaves once its turn is begun and saved.
    pub(super) async fn run_turn(
        &self,
        address: Address,
        asked: Input,
        queued: Option<(&str, u64)>,
    ) -> Outcome {
        let budget = self.inner.config.options.context_budget;
        let input = match &asked {
            Input::Chat(text) => text.clone(),
            Input::Observation(observation) => observation.subject.content.clone(),
        };
        let conversation = &address.conversation;
        let (turn, history) = {
            let disk = self.disk();
            let mut state = self.inner.state.borrow_mut();
            let c = state.conversation_mut(conversation, &disk);
            let history = c.context_for(&address.agent.name, budget);
            let turn = c.begin(&input);
            if let Some(interaction) = c.interactions.last_mut() {
                interaction.started_ms = disk.now_ms;
                interaction.agent = address.agent.name.clone();
                interaction.author = author_of(&asked);
            }
            state.age_turns(conversation, self.inner.config.options.keep_turns);
            (turn, history)
        };
        let place = Place {
            conversation: conversation.to_owned(),
            turn,
        };
        self.tell(&Update::TurnBegan {
            conversation: conversation.to_owned(),
            turn,
            input,
        });
        self.save_progress(conversation);
        if let Some((queue, number)) = queued {
            self.dequeue(queue, number);
        }
        let signal = self.start_running(&place);
        let perceived = self.perceive(&asked, &address).await;
        let outcome = match asked {
            Input::Chat(_) => {
                self.message(&place, history, address, perceived, signal)
                    .await
            }
            Input::Observation(observation) => {
                let mut observation = *observation;
                perceived.apply(&mut observation);
                let agent = address.agent;
                let goal_check = self.inner.config.options.goal_check_on_events;
                let mut run = self.build_run(&place, &agent, observation, history, goal_check);
                if self.inner.config.options.planning_on_events {
                    run = run.with_planning();
                }
                self.drive(&place, &agent, run, false, signal).await
            }
        };
        self.end_turn(&place);
        outcome
    }

    /// A person's message: to the played character, or to the agent it was routed to.
    async fn message(
        &self,
        place: &Place,
        history: Vec<Message>,
        address: Address,
        perceived: Perceived,
        signal: StopSignal,
    ) -> Outcome {
        #[cfg(feature = "workflows")]
        if let Some(play) = &self.inner.config.play {
            let text = address.request;
            return self.in_character(place, history, text, play, signal).await;
        }
        self.chat(place, history, address, perceived, signal).await
    }

    /// A person's message to `agent`: to a world's resident, stamped now and with the
    /// resident as its actor, as the world's triggers are (the environment then reads
    /// its stats); to any other agent, the plain chat message.
    pub(super) fn chat_observation(&self, agent: &Agent, request: String) -> Observation {
        let mut observation = Observation::chat(request);
        if let Some(actor) = &agent.actor {
            observation.actor = actor.clone();
            observation.trigger.timestamp = Some(self.inner.config.clock.now().rfc3339());
        }
        observation
    }

    async fn chat(
        &self,
        place: &Place,
        history: Vec<Message>,
        address: Address,
        perceived: Perceived,
        signal: StopSignal,
    ) -> Outcome {
        let Address { agent, request, .. } = address;
        if request.is_empty() {
            // `@agent` alone: switched, nothing to ask.
            let outcome = Outcome::Answered {
                text: format!("You are now talking to @{}.", agent.name),
            };
            self.event(place, Event::Done(outcome.clone()));
            return outcome;
        }
        let mut observation = self.chat_observation(&agent, request);
        perceived.apply(&mut observation);
        #[cfg(feature = "supervisor")]
        if self.inner.config.options.supervisor {
            return self
                .supervise(place, &agent, history, observation, signal)
                .await;
        }
        let run = self.build_run(place, &agent, observation, history, false);
        self.drive(place, &agent, run, false, signal).await
    }

    /// Registers the turn's run as in flight; its stop signal.
    pub(super) fn start_running(&self, place: &Place) -> StopSignal {
        let (stop, signal) = oneshot::channel();
        self.inner.state.borrow_mut().running.push(Running {
            conversation: place.conversation.clone(),
            turn: place.turn,
            stop: Some(stop),
        });
        signal.shared()
    }

    /// The turn's run is over, however it ended: it is no longer in flight, its saved
    /// run is removed, and the conversation is saved.
    pub(super) fn end_turn(&self, place: &Place) {
        self.inner
            .state
            .borrow_mut()
            .running
            .retain(|r| !(r.conversation == place.conversation && r.turn == place.turn));
        self.inner
            .state
            .borrow_mut()
            .tasks
            .retain(|(conversation, turn, ..)| {
                !(*conversation == place.conversation && *turn == place.turn)
            });
        self.forget_run(&place.conversation);
        self.forget_supervision(&place.conversation);
        #[cfg(feature = "telemetry")]
        self.end_tracing(place);
        self.save(&place.conversation);
    }

    /// Drives `run` to its end, pausing for each approval and saving it (with the
    /// conversation) before every step; `character`: a played character's workflows
    /// follow it, so it cannot be resumed after a reload.
    pub(super) async fn drive(
        &self,
        place: &Place,
        agent: &Agent,
        run: AgentRun,
        character: bool,
        signal: StopSignal,
    ) -> Outcome {
        self.drive_run(place, agent, run, character, signal, false)
            .await
    }

    /// [`Session::drive`] for a supervisor's executor round: its end is the
    /// supervisor's to tell, not the turn's.
    #[cfg(feature = "supervisor")]
    pub(super) async fn drive_within(
        &self,
        place: &Place,
        agent: &Agent,
        run: AgentRun,
        signal: StopSignal,
    ) -> Outcome {
        self.drive_run(place, agent, run, false, signal, true).await
    }

    async fn drive_run(
        &self,
        place: &Place,
        agent: &Agent,
        mut run: AgentRun,
        character: bool,
        signal: StopSignal,
        within: bool,
    ) -> Outcome {
        let config = &self.inner.config;
        // Each model call's usage is counted as the run goes on (before it is saved).
        let seen = std::cell::Cell::new(run.usage());
        let checkpoint = |run: &AgentRun| {
            self.count_usage(place, &agent.name, run, &seen);
            self.checkpoint(place, &agent.name, character, run);
        };
        // A sub-agent called as a tool is traced under its call's span.
        #[cfg(feature = "telemetry")]
        let relay = self.relay(place);
        #[cfg(not(feature = "telemetry"))]
        let relay = None;
        loop {
            self.meter_run(&place.conversation, agent, &mut run);
            let seams = Seams {
                llm: &*agent.llm,
                tools: &agent.tools,
                clock: &*config.clock,
                host: Some(&self.inner.host),
                checkpoint: Some(&checkpoint),
                relay: relay.clone(),
            };
            // An approval is announced by `decision`, once it can be decided.
            let mut emit = |event: Event| {
                let told_later = match &event {
                    Event::ApprovalNeeded { .. } => true,
                    Event::Done(_) => within,
                    _ => false,
                };
                // A supervisor's round ends in its trace, if not in the turn's updates.
                #[cfg(feature = "telemetry")]
                if within && matches!(event, Event::Done(_)) {
                    self.trace(place, &event);
                }
                if !told_later {
                    self.event(place, event);
                }
            };
            let stop = drive_until(&mut run, &seams, &mut emit, stopped(signal.clone())).await;
            self.count_usage(place, &agent.name, &run, &seen);
            self.note_untrusted(place, &run);
            let call = match stop {
                Stop::Done(outcome) => {
                    self.keep_memory(place, &run);
                    return outcome;
                }
                Stop::AwaitingApproval(call) => call,
            };
            match self
                .decision(place, agent, &call, &run, signal.clone())
                .await
            {
                // Approved as shown: the run refuses to run other arguments.
                Some(
                    Decision::Approve
                    | Decision::ApproveAlways
                    | Decision::ApproveForTask
                    | Decision::ApproveOnSite,
                ) => run.approve_as(&call),
                Some(Decision::Deny { reason }) => run.deny(&call.id, &reason),
                None => run.abort("stopped before it finished"),
            }
        }
    }

    /// What `run` remembers is its conversation's from now on, with the follow-ups it
    /// could not settle kept for a later run (see [`ContextMemory::split_owed`]).
    fn keep_memory(&self, place: &Place, run: &AgentRun) {
        let mut state = self.inner.state.borrow_mut();
        if let Some(conversation) = state.conversations.get_mut(&place.conversation) {
            let (_, aside) = conversation.memory.split_owed(|tool| run.can_settle(tool));
            conversation.memory = ContextMemory::carried(run.memory(), aside);
        }
    }

    /// Once `run` has read another party's text, so has its conversation: later turns
    /// start untrusted (the flag is saved with the conversation).
    pub(super) fn note_untrusted(&self, place: &Place, run: &AgentRun) {
        if !run.is_untrusted() {
            return;
        }
        let mut state = self.inner.state.borrow_mut();
        if let Some(conversation) = state.conversations.get_mut(&place.conversation) {
            conversation.untrusted = true;
        }
    }

    /// The tools `agent` is given now, with their policies: its own, and the host's
    /// (a host tool of the same name replaces the agent's).
    pub(super) fn catalogue(&self, agent: &Agent) -> Vec<ToolInfo> {
        let host = self.inner.host.catalogue();
        let mut catalogue = agent.tools.catalogue();
        catalogue.retain(|t| !host.iter().any(|h| h.spec.name == t.spec.name));
        catalogue.extend(host);
        catalogue
    }

    /// What tool `name` of `agent` says it does: the host's description for a host
    /// tool (it replaces the agent's of the same name), else the registered one.
    /// What the person deciding on `call` is told it does: in plain words when its
    /// tool can say for this call (the page actions), else the tool's own description
    /// (the host's, for a host tool, which replaces the agent's of the same name).
    fn approval_description(&self, agent: &Agent, call: &ToolCall) -> Option<String> {
        let host = self.inner.host.catalogue();
        let description = match host.into_iter().find(|t| t.spec.name == call.name) {
            Some(tool) => Some(tool.spec.description),
            None => agent
                .tools
                .describe(call)
                .or_else(|| agent.tools.description_of(&call.name).map(str::to_owned)),
        };
        description.filter(|d| !d.trim().is_empty())
    }

    pub(super) fn build_run(
        &self,
        place: &Place,
        agent: &Agent,
        observation: Observation,
        history: Vec<Message>,
        goal_check: bool,
    ) -> AgentRun {
        let options = &self.inner.config.options;
        let catalogue = self.catalogue(agent);
        let (untrusted, memory) = {
            let state = self.inner.state.borrow();
            let conversation = state.conversations.get(&place.conversation);
            let untrusted = conversation.is_some_and(Conversation::is_untrusted);
            (untrusted, conversation.map(|c| c.memory.clone()))
        };
        let number = self.inner.state.borrow_mut().next_run();
        let random = (self.inner.config.random)();
        let id = format!(
            "{}-{}-{}-{number}-{:08x}",
            self.inner.config.namespace,
            place.conversation,
            place.turn,
            (random.clamp(0.0, 1.0) * f64::from(u32::MAX)) as u32
        );
        let mut run = AgentRun::new(agent.system.clone(), history, observation, catalogue)
            .with_untrusted(untrusted)
            .with_id(id)
            .with_max_iterations(options.max_iterations)
            .with_max_lookups(options.max_lookups)
            .with_time_budget_ms(options.time_budget_ms)
            .with_reason_tokens(options.reason_tokens)
            .with_owners(agent.owners.clone());
        if let Some(orders) = self.orders_of(agent) {
            run = run.with_orders(orders);
        }
        if options.planning {
            run = run.with_planning();
        }
        if options.reflection > 0 {
            run = run.with_reflection(options.reflection);
        }
        if goal_check {
            run = run.with_goal_check();
        }
        if options.guess_goal {
            run = run.with_goal_guess();
        }
        match memory {
            Some(memory) if !memory.is_empty() => {
                let (carried, _) = memory.split_owed(|tool| run.can_settle(tool));
                run.with_memory(carried)
            }
            _ => run,
        }
    }

    /// The decision on `call`: a grant given before (shown as an `allowed` event),
    /// else the approver's, else a person's through [`Session::approve`] /
    /// [`Session::deny`]; `None` if the turn is stopped first. No grant covers a call
    /// that always asks, nor one whose consequential values `run` traces to text
    /// others wrote ([`crate::run::provenance`]).
    async fn decision(
        &self,
        place: &Place,
        agent: &Agent,
        call: &ToolCall,
        run: &AgentRun,
        signal: StopSignal,
    ) -> Option<Decision> {
        let mut reach = self.reach(agent, call);
        let description = self.approval_description(agent, call);
        let named = reach.as_ref().map_or(&[][..], |r| &r.values);
        let site = reach.as_ref().and_then(|r| r.site.as_deref());
        let (values, tainted) = run.provenance(call, named, site);
        let why = run.outside_orders(call).or(tainted);
        if agent.unattended {
            let why = why.unwrap_or_else(|| "the call waits for a person's approval".into());
            return Some(Decision::Deny {
                reason: format!("no one is here to ask, and {why}"),
            });
        }
        // A browser agent's call is its own each time: no grant the person gave
        // covers it, and its card offers none that would cover the next one.
        #[cfg(feature = "webmcp")]
        let why = why.or_else(|| is_visit(run.observation()).then(visit_asks));
        if let Some(why) = why {
            // A call that always asks says why by what it does; its values, shown
            // with their sources, say the rest.
            let reach = reach.get_or_insert_with(Reach::default);
            reach.always_asks.get_or_insert(why);
        }
        if let Some(by) = self.granted(place, agent, call, reach.as_ref()) {
            self.event(
                place,
                Event::Allowed {
                    call: call.clone(),
                    description,
                    by,
                    agent: run.owner_of(&call.name).map(str::to_owned),
                },
            );
            return Some(Decision::Approve);
        }
        let pending = PendingApproval {
            conversation: place.conversation.clone(),
            turn: place.turn,
            agent: agent.name.clone(),
            call: call.clone(),
            description,
            site: reach.as_ref().and_then(|r| r.site.clone()),
            always_asks: reach.as_ref().and_then(|r| r.always_asks.clone()),
            grants: offers(reach.as_ref()),
            values,
        };
        let approver = self.inner.approver.borrow().clone();
        let description = pending.description.clone();
        let announce = |session: &Self| {
            session.event(
                place,
                Event::ApprovalNeeded {
                    call: call.clone(),
                    description: description.clone(),
                    agent: run.owner_of(&call.name).map(str::to_owned),
                },
            );
        };
        let decided = match approver {
            Some(approver) => {
                announce(self);
                let asked = std::pin::pin!(approver(&pending));
                match select(std::pin::pin!(stopped(signal)), asked).await {
                    Either::Left(_) => None,
                    Either::Right((decision, _)) => Some(decision),
                }
            }
            None => {
                let key_of_call = pending.key();
                let (reply, decision) = oneshot::channel();
                self.inner
                    .state
                    .borrow_mut()
                    .waiting
                    .push(Waiting { pending, reply });
                announce(self);
                let decided = match select(std::pin::pin!(stopped(signal)), decision).await {
                    Either::Left(_) => None,
                    Either::Right((decision, _)) => decision.ok(),
                };
                self.inner.state.borrow_mut().forget_waiting(&key_of_call);
                decided
            }
        };
        if let Some(decided) = &decided {
            self.grant(place, agent, call, reach.as_ref(), decided);
        }
        decided
    }

    /// Applies a run event to its own conversation, then tells the listeners.
    pub(super) fn event(&self, place: &Place, event: Event) {
        #[cfg(feature = "telemetry")]
        self.trace(place, &event);
        self.inner
            .state
            .borrow_mut()
            .apply(&place.conversation, place.turn, &event);
        self.tell(&Update::Event {
            conversation: place.conversation.clone(),
            turn: place.turn,
            event,
        });
    }

    /// Saves the turns of a conversation a run in flight changed, moving it in the
    /// list only if it is not listed first yet (see `State::save_progress`).
    pub(super) fn save_progress(&self, conversation: &str) {
        let notices = self
            .inner
            .state
            .borrow_mut()
            .save_progress(conversation, &self.disk());
        self.after_write(notices);
    }

    /// Saves a conversation; failures are told, never swallowed.
    pub(super) fn save(&self, conversation: &str) {
        let notices = self
            .inner
            .state
            .borrow_mut()
            .save(conversation, &self.disk());
        self.after_write(notices);
    }
}
