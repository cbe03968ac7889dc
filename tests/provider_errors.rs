//! What a person is told when a provider refuses a request, through the
//! OpenAI-compatible client against a scripted HTTP peer: a model that cannot call
//! tools and an account out of quota are each said in their own words, and neither
//! is retried (no wait makes them answer otherwise); a rate limit worded as a spent
//! quota (Gemini's) is waited out as long as its body asks.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::rc::Rc;

use common::{Reply, ScriptedHttp as Peer, respond};
use familiar::base::clock::ManualClock;
use familiar::base::retry::RetryPolicy;
use familiar::llm::message::Message;
use familiar::llm::openai::{ModelSettings, OpenAiClient};
use familiar::llm::{ChatRequest, Llm, LlmError};
use futures::executor::block_on;

/// The client, its peer answering `replies` in turn, and its clock.
fn client(replies: Vec<Reply>) -> (OpenAiClient, Rc<Peer>, ManualClock) {
    let peer = Rc::new(Peer::default());
    for reply in replies {
        peer.push(reply);
    }
    let clock = ManualClock::starting_at(1_445_412_470_000);
    let settings = ModelSettings::new("http://127.0.0.1:11434/v1", "gemma:2b");
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
    (client, peer, clock)
}

fn ask(client: &OpenAiClient) -> LlmError {
    let request = ChatRequest {
        messages: vec![Message::user("hi")].into(),
        ..ChatRequest::default()
    };
    block_on(client.chat(&request, &mut |_| {})).unwrap_err()
}

#[test]
fn a_model_that_cannot_call_tools_is_named_once_and_never_retried() {
    // llama.cpp's answer to a request with tools when started without --jinja: a
    // 500, which is otherwise retried.
    let refusal = r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#;
    let (client, peer, clock) = client(vec![respond(500, refusal), respond(500, refusal)]);
    let error = ask(&client);
    assert_eq!(
        error,
        LlmError::NoTools("tools param requires --jinja flag".into())
    );
    assert!(
        error.to_string().starts_with("the model cannot call tools"),
        "{error}"
    );
    assert_eq!(peer.requests.borrow().len(), 1);
    assert!(clock.sleeps().is_empty());
}

#[test]
fn an_empty_quota_is_said_apart_from_a_rate_limit_and_not_retried() {
    let quota = r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota"}}"#;
    let (client, peer, _clock) = client(vec![respond(429, quota), respond(429, quota)]);
    let error = ask(&client);
    assert!(
        error
            .to_string()
            .starts_with("the account behind the key has no quota or credit left"),
        "{error}"
    );
    assert_eq!(peer.requests.borrow().len(), 1, "waiting does not help");
}

#[test]
fn a_gemini_rate_limit_is_waited_out_as_its_retry_info_asks_not_said_as_no_quota() {
    // Gemini's answer to an ordinary per-minute limit: "quota", RESOURCE_EXHAUSTED,
    // and the wait in the body (no Retry-After header).
    let limit = r#"{"error":{"code":429,"message":"You exceeded your current quota, please check your plan and billing details.","status":"RESOURCE_EXHAUSTED","details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}}"#;
    let (client, peer, clock) = client(vec![
        respond(429, limit),
        respond(429, limit),
        respond(429, limit),
    ]);
    let error = ask(&client);
    assert_eq!(peer.requests.borrow().len(), 3, "retried twice");
    assert_eq!(clock.sleeps(), [3_000, 3_000], "as long as the body asked");
    let said = error.to_string();
    assert!(
        said.starts_with("the model's server is rate-limiting requests")
            && !said.contains("no quota"),
        "{said}"
    );
}
