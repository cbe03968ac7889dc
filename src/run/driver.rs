//! The driver: the one async loop that turns an [`AgentRun`]'s steps into effects.
//!
//! It asks the model through the [`Llm`] seam, runs tools through the
//! [`ToolRegistry`] (or the [`Host`]) under their timeouts, feeds every result back
//! to the run, and emits each [`Event`]. A look-up asked again before any action, with
//! the same arguments, is answered as it was the first time when its tool allows
//! ([`cache`]). A run stops when it is done, when it needs a
//! person's approval (approve or deny on the run, then drive it again), when the
//! cancel signal fires, or when the run's time budget is spent (the effect in flight
//! is dropped and the run fails, saying so), or when a budget it runs within is spent
//! (it stops in words before the next model call, `run::meter`). Before each step
//! (and when it pauses for an approval) it hands the run to the optional checkpoint,
//! so the caller can save it and resume it after a reload. A call it runs in the page
//! sees the run as its [`Caller`]: a tool that runs a run of its own (an agent called
//! as a tool) is held to what is left of the run's budgets, reports its events to the
//! seams' [`Relay`] and hands back what its model calls used with its result, which the
//! run's meter counts.

use std::future::Future;
use std::pin::{Pin, pin};
use std::rc::Rc;

use futures::future::{Either, LocalBoxFuture, join_all, select};
use serde_json::Value;

use crate::base::clock::{Clock, within};
use crate::llm::message::ToolCall;
use crate::llm::{ChatResponse, Llm, LlmError};
use crate::run::event::Event;
use crate::run::{AgentRun, Invocation, ModelCall, NextStep, Outcome, ToolResult};
use crate::tool::{CallContext, RunsOn, ToolError, ToolKind, ToolRegistry};

mod cache;
mod caller;
use cache::Answers;
pub use caller::{Caller, Relay};

/// The page or game that runs host tools: it gets a call with a request id and
/// answers it (a result, or an error message for the model).
pub trait Host {
    fn call<'a>(
        &'a self,
        request_id: &'a str,
        call: &'a ToolCall,
    ) -> LocalBoxFuture<'a, Result<Value, String>>;
}

/// What a run needs from the world.
pub struct Seams<'a> {
    pub llm: &'a dyn Llm,
    pub tools: &'a ToolRegistry,
    pub clock: &'a dyn Clock,
    pub host: Option<&'a dyn Host>,
    /// Called with the run before each step, once the events of the last are emitted.
    pub checkpoint: Option<&'a dyn Fn(&AgentRun)>,
    /// Where the runs its tool calls make of their own (an agent called as a tool)
    /// report their events and usage as they go ([`Caller`]); `None`: nowhere.
    pub relay: Option<Rc<dyn Relay>>,
}

/// Why [`drive`] returned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stop {
    Done(Outcome),
    /// Paused for a person: call `approve` or `deny` on the run, then drive it again.
    AwaitingApproval(ToolCall),
}

/// Runs `run` until it is done or paused, emitting every change.
pub async fn drive(run: &mut AgentRun, seams: &Seams<'_>, emit: &mut dyn FnMut(Event)) -> Stop {
    drive_until(run, seams, emit, std::future::pending()).await
}

/// [`drive`], aborting the run (outcome `Aborted`) when `cancel` completes; the step
/// in flight is dropped, which cancels its request.
pub async fn drive_until(
    run: &mut AgentRun,
    seams: &Seams<'_>,
    emit: &mut dyn FnMut(Event),
    cancel: impl Future<Output = ()>,
) -> Stop {
    let mut cancel = pin!(cancel);
    let mut answers = Answers::default();
    loop {
        // Between steps the page may draw a frame: runs that never wait on the network
        // (the rules model, a synchronous host tool) would otherwise chain through
        // microtasks and hold the main thread until every one of them is done.
        seams.clock.yield_now().await;
        run.drain_events(emit);
        let step = run.next_step();
        if let (Some(checkpoint), false) = (seams.checkpoint, matches!(step, NextStep::Done(_))) {
            checkpoint(run);
        }
        let step = match step {
            NextStep::Done(outcome) => return Stop::Done(outcome),
            NextStep::AwaitApproval(call) => {
                // In plain words from the very arguments that will run, when the tool
                // can say; else what the tool says it does.
                let description = seams
                    .tools
                    .describe(&call)
                    .or_else(|| seams.tools.description_of(&call.name).map(str::to_owned))
                    .filter(|d| !d.trim().is_empty());
                let agent = run.owner_of(&call.name).map(str::to_owned);
                emit(Event::ApprovalNeeded {
                    call: call.clone(),
                    description,
                    agent,
                });
                return Stop::AwaitingApproval(call);
            }
            // A spent budget stops the run in words before the model is asked again.
            NextStep::CallModel(_) if run.budget_reached().is_some() => {
                if let Some(words) = run.budget_reached() {
                    run.stop_for_budget(words);
                }
                continue;
            }
            // Trimmed to the model's window first; what was trimmed is reported.
            NextStep::CallModel(call) => match run.fit(call, seams.llm.context_window().await) {
                Some(call) => NextStep::CallModel(call),
                None => continue,
            },
            step => step,
        };
        run.drain_events(emit);
        match bounded(run, step, seams, emit, cancel.as_mut(), &mut answers).await {
            Some(Fed::Model(Ok(response))) => run.model_responded(response),
            Some(Fed::Model(Err(error))) => run.model_failed(&error),
            Some(Fed::Tools(results)) => run.tools_returned(results),
            None => {}
        }
    }
}

