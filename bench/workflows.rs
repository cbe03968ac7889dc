//! Intent detection per message for a character with 20 workflows (3 patterns and 3
//! keywords per state, 2 states each, a cancellation each), over a mix of messages
//! that start, advance, cancel or match nothing. Pure detection: no store.
//! Natively: `cargo run --release --example workflows`; in wasm: `bench/wasm workflows`.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, Instant};

use familiar::workflow::{Character, Transaction, TransactionStatus};
use serde_json::{Map, json};

fn character() -> Character {
    let goods = [
        "ale", "bread", "cloak", "dagger", "eggs", "flour", "gloves", "honey", "iron", "jerky",
        "knife", "lamp", "mead", "nails", "oil", "pie", "quill", "rope", "salt", "tea",
    ];
    let workflows: Map<String, serde_json::Value> = goods
        .iter()
        .map(|good| {
            let workflow = json!({
                "enabled": true,
                "description": format!("buy {good}"),
                "states": [
                    {
                        "name": "pending",
                        "triggers": {
                            "intent_patterns": [
                                format!("\\b(?:i'?ll have|give me|i want|sell me)\\s+(?:a|an|some)?\\s*(?<item>{good})\\b"),
                                format!("\\b(?<item>{good}) please\\b"),
                                format!("\\bhow much (?:is|for) (?:the |a )?(?<item>{good})\\b")
                            ],
                            "keywords": [good, "buy", "price"]
                        },
                        "actions": {
                            "create_transaction": {"context_fields": ["item", "price"], "price_lookup": {*good: 3}},
                            "prompt_injection": "They want {context.item} for {context.price}."
                        },
                        "next_state": "awaiting_payment"
                    },
                    {
                        "name": "awaiting_payment",
                        "triggers": {
                            "intent_patterns": ["\\bhere you go\\b", "\\bpay(?:ing|ment)?\\b", "\\btake (?:this|my coins)\\b"],
                            "keywords": ["coins", "gold", "money"]
                        },
                        "actions": {"complete_transaction": {}, "prompt_injection": "They paid for {context.item}."},
                        "next_state": "completed"
                    }
                ],
                "cancellation": {"triggers": {"intent_patterns": ["\\b(?:never ?mind|cancel|forget it)\\b"]}},
                "timeout": {"duration_minutes": 15}
            });
            (format!("buy_{good}"), workflow)
        })
        .collect();
    let file = json!({"identity": {"name": "Merchant"}, "workflows": workflows});
    Character::from_json(&file.to_string()).unwrap()
}

fn main() {
    let character = character();
    let pending = Transaction {
        id: "t1".into(),
        user_id: "u".into(),
        character: "Merchant".into(),
        transaction_type: "buy_tea".into(),
        state: "awaiting_payment".into(),
        status: TransactionStatus::Pending,
        context: Map::new(),
        created_at: String::new(),
        updated_at: String::new(),
    };
    let messages = [
        ("I'll have some tea, thank you kindly", None),
        (
            "Could you tell me about the weather over the northern hills today?",
            None,
        ),
        ("how much for the rope", None),
        ("Here you go, three coins", Some(&pending)),
        ("Actually never mind", Some(&pending)),
        ("What else is there to see in this town?", Some(&pending)),
    ];
    let mut detections = 0u64;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(2) {
        for (message, pending) in &messages {
            let pending = pending.map(std::slice::from_ref).unwrap_or_default();
            std::hint::black_box(character.detect(message, pending));
            detections += 1;
        }
    }
    let micros = started.elapsed().as_secs_f64() * 1e6 / detections as f64;
    println!(
        "intent detection ({}), 20 workflows: {micros:.2} µs per message (mean over {} messages of 6 kinds)",
        std::env::consts::ARCH,
        detections
    );
}
