//! The real fetch client in headless Chromium against real servers on loopback: a
//! LiteLLM proxy with a scripted provider, and a fault-injecting server of our own
//! (`tests/servers/`). `scripts/test.sh` starts both and passes their URLs in
//! `FAMILIAR_LITELLM_URL` and `FAMILIAR_FAULT_URL` at compile time.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::cell::Cell;
use std::rc::Rc;
use std::task::Poll;

use familiar::base::http::{Http, HttpRequest};
use familiar::base::retry::RetryPolicy;
use familiar::llm::message::{Message, ToolCall};
use familiar::llm::openai::{ModelSettings, OpenAiClient};
use familiar::llm::{ChatRequest, ChatResponse, Delta, FinishReason, Llm, LlmError, ToolSpec};
use familiar::web::{BrowserClock, Fetch};
use futures::StreamExt;
use futures::future::{Either, poll_fn, select};
use gloo_timers::future::TimeoutFuture;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

/// The browser's token for the LiteLLM proxy, checked by its custom auth
/// (tests/servers/litellm/browser_auth.py): the scripted models only, never the proxy's
/// master key.
const PROXY_TOKEN: &str = "familiar-proxy-token-7c1d9e2b4a6f8e3d5c0b";

/// A server's URL as the test command passed it; failing loudly when it did not.
fn server_url(name: &str, url: Option<&'static str>) -> &'static str {
    match url {
        Some(url) => url,
        None => panic!("{name} is unset: run scripts/test.sh, which starts the test servers"),
    }
}

fn litellm_url() -> &'static str {
    server_url("FAMILIAR_LITELLM_URL", option_env!("FAMILIAR_LITELLM_URL"))
}

fn fault_url() -> &'static str {
    server_url("FAMILIAR_FAULT_URL", option_env!("FAMILIAR_FAULT_URL"))
}

/// A tag that keeps this test's requests apart from every other's.
fn unique(prefix: &str) -> String {
    format!("{prefix}#{}", js_sys::Math::random())
}

fn client(settings: ModelSettings) -> OpenAiClient {
    OpenAiClient::new(
        settings,
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    )
    .unwrap()
    .with_retry(RetryPolicy {
        max_retries: 2,
        base_delay_ms: 100,
        max_delay_ms: 2_000,
    })
}

fn fault_client(model: &str) -> OpenAiClient {
    let mut settings = ModelSettings::new(format!("{}/v1", fault_url()), model);
    settings.timeout_ms = 1_000;
    client(settings)
}

fn litellm_client() -> OpenAiClient {
    litellm_client_for("scripted")
}

/// A client of the LiteLLM proxy's model `model` (tests/servers/litellm/config.yaml).
fn litellm_client_for(model: &str) -> OpenAiClient {
    let mut settings = ModelSettings::new(format!("{}/v1", litellm_url()), model);
    settings.extra_header = Some(("Authorization".into(), format!("Bearer {PROXY_TOKEN}")));
    client(settings)
}

async fn chat(
    client: &OpenAiClient,
    request: ChatRequest,
) -> (Vec<Delta>, Result<ChatResponse, LlmError>) {
    let mut deltas = Vec::new();
    let result = client.chat(&request, &mut |d| deltas.push(d)).await;
    (deltas, result)
}

fn asking(text: &str) -> ChatRequest {
    ChatRequest {
        messages: vec![Message::user(text)].into(),
        ..ChatRequest::default()
    }
}

/// What the fault server saw for `model`: (requests, client disconnected).
async fn fault_stats(model: &str) -> (u64, bool) {
    let url = format!("{}/stats?model={}", fault_url(), model.replace('#', "%23"));
    let request = HttpRequest {
        method: "GET",
        url,
        headers: vec![],
        body: None,
    };
    let response = Fetch.send(request).await.unwrap();
    let bytes: Vec<u8> = response.body.map(|c| c.unwrap()).concat().await;
    let stats: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    (
        stats["requests"].as_u64().unwrap(),
        stats["disconnected"].as_bool().unwrap(),
    )
}

