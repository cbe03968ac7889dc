//! The local model's speed through the worker's own path (`generate::Engine`, a request
//! from its JSON to its last event), natively and single-threaded:
//! `cargo run -p familiar-local --release --example generate_speed -- <model.gguf>`.
//!
//! A ~300-token system prompt and a question, no tools, 64 tokens greedily; the time to
//! the first token (the prompt read) and the generation's tokens a second, best of
//! three runs, each on a fresh engine (no cache shared).

use familiar_local::generate::{Engine, Event};
use std::time::Instant;

const RUNS: usize = 3;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: generate_speed <model.gguf>")?;
    let bytes = std::fs::read(&path)?;
    let system = format!(
        "You are a helpful assistant in a small fantasy town. {}",
        "The market opens at dawn and the baker sells bread, the smith mends tools, and the innkeeper keeps the ale cold. ".repeat(9)
    );
    let request = serde_json::json!({
        "system": system, "tools": [], "tool_choice": "auto", "temperature": 0, "max_tokens": 64,
        "messages": [{"role": "user", "content": "Tell me a story about the market."}],
    })
    .to_string();
    let (mut best_first, mut best_rate) = (f64::MAX, 0f64);
    for _ in 0..RUNS {
        let mut engine = Engine::load(bytes.clone(), 2048)?;
        let started = Instant::now();
        let mut generation = engine.start(&request).map_err(|e| e.to_string())?;
        let (mut first, mut tokens) = (None, 0u32);
        while !generation.is_finished() {
            for event in generation.next(&mut engine).map_err(|e| e.to_string())? {
                if let Event::Done { usage, .. } = event {
                    tokens = usage.completion_tokens;
                }
            }
            if first.is_none() && engine.cached().len() > 300 {
                first = Some(started.elapsed().as_secs_f64());
            }
        }
        let total = started.elapsed().as_secs_f64();
        let first = first.unwrap_or(total);
        best_first = best_first.min(first);
        best_rate = best_rate.max(f64::from(tokens) / (total - first));
    }
    println!(
        "time to first token  {:8.1} ms (best of {RUNS})",
        best_first * 1e3
    );
    println!(
        "generation           {:8.1} tokens/s (best of {RUNS})",
        best_rate
    );
    Ok(())
}
