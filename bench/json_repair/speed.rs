//! Time per MB of `json::extract` on adversarial inputs, at two sizes: linear time shows
//! as the same ms/MB at both. Run: `cargo run --release --example json_repair_speed`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::Instant;

use familiar::base::json;

/// Milliseconds per MB of input for one `json::extract` (the best of a few runs).
fn ms_per_mb(input: &str) -> f64 {
    let best = (0..3)
        .map(|_| {
            let start = Instant::now();
            let _ = black_box(json::extract(black_box(input)));
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min);
    best * 1e3 / (input.len() as f64 / 1e6)
}

/// The adversarial inputs, each built to about `n` bytes.
fn inputs(n: usize) -> Vec<(&'static str, String)> {
    vec![
        (
            "stray quotes in a value",
            format!("{{\"a\": \"{}\"}}", "x\"".repeat(n / 2)),
        ),
        (
            "stray quotes, never closed",
            format!("{{\"k\": \"{}", "a\"b".repeat(n / 3)),
        ),
        (
            "stray quotes in an array",
            format!("[\"{}", "a\"b\" ".repeat(n / 5)),
        ),
        (
            "quote-colon pairs",
            format!("{{\"a\": \"{}", "x, \"b\": \"".repeat(n / 9)),
        ),
        (
            "unterminated string",
            format!("{{\"a\": \"{}", "x".repeat(n)),
        ),
        (
            "missing end quotes",
            format!("{{{}}}", "\"a\": \"x, ".repeat(n / 9)),
        ),
        ("deep nesting", "[".repeat(n)),
        ("deep objects", "{\"a\":".repeat(n / 5)),
        (
            "concatenation",
            format!("[{}\"x\"]", "\"a\" + ".repeat(n / 6)),
        ),
        ("unclosed comments", "[/*".repeat(n / 3)),
        ("bare words", format!("[{}]", "word, ".repeat(n / 6))),
        (
            "escaped document",
            format!("[{}]", "{\\\"a\\\": \\\"b\\\"}, ".repeat(n / 18)),
        ),
        ("brackets in prose", "see [1] and {2} ".repeat(n / 16)),
        (
            "valid JSON",
            format!(
                "[{}1]",
                "{\"key\": \"value\", \"n\": [1, 2.5, true, null]}, ".repeat(n / 44)
            ),
        ),
    ]
}

fn main() {
    let small = inputs(100_000);
    let large = inputs(1_000_000);
    println!("{:<28}{:>14}{:>14}", "input", "ms/MB @100KB", "ms/MB @1MB");
    for ((name, small), (_, large)) in small.iter().zip(&large) {
        println!(
            "{name:<28}{:>14.1}{:>14.1}",
            ms_per_mb(small),
            ms_per_mb(large)
        );
    }
}
