//! A character file bounded as a whole: its size, its counts (workflows, states,
//! patterns, keywords, price-list items), the compiled size of all its patterns
//! together, the identity fields and lines that go into prompts, and how much of a
//! message the patterns read. Each refusal names the limit and the JSON path of the
//! first part past it; the real files stay far inside every limit.

use familiar::workflow::limits::{
    MAX_FILE_BYTES, MAX_KEYWORDS, MAX_MATCHED_CHARS, MAX_PATTERNS, MAX_PRICES, MAX_STATES,
    MAX_WORKFLOWS,
};
use familiar::workflow::{Character, Detection, Intent};
use serde_json::{Value, json};

use super::bar::{BRANNOC, DOTTY, MARIGOLD, SEED_DOTTY, SEED_SCHEMA};

/// Compiles (case-insensitive) to just under one pattern's 64 KiB.
const HEAVY: &str = "[a-z]{1300}0";

fn errors_of(file: &Value) -> Vec<(String, String)> {
    Character::from_json(&file.to_string())
        .unwrap_err()
        .into_iter()
        .map(|e| (e.path, e.message))
        .collect()
}

/// One workflow whose first state has these triggers.
fn with_triggers(triggers: Value) -> Value {
    json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"enabled": true, "states": [
            {"name": "a", "triggers": triggers, "actions": {"create_transaction": {}}}
        ]}}
    })
}

/// `n` states named `s0…`, the first creating the transaction.
fn states(n: usize) -> Vec<Value> {
    (0..n)
        .map(|i| {
            let actions = if i == 0 {
                json!({"create_transaction": {}})
            } else {
                json!({})
            };
            json!({"name": format!("s{i}"), "actions": actions})
        })
        .collect()
}

fn only(errors: &[(String, String)]) -> (&str, &str) {
    let [(path, message)] = errors else {
        panic!("one problem expected: {errors:?}");
    };
    (path, message)
}

#[test]
fn the_real_files_are_within_every_limit() {
    for file in [DOTTY, BRANNOC, MARIGOLD, SEED_DOTTY, SEED_SCHEMA] {
        Character::from_json(file).unwrap();
    }
}

#[test]
fn a_merchant_with_twenty_workflows_is_within_every_limit() {
    // The character of bench/workflows.rs: 20 workflows, 7 patterns each.
    let goods = [
        "ale", "bread", "cloak", "dagger", "eggs", "flour", "gloves", "honey", "iron", "jerky",
        "knife", "lamp", "mead", "nails", "oil", "pie", "quill", "rope", "salt", "tea",
    ];
    let workflows: serde_json::Map<String, Value> = goods
        .iter()
        .map(|good| {
            let pending = json!({
                "name": "pending",
                "triggers": {"intent_patterns": [
                    format!("\\b(?:i'?ll have|give me|i want|sell me)\\s+(?:a|an|some)?\\s*(?<item>{good})\\b"),
                    format!("\\b(?<item>{good}) please\\b"),
                    format!("\\bhow much (?:is|for) (?:the |a )?(?<item>{good})\\b")
                ], "keywords": [good, "buy", "price"]},
                "actions": {"create_transaction": {"price_lookup": {*good: 3}}},
                "next_state": "paying"
            });
            let paying = json!({
                "name": "paying",
                "triggers": {"intent_patterns": ["\\bhere you go\\b", "\\bpay(?:ing|ment)?\\b", "\\btake (?:this|my coins)\\b"]},
                "actions": {"complete_transaction": {}}
            });
            let workflow = json!({
                "enabled": true,
                "states": [pending, paying],
                "cancellation": {"triggers": {"intent_patterns": ["\\b(?:never ?mind|cancel|forget it)\\b"]}}
            });
            (format!("buy_{good}"), workflow)
        })
        .collect();
    let file = json!({"identity": {"name": "Merchant"}, "workflows": workflows});
    assert_eq!(
        Character::from_json(&file.to_string())
            .unwrap()
            .workflows
            .len(),
        20
    );
}

#[test]
fn a_file_past_the_size_limit_is_refused_before_it_is_read() {
    let file = json!({
        "identity": {"name": "X"},
        "backstory": "b".repeat(MAX_FILE_BYTES)
    });
    let errors = errors_of(&file);
    let (path, message) = only(&errors);
    assert_eq!(path, "$");
    assert!(message.contains("MAX_FILE_BYTES"), "{message}");
}

#[test]
fn more_workflows_than_the_limit_are_refused() {
    let workflows: serde_json::Map<String, Value> = (0..=MAX_WORKFLOWS)
        .map(|i| (format!("w{i:02}"), json!({"states": states(1)})))
        .collect();
    let errors = errors_of(&json!({"identity": {"name": "X"}, "workflows": workflows}));
    let (path, message) = only(&errors);
    assert_eq!(path, "workflows");
    assert_eq!(
        message,
        format!(
            "{} workflows; a character has at most {MAX_WORKFLOWS}",
            MAX_WORKFLOWS + 1
        )
    );
}

#[test]
fn states_past_the_limit_are_refused_at_the_first_one_past_it() {
    let half = MAX_STATES / 2 + 1;
    let file = json!({
        "identity": {"name": "X"},
        "workflows": {
            "a": {"states": states(half)},
            "b": {"states": states(half)}
        }
    });
    let errors = errors_of(&file);
    let (path, message) = only(&errors);
    assert_eq!(path, format!("workflows.b.states[{}]", MAX_STATES - half));
    assert_eq!(
        message,
        format!("a character has at most {MAX_STATES} states (MAX_STATES); this is one past it")
    );
}

