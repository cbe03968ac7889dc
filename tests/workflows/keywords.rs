//! Keyword semantics: a keyword-only match triggers when no classifier can decide (the
//! triggers ask for none, or no model is there); with a model and
//! `llm_classification`, the model decides. Patterns beat keywords.

use familiar::llm::scripted::ScriptedModel;
use familiar::workflow::{Intent, TransactionStatus};
use serde_json::json;

use super::bar::{Bar, DOTTY, MARIGOLD, SEED_DOTTY, SEED_SCHEMA};

#[test]
fn offline_the_seeds_cancellation_keyword_nevermind_cancels() {
    let bar = Bar::new(SEED_SCHEMA);
    bar.say("I'll have a beer");
    let (prepared, cancelled) = bar.say("nevermind");
    assert_eq!(prepared.intent, Intent::Cancel { workflow: 0 });
    assert_eq!(cancelled.unwrap().status, TransactionStatus::Cancelled);
}

#[test]
fn a_keyword_on_triggers_that_ask_for_no_model_triggers_even_with_one() {
    let bar = Bar::new(SEED_SCHEMA);
    bar.say("I'll have a beer");
    let model = ScriptedModel::new();
    let (prepared, cancelled) = bar.say_with("forget that", Some(&model));
    assert_eq!(prepared.intent, Intent::Cancel { workflow: 0 });
    assert_eq!(cancelled.unwrap().status, TransactionStatus::Cancelled);
    assert!(model.requests().is_empty(), "nobody was asked");
}

#[test]
fn offline_a_keyword_that_would_ask_a_model_triggers_on_its_own() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have an ale");
    // "coins" is only a keyword of the payment step, which asks a model when there is one.
    let (prepared, paid) = bar.say("the coins are on the counter");
    assert!(matches!(prepared.intent, Intent::Advance { state: 1, .. }));
    assert_eq!(paid.unwrap().status, TransactionStatus::Completed);
}

#[test]
fn with_a_model_the_model_decides_keyword_only_matches() {
    let bar = Bar::new(DOTTY);
    bar.say("I'll have an ale");
    let model = ScriptedModel::new();
    model.push_text(r#"{"matches": true}"#);
    let (prepared, recorded) = bar.say_with("the coins are on the counter", Some(&model));
    assert!(matches!(prepared.intent, Intent::Advance { state: 1, .. }));
    assert_eq!(recorded.unwrap().status, TransactionStatus::Completed);
    let question = &model.requests()[0];
    assert!(question.response_format.is_some(), "a strict-JSON question");
    // A model that says no, or answers nonsense, changes nothing.
    bar.say("I'll have an ale");
    let no = ScriptedModel::new();
    no.push_text(r#"{"matches": false}"#);
    let (prepared, recorded) = bar.say_with("the coins are on the counter", Some(&no));
    assert_eq!((prepared.intent, recorded), (Intent::None, None));
    let unsure = ScriptedModel::new();
    unsure.push_text("hmm, maybe?").push_text("still unsure");
    let (prepared, _) = bar.say_with("the coins are on the counter", Some(&unsure));
    assert_eq!(prepared.intent, Intent::None);
    assert_eq!(bar.pending().unwrap().state, "awaiting_payment");
}

#[test]
fn a_pattern_anywhere_beats_a_keyword() {
    let inn = Bar::new(MARIGOLD);
    // "bed" is a keyword of the room; the drink's pattern matches.
    let (prepared, created) = inn.say("I need a bed, but first give me cider");
    assert!(matches!(prepared.intent, Intent::Start { workflow: 0, .. }));
    assert_eq!(created.unwrap().context["drink"], "cider");
}

#[test]
fn a_keyword_only_start_needs_an_item_on_the_price_list() {
    let bar = Bar::new(SEED_DOTTY);
    // "have" is a keyword of the order; nothing on the list is named.
    let (prepared, recorded) = bar.say("I have a question");
    assert_eq!((prepared.intent, recorded), (Intent::None, None));
    // No pattern matches "I'd have", but the keyword and the listed beer do.
    let (_, created) = bar.say("I'd have a beer");
    let created = created.unwrap();
    assert_eq!(
        (&created.context["drink"], &created.context["price"]),
        (&json!("beer"), &json!(3))
    );
}

#[test]
fn a_keyword_only_start_without_a_price_list_triggers() {
    let smith = Bar::new(super::bar::BRANNOC);
    let (prepared, offered) = smith.say("got a job?");
    assert!(matches!(prepared.intent, Intent::Start { .. }));
    assert_eq!(offered.unwrap().state, "awaiting_acceptance");
}
