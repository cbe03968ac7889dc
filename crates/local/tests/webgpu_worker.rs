//! The worker's own path (`familiar_local::worker::Worker`: load with a backend, then a
//! request a step at a time, as `js/local-worker.js` drives it) on a tiny random-weight
//! model with a tokenizer and a chat template, in a dedicated worker on SwiftShader's
//! adapter: `auto` and `webgpu` load on WebGPU and say its adapter, `cpu` stays on the
//! CPU with an adapter there, and the two backends answer a request with the same
//! greedy tokens. F32 weights: the paths agree to the order of sums there
//! (`webgpu_forward.rs`), so greedy decoding cannot part at a near tie.
#![cfg(all(target_arch = "wasm32", feature = "gpu"))]
#![allow(clippy::unwrap_used, clippy::panic)]

use familiar_local::gguf::TensorKind;
use familiar_local::worker::Worker;
use serde_json::{Value, json};
use tiny::{CONTEXT, tiny_file};
use wasm_bindgen_test::*;

mod tiny;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

async fn load(arch: &str, backend: &str) -> Worker {
    let bytes = tiny_file(arch, TensorKind::F32, 42, true);
    match Worker::load(bytes, CONTEXT as u32, backend.into()).await {
        Ok(worker) => worker,
        Err(e) => panic!(
            "{arch} on {backend} did not load: {:?}",
            wasm_bindgen::JsValue::from(e)
        ),
    }
}

fn info(worker: &Worker) -> Value {
    serde_json::from_str(&worker.info()).unwrap()
}

/// A request run to its end as the worker script runs it: every event, `done` last.
async fn answer(worker: &Worker, request: &Value) -> Vec<Value> {
    worker.start(&request.to_string()).unwrap();
    let mut events = Vec::new();
    for _ in 0..1_000 {
        let step: Vec<Value> = serde_json::from_str(&worker.step().await.unwrap()).unwrap();
        let done = step.iter().any(|e| e["type"] == "done");
        events.extend(step);
        if done {
            return events;
        }
    }
    panic!("the request never finished");
}

fn request() -> Value {
    json!({"system": "You answer briefly.", "messages": [{"role": "user", "content": "Say a word about bread."}],
           "tools": [], "tool_choice": "auto", "temperature": 0, "max_tokens": 12})
}

#[wasm_bindgen_test]
async fn auto_loads_on_webgpu_where_there_is_an_adapter_and_says_which() {
    let worker = load("llama", "auto").await;
    let info = info(&worker);
    assert_eq!(info["backend"], "webgpu", "{info}");
    let adapter = info["adapter"].as_str().unwrap_or_default();
    assert!(!adapter.is_empty(), "the adapter is named: {info}");
    assert!(info.get("note").is_none(), "{info}");
    console_log!("auto chose {info}");
}

#[wasm_bindgen_test]
async fn cpu_stays_on_the_cpu_where_there_is_an_adapter() {
    let info = info(&load("llama", "cpu").await);
    assert_eq!(info["backend"], "cpu", "{info}");
    assert!(
        info.get("adapter").is_none() && info.get("note").is_none(),
        "{info}"
    );
}

#[wasm_bindgen_test]
async fn a_backend_that_is_none_of_the_three_is_refused() {
    let bytes = tiny_file("llama", TensorKind::F32, 42, true);
    let refused = Worker::load(bytes, CONTEXT as u32, "gpu".into()).await;
    let Err(e) = refused else {
        panic!("“gpu” was taken")
    };
    let message = js_sys::Error::from(wasm_bindgen::JsValue::from(e)).message();
    assert!(String::from(message).contains("“auto”, “webgpu” or “cpu”"));
}

/// Both backends answer `request` on `arch`'s tiny model with the same tokens.
async fn same_answer(arch: &str) {
    let (gpu, cpu) = (load(arch, "webgpu").await, load(arch, "cpu").await);
    assert_eq!(info(&gpu)["backend"], "webgpu");
    let on_gpu = answer(&gpu, &request()).await;
    let on_cpu = answer(&cpu, &request()).await;
    let done = on_gpu.last().unwrap();
    let generated = done["usage"]["completion_tokens"].as_u64().unwrap();
    assert!(generated >= 1, "{done}");
    assert_eq!(on_gpu, on_cpu, "{arch}: the GPU's answer, then the CPU's");
    // A second request keeps the shared prefix on the device as on the CPU.
    let mut follow = request();
    follow["messages"][0]["content"] = "Say a word about salt.".into();
    assert_eq!(answer(&gpu, &follow).await, answer(&cpu, &follow).await);
    console_log!(
        "{arch}: {generated} tokens the same on both backends: {:?}",
        done["text"]
    );
}

#[wasm_bindgen_test]
async fn a_llama_model_answers_with_the_same_greedy_tokens_on_webgpu_as_on_the_cpu() {
    same_answer("llama").await;
}

#[wasm_bindgen_test]
async fn a_qwen3_model_answers_with_the_same_greedy_tokens_on_webgpu_as_on_the_cpu() {
    same_answer("qwen3").await;
}
