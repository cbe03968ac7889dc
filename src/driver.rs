//! The driver: the one async loop that turns an [`AgentRun`]'s steps into effects.
//!
//! It asks the model through the [`Llm`] seam, runs tools through the
//! [`ToolRegistry`], times them with the [`Clock`], feeds every result back to the
//! run, and emits an [`Event`] for each change. The UI, tests and embedders all
//! consume the same events.

use futures::future::join_all;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::clock::Clock;
use crate::llm::{ChatRequest, Delta, Llm};
use crate::message::ToolCall;
use crate::run::{AgentRun, NextStep, Outcome};
use crate::tool::{ToolError, ToolKind, ToolRegistry};

/// A change in a run, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// The model is asked (reason); `iteration` counts from 1.
    ModelCalled {
        iteration: u32,
    },
    /// A piece of the model's response as it streams.
    Delta(Delta),
    /// The model finished its turn, asking for these tools (maybe none).
    ModelReplied {
        tool_calls: Vec<ToolCall>,
    },
    ToolStarted {
        call: ToolCall,
        kind: Option<ToolKind>,
    },
    ToolFinished {
        call_id: String,
        result: Result<Value, String>,
        duration_ms: i64,
    },
    Done(Outcome),
}

/// What a run needs from the world.
pub struct Seams<'a> {
    pub llm: &'a dyn Llm,
    pub tools: &'a ToolRegistry,
    pub clock: &'a dyn Clock,
}

/// Runs `run` to its outcome, emitting every change.
pub async fn drive(run: &mut AgentRun, seams: &Seams<'_>, emit: &mut dyn FnMut(Event)) -> Outcome {
    loop {
        match run.next_step() {
            NextStep::CallModel(request) => reason(run, &request, seams, emit).await,
            NextStep::CallTools(calls) => act(run, &calls, seams, emit).await,
            NextStep::Done(outcome) => {
                emit(Event::Done(outcome.clone()));
                return outcome;
            }
        }
    }
}

async fn reason(
    run: &mut AgentRun,
    request: &ChatRequest,
    seams: &Seams<'_>,
    emit: &mut dyn FnMut(Event),
) {
    emit(Event::ModelCalled {
        iteration: run.iterations() + 1,
    });
    let response = seams
        .llm
        .chat(request, &mut |delta| emit(Event::Delta(delta)))
        .await;
    match response {
        Ok(response) => {
            emit(Event::ModelReplied {
                tool_calls: response.tool_calls.clone(),
            });
            run.model_responded(response);
        }
        Err(error) => run.model_failed(&error),
    }
}

async fn act(
    run: &mut AgentRun,
    calls: &[ToolCall],
    seams: &Seams<'_>,
    emit: &mut dyn FnMut(Event),
) {
    for call in calls {
        emit(Event::ToolStarted {
            call: call.clone(),
            kind: seams.tools.kind_of(&call.name),
        });
    }
    let finished = join_all(calls.iter().map(|call| timed_call(call, seams))).await;
    let mut results = Vec::with_capacity(finished.len());
    for (call, (result, duration_ms)) in calls.iter().zip(finished) {
        emit(Event::ToolFinished {
            call_id: call.id.clone(),
            result: result.clone().map_err(|e| e.to_string()),
            duration_ms,
        });
        results.push((call.id.clone(), result));
    }
    run.tools_returned(results);
}

async fn timed_call(call: &ToolCall, seams: &Seams<'_>) -> (Result<Value, ToolError>, i64) {
    let started = seams.clock.now().epoch_ms;
    let result = seams.tools.call(call).await;
    (result, seams.clock.now().epoch_ms - started)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::{FixedClock, Instant};
    use crate::interaction::{Interaction, Step};
    use crate::rules::RulesModel;
    use crate::tools::CurrentTime;
    use std::rc::Rc;

    const RULES: &str = r#"{
        "fallback": "I can tell the time.",
        "rules": [{"keywords": ["time"], "tool": "current_time", "answer": "It is {time}."},
                  {"keywords": ["weather"], "tool": "weather", "answer": "{sky}"}]
    }"#;

    fn run_to_end(input: &str) -> (Outcome, Vec<Event>) {
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
        };
        let mut run = AgentRun::new("", Vec::new(), input, tools.specs());
        let mut events = Vec::new();
        let outcome = futures::executor::block_on(drive(&mut run, &seams, &mut |e| events.push(e)));
        (outcome, events)
    }

    #[test]
    fn the_rules_model_calls_the_clock_and_answers_with_its_reading() {
        let (outcome, events) = run_to_end("What time is it?");
        assert_eq!(
            outcome,
            Outcome::Answered {
                text: "It is 04:16.".into()
            }
        );
        let mut interaction = Interaction::new(1, "What time is it?");
        events.iter().for_each(|e| interaction.apply(e));
        let kinds: Vec<&str> = interaction
            .steps
            .iter()
            .map(|s| match s {
                Step::Reason { .. } => "reason",
                Step::ToolCall { .. } => "tool",
                Step::Answer { .. } => "answer",
            })
            .collect();
        assert_eq!(kinds, ["reason", "tool", "reason", "answer"]);
        assert_eq!(events.last(), Some(&Event::Done(outcome)));
    }

    #[test]
    fn a_message_no_rule_covers_gets_the_fallback_without_tools() {
        let (outcome, events) = run_to_end("hello");
        assert_eq!(outcome.text(), "I can tell the time.");
        assert!(
            !events
                .iter()
                .any(|e| matches!(e, Event::ToolStarted { .. }))
        );
    }
}
