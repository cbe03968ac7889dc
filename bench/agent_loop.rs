//! The agent loop's own overhead: microseconds per model step with a zero-latency
//! model and a no-op tool, at history lengths 10, 100, 1,000 and 10,000, and peak
//! memory. Building each run (copying the history into it) is outside the timing:
//! this measures the loop, not the copy. The history comes as a conversation gives it,
//! each message's token estimate already made (a conversation estimates a finished
//! turn once); the loop's own figures are what is timed.
//!
//! Natively: `cargo run --release --example agent_loop` (`-- 10` for one history length).
//! In wasm (V8, as in Chromium): `scripts/bench-loop-wasm.sh`, which builds this file
//! for `wasm32-wasip1` and runs it under Node's WASI, then prints the linear memory.
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

/// Calls `ping` until it has seen `STEPS - 1` results, then answers: no latency, no
/// recording, so all that is timed is the loop.
struct Instantaneous;

const STEPS: usize = 8;

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
            text: if tool_calls.is_empty() {
                "pong".into()
            } else {
                String::new()
            },
            reasoning: String::new(),
            finish: FinishReason::Stop,
            tool_calls,
            usage: None,
            served: Default::default(),
        })))
    }
}

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

/// Microseconds per model step at this history length.
fn per_step(tools: &ToolRegistry, history: &[Message]) -> f64 {
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
    let batch = || -> Vec<AgentRun> {
        (0..32)
            .map(|_| {
                AgentRun::new(
                    "be brief",
                    history.to_vec(),
                    Observation::chat("ping?"),
                    tools.catalogue(),
                )
            })
            .collect()
    };
    // Untimed first: under V8 the loop's code starts in the baseline compiler and is
    // recompiled optimised while it runs, and the allocator's pages fill; without this
    // the first length measured paid for both.
    let warming = Instant::now();
    while warming.elapsed() < WARM_UP {
        drive_batch(&mut batch(), &seams);
    }
    let mut timed = Duration::ZERO;
    let mut runs = 0u32;
    while timed < Duration::from_millis(1500) {
        let mut batch = batch();
        let started = Instant::now();
        drive_batch(&mut batch, &seams);
        timed += started.elapsed();
        runs += 32;
        drop(batch);
    }
    timed.as_secs_f64() * 1e6 / (f64::from(runs) * STEPS as f64)
}

/// How long each history length runs untimed before it is measured.
const WARM_UP: Duration = Duration::from_millis(300);

/// Drives each run of `batch` to its end: all that is timed, a function of its own so
/// a profiler can count it alone (`valgrind --tool=callgrind
/// --toggle-collect=agent_loop::drive_batch`).
#[inline(never)]
fn drive_batch(batch: &mut [AgentRun], seams: &Seams<'_>) {
    for run in batch {
        block_on(drive(run, seams, &mut |_| {}));
    }
}

/// The resident high-water mark, where the platform tells it.
fn peak_memory() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(str::to_owned)
        })
        .map_or_else(
            || "n/a here".into(),
            |l| l.replace("VmHWM:", "").trim().to_owned(),
        )
}

fn main() {
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "ping",
        ToolKind::Data,
        "Answers pong.",
        |_: NoArgs, _| async { Ok::<_, String>("pong") },
    );
    println!(
        "agent loop overhead ({}): {STEPS} model steps per run (tool calls, then an answer); zero-latency model, no-op tool",
        std::env::consts::ARCH
    );
    // History lengths from the arguments (`-- 10` for one), else all four.
    let lengths: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let lengths = if lengths.is_empty() {
        vec![10, 100, 1_000, 10_000]
    } else {
        lengths
    };
    let mut figures = Vec::new();
    for len in lengths {
        let micros = per_step(&tools, &history(len));
        println!("history {len:>5}: {micros:8.2} µs per model step");
        figures.push(micros);
    }
    if let (Some(first), Some(thousand)) = (figures.first(), figures.get(2)) {
        println!(
            "per extra message of history: {:.4} µs (10 to 1,000)",
            (thousand - first) / 990.0
        );
    }
    if let (Some(first), Some(last)) = (figures.first(), figures.last()) {
        println!(
            "per extra message of history: {:.4} µs (10 to 10,000)",
            (last - first) / 9_990.0
        );
    }
    println!("peak memory (resident): {}", peak_memory());
}
