//! Tiny random-weight models for the browser tests (`webgpu_forward.rs`,
//! `webgpu_worker.rs`): a GGUF file of a llama-family architecture in any weight
//! format, and, for the worker's whole path, a byte-level tokenizer and a ChatML
//! template.
#![allow(dead_code)] // each test file uses some of it

use familiar_local::gguf::{self, Gguf, TensorKind, Value};
use familiar_local::llama::Model;
use familiar_local::quant;
use familiar_local::tokenizer::byte_level::char_of;
use std::sync::Arc;

pub const VOCAB: usize = 300;
const DIM: usize = 64;
const LAYERS: usize = 2;
const HEADS: usize = 4;
const KV_HEADS: usize = 2;
const FFN: usize = 128;
pub const CONTEXT: usize = 160;
const KV: u64 = (DIM / HEADS * KV_HEADS) as u64;

/// xorshift64*, as the crate's unit tests have it.
pub struct Rng(pub u64);

impl Rng {
    pub fn float(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let v = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (v >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }
}

/// A tiny random model of `arch`'s file: matrices in `kind`, norms in F32, the head
/// tied to the embedding; Llama 3's RoPE frequency factors for `llama`, biases for
/// `qwen2`, QK-norm weights for `qwen3` (both NeoX RoPE); with `chat`, a tokenizer and
/// a chat template too.
pub fn tiny_file(arch: &str, kind: TensorKind, seed: u64, chat: bool) -> Vec<u8> {
    let mut rng = Rng(seed);
    let (d, kv, ffn, hd) = (DIM as u64, KV, FFN as u64, (DIM / HEADS) as u64);
    let mut tensors: Vec<(String, Vec<u64>, f32, f32)> =
        vec![("token_embd.weight".into(), vec![d, VOCAB as u64], 1.0, 0.0)];
    for i in 0..LAYERS {
        let mut add = |part: &str, dims: Vec<u64>, scale: f32, base: f32| {
            tensors.push((format!("blk.{i}.{part}"), dims, scale, base));
        };
        add("attn_norm.weight", vec![d], 0.2, 1.0);
        add("attn_q.weight", vec![d, d], 0.25, 0.0);
        add("attn_k.weight", vec![d, kv], 0.25, 0.0);
        add("attn_v.weight", vec![d, kv], 0.25, 0.0);
        add("attn_output.weight", vec![d, d], 0.2, 0.0);
        add("ffn_norm.weight", vec![d], 0.2, 1.0);
        add("ffn_gate.weight", vec![d, ffn], 0.25, 0.0);
        add("ffn_up.weight", vec![d, ffn], 0.25, 0.0);
        add("ffn_down.weight", vec![ffn, d], 0.2, 0.0);
        if arch == "qwen2" {
            add("attn_q.bias", vec![d], 0.5, 0.0);
            add("attn_k.bias", vec![kv], 0.5, 0.0);
            add("attn_v.bias", vec![kv], 0.5, 0.0);
        }
        if arch == "qwen3" {
            add("attn_q_norm.weight", vec![hd], 0.2, 1.0);
            add("attn_k_norm.weight", vec![hd], 0.2, 1.0);
        }
    }
    tensors.push(("output_norm.weight".into(), vec![d], 0.2, 1.0));
    if arch == "llama" {
        tensors.push(("rope_freqs.weight".into(), vec![hd / 2], 0.5, 2.0));
    }
    let encoded: Vec<(String, Vec<u64>, TensorKind, Vec<u8>)> = tensors
        .into_iter()
        .map(|(name, dims, scale, base)| {
            let n = dims.iter().product::<u64>() as usize;
            let values: Vec<f32> = (0..n).map(|_| base + scale * rng.float()).collect();
            let k = if dims.len() == 1 {
                TensorKind::F32
            } else {
                kind
            };
            (name, dims, k, quant::quantize(k, &values).unwrap())
        })
        .collect();
    let refs: Vec<(&str, &[u64], TensorKind, &[u8])> = encoded
        .iter()
        .map(|(n, d, k, b)| (n.as_str(), d.as_slice(), *k, b.as_slice()))
        .collect();
    let key = |k: &str| format!("{arch}.{k}");
    let metadata: Vec<(String, Value)> = vec![
        ("general.architecture".into(), Value::String(arch.into())),
        (key("context_length"), Value::U32(CONTEXT as u32)),
        (key("embedding_length"), Value::U32(DIM as u32)),
        (key("block_count"), Value::U32(LAYERS as u32)),
        (key("feed_forward_length"), Value::U32(FFN as u32)),
        (key("attention.head_count"), Value::U32(HEADS as u32)),
        (key("attention.head_count_kv"), Value::U32(KV_HEADS as u32)),
        (key("rope.freq_base"), Value::F32(10_000.0)),
        (key("attention.layer_norm_rms_epsilon"), Value::F32(1e-5)),
    ];
    let mut metadata = metadata;
    if chat {
        metadata.extend(chat_metadata());
    }
    let metadata: Vec<(&str, Value)> = metadata
        .iter()
        .map(|(k, v)| (k.as_str(), v.clone()))
        .collect();
    gguf::write(&metadata, &refs)
}

/// [`tiny_file`]'s model, without a tokenizer.
pub fn tiny_model(arch: &str, kind: TensorKind, seed: u64) -> Arc<Model> {
    let file = tiny_file(arch, kind, seed, false);
    Arc::new(Model::load(Gguf::parse(file).unwrap(), CONTEXT).unwrap())
}

/// A tokenizer and chat template for the tiny models, so the whole worker path loads
/// them: the 256 bytes (byte-level spelled), ChatML's two control tokens, one merge
/// (`a b`) and unused tokens up to [`VOCAB`]; the end of turn is the end of sequence.
fn chat_metadata() -> Vec<(String, Value)> {
    let mut tokens: Vec<String> = (0..=255u8).map(|b| char_of(b).to_string()).collect();
    let mut types = vec![1i32; 256];
    for special in ["<|im_start|>", "<|im_end|>"] {
        tokens.push(special.into());
        types.push(3);
    }
    tokens.push("ab".into());
    types.push(1);
    while tokens.len() < VOCAB {
        tokens.push(format!("unused{}", tokens.len()));
        types.push(1);
    }
    let strings = |v: Vec<String>| Value::Array(v.into_iter().map(Value::String).collect());
    let template = "{% for message in messages %}<|im_start|>{{ message['role'] }}\n\
                    {{ message['content'] }}<|im_end|>\n{% endfor %}\
                    {% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}";
    vec![
        ("tokenizer.ggml.model".into(), Value::String("gpt2".into())),
        ("tokenizer.ggml.tokens".into(), strings(tokens)),
        (
            "tokenizer.ggml.token_type".into(),
            Value::Array(types.into_iter().map(Value::I32).collect()),
        ),
        ("tokenizer.ggml.merges".into(), strings(vec!["a b".into()])),
        ("tokenizer.ggml.eos_token_id".into(), Value::U32(257)),
        (
            "tokenizer.chat_template".into(),
            Value::String(template.into()),
        ),
    ]
}
