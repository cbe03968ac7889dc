//! The OpenAI-compatible client against a scripted HTTP peer and a virtual clock:
//! retries, waits, timeouts, cut streams and aborts, counting the requests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::cell::Cell;
use std::rc::Rc;
use std::task::Poll;

use common::{Reply, ScriptedHttp as Peer, respond};

use familiar::base::clock::{FrozenClock, ManualClock};
use familiar::base::http::HttpError;
use familiar::base::retry::RetryPolicy;
use familiar::llm::message::Message;
use familiar::llm::openai::{ModelSettings, OpenAiClient, SettingsError};
use familiar::llm::{ChatRequest, Delta, FinishReason, Llm, LlmError};
use futures::executor::block_on;
use futures::future::{Either, poll_fn, select};

const TEXT: &str = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n\
                    data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n";

struct Setup {
    peer: Rc<Peer>,
    clock: ManualClock,
    client: OpenAiClient,
}

fn setup(replies: Vec<Reply>) -> Setup {
    let peer = Rc::new(Peer::default());
    for reply in replies {
        peer.push(reply);
    }
    let clock = ManualClock::starting_at(1_445_412_470_000);
    let mut settings = ModelSettings::new("http://127.0.0.1:4000/v1", "mock-text");
    settings.timeout_ms = 5_000;
    settings.extra_header = Some(("X-Proxy-Token".into(), "team".into()));
    let client = OpenAiClient::new(
        settings,
        peer.clone(),
        Rc::new(clock.clone()),
        Box::new(|| 0.5),
    )
    .unwrap()
    .with_retry(RetryPolicy {
        max_retries: 2,
        base_delay_ms: 1_000,
        max_delay_ms: 10_000,
    });
    Setup {
        peer,
        clock,
        client,
    }
}

fn ask(client: &OpenAiClient) -> (Vec<Delta>, Result<familiar::llm::ChatResponse, LlmError>) {
    let request = ChatRequest {
        messages: vec![Message::user("hi")].into(),
        ..ChatRequest::default()
    };
    let mut deltas = Vec::new();
    let result = block_on(client.chat(&request, &mut |d| deltas.push(d)));
    (deltas, result)
}

#[test]
fn a_streamed_answer_is_one_well_formed_request() {
    let s = setup(vec![respond(200, TEXT)]);
    let (deltas, result) = ask(&s.client);
    let response = result.unwrap();
    assert_eq!(
        (response.text.as_str(), response.finish),
        ("Hello", FinishReason::Stop)
    );
    assert_eq!(
        deltas,
        [Delta::Text {
            text: "Hello".into()
        }]
    );
    let requests = s.peer.requests.borrow();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].url, "http://127.0.0.1:4000/v1/chat/completions");
    assert!(
        requests[0]
            .headers
            .contains(&("X-Proxy-Token".into(), "team".into()))
    );
    let body: serde_json::Value =
        serde_json::from_str(requests[0].body.as_deref().unwrap()).unwrap();
    assert_eq!(
        (body["model"].as_str(), body["stream"].as_bool()),
        (Some("mock-text"), Some(true))
    );
}

