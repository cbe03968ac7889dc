//! Hostile model headers: a well-formed GGUF file whose llama metadata claims block
//! counts in the billions, widths of zero, windows whose KV cache no memory holds.
//! Loading refuses each with a [`ModelError::BadConfig`] naming it (or shrinks the
//! window to the cache's budget) before anything is allocated from the claim.

use super::*;
use crate::gguf::{self, Value};
use std::sync::Arc;

/// The shape a test file's tensors are written in.
#[derive(Clone, Copy)]
struct Shape {
    dim: u64,
    kv: u64,
    ffn: u64,
    vocab: u64,
    layers: u64,
}

const TINY: Shape = Shape {
    dim: 64,
    kv: 32,
    ffn: 128,
    vocab: 300,
    layers: 2,
};

/// A llama file with zero weights in `shape`, its metadata saying what `shape` says
/// except where `over` says otherwise.
fn file(shape: Shape, over: &[(&'static str, Value)]) -> Gguf {
    let Shape {
        dim,
        kv,
        ffn,
        vocab,
        layers,
    } = shape;
    let mut tensors: Vec<(String, Vec<u64>)> = vec![("token_embd.weight".into(), vec![dim, vocab])];
    for i in 0..layers {
        for (part, dims) in [
            ("attn_norm", vec![dim]),
            ("attn_q", vec![dim, dim]),
            ("attn_k", vec![dim, kv]),
            ("attn_v", vec![dim, kv]),
            ("attn_output", vec![dim, dim]),
            ("ffn_norm", vec![dim]),
            ("ffn_gate", vec![dim, ffn]),
            ("ffn_up", vec![dim, ffn]),
            ("ffn_down", vec![ffn, dim]),
        ] {
            tensors.push((format!("blk.{i}.{part}.weight"), dims));
        }
    }
    tensors.push(("output_norm.weight".into(), vec![dim]));
    let data: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, dims)| vec![0u8; 4 * dims.iter().product::<u64>() as usize])
        .collect();
    let refs: Vec<(&str, &[u64], TensorKind, &[u8])> = tensors
        .iter()
        .zip(&data)
        .map(|((n, d), b)| (n.as_str(), d.as_slice(), TensorKind::F32, b.as_slice()))
        .collect();
    let mut meta = vec![
        ("general.architecture", Value::String("llama".into())),
        ("llama.context_length", Value::U32(2048)),
        ("llama.embedding_length", Value::U64(dim)),
        ("llama.block_count", Value::U64(layers)),
        ("llama.feed_forward_length", Value::U64(ffn)),
        ("llama.attention.head_count", Value::U32(4)),
        ("llama.attention.head_count_kv", Value::U32(2)),
    ];
    for (key, value) in over {
        meta.retain(|(k, _)| k != key);
        meta.push((key, value.clone()));
    }
    Gguf::parse(gguf::write(&meta, &refs)).unwrap()
}

fn bad_config(result: Result<Model, ModelError>) -> String {
    match result {
        Err(ModelError::BadConfig(why)) => why,
        Err(other) => panic!("expected BadConfig, got {other:?}"),
        Ok(model) => panic!("loaded {:?}", model.config()),
    }
}

#[test]
fn a_block_count_in_the_billions_is_refused_before_any_layer_is_allocated() {
    for blocks in [1u64 << 40, u64::MAX, 1000] {
        let g = file(TINY, &[("llama.block_count", Value::U64(blocks))]);
        let why = bad_config(Model::load(g, 2048));
        assert!(
            why.contains(&format!("{blocks} blocks")) && why.contains("20 tensors"),
            "{why}"
        );
    }
}

#[test]
fn a_model_of_zero_width_is_refused_rather_than_run() {
    // Every tensor is empty and every shape agrees: without the check the first
    // token's forward pass divides its rows into chunks of nothing.
    let zero_dim = Shape {
        dim: 0,
        kv: 0,
        ..TINY
    };
    let why = bad_config(Model::load(file(zero_dim, &[]), 2048));
    assert!(why.contains("0 wide"), "{why}");
    let zero_ffn = Shape { ffn: 0, ..TINY };
    let why = bad_config(Model::load(file(zero_ffn, &[]), 2048));
    assert!(why.contains("0 feed-forward"), "{why}");
    let zero_vocab = Shape { vocab: 0, ..TINY };
    let why = bad_config(Model::load(file(zero_vocab, &[]), 2048));
    assert!(why.contains("0 tokens"), "{why}");
}

#[test]
fn the_window_shrinks_to_what_the_kv_cache_budget_holds() {
    // 2 layers × 32 keys and 32 values × 4 bytes: 512 bytes a token.
    let per_token = 2 * 32 * 2 * 4;
    let g = file(TINY, &[("llama.context_length", Value::U64(u64::MAX))]);
    let model = Model::load(g, usize::MAX).unwrap();
    assert_eq!(model.config().context, KV_CACHE_BUDGET / per_token);
    // What a model was trained for and what was asked still bound it below that.
    let model = Model::load(file(TINY, &[]), usize::MAX).unwrap();
    assert_eq!(model.config().context, 2048);
    let model = Model::load(file(TINY, &[]), 100).unwrap();
    assert_eq!(model.config().context, 100);
}

#[test]
fn a_window_whose_cache_no_budget_holds_is_refused_by_size() {
    let per_token = Some(KV_CACHE_BUDGET / 10);
    let why = match window(4096, 8192, per_token) {
        Err(ModelError::BadConfig(why)) => why,
        other => panic!("{other:?}"),
    };
    assert!(why.contains("1024 MiB"), "{why}");
    assert!(matches!(
        window(4096, 8192, None),
        Err(ModelError::BadConfig(_))
    ));
    assert_eq!(window(4096, 8192, Some(1 << 20)).ok(), Some(1024));
    assert_eq!(window(5, 8192, Some(1 << 20)).ok(), Some(5));
    assert_eq!(window(0, 8192, Some(1 << 20)).ok(), Some(1));
}

#[test]
fn the_kv_cache_never_grows_past_its_window() {
    let model = Arc::new(Model::load(file(TINY, &[]), 40).unwrap());
    let mut session = Session::new(Arc::clone(&model));
    let prompt: Vec<u32> = (0..40).collect();
    while session.prefill(&prompt, 7).unwrap().is_none() {}
    let full = 40 * 32;
    let sizes = session.cache_sizes();
    assert_eq!(sizes, vec![(full, full); 4]);
}

#[test]
fn sizes_past_the_address_space_are_named_not_truncated() {
    let huge = Value::U64(u64::MAX);
    let g = file(TINY, &[("llama.embedding_length", huge)]);
    assert!(Model::load(g, 2048).is_err());
    let g = file(TINY, &[("llama.attention.head_count", Value::U64(1 << 40))]);
    assert!(Model::load(g, 2048).is_err());
    let g = file(
        TINY,
        &[("llama.rope.dimension_count", Value::U64(u64::MAX))],
    );
    assert!(bad_config(Model::load(g, 2048)).contains("rope"));
}