/// Performs `step` within what is left of the run's time budget, charging the time
/// spent; `None` when the budget ran out (the run fails) or `cancel` fired first (the
/// run is aborted).
async fn bounded(
    run: &mut AgentRun,
    step: NextStep,
    seams: &Seams<'_>,
    emit: &mut dyn FnMut(Event),
    cancel: Pin<&mut impl Future<Output = ()>>,
    answers: &mut Answers,
) -> Option<Fed> {
    let budget = run.time_left_ms();
    if budget == 0 {
        run.out_of_time();
        return None;
    }
    let started = seams.clock.now().epoch_ms;
    let action = action_of(&step);
    let (price, allowances) = run.allowances_left();
    let caller = Caller::new(seams.llm.model(), price, allowances, seams.relay.clone());
    let work = pin!(within(
        seams.clock,
        budget,
        perform(step, seams, emit, answers, &caller)
    ));
    // The cancel signal is polled first: a stop pressed wins over anything.
    let fed = select(cancel, work).await;
    let spent = seams.clock.now().epoch_ms.saturating_sub(started);
    run.spent(u64::try_from(spent).unwrap_or(0));
    match fed {
        Either::Right((Some(fed), _)) => Some(fed),
        Either::Right((None, _)) => {
            if let Some(action) = &action {
                mark_unknown(action, seams).await;
            }
            run.out_of_time();
            None
        }
        Either::Left(((), _)) => {
            let reason = match &action {
                Some(action) => {
                    mark_unknown(action, seams).await;
                    format!(
                        "stopped while `{}` was running; whether it took effect is unknown",
                        action.call.name
                    )
                }
                None => "stopped before it finished".to_owned(),
            };
            run.abort(reason);
            None
        }
    }
}

/// A step's result, to feed back to the run.
enum Fed {
    Model(Result<ChatResponse, LlmError>),
    Tools(Vec<ToolResult>),
}

async fn perform(
    step: NextStep,
    seams: &Seams<'_>,
    emit: &mut dyn FnMut(Event),
    answers: &mut Answers,
    caller: &Caller,
) -> Fed {
    match step {
        NextStep::CallModel(ModelCall { purpose, request }) => {
            emit(Event::StepStarted(purpose));
            Fed::Model(
                seams
                    .llm
                    .chat(&request, &mut |d| emit(Event::Delta(d)))
                    .await,
            )
        }
        NextStep::CallTools(calls) | NextStep::AwaitHost(calls) => {
            for invocation in &calls {
                emit(Event::ToolStarted {
                    call: invocation.call.clone(),
                    kind: invocation.kind,
                    agent: invocation.owner.clone(),
                });
            }
            // A look-up asked before with the same arguments is answered as it was,
            // unless the world was written since (read before these calls run).
            let at_ms = seams.clock.now().epoch_ms;
            let writes = seams.tools.writes_seen();
            let kept: &Answers = answers;
            let results = join_all(calls.iter().map(|i| async move {
                match kept.answer(i, at_ms, writes) {
                    Some(kept) => kept,
                    None => timed_call(i, seams, caller).await,
                }
            }))
            .await;
            answers.keep(&calls, &results, seams.tools, writes);
            Fed::Tools(results)
        }
        NextStep::AwaitApproval(_) | NextStep::Done(_) => Fed::Tools(Vec::new()),
    }
}

