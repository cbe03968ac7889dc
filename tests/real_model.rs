//! Opt-in: the demo agent, end to end in headless Chromium, against a real small model
//! (SmolLM2-135M behind llama-cpp-python's OpenAI-compatible server). Run it with
//! `scripts/real-model.sh`, which starts the server and passes its URL in
//! `FAMILIAR_REAL_MODEL_URL`; the default test command does not run it.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(clippy::unwrap_used, clippy::panic)]

use std::rc::Rc;

use familiar::demo;
use familiar::llm::openai::{ModelSettings, OpenAiClient};
use familiar::run::driver::{Seams, Stop, drive};
use familiar::run::event::Event;
use familiar::run::{AgentRun, Observation, Outcome};
use familiar::web::{BrowserClock, Fetch};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
async fn the_demo_agent_runs_to_an_answer_with_a_real_model() {
    let Some(url) = option_env!("FAMILIAR_REAL_MODEL_URL") else {
        panic!("FAMILIAR_REAL_MODEL_URL is unset: run scripts/real-model.sh");
    };
    let mut settings = ModelSettings::new(format!("{url}/v1"), "smollm2");
    settings.temperature = Some(0.0);
    settings.max_tokens = Some(96);
    settings.timeout_ms = 120_000;
    // llama-cpp-python cannot stream when tools are offered.
    settings.stream = false;
    let llm = OpenAiClient::new(
        settings,
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    )
    .unwrap();
    let tools = demo::tools(
        demo::world_for(&familiar::app::settings::Backend::Local),
        &familiar::app::Participant::local(),
    );
    let seams = Seams {
        llm: &llm,
        tools: &tools,
        clock: &BrowserClock,
        host: None,
        checkpoint: None,
    };
    let mut run = AgentRun::new(
        demo::SYSTEM_PROMPT,
        Vec::new(),
        Observation::chat("What time is it?"),
        tools.catalogue(),
    )
    .with_max_iterations(3)
    .with_max_lookups(1);
    let mut events = Vec::new();
    let stop = drive(&mut run, &seams, &mut |event| events.push(event)).await;
    let Stop::Done(outcome) = stop else {
        panic!("the demo agent asks no approvals: {stop:?}");
    };
    for event in &events {
        web_sys::console::log_1(&serde_json::to_string(event).unwrap_or_default().into());
    }
    assert!(!matches!(outcome, Outcome::Failed { .. }), "{outcome:?}");
    assert!(!outcome.text().trim().is_empty(), "the model said nothing");
    let calls = events
        .iter()
        .filter(|e| matches!(e, Event::StepStarted(_)))
        .count();
    // Whatever the model sends, its turns stay within the run's bound: (1 look-up + 1)
    // per iteration, 3 iterations, then the tools-off answer.
    assert_eq!(run.max_model_turns(), 7);
    assert!(
        (1..=run.max_model_turns() as usize).contains(&calls),
        "{calls} model calls"
    );
}
