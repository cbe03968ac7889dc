//! The agent loop's own overhead, natively: microseconds per model step with a
//! zero-latency scripted model and a no-op tool, at several history lengths.
//! Run: `cargo run --release --example agent_loop`.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use familiar::clock::FixedClock;
use familiar::driver::{Seams, drive};
use familiar::message::{Message, ToolCall};
use familiar::run::AgentRun;
use familiar::scripted::ScriptedModel;
use familiar::tool::{CallContext, NoArgs, Tool, ToolKind, ToolRegistry};
use futures::executor::block_on;

struct Ping;

impl Tool for Ping {
    const NAME: &'static str = "ping";
    const KIND: ToolKind = ToolKind::Data;
    type Args = NoArgs;
    type Output = &'static str;
    type Error = String;

    fn description(&self) -> String {
        "Answers pong.".into()
    }

    async fn call(&self, _: NoArgs, _: CallContext) -> Result<&'static str, String> {
        Ok("pong")
    }
}

fn history(len: usize) -> Vec<Message> {
    (0..len)
        .map(|i| {
            if i % 2 == 0 {
                Message::user(format!("question number {i} about the tavern"))
            } else {
                Message::assistant(format!("answer number {i}: the ale is cold"), Vec::new())
            }
        })
        .collect()
}

/// One run: a tool call, its result, then an answer — two model steps.
fn one_run(tools: &ToolRegistry, history: &[Message]) {
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![ToolCall {
            id: "call_1".into(),
            name: "ping".into(),
            arguments: "{}".into(),
        }])
        .push_text("pong it is");
    let clock = FixedClock(familiar::clock::Instant {
        epoch_ms: 0,
        utc_offset_minutes: 0,
    });
    let seams = Seams {
        llm: &model,
        tools,
        clock: &clock,
        host: None,
    };
    let observation = familiar::run::Observation::chat("ping?");
    let mut run = AgentRun::new("be brief", history.to_vec(), observation, tools.catalogue());
    block_on(drive(&mut run, &seams, &mut |_| {}));
}

fn main() {
    let mut tools = ToolRegistry::new();
    tools.register(Ping);
    println!("model steps per run: 2 (tool call, answer); scripted model, no-op tool");
    for len in [10, 100, 1000] {
        let history = history(len);
        let started = Instant::now();
        let mut runs = 0u32;
        while started.elapsed() < Duration::from_secs(2) {
            one_run(&tools, &history);
            runs += 1;
        }
        let per_step = started.elapsed().as_secs_f64() * 1e6 / f64::from(runs * 2);
        println!("history {len:>5}: {per_step:9.2} µs per model step ({runs} runs)");
    }
}
