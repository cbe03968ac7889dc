//! Chat-completions streams, written from the public OpenAI wire format and the
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]
//! variants real OpenAI-compatible servers send, decoded at every chunking.

use familiar::llm::message::ToolCall;
use familiar::llm::openai::ChatStream;
use familiar::llm::{ChatResponse, Delta, FinishReason, LlmError, Served, Usage};

type Decoded = (Vec<Delta>, Result<ChatResponse, LlmError>);

fn decode(input: &[u8], chunk: usize) -> Decoded {
    let mut stream = ChatStream::new();
    let mut deltas = Vec::new();
    let mut sink = |d| deltas.push(d);
    let mut result = Ok(());
    for piece in input.chunks(chunk.max(1)) {
        result = stream.feed(piece, &mut sink);
        if result.is_err() {
            break;
        }
    }
    let response = result.and_then(|()| stream.finish(&mut sink));
    (deltas, response)
}

/// Decodes at every chunk size and checks that the final result never changes and the
/// merged deltas say the same thing; returns the whole-input decoding.
fn decode_everywhere(input: &[u8]) -> Decoded {
    let whole = decode(input, input.len());
    for size in 1..input.len() {
        let (deltas, response) = decode(input, size);
        assert_eq!(response, whole.1, "chunk size {size}");
        assert_eq!(merged(&deltas), merged(&whole.0), "chunk size {size}");
    }
    whole
}

/// Text, reasoning and per-index argument text, concatenated.
fn merged(deltas: &[Delta]) -> (String, String, Vec<String>) {
    let (mut text, mut reasoning, mut args) = (String::new(), String::new(), Vec::<String>::new());
    for delta in deltas {
        match delta {
            Delta::Text { text: t } => text.push_str(t),
            Delta::Reasoning { text: t } => reasoning.push_str(t),
            Delta::ToolCall {
                index, arguments, ..
            } => {
                if args.len() <= *index {
                    args.resize(index + 1, String::new());
                }
                args[*index].push_str(arguments);
            }
        }
    }
    (text, reasoning, args)
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

#[test]
fn a_text_answer_streams_its_text_and_reports_usage() {
    let (deltas, response) = decode_everywhere(include_bytes!("fixtures/sse/openai_text.sse"));
    let response = response.unwrap();
    assert_eq!(response.text, "The tavern opens at dusk — café «Lune» 🌙.");
    assert_eq!(response.finish, FinishReason::Stop);
    assert!(response.tool_calls.is_empty());
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 19,
            completion_tokens: 12
        })
    );
    assert_eq!(merged(&deltas).0, response.text);
    assert_eq!(
        response.served,
        Served {
            id: Some("chatcmpl-AxT1".into()),
            model: Some("gpt-4o-mini-2024-07-18".into())
        },
        "who answered, as the chunks name it"
    );
}