/// One call in the page or the host, under its timeout, timed by the clock; a call in
/// the page sees the run as `caller`, and what it reports spending comes back with it.
async fn timed_call(invocation: &Invocation, seams: &Seams<'_>, caller: &Caller) -> ToolResult {
    let started = seams.clock.now().epoch_ms;
    let call = &invocation.call;
    let caller = Rc::new(caller.for_call(&call.id));
    let work = async {
        // Approved with other arguments than these: it does not run.
        if let Some(error) = invocation.approval_broken() {
            return Err(error);
        }
        match (invocation.runs_on, seams.host) {
            (RunsOn::Page, _) => {
                let cx = CallContext {
                    idempotency_key: invocation.idempotency_key.clone(),
                    approved: invocation.approved.is_some(),
                    caller: Some(Rc::clone(&caller)),
                };
                seams.tools.call(call, cx).await
            }
            (RunsOn::Host, Some(host)) => {
                host.call(invocation.request_id(), call)
                    .await
                    .map_err(|message| ToolError::Failed {
                        tool: call.name.to_string(),
                        message,
                    })
            }
            (RunsOn::Host, None) => Err(ToolError::Failed {
                tool: call.name.to_string(),
                message: "no host is connected to run it".into(),
            }),
        }
    };
    let result = match within(seams.clock, invocation.timeout_ms, work).await {
        Some(result) => result,
        None => Err(timed_out(invocation, seams).await),
    };
    let at_ms = seams.clock.now().epoch_ms;
    ToolResult {
        call_id: call.id.clone(),
        result,
        duration_ms: at_ms - started,
        at_ms,
        usage: caller.spent(),
    }
}

/// How long marking a timed-out action may take before the run goes on without it.
const MARK_MS: u64 = 5_000;

/// The error of a call that took too long. An action may have taken effect all the
/// same: its key is marked (see [`mark_unknown`]) and the model is told its outcome is
/// unknown.
async fn timed_out(invocation: &Invocation, seams: &Seams<'_>) -> ToolError {
    let (tool, ms) = (invocation.call.name.clone(), invocation.timeout_ms);
    if invocation.kind != Some(ToolKind::Action) {
        return ToolError::TimedOut {
            tool: tool.to_string(),
            ms,
        };
    }
    mark_unknown(invocation, seams).await;
    ToolError::OutcomeUnknown {
        tool: tool.to_string(),
        ms,
    }
}

/// Marks an action cut off mid-way (timed out, stopped, out of time) in the ledger as
/// an unknown outcome, so a resume under its key does not apply it again.
async fn mark_unknown(invocation: &Invocation, seams: &Seams<'_>) {
    if let (RunsOn::Page, Some(key)) = (invocation.runs_on, &invocation.idempotency_key) {
        let mark = seams.tools.record_unknown(&invocation.call, key);
        let _ = within(seams.clock, MARK_MS, mark).await;
    }
}

