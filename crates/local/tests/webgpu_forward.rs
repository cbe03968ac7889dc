//! The forward pass on WebGPU (`llama::GpuSession`) against the CPU's (`llama::Session`)
//! on tiny random-weight models (llama with Llama 3's RoPE factors; qwen2's biases and
//! qwen3's QK-norm, both with NeoX RoPE), in a dedicated worker on SwiftShader's adapter:
//! a prompt read in chunks (16 tokens, then the rest), then greedy decoding, each path
//! choosing its own next token. The tokens must be the same; the logits within a bound
//! relative to the largest logit: `1e-5` when the matrices are F32 (the CPU multiplies
//! in f32 too: only the order of sums differs; 1.2e-6 seen), `3e-2` when they are Q8_0
//! or Q4_0 (the CPU rounds activations to 8 bits a block, the GPU keeps them f32: the
//! bound the CPU's own tests hold it to against an f32 pass, `llama/tests.rs`).
//! The families are checked in F32, where the paths agree to the order of sums: a
//! qwen3 model in Q8_0 parts at its fifth greedy token, a near tie the CPU's 8-bit
//! activations decide (its logits stay within the bound), so greedy equality of a
//! quantized model holds for the seeds here, not in general.
#![cfg(all(target_arch = "wasm32", feature = "gpu"))]
#![allow(clippy::unwrap_used, clippy::panic)]

use familiar_local::gguf::TensorKind;
use familiar_local::gpu::Gpu;
use familiar_local::llama::{GpuSession, Session};
use std::sync::Arc;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

use tiny::{CONTEXT, VOCAB, tiny_model};

mod tiny;

fn greedy(logits: &[f32], chosen: &[u32]) -> u32 {
    let mut best: Option<usize> = None;
    for (i, &v) in logits.iter().enumerate() {
        let fresh = !chosen.contains(&(i as u32));
        if fresh && best.is_none_or(|b| v > logits[b]) {
            best = Some(i);
        }
    }
    best.unwrap() as u32
}

/// The worst `|gpu − cpu| / max|cpu|` over a step's logits, failing past `bound`.
fn logits_match(what: &str, gpu: &[f32], cpu: &[f32], bound: f32) -> f32 {
    assert_eq!(gpu.len(), cpu.len(), "{what}");
    let top = cpu.iter().fold(0f32, |m, v| m.max(v.abs()));
    let worst = gpu
        .iter()
        .zip(cpu)
        .fold(0f32, |m, (g, c)| m.max((g - c).abs() / top));
    assert!(
        worst <= bound,
        "{what}: logits {worst:e} apart (of the largest)"
    );
    worst
}

/// Reads a prompt of 20 tokens in chunks of 16 on both paths, then decodes 8 tokens
/// greedily on each (each token once at most); the tokens must agree and every step's logits be within `bound`.
async fn same_tokens(arch: &str, kind: TensorKind, bound: f32) {
    let model = tiny_model(arch, kind, 42);
    let gpu = Gpu::open().await.unwrap();
    let mut on_gpu = GpuSession::new(gpu, Arc::clone(&model)).unwrap();
    let mut on_cpu = Session::new(model);
    let prompt: Vec<u32> = (0..20).map(|i| (i * 37 + 5) % VOCAB as u32).collect();
    let mut cpu = None;
    while cpu.is_none() {
        cpu = on_cpu.prefill(&prompt, 16).unwrap();
    }
    let mut gpu = None;
    let mut chunks = 0;
    while gpu.is_none() {
        gpu = on_gpu.prefill(&prompt, 16).await.unwrap();
        chunks += 1;
    }
    assert_eq!(chunks, 2, "the prompt is read in two chunks");
    let (mut cpu, mut gpu) = (cpu.unwrap(), gpu.unwrap());
    let mut worst = logits_match("the prompt", &gpu, &cpu, bound);
    let (mut cpu_tokens, mut gpu_tokens) = (Vec::new(), Vec::new());
    for step in 0..8 {
        let (c, g) = (greedy(&cpu, &cpu_tokens), greedy(&gpu, &gpu_tokens));
        cpu_tokens.push(c);
        gpu_tokens.push(g);
        assert_eq!(
            g, c,
            "{arch} {kind:?} step {step}: the GPU chose {g}, the CPU {c}"
        );
        cpu = on_cpu.step(c).unwrap();
        gpu = on_gpu.step(g).await.unwrap();
        worst = worst.max(logits_match(&format!("step {step}"), &gpu, &cpu, bound));
    }
    assert_eq!(on_gpu.tokens(), on_cpu.tokens());
    console_log!(
        "{arch} {kind:?} model: greedy tokens {gpu_tokens:?} on both paths; logits at most {worst:.2e} of the largest apart"
    );
}

