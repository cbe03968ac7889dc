//! Native throughput of the pure decoders: SSE chat streams and JSON repair, in MB/s.
//! Run: `cargo run --release --example throughput`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use familiar::base::json;
use familiar::llm::openai::ChatStream;
use serde_json::json;

/// Runs `work` repeatedly for about `budget` and returns MB/s over `bytes` per run.
fn measure(bytes: usize, budget: Duration, mut work: impl FnMut()) -> f64 {
    work();
    let start = Instant::now();
    let mut runs = 0u32;
    while start.elapsed() < budget {
        work();
        runs += 1;
    }
    (bytes as f64 * f64::from(runs)) / start.elapsed().as_secs_f64() / 1e6
}

/// A realistic stream: many small content deltas, then a fragmented tool call.
fn chat_stream() -> Vec<u8> {
    let mut out = String::new();
    for i in 0..20_000 {
        let chunk = json!({"id": "chatcmpl-1", "object": "chat.completion.chunk", "created": 1,
            "model": "gpt-4o-mini", "choices": [{"index": 0, "delta": {"content": format!("word{i} ")},
            "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    for i in 0..2_000 {
        let chunk = json!({"choices": [{"index": 0, "delta": {"tool_calls": [{"index": 0,
            "function": {"arguments": format!("\"k{i}\": {i}, ")}}]}}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

fn decode(stream: &[u8], chunk: usize) {
    let mut chat = ChatStream::new();
    let mut sink = |d| {
        black_box(d);
    };
    for piece in stream.chunks(chunk) {
        chat.feed(piece, &mut sink).unwrap();
    }
    black_box(chat.finish(&mut sink).unwrap());
}

/// Broken model output of the common kinds, about 40 KB.
fn broken_json() -> String {
    let mut out = String::from("Here you go:\n```json\n{\n");
    for i in 0..600 {
        out.push_str(&format!(
            "  'item{i}': {{name: \"Ale {i}\", price: {i}.5, in_stock: True, tags: ['a', 'b',],}}, // note\n"
        ));
    }
    out.push_str("  'last': {\"unterminated\": \"str");
    out
}

fn main() {
    let budget = Duration::from_secs(2);
    let stream = chat_stream();
    println!("SSE chat stream: {} bytes, {} events", stream.len(), 22_001);
    for chunk in [16, 1024, stream.len()] {
        let label = if chunk == stream.len() {
            "whole".to_owned()
        } else {
            format!("{chunk} B chunks")
        };
        let mbps = measure(stream.len(), budget, || decode(&stream, chunk));
        println!("  decode, {label:>12}: {mbps:8.1} MB/s");
    }

    let broken = broken_json();
    let repaired = json::extract(&broken).unwrap().into_owned();
    println!(
        "JSON repair: {} bytes broken in, {} bytes strict out",
        broken.len(),
        repaired.len()
    );
    let mbps = measure(broken.len(), budget, || {
        black_box(json::extract(black_box(&broken)).unwrap());
    });
    println!("  repair (extract + fix):  {mbps:8.1} MB/s");
    let mbps = measure(repaired.len(), budget, || {
        black_box(json::extract(black_box(&repaired)).unwrap());
    });
    println!("  valid passthrough:       {mbps:8.1} MB/s");
}