/// The action a step runs, if it runs one.
fn action_of(step: &NextStep) -> Option<Invocation> {
    match step {
        NextStep::CallTools(calls) | NextStep::AwaitHost(calls) => calls
            .iter()
            .find(|i| i.kind == Some(ToolKind::Action))
            .cloned(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::{FixedClock, Instant};
    use crate::llm::rules::RulesModel;
    use crate::run::Observation;
    use crate::run::interaction::{Interaction, Step};
    use crate::tool::CurrentTime;
    use std::rc::Rc;

    const RULES: &str = r#"{
        "fallback": "I can tell the time.",
        "rules": [{"keywords": ["time"], "tool": "current_time", "answer": "It is {time}."},
                  {"keywords": ["weather"], "tool": "weather", "answer": "{sky}"}]
    }"#;

    fn run_to_end(input: &str) -> (Stop, Vec<Event>) {
        run_from(None, input, None)
    }

    /// Drives `run` (a new one on `input` if `None`) to its end.
    fn run_from(
        run: Option<AgentRun>,
        input: &str,
        checkpoint: Option<&dyn Fn(&AgentRun)>,
    ) -> (Stop, Vec<Event>) {
        let clock = FixedClock(Instant {
            epoch_ms: 1_795_320_964_000,
            utc_offset_minutes: 0,
        });
        let mut tools = ToolRegistry::new();
        tools.register(CurrentTime::new(Rc::new(clock)));
        let llm = RulesModel::from_json(RULES).unwrap();
        let seams = Seams {
            llm: &llm,
            tools: &tools,
            clock: &clock,
            host: None,
            checkpoint,
            relay: None,
        };
        let mut run = run.unwrap_or_else(|| {
            AgentRun::new("", Vec::new(), Observation::chat(input), tools.catalogue())
        });
        let mut events = Vec::new();
        let stop = futures::executor::block_on(drive(&mut run, &seams, &mut |e| events.push(e)));
        (stop, events)
    }

    #[test]
    fn the_rules_model_calls_the_clock_and_answers_with_its_reading() {
        let (stop, events) = run_to_end("What time is it?");
        let outcome = Outcome::Answered {
            text: "It is 04:16.".into(),
        };
        assert_eq!(stop, Stop::Done(outcome.clone()));
        let mut interaction = Interaction::new(1, "What time is it?");
        events.iter().for_each(|e| interaction.apply(e));
        let kinds: Vec<&str> = interaction
            .steps
            .iter()
            .map(|s| match s {
                Step::Observe { .. } => "observe",
                Step::Reason { .. } => "reason",
                Step::ToolCall { .. } => "tool",
                Step::Answer { .. } => "answer",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["observe", "reason", "tool", "reason", "answer"]);
        assert!(matches!(events.first(), Some(Event::Started { .. })));
        assert_eq!(events.last(), Some(&Event::Done(outcome)));
    }

    #[test]
    fn the_checkpoint_sees_the_run_before_every_step_and_any_of_them_resumes() {
        let saved = std::cell::RefCell::new(Vec::new());
        let save = |run: &AgentRun| saved.borrow_mut().push(serde_json::to_string(run).unwrap());
        let (stop, _) = run_from(None, "What time is it?", Some(&save));
        // Ask the model, run the clock, ask again: three steps, three checkpoints.
        let saved = saved.into_inner();
        assert_eq!(saved.len(), 3);
        for text in &saved {
            let run: AgentRun = serde_json::from_str(text).unwrap();
            assert_eq!(run_from(Some(run), "", None).0, stop);
        }
    }

    /// A clock whose `yield_now` really gives way once (pending, then ready) and notes
    /// how many events the run had emitted by then.
    struct Yielding {
        clock: FixedClock,
        emitted: Rc<std::cell::Cell<usize>>,
        seen: Rc<std::cell::RefCell<Vec<usize>>>,
    }

    impl Clock for Yielding {
        fn now(&self) -> Instant {
            self.clock.now()
        }
        fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
            self.clock.sleep(ms)
        }
        fn yield_now(&self) -> LocalBoxFuture<'static, ()> {
            self.seen.borrow_mut().push(self.emitted.get());
            let mut yielded = false;
            Box::pin(std::future::poll_fn(move |cx| {
                if yielded {
                    return std::task::Poll::Ready(());
                }
                yielded = true;
                cx.waker().wake_by_ref();
                std::task::Poll::Pending
            }))
        }
    }

    #[test]
    fn the_driver_gives_way_to_the_event_loop_before_every_step() {
        let clock = Yielding {
            clock: FixedClock(Instant {
                epoch_ms: 1_795_320_964_000,
                utc_offset_minutes: 0,
            }),
            emitted: Rc::default(),
            seen: Rc::default(),
        };
        let mut tools = ToolRegistry::new();
        tools.register(CurrentTime::new(Rc::new(clock.clock)));
        let llm = RulesModel::from_json(RULES).unwrap();
        let seams = Seams {
            llm: &llm,
            tools: &tools,
            clock: &clock,
            host: None,
            checkpoint: None,
            relay: None,
        };
        let observation = Observation::chat("What time is it?");
        let mut run = AgentRun::new("", Vec::new(), observation, tools.catalogue());
        let emitted = Rc::clone(&clock.emitted);
        let stop = futures::executor::block_on(drive(&mut run, &seams, &mut |_| {
            emitted.set(emitted.get() + 1);
        }));
        assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
        // Ask the model, run the clock, ask again, then done: four turns of the loop,
        // each after the last one's events.
        let seen = clock.seen.borrow();
        assert_eq!(seen.len(), 4, "{seen:?}");
        assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    }

    #[test]
    fn a_message_no_rule_covers_gets_the_fallback_without_tools() {
        let (stop, events) = run_to_end("hello");
        let Stop::Done(outcome) = stop else {
            panic!("not done: {stop:?}");
        };
        assert_eq!(outcome.text(), "I can tell the time.");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::ToolStarted { .. }))
        );
    }
}