#[wasm_bindgen_test]
async fn an_f32_model_decodes_the_same_tokens_on_the_gpu_as_on_the_cpu() {
    same_tokens("llama", TensorKind::F32, 1e-5).await;
}

#[wasm_bindgen_test]
async fn a_q8_0_model_decodes_the_same_tokens_on_the_gpu_as_on_the_cpu() {
    same_tokens("llama", TensorKind::Q8_0, 3e-2).await;
}

#[wasm_bindgen_test]
async fn a_q4_0_model_decodes_the_same_tokens_on_the_gpu_as_on_the_cpu() {
    same_tokens("llama", TensorKind::Q4_0, 3e-2).await;
}

#[wasm_bindgen_test]
async fn a_qwen2_model_with_biases_decodes_the_same_tokens_on_the_gpu_as_on_the_cpu() {
    same_tokens("qwen2", TensorKind::F32, 1e-5).await;
}

#[wasm_bindgen_test]
async fn a_qwen3_model_with_qk_norm_decodes_the_same_tokens_on_the_gpu_as_on_the_cpu() {
    same_tokens("qwen3", TensorKind::F32, 1e-5).await;
}

#[wasm_bindgen_test]
async fn a_second_prompt_keeps_the_shared_prefix_on_the_gpu_as_on_the_cpu() {
    let model = tiny_model("llama", TensorKind::F32, 9);
    let gpu = Gpu::open().await.unwrap();
    let mut on_gpu = GpuSession::new(gpu, Arc::clone(&model)).unwrap();
    let mut on_cpu = Session::new(model);
    let first: Vec<u32> = (0..20).map(|i| (i * 11 + 3) % VOCAB as u32).collect();
    let mut second = first[..12].to_vec();
    second.extend([7, 70, 170, 270, 17, 117]);
    for prompt in [&first, &second] {
        let (mut cpu, mut gpu) = (None, None);
        while cpu.is_none() {
            cpu = on_cpu.prefill(prompt, 16).unwrap();
        }
        let mut calls = 0;
        while gpu.is_none() {
            gpu = on_gpu.prefill(prompt, 16).await.unwrap();
            calls += 1;
        }
        // 20 tokens are two chunks; the second prompt's 6 new ones, one: its shared 12
        // stay cached.
        assert_eq!(calls, if prompt == &first { 2 } else { 1 });
        logits_match("a prompt", &gpu.unwrap(), &cpu.unwrap(), 1e-5);
        assert_eq!(on_gpu.tokens(), prompt.as_slice());
    }
}

#[wasm_bindgen_test]
async fn a_prompt_past_the_window_is_refused_on_the_gpu_as_on_the_cpu() {
    let model = tiny_model("llama", TensorKind::F32, 7);
    let mut on_gpu = GpuSession::new(Gpu::open().await.unwrap(), model).unwrap();
    let long = vec![1u32; CONTEXT + 1];
    let e = on_gpu.prefill(&long, 16).await.unwrap_err();
    assert!(e.to_string().contains("context window is full"), "{e}");
    let e = on_gpu.step(VOCAB as u32).await.unwrap_err();
    assert!(e.to_string().contains("outside the vocabulary"), "{e}");
    assert!(on_gpu.tokens().is_empty());
}