fn text_of(deltas: &[Delta]) -> String {
    deltas
        .iter()
        .filter_map(|d| match d {
            Delta::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

#[wasm_bindgen_test]
async fn litellm_streams_a_text_answer_in_pieces() {
    let marker = unique("marker");
    let (deltas, result) = chat(&litellm_client(), asking(&marker)).await;
    let response = result.unwrap();
    let expected = format!("scripted reply to {marker} (request 1)");
    assert_eq!(response.text, expected, "one request reached the provider");
    assert_eq!(response.finish, FinishReason::Stop);
    assert!(deltas.len() >= 5, "streamed in pieces: {deltas:?}");
    assert_eq!(text_of(&deltas), expected);
    assert_eq!(response.usage.map(|u| u.completion_tokens), Some(7));
}

#[wasm_bindgen_test]
async fn litellm_streams_a_tool_call_with_fragmented_arguments() {
    let mut request = asking(&unique("weather"));
    request.tools = vec![ToolSpec {
        name: "get_weather".into(),
        description: "The weather in a city.".into(),
        parameters: serde_json::json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    }]
    .into();
    let (deltas, result) = chat(&litellm_client(), request).await;
    let response = result.unwrap();
    assert_eq!(response.finish, FinishReason::ToolCalls);
    assert_eq!(response.text, "Let me check.");
    assert_eq!(
        response.tool_calls,
        [ToolCall {
            id: "call_weather".into(),
            name: "get_weather".into(),
            arguments: r#"{"city": "Paris"}"#.into(),
        }]
    );
    let fragments: Vec<&str> = deltas
        .iter()
        .filter_map(|d| match d {
            Delta::ToolCall { arguments, .. } => Some(arguments.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(fragments, [r#"{"ci"#, r#"ty": "Pa"#, r#"ris"}"#]);
}

/// The browser's token opens the models it was given, not every model of the proxy.
#[wasm_bindgen_test]
async fn the_browsers_token_is_refused_a_model_it_was_not_given() {
    let (deltas, result) = chat(
        &litellm_client_for("scripted-private"),
        asking(&unique("private")),
    )
    .await;
    assert!(
        matches!(result, Err(LlmError::Status { status: 403, .. })),
        "{result:?}"
    );
    assert!(deltas.is_empty());
}

/// The browser's token is no master key: the proxy's key management refuses it.
#[wasm_bindgen_test]
async fn the_browsers_token_makes_no_keys() {
    let request = HttpRequest {
        method: "POST",
        url: format!("{}/key/generate", litellm_url()),
        headers: vec![
            ("Authorization".into(), format!("Bearer {PROXY_TOKEN}")),
            ("Content-Type".into(), "application/json".into()),
        ],
        body: Some(r#"{"models": ["scripted-private"]}"#.into()),
    };
    let response = Fetch.send(request).await.unwrap();
    let body: Vec<u8> = response.body.map(|c| c.unwrap()).concat().await;
    assert_eq!(response.status, 403, "{}", String::from_utf8_lossy(&body));
}

#[wasm_bindgen_test]
async fn a_429_with_retry_after_is_waited_out_then_succeeds() {
    let model = unique("429-then-ok");
    let started = js_sys::Date::now();
    let (deltas, result) = chat(&fault_client(&model), asking("hi")).await;
    assert_eq!(result.unwrap().text, "Hello from the fault server.");
    assert_eq!(text_of(&deltas), "Hello from the fault server.");
    assert!(
        js_sys::Date::now() - started >= 1_000.0,
        "waited the second the server asked for"
    );
    assert_eq!(fault_stats(&model).await, (2, false));
}

#[wasm_bindgen_test]
async fn a_500_three_times_ends_in_a_clear_error() {
    let model = unique("500-always");
    let (deltas, result) = chat(&fault_client(&model), asking("hi")).await;
    let error = result.unwrap_err();
    assert_eq!(
        error,
        LlmError::Status {
            status: 500,
            message: "upstream exploded".into()
        }
    );
    assert!(
        error
            .to_string()
            .starts_with("the model's server or its provider failed (HTTP 500)")
    );
    assert!(deltas.is_empty());
    assert_eq!(fault_stats(&model).await.0, 3);
}

#[wasm_bindgen_test]
async fn a_hung_response_is_cut_by_the_timeout() {
    let model = unique("hang");
    let (_, result) = chat(&fault_client(&model), asking("hi")).await;
    assert_eq!(result.unwrap_err(), LlmError::Timeout { after_ms: 1_000 });
    assert_eq!(
        fault_stats(&model).await.0,
        3,
        "each attempt timed out, then retried"
    );
}

#[wasm_bindgen_test]
async fn a_response_that_stalls_after_its_headers_times_out_once_and_is_not_retried() {
    let model = unique("stall");
    let (deltas, result) = chat(&fault_client(&model), asking("hi")).await;
    assert_eq!(result.unwrap_err(), LlmError::Timeout { after_ms: 1_000 });
    assert!(deltas.is_empty());
    assert_eq!(
        fault_stats(&model).await.0,
        1,
        "the same wait would come again"
    );
}

#[wasm_bindgen_test]
async fn a_stream_cut_mid_arguments_is_an_error_and_not_retried() {
    let model = unique("cut-mid-args");
    let (deltas, result) = chat(&fault_client(&model), asking("hi")).await;
    assert!(matches!(result, Err(LlmError::Incomplete(_))), "{result:?}");
    assert!(
        deltas.iter().any(|d| matches!(d, Delta::ToolCall { .. })),
        "the fragments that came were delivered"
    );
    assert_eq!(fault_stats(&model).await.0, 1);
}

#[wasm_bindgen_test]
async fn stopping_mid_stream_aborts_the_request() {
    let model = unique("slow");
    let client = fault_client(&model);
    let request = asking("hi");
    let seen = Cell::new(0);
    let mut sink = |_| seen.set(seen.get() + 1);
    let running = client.chat(&request, &mut sink);
    let stop = poll_fn(|_| {
        if seen.get() >= 2 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    let Either::Right(((), running)) = select(running, Box::pin(stop)).await else {
        panic!("the slow stream ended by itself");
    };
    drop(running);
    for _ in 0..50 {
        if fault_stats(&model).await.1 {
            break;
        }
        TimeoutFuture::new(100).await;
    }
    assert_eq!(
        fault_stats(&model).await,
        (1, true),
        "the server saw the client go away"
    );
}

/// One row of the fault matrix: a misbehaviour of the server, whether the client
/// streams, and what must come of it.
struct Fault {
    model: &'static str,
    stream: bool,
    /// `Ok` or the `LlmError::kind` the call must end with (`a|b`: either).
    outcome: &'static str,
    /// How many requests the server may see: the retries stay within the policy.
    requests: std::ops::RangeInclusive<u64>,
}

const fn fault(
    model: &'static str,
    stream: bool,
    outcome: &'static str,
    requests: std::ops::RangeInclusive<u64>,
) -> Fault {
    Fault {
        model,
        stream,
        outcome,
        requests,
    }
}

/// Every fault the issue names, against the real fault server: a typed outcome within
/// the client's bounds (timeout 1 s, 2 retries), and retries only where they can help.
/// Prints its table (run with `--nocapture` to see it when it passes).
#[wasm_bindgen_test]
async fn the_fault_matrix_ends_every_fault_in_a_typed_outcome_within_bounds() {
    let matrix = [
        fault("429-then-ok", true, "ok", 2..=2),
        fault("429-date-once", true, "ok", 2..=2),
        fault("429-far", true, "status", 1..=1),
        fault("status-408-once", true, "ok", 2..=2),
        fault("status-500-once", true, "ok", 2..=2),
        fault("status-502-once", true, "ok", 2..=2),
        fault("status-503-once", false, "ok", 2..=2),
        fault("status-504-once", true, "ok", 2..=2),
        fault("status-500-always", true, "status", 3..=3),
        fault("status-400-always", true, "status", 1..=1),
        fault("status-401-always", false, "status", 1..=1),
        fault("reset-once", true, "ok", 2..=2),
        fault("hang", true, "timeout", 3..=3),
        fault("stall", true, "timeout", 1..=1),
        fault("cut-mid-args", true, "incomplete", 1..=1),
        fault("error-event", true, "provider", 1..=1),
        fault("json-text", false, "ok", 1..=1),
        fault("json-cut", false, "unreachable|malformed", 1..=3),
        fault("json-stall", false, "timeout", 1..=1),
    ];
    let mut table = vec![format!(
        "{:<20} {:<8} {:<22} {:<22} {:>8}",
        "fault", "stream", "expected", "got", "requests"
    )];
    let mut wrong = Vec::new();
    for row in &matrix {
        let model = unique(row.model);
        let mut settings = ModelSettings::new(format!("{}/v1", fault_url()), &model);
        settings.timeout_ms = 1_000;
        settings.stream = row.stream;
        let (_, result) = chat(&client(settings), asking("hi")).await;
        let got = match &result {
            Ok(_) => "ok",
            Err(error) => error.kind(),
        };
        let requests = fault_stats(&model).await.0;
        let fine = row.outcome.split('|').any(|o| o == got) && row.requests.contains(&requests);
        table.push(format!(
            "{:<20} {:<8} {:<22} {:<22} {:>8}{}",
            row.model,
            row.stream,
            row.outcome,
            got,
            requests,
            if fine { "" } else { "  ✗" }
        ));
        if !fine {
            wrong.push(format!("{}: {result:?}, {requests} request(s)", row.model));
        }
    }
    web_sys::console::log_1(&table.join("\n").into());
    assert!(wrong.is_empty(), "{}\n{wrong:#?}", table.join("\n"));
}

/// A run of the agent loop over the fault server's `model`: a conversation of 20
/// earlier exchanges, then "hi".
async fn run_against(
    model: &str,
) -> (
    familiar::run::driver::Stop,
    Vec<familiar::run::event::Event>,
) {
    run_over(&fault_client(model), "hi").await
}

/// A run of the agent loop over `llm`: a conversation of 20 earlier exchanges, then
/// `input`.
async fn run_over(
    llm: &OpenAiClient,
    input: &str,
) -> (
    familiar::run::driver::Stop,
    Vec<familiar::run::event::Event>,
) {
    use familiar::run::driver::{Seams, drive};
    use familiar::run::{AgentRun, Observation};
    let tools = familiar::tool::ToolRegistry::new();
    let seams = Seams {
        llm,
        tools: &tools,
        clock: &BrowserClock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut history = Vec::new();
    for n in 0..20 {
        history.push(Message::user(format!("question {n}: where is the key?")));
        history.push(Message::assistant(
            format!("answer {n}: in the cellar, under the barrel."),
            Vec::new(),
        ));
    }
    let mut run = AgentRun::new(
        "You are the innkeeper.",
        history,
        Observation::chat(input),
        Vec::new(),
    );
    let mut events = Vec::new();
    let stop = drive(&mut run, &seams, &mut |e| events.push(e)).await;
    (stop, events)
}

fn refusal_and_trims(events: &[familiar::run::event::Event]) -> Vec<familiar::run::Trim> {
    events
        .iter()
        .filter_map(|e| match e {
            familiar::run::event::Event::Fitted(fit) => Some(fit.trims.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

#[wasm_bindgen_test]
async fn a_context_length_refusal_is_retried_once_trimmed_to_the_window_it_names() {
    use familiar::run::driver::Stop;
    use familiar::run::{Outcome, Trim};
    let model = unique("context-length-once");
    let (stop, events) = run_against(&model).await;
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "Hello from the fault server.".into()
        })
    );
    assert_eq!(
        fault_stats(&model).await.0,
        2,
        "the refusal, then the retry"
    );
    let trims = refusal_and_trims(&events);
    assert!(
        matches!(
            trims.first(),
            Some(Trim::Refused {
                window: Some(2048),
                ..
            })
        ),
        "{trims:?}"
    );
    assert!(
        trims.iter().any(|t| matches!(t, Trim::TurnsDropped { .. })),
        "the retry left out the oldest turns: {trims:?}"
    );
}

#[wasm_bindgen_test]
async fn a_second_context_length_refusal_ends_the_run_with_the_servers_words() {
    use familiar::run::Outcome;
    use familiar::run::driver::Stop;
    let model = unique("context-length-always");
    let (stop, _) = run_against(&model).await;
    let Stop::Done(Outcome::Failed { error }) = stop else {
        panic!("not failed: {stop:?}");
    };
    assert!(
        error.contains("maximum context length is 2048 tokens"),
        "{error}"
    );
    assert!(error.contains("HTTP 400"), "{error}");
    assert_eq!(fault_stats(&model).await.0, 2, "one retry, never a loop");
}

#[wasm_bindgen_test]
async fn litellms_context_length_error_without_numbers_is_retried_with_a_larger_estimate() {
    use familiar::run::driver::Stop;
    use familiar::run::{Outcome, Trim};
    let model = unique("context-length-litellm-once");
    let (stop, events) = run_against(&model).await;
    assert!(
        matches!(stop, Stop::Done(Outcome::Answered { .. })),
        "{stop:?}"
    );
    assert_eq!(fault_stats(&model).await.0, 2);
    let trims = refusal_and_trims(&events);
    assert!(
        matches!(
            trims.first(),
            Some(Trim::Refused {
                window: None,
                scale: 1_250
            })
        ),
        "{trims:?}"
    );
}

/// The real LiteLLM proxy, not an imitation of it: the window its operator gave a model
/// comes from its `/model/info` (the model list says none for the other).
#[wasm_bindgen_test]
async fn the_real_litellm_proxy_names_the_window_its_operator_gave_a_model() {
    use familiar::llm::window::WindowSource;
    let window = litellm_client_for("scripted-window")
        .context_window()
        .await
        .expect("the proxy names a window");
    assert_eq!((window.tokens, window.source), (4096, WindowSource::Server));
    let unnamed = litellm_client().context_window().await;
    assert_ne!(
        unnamed.map(|w| (w.tokens, w.source)),
        Some((4096, WindowSource::Server)),
        "a model without one is not given another's"
    );
}

/// The real LiteLLM proxy's own ContextWindowExceededError (a provider's length error as
/// the proxy words it, numbers and all left out): the run retries once, trimmed with a
/// larger estimate, and answers.
#[wasm_bindgen_test]
async fn the_real_litellms_context_window_error_is_retried_once_with_a_larger_estimate() {
    use familiar::run::driver::Stop;
    use familiar::run::{Outcome, Trim};
    let input = unique("overflow-once:");
    let (stop, events) = run_over(&litellm_client(), &input).await;
    let Stop::Done(Outcome::Answered { text }) = &stop else {
        panic!("not answered: {stop:?}");
    };
    assert!(
        text.contains(&input) && text.contains("(request 2)"),
        "{text}"
    );
    let trims = refusal_and_trims(&events);
    assert!(
        matches!(
            trims.first(),
            Some(Trim::Refused {
                window: None,
                scale: 1_250
            })
        ),
        "{trims:?}"
    );
}
