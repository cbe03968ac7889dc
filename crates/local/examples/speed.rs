//! The local model's speed, natively and single-threaded:
//! `cargo run -p familiar-local --release --example speed -- <model.gguf>`.
//!
//! Reads a 300-token prompt (in chunks of 64, as the worker does), generates 64 tokens
//! greedily, then reads a follow-up turn with the cache warm. The prompt's tokens are
//! a fixed arithmetic sequence (`100 + i·7919 mod 40000`), so `bench/local_model.sh`
//! can feed llama.cpp the very same ones without a tokenizer.

use familiar_local::gguf::Gguf;
use familiar_local::llama::{Model, Session};
use std::sync::Arc;
use std::time::Instant;

const PROMPT: usize = 300;
const GENERATE: usize = 64;
const FOLLOW_UP: usize = 40;
const CHUNK: usize = 64;

fn tokens(from: usize, n: usize) -> Vec<u32> {
    (from..from + n)
        .map(|i| (100 + i * 7919 % 40_000) as u32)
        .collect()
}

fn argmax(x: &[f32]) -> u32 {
    let mut best = 0;
    for (i, v) in x.iter().enumerate() {
        if x.get(best).is_some_and(|b| v > b) {
            best = i;
        }
    }
    best as u32
}

fn prefill(session: &mut Session, prompt: &[u32]) -> Result<Vec<f32>, Box<dyn std::error::Error>> {
    loop {
        if let Some(logits) = session.prefill(prompt, CHUNK)? {
            return Ok(logits);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: speed <model.gguf>")?;
    let started = Instant::now();
    let model = Model::load(Gguf::parse(std::fs::read(&path)?)?, 2048)?;
    let load = started.elapsed().as_secs_f64();
    let mut session = Session::new(Arc::new(model));

    let prompt = tokens(0, PROMPT);
    let started = Instant::now();
    let mut logits = prefill(&mut session, &prompt)?;
    let mut next = argmax(&logits);
    let first = started.elapsed().as_secs_f64();

    let mut generated = vec![next];
    let started = Instant::now();
    for _ in 0..GENERATE {
        logits = session.step(next)?;
        next = argmax(&logits);
        generated.push(next);
    }
    let generate = started.elapsed().as_secs_f64();

    let mut turn = session.tokens().to_vec();
    turn.extend(tokens(PROMPT, FOLLOW_UP));
    let started = Instant::now();
    prefill(&mut session, &turn)?;
    let follow_up = started.elapsed().as_secs_f64();

    println!("load                 {:8.1} ms", load * 1e3);
    println!(
        "prompt               {:8.1} tokens/s ({PROMPT} tokens)",
        PROMPT as f64 / first
    );
    println!("time to first token  {:8.1} ms", first * 1e3);
    println!(
        "generation           {:8.1} tokens/s ({GENERATE} tokens)",
        GENERATE as f64 / generate
    );
    println!(
        "follow-up turn       {:8.1} ms ({FOLLOW_UP} new tokens after {} cached)",
        follow_up * 1e3,
        turn.len() - FOLLOW_UP
    );
    println!("greedy tokens        {:?}", &generated[..8]);
    Ok(())
}