#[test]
fn a_429_waits_as_the_server_asks_then_succeeds() {
    let limited = Reply::Respond {
        status: 429,
        headers: vec![("retry-after", "2")],
        chunks: vec![Ok(br#"{"error":{"message":"slow down"}}"#.to_vec())],
        hang: false,
    };
    let s = setup(vec![limited, respond(200, TEXT)]);
    assert_eq!(ask(&s.client).1.unwrap().text, "Hello");
    assert_eq!(s.peer.requests.borrow().len(), 2);
    assert_eq!(s.clock.sleeps(), [2_000]);
}

#[test]
fn repeated_server_errors_back_off_then_fail_clearly() {
    let error = r#"{"error":{"message":"upstream exploded","type":"server_error"}}"#;
    let s = setup(vec![
        respond(500, error),
        respond(500, error),
        respond(500, error),
    ]);
    let error = ask(&s.client).1.unwrap_err();
    assert_eq!(
        error,
        LlmError::Status {
            status: 500,
            message: "upstream exploded".into()
        }
    );
    assert_eq!(
        error.to_string(),
        "the model's server or its provider failed (HTTP 500): upstream exploded"
    );
    assert_eq!(s.peer.requests.borrow().len(), 3);
    assert_eq!(
        s.clock.sleeps(),
        [500, 1_000],
        "full jitter at 0.5 of 1 s, then 2 s"
    );
}

#[test]
fn bad_requests_and_refused_credentials_are_never_retried() {
    for (status, fragment) in [(400, "rejected the request"), (401, "refused access")] {
        let s = setup(vec![respond(status, r#"{"error":{"message":"nope"}}"#)]);
        let error = ask(&s.client).1.unwrap_err();
        assert!(error.to_string().contains(fragment), "{error}");
        assert_eq!(s.peer.requests.borrow().len(), 1);
        assert!(s.clock.sleeps().is_empty());
    }
}

#[test]
fn a_connection_failure_is_retried() {
    let s = setup(vec![
        Reply::Fail(HttpError::Network("connection refused".into())),
        respond(200, TEXT),
    ]);
    assert_eq!(ask(&s.client).1.unwrap().text, "Hello");
    assert_eq!(s.peer.requests.borrow().len(), 2);
}

#[test]
fn a_hung_response_is_cut_by_the_timeout_and_the_request_dropped() {
    let s = setup(vec![Reply::Hang, Reply::Hang, Reply::Hang]);
    assert_eq!(
        ask(&s.client).1.unwrap_err(),
        LlmError::Timeout { after_ms: 5_000 }
    );
    assert_eq!(s.peer.requests.borrow().len(), 3);
    assert_eq!(s.clock.sleeps(), [5_000, 500, 5_000, 1_000, 5_000]);
}

#[test]
fn a_stream_cut_after_output_is_an_error_and_not_retried() {
    let cut = "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\
               \"function\":{\"name\":\"f\",\"arguments\":\"{\\\"ci\"}}]}}]}\n\ndata: {\"choices\":[{\"ind";
    let s = setup(vec![respond(200, cut)]);
    let (deltas, result) = ask(&s.client);
    assert!(matches!(result, Err(LlmError::Incomplete(_))), "{result:?}");
    assert_eq!(deltas.len(), 1, "the fragment that arrived was delivered");
    assert_eq!(s.peer.requests.borrow().len(), 1);
}

#[test]
fn a_stream_that_stalls_after_output_times_out_without_a_retry() {
    let stalled = Reply::Respond {
        status: 200,
        headers: vec![],
        chunks: vec![Ok(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n".to_vec(),
        )],
        hang: true,
    };
    let s = setup(vec![stalled]);
    let (_, result) = ask(&s.client);
    assert_eq!(result.unwrap_err(), LlmError::Timeout { after_ms: 5_000 });
    assert_eq!(s.peer.requests.borrow().len(), 1);
    assert_eq!(
        s.peer.bodies_dropped.get(),
        1,
        "the stalled body was dropped, cancelling it"
    );
}

#[test]
fn a_response_silent_after_its_headers_times_out_once_without_a_retry() {
    let silent = Reply::Respond {
        status: 200,
        headers: vec![],
        chunks: vec![],
        hang: true,
    };
    let s = setup(vec![silent, respond(200, TEXT)]);
    let (deltas, result) = ask(&s.client);
    assert_eq!(result.unwrap_err(), LlmError::Timeout { after_ms: 5_000 });
    assert!(deltas.is_empty());
    assert_eq!(s.peer.requests.borrow().len(), 1);
}

#[test]
fn an_empty_200_before_any_output_is_retried() {
    let s = setup(vec![respond(200, ""), respond(200, TEXT)]);
    assert_eq!(ask(&s.client).1.unwrap().text, "Hello");
    assert_eq!(s.peer.requests.borrow().len(), 2);
}

#[test]
fn aborting_mid_stream_drops_the_request() {
    let peer = Rc::new(Peer::default());
    peer.push(Reply::Respond {
        status: 200,
        headers: vec![],
        chunks: vec![Ok(
            b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hel\"}}]}\n\n".to_vec(),
        )],
        hang: true,
    });
    let settings = ModelSettings::new("http://127.0.0.1:4000/v1", "m");
    let client = OpenAiClient::new(
        settings,
        peer.clone(),
        Rc::new(FrozenClock::at(0)),
        Box::new(|| 0.0),
    )
    .unwrap();
    let request = ChatRequest::default();
    let seen = Cell::new(0);
    let mut sink = |_| seen.set(seen.get() + 1);
    let chat = client.chat(&request, &mut sink);
    // The user presses Stop once the first delta is on screen.
    let stop = poll_fn(|_| {
        if seen.get() > 0 {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    });
    let Either::Right(((), still_streaming)) = block_on(select(chat, Box::pin(stop))) else {
        panic!("the chat should still be streaming");
    };
    assert_eq!(peer.bodies_dropped.get(), 0);
    drop(still_streaming);
    assert_eq!(
        peer.bodies_dropped.get(),
        1,
        "dropping the call drops the request"
    );
    assert_eq!(peer.requests.borrow().len(), 1);
}

#[test]
fn invalid_settings_are_refused_before_any_request() {
    let peer = Rc::new(Peer::default());
    let settings = ModelSettings::new("not a url", "m");
    let result = OpenAiClient::new(
        settings,
        peer.clone(),
        Rc::new(ManualClock::default()),
        Box::new(|| 0.0),
    );
    assert!(matches!(result, Err(SettingsError::Url(_))));
    assert!(peer.requests.borrow().is_empty());
}

#[test]
fn a_whole_json_answer_is_read_and_replayed_as_deltas() {
    let whole = Reply::Respond {
        status: 200,
        headers: vec![("content-type", "application/json")],
        chunks: vec![Ok(br#"{"choices":[{"index":0,"message":{"role":"assistant","content":"Hi there"},"finish_reason":"stop"}]}"#.to_vec())],
        hang: false,
    };
    let s = setup(vec![whole]);
    let (deltas, result) = ask(&s.client);
    assert_eq!(result.unwrap().text, "Hi there");
    assert_eq!(
        deltas,
        [
            Delta::Text { text: "Hi ".into() },
            Delta::Text {
                text: "there".into()
            }
        ]
    );
}

#[test]
fn the_window_is_asked_of_the_server_once_then_a_refusal_for_length_lowers_it() {
    use familiar::llm::window::WindowSource;
    let refusal = r#"{"error":{"message":"This model's maximum context length is 2048 tokens. However, you requested 2145 tokens (2049 in the messages, 96 in the completion).","type":"invalid_request_error","code":"context_length_exceeded"}}"#;
    let s = setup(vec![
        respond(404, r#"{"error":{"message":"no such path"}}"#),
        respond(
            200,
            r#"{"data":[{"model_name":"mock-text","model_info":{"max_input_tokens":4096}}]}"#,
        ),
        respond(400, refusal),
    ]);
    let window = block_on(s.client.context_window()).unwrap();
    assert_eq!((window.tokens, window.source), (4096, WindowSource::Server));
    let urls: Vec<String> = s
        .peer
        .requests
        .borrow()
        .iter()
        .map(|r| r.url.clone())
        .collect();
    assert_eq!(
        urls,
        [
            "http://127.0.0.1:4000/v1/models",
            "http://127.0.0.1:4000/model/info"
        ]
    );
    // Asked once: the next look is free.
    block_on(s.client.context_window()).unwrap();
    assert_eq!(s.peer.requests.borrow().len(), 2);
    let (_, result) = ask(&s.client);
    let Err(LlmError::Status {
        status: 400,
        message,
    }) = result
    else {
        panic!("not refused: {result:?}");
    };
    assert!(message.ends_with("[context_length_exceeded]"), "{message}");
    assert_eq!(
        s.peer.requests.borrow().len(),
        3,
        "a 400 is not retried by the client"
    );
    let window = block_on(s.client.context_window()).unwrap();
    assert_eq!(window.tokens, 2048);
    assert!(window.scale > 1_000, "it counted more than estimated");
}
