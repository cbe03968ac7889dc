//! The agent loop's cost per model step does not grow with the conversation's history:
//! a step at 1,000 earlier messages costs at most three times a step at 10 (a ratio
//! of two timings taken side by side, each the best of several, so a loaded machine
//! slows both alike; `bench/agent_loop.rs` prints the figures themselves).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use familiar::base::clock::FixedClock;
use familiar::llm::message::{Message, Role, ToolCall};
use familiar::llm::{ChatRequest, ChatResponse, DeltaSink, FinishReason, Llm, LlmError};
use familiar::run::driver::{Seams, drive};
use familiar::run::{AgentRun, Observation};
use familiar::tool::{NoArgs, ToolKind, ToolRegistry};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;

const STEPS: usize = 8;

/// Calls `ping` until it has seen `STEPS - 1` results, then answers.
struct Instantaneous;

impl Llm for Instantaneous {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        _: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        let results = request
            .messages
            .iter()
            .rev()
            .take_while(|m| m.role != Role::User)
            .filter(|m| m.role == Role::Tool)
            .count();
        let tool_calls = if results + 1 < STEPS {
            vec![ToolCall {
                id: format!("call_{results}").into(),
                name: "ping".into(),
                arguments: "{}".into(),
            }]
        } else {
            Vec::new()
        };
        Box::pin(futures::future::ready(Ok(ChatResponse {
            text: String::new(),
            reasoning: String::new(),
            finish: FinishReason::Stop,
            tool_calls,
            usage: None,
            served: Default::default(),
        })))
    }
}

/// A conversation's history as the session gives it: each message estimated once.
fn history(len: usize) -> Vec<Message> {
    let history: Vec<Message> = (0..len)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question number {i} about the tavern"))
            } else {
                Message::assistant(format!("answer number {i}: the ale is cold"), Vec::new())
            }
        })
        .collect();
    for message in &history {
        familiar::llm::window::estimate_message(message);
    }
    history
}

/// The best of several timings of a batch of runs, per model step.
fn per_step(tools: &ToolRegistry, history: &[Message]) -> Duration {
    let clock = FixedClock(familiar::base::clock::Instant {
        epoch_ms: 0,
        utc_offset_minutes: 0,
    });
    let seams = Seams {
        llm: &Instantaneous,
        tools,
        clock: &clock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    (0..7)
        .map(|_| {
            let mut batch: Vec<AgentRun> = (0..8)
                .map(|_| {
                    let observation = Observation::chat("ping?");
                    AgentRun::new("be brief", history.to_vec(), observation, tools.catalogue())
                })
                .collect();
            let started = Instant::now();
            for run in &mut batch {
                block_on(drive(run, &seams, &mut |_| {}));
            }
            started.elapsed() / (8 * STEPS as u32)
        })
        .min()
        .unwrap()
}

#[test]
fn a_step_at_a_thousand_messages_of_history_costs_at_most_three_times_one_at_ten() {
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "ping",
        ToolKind::Data,
        "Answers pong.",
        |_: NoArgs, _| async { Ok::<_, String>("pong") },
    );
    let (short, long) = (history(10), history(1_000));
    // Warm both, then take them in turns, each the best of its turns: a machine whose
    // load changes meanwhile weighs on both alike.
    per_step(&tools, &short);
    per_step(&tools, &long);
    let (mut at_ten, mut at_thousand) = (Duration::MAX, Duration::MAX);
    for _ in 0..3 {
        at_ten = at_ten.min(per_step(&tools, &short));
        at_thousand = at_thousand.min(per_step(&tools, &long));
    }
    let ratio = at_thousand.as_secs_f64() / at_ten.as_secs_f64();
    println!("per step: {at_ten:?} at 10, {at_thousand:?} at 1,000 ({ratio:.2}×)");
    assert!(
        ratio <= 3.0,
        "a step at 1,000 messages costs {ratio:.2}× one at 10 ({at_thousand:?} against {at_ten:?})"
    );
}
