//! Runs `json::extract` over a JSON array of inputs read from stdin and prints one
//! JSON array of outcomes: `{"ok": "<repaired text>"}` or `{"error": "<reason>"}`.
//! Driven by `bench/json_repair/run.sh`; not meant to be run by hand.
#![allow(clippy::unwrap_used)]

use std::io::Read;

use familiar::base::json;
use serde_json::{Value, json};

fn main() {
    let mut input = String::new();
    std::io::stdin().read_to_string(&mut input).unwrap();
    let cases: Vec<String> = serde_json::from_str(&input).unwrap();
    let outcomes: Vec<Value> = cases
        .iter()
        .map(|case| match json::extract(case) {
            Ok(text) => json!({"ok": text}),
            Err(error) => json!({"error": error.to_string()}),
        })
        .collect();
    println!("{}", Value::Array(outcomes));
}
