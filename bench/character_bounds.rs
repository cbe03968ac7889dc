//! Character files at their bounds: load time and peak memory of Dotty, of the worst
//! file the limits allow (every count at its limit, the patterns' whole compiled budget
//! spent on patterns every message is tried against) and of a file of 20,000 heavy
//! patterns (each just under one pattern's own size limit); and how long the worst
//! file takes to detect the intent of the longest message a session accepts.
//! Natively: `cargo run --release --example character_bounds` runs each case in its own
//! process, so each peak resident memory is that case's; `… -- CASE` runs one.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::time::Instant;

use familiar::workflow::Character;
use familiar::workflow::limits::{
    MAX_IDENTITY_NAME, MAX_IDENTITY_OCCUPATION, MAX_IDENTITY_PERSONALITY, MAX_KEYWORDS,
    MAX_PATTERNS, MAX_PATTERNS_SIZE, MAX_STATES, MAX_WORKFLOWS,
};
use serde_json::{Value, json};

const CASES: [&str; 3] = ["dotty", "worst_allowed", "heavy_20000"];
/// The longest message `app::Session::send` accepts.
const LONGEST_MESSAGE: usize = 100_000;
/// Compiles (case-insensitive) to 62,720 bytes: just under one pattern's 64 KiB.
const HEAVY: &str = "[a-z]{1300}0";

fn dotty() -> String {
    include_str!("../public/characters/dotty.json").to_owned()
}

/// Every count at its limit, the identity at its size limits, and the patterns'
/// budget spent on heavy patterns (`[a-z]{n}0`, the largest `n` the budget allows) in
/// the first states, the ones every message is tried against when nothing is pending.
fn worst_allowed() -> String {
    (0..=1300)
        .rev()
        .step_by(20)
        .map(|n| worst_with(&format!("[a-z]{{{n}}}0")))
        .find(|text| Character::from_json(text).is_ok())
        .expect("some heavy pattern fits")
}

fn worst_with(heavy_pattern: &str) -> String {
    let heavy = MAX_PATTERNS_SIZE / (64 * 1024);
    let states_each = MAX_STATES / MAX_WORKFLOWS;
    let patterns_each = MAX_PATTERNS / MAX_WORKFLOWS;
    let keywords_each = MAX_KEYWORDS / MAX_WORKFLOWS;
    let mut spent = 0;
    let workflows: serde_json::Map<String, Value> = (0..MAX_WORKFLOWS)
        .map(|w| {
            let patterns: Vec<String> = (0..patterns_each)
                .map(|p| {
                    if spent < heavy {
                        spent += 1;
                        heavy_pattern.to_owned()
                    } else {
                        format!("w{w}p{p}x")
                    }
                })
                .collect();
            let keywords: Vec<String> = (0..keywords_each).map(|k| format!("kw{w}x{k}")).collect();
            let states: Vec<Value> = (0..states_each)
                .map(|s| {
                    let next = if s + 1 == states_each {
                        "completed".to_owned()
                    } else {
                        format!("s{}", s + 1)
                    };
                    let action = if s == 0 {
                        json!({"create_transaction": {}})
                    } else {
                        json!({})
                    };
                    let (patterns, keywords) = if s == 0 {
                        (patterns.clone(), keywords.clone())
                    } else {
                        (Vec::new(), Vec::new())
                    };
                    json!({
                        "name": format!("s{s}"),
                        "triggers": {"intent_patterns": patterns, "keywords": keywords},
                        "actions": action,
                        "next_state": next
                    })
                })
                .collect();
            let workflow = json!({"enabled": true, "states": states});
            (format!("w{w}"), workflow)
        })
        .collect();
    json!({
        "identity": {
            "name": "n".repeat(MAX_IDENTITY_NAME),
            "occupation": "o".repeat(MAX_IDENTITY_OCCUPATION),
            "personality": "p".repeat(MAX_IDENTITY_PERSONALITY)
        },
        "workflows": workflows
    })
    .to_string()
}

/// 20,000 patterns of [`HEAVY`], 100 to a state, in one workflow.
fn heavy_20000() -> String {
    let states: Vec<Value> = (0..200)
        .map(|s| {
            let action = if s == 0 {
                json!({"create_transaction": {}})
            } else {
                json!({})
            };
            json!({
                "name": format!("s{s}"),
                "triggers": {"intent_patterns": vec![HEAVY; 100]},
                "actions": action
            })
        })
        .collect();
    json!({"identity": {"name": "Heavy"}, "workflows": {"w": {"enabled": true, "states": states}}})
        .to_string()
}

/// The peak resident memory of this process, in MB (Linux).
fn peak_mb() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn run(case: &str) {
    let text = match case {
        "dotty" => dotty(),
        "worst_allowed" => worst_allowed(),
        "heavy_20000" => heavy_20000(),
        other => panic!("no case {other}; the cases are {CASES:?}"),
    };
    let before = peak_mb();
    let started = Instant::now();
    let loaded = Character::from_json(&text);
    let load_ms = started.elapsed().as_secs_f64() * 1e3;
    let peak = peak_mb();
    let outcome = match &loaded {
        Ok(c) => format!("loaded, {} workflows", c.workflows.len()),
        Err(errors) => format!("refused ({} problems): {}", errors.len(), errors[0]),
    };
    let mb = |m: Option<f64>| m.map_or("n/a".to_owned(), |m| format!("{m:.1} MB"));
    println!(
        "{case}: file {} KB, load {load_ms:.1} ms, peak resident {} (before the load {}): {outcome}",
        text.len() / 1024,
        mb(peak),
        mb(before),
    );
    if let Ok(character) = loaded {
        // Letters only: every heavy pattern keeps threads alive and never matches.
        let message = "a".repeat(LONGEST_MESSAGE);
        let started = Instant::now();
        let detected = character.detect(&message, &[]);
        println!(
            "{case}: detection on a {LONGEST_MESSAGE}-char message matching nothing: {:.1} ms ({detected:?})",
            started.elapsed().as_secs_f64() * 1e3
        );
    }
}

fn main() {
    if let Some(case) = std::env::args().nth(1).filter(|a| a != "bench") {
        return run(&case);
    }
    let me = std::env::current_exe().ok();
    for case in CASES {
        let spawned = me
            .as_ref()
            .and_then(|me| std::process::Command::new(me).arg(case).status().ok());
        if spawned.is_none() {
            // No processes (wasm): every case in this one; peaks accumulate.
            run(case);
        }
    }
}