#[test]
fn parallel_tool_calls_assemble_by_index_across_empty_chunks() {
    let (deltas, response) = decode_everywhere(include_bytes!(
        "fixtures/sse/openai_parallel_tool_calls.sse"
    ));
    let response = response.unwrap();
    assert_eq!(response.finish, FinishReason::ToolCalls);
    assert_eq!(
        response.tool_calls,
        [
            call("call_Kx1", "get_weather", r#"{"location": "Paris"}"#),
            call("call_Kx2", "get_time", r#"{"tz": "Europe/Paris"}"#),
        ]
    );
    assert_eq!(
        merged(&deltas).2,
        [r#"{"location": "Paris"}"#, r#"{"tz": "Europe/Paris"}"#]
    );
}

#[test]
fn a_tool_name_arriving_after_its_id_and_repeated_is_kept_once() {
    let (_, response) = decode_everywhere(include_bytes!("fixtures/sse/late_tool_name_crlf.sse"));
    assert_eq!(
        response.unwrap().tool_calls,
        [call("call_late", "roll_dice", r#"{"sides": 20}"#)]
    );
}

#[test]
fn reasoning_content_is_kept_apart_from_the_answer() {
    let (_, response) = decode_everywhere(include_bytes!("fixtures/sse/reasoning_content.sse"));
    let response = response.unwrap();
    assert_eq!(response.reasoning, "The user greets me.");
    assert_eq!(response.text, "Hello!");
}

#[test]
fn inline_think_tags_split_across_chunks_become_reasoning() {
    let (_, response) = decode_everywhere(include_bytes!("fixtures/sse/inline_think.sse"));
    let response = response.unwrap();
    assert_eq!(response.reasoning, "\nShort answer.\n");
    assert_eq!(response.text, "\n\nYes.");
}

#[test]
fn an_error_object_on_a_200_stream_is_a_provider_error() {
    let (deltas, response) = decode_everywhere(include_bytes!("fixtures/sse/error_on_200.sse"));
    assert_eq!(
        response,
        Err(LlmError::Provider(
            "The server had an error while processing your request. Sorry about that!".into()
        ))
    );
    assert_eq!(
        merged(&deltas).0,
        "Par",
        "what streamed before the error was delivered"
    );
}

#[test]
fn a_stream_cut_mid_arguments_is_an_error_not_a_short_answer() {
    let (_, response) = decode_everywhere(include_bytes!("fixtures/sse/cut_mid_arguments.sse"));
    assert_eq!(
        response,
        Err(LlmError::Incomplete(
            "the stream was cut off in the middle of an event".into()
        ))
    );
}

#[test]
fn a_stream_that_ends_cleanly_without_a_finish_reason_is_an_error() {
    let input =
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\ndata: [DONE]\n\n";
    let (_, response) = decode_everywhere(input);
    assert_eq!(
        response,
        Err(LlmError::Incomplete(
            "the stream ended before the model said it had finished".into()
        ))
    );
}

#[test]
fn nothing_after_done_counts() {
    let (_, response) = decode_everywhere(include_bytes!("fixtures/sse/after_done.sse"));
    assert_eq!(response.unwrap().text, "Done.");
}

#[test]
fn a_chunk_that_is_not_json_is_a_malformed_stream() {
    let (_, response) = decode_everywhere(b"data: {\"choices\": [\n\n");
    assert!(
        matches!(response, Err(LlmError::Malformed(_))),
        "{response:?}"
    );
}

#[test]
fn an_error_event_is_a_provider_error() {
    let input = b"event: error\ndata: {\"message\":\"overloaded\"}\n\n";
    let (_, response) = decode_everywhere(input);
    assert_eq!(
        response,
        Err(LlmError::Provider("{\"message\":\"overloaded\"}".into()))
    );
}

#[test]
fn a_garbage_tool_index_is_refused_not_allocated() {
    let input = b"data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":4000000000,\"function\":{\"name\":\"x\"}}]}}]}\n\n";
    let (_, response) = decode_everywhere(input);
    assert!(
        matches!(response, Err(LlmError::Malformed(_))),
        "{response:?}"
    );
}

#[test]
fn a_stream_that_never_ends_a_line_is_refused_past_its_bound() {
    let mut stream = ChatStream::new();
    let mut sink = |_| {};
    // One endless `data:` line (a server that never sends a newline), 1 MiB a chunk.
    let chunk = vec![b'x'; 1 << 20];
    assert!(stream.feed(b"data: ", &mut sink).is_ok());
    let mut refused = None;
    for n in 1..=16 {
        if let Err(error) = stream.feed(&chunk, &mut sink) {
            refused = Some((n, error));
            break;
        }
    }
    let (n, error) = refused.expect("never refused");
    assert_eq!(n, 8, "refused once past 8 MiB");
    assert_eq!(
        error,
        LlmError::Malformed("the answer passed 8 MiB and was refused".into())
    );
    // It stays refused.
    assert!(stream.feed(b"\n\n", &mut sink).is_err());
}