#[test]
fn a_file_of_twenty_thousand_heavy_patterns_is_refused_without_compiling_them() {
    let file = with_triggers(json!({"intent_patterns": vec![HEAVY; 20_000]}));
    let started = std::time::Instant::now();
    let errors = errors_of(&file);
    let (path, message) = only(&errors);
    assert_eq!(
        path,
        format!("workflows.w.states[0].triggers.intent_patterns[{MAX_PATTERNS}]")
    );
    assert!(message.contains("(MAX_PATTERNS)"), "{message}");
    // Compiling them took seconds and 1.7 GB (bench/character_bounds.rs).
    assert!(started.elapsed().as_secs() < 2, "{:?}", started.elapsed());
}

#[test]
fn keywords_and_price_items_past_their_limits_are_refused() {
    let keywords: Vec<String> = (0..=MAX_KEYWORDS).map(|i| format!("k{i}")).collect();
    let errors = errors_of(&with_triggers(json!({"keywords": keywords})));
    let (path, message) = only(&errors);
    assert_eq!(
        path,
        format!("workflows.w.states[0].triggers.keywords[{MAX_KEYWORDS}]")
    );
    assert!(message.contains("(MAX_KEYWORDS)"), "{message}");

    let prices: serde_json::Map<String, Value> = (0..=MAX_PRICES)
        .map(|i| (format!("item{i:04}"), json!(1)))
        .collect();
    let file = json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"states": [
            {"name": "a", "actions": {"create_transaction": {"price_lookup": prices}}}
        ]}}
    });
    let errors = errors_of(&file);
    let (path, message) = only(&errors);
    assert_eq!(
        path,
        format!(
            "workflows.w.states[0].actions.create_transaction.price_lookup.item{MAX_PRICES:04}"
        )
    );
    assert!(message.contains("(MAX_PRICES)"), "{message}");
}

#[test]
fn patterns_past_their_compiled_budget_together_are_refused_at_the_first_past_it() {
    // Each is within its own 64 KiB; four of them spend the 256 KiB the character's
    // patterns may take together.
    let file = with_triggers(json!({"intent_patterns": vec![HEAVY; 8]}));
    let errors = errors_of(&file);
    let (path, message) = only(&errors);
    assert_eq!(path, "workflows.w.states[0].triggers.intent_patterns[4]");
    assert!(message.contains("(MAX_PATTERNS_SIZE"), "{message}");
    assert!(
        message.contains("the patterns after it were not compiled"),
        "{message}"
    );
    // Spread over workflows and cancellations it is the same budget.
    let workflow = json!({"enabled": true, "states": [
        {"name": "a", "triggers": {"intent_patterns": [HEAVY]}, "actions": {"create_transaction": {}}}
    ], "cancellation": {"triggers": {"intent_patterns": [HEAVY]}}});
    let file = json!({
        "identity": {"name": "X"},
        "workflows": {"a": workflow, "b": workflow, "c": workflow}
    });
    let errors = errors_of(&file);
    let (path, _) = only(&errors);
    assert_eq!(path, "workflows.c.states[0].triggers.intent_patterns[0]");
}

#[test]
fn identity_fields_and_lines_that_go_into_prompts_are_bounded() {
    let file = json!({
        "identity": {
            "name": "n".repeat(101),
            "occupation": "o".repeat(201),
            "personality": "p".repeat(1001),
            "backstory_kept_as_written": "b".repeat(10_000)
        },
        "workflows": {"w": {"description": "d".repeat(2001), "states": [
            {"name": "a", "actions": {"create_transaction": {}, "prompt_injection": "i".repeat(2001)}}
        ]}}
    });
    let errors = errors_of(&file);
    let paths: Vec<&str> = errors.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "identity.name",
            "identity.occupation",
            "identity.personality",
            "workflows.w.description",
            "workflows.w.states[0].actions.prompt_injection"
        ]
    );
    assert_eq!(
        errors[0].1,
        "101 characters; at most 100 (it goes into every prompt)"
    );
}

#[test]
fn values_a_transaction_carries_into_the_prompt_are_bounded() {
    let long = "v".repeat(2001);
    let file = json!({
        "identity": {"name": "X"},
        "workflows": {"w": {"states": [
            {"name": "a", "actions": {"create_transaction": {
                "price_lookup": {"ale": long}, "default_price": long, "context_fields": ["f".repeat(101)]
            }}, "next_state": "b"},
            {"name": "b", "actions": {"update_transaction": {"context_updates": {"note": long}}}}
        ]}}
    });
    let errors = errors_of(&file);
    let paths: Vec<&str> = errors.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        paths,
        [
            "workflows.w.states[0].actions.create_transaction.price_lookup.ale",
            "workflows.w.states[0].actions.create_transaction.default_price",
            "workflows.w.states[0].actions.create_transaction.context_fields[0]",
            "workflows.w.states[1].actions.update_transaction.context_updates.note"
        ]
    );
    assert!(errors[0].1.contains("a context value, written as JSON"));
}

#[test]
fn patterns_and_keywords_read_only_the_start_of_a_long_message() {
    let character = Character::from_json(DOTTY).unwrap();
    let filler = "la ".repeat(MAX_MATCHED_CHARS / 3 + 1);
    let late = format!("{filler} I'll have a whiskey");
    assert_eq!(character.detect(&late, &[]), Detection::Nothing);
    let early = format!("I'll have a whiskey {filler}");
    let Detection::Sure(Intent::Start { extracted, .. }) = character.detect(&early, &[]) else {
        panic!("the order at the start is read");
    };
    assert_eq!(extracted["drink"], "whiskey");
    // A cut inside a multi-byte character never panics.
    let wide = "é".repeat(MAX_MATCHED_CHARS + 5);
    assert_eq!(character.detect(&wide, &[]), Detection::Nothing);
}
