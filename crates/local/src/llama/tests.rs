use super::*;
use crate::gguf::{self, Value};
use crate::quant::{dequantize_row, quantize};
use crate::testing::Rng;
use std::sync::Arc;

const VOCAB: usize = 300;
const DIM: usize = 64;
pub(super) const LAYERS: usize = 2;
const HEADS: usize = 4;
const KV_HEADS: usize = 2;
const FFN: usize = 128;
const CONTEXT: usize = 160;
const KV: usize = DIM / HEADS * KV_HEADS;

/// (name, dims in ggml order, values).
pub(super) fn tiny_tensors(seed: u64) -> Vec<(String, Vec<u64>, Vec<f32>)> {
    let mut rng = Rng(seed);
    let mut t = Vec::new();
    let mut add = |name: String, dims: Vec<u64>, scale: f32, base: f32| {
        let n = dims.iter().product::<u64>() as usize;
        let values = (0..n).map(|_| base + scale * rng.float()).collect();
        t.push((name, dims, values));
    };
    add(
        "token_embd.weight".into(),
        vec![DIM as u64, VOCAB as u64],
        1.0,
        0.0,
    );
    for i in 0..LAYERS {
        let d = DIM as u64;
        add(format!("blk.{i}.attn_norm.weight"), vec![d], 0.2, 1.0);
        add(format!("blk.{i}.attn_q.weight"), vec![d, d], 0.25, 0.0);
        add(
            format!("blk.{i}.attn_k.weight"),
            vec![d, KV as u64],
            0.25,
            0.0,
        );
        add(
            format!("blk.{i}.attn_v.weight"),
            vec![d, KV as u64],
            0.25,
            0.0,
        );
        add(format!("blk.{i}.attn_output.weight"), vec![d, d], 0.2, 0.0);
        add(format!("blk.{i}.ffn_norm.weight"), vec![d], 0.2, 1.0);
        add(
            format!("blk.{i}.ffn_gate.weight"),
            vec![d, FFN as u64],
            0.25,
            0.0,
        );
        add(
            format!("blk.{i}.ffn_up.weight"),
            vec![d, FFN as u64],
            0.25,
            0.0,
        );
        add(
            format!("blk.{i}.ffn_down.weight"),
            vec![FFN as u64, d],
            0.2,
            0.0,
        );
    }
    add("output_norm.weight".into(), vec![DIM as u64], 0.2, 1.0);
    t
}

fn tiny_metadata(arch: &str) -> Vec<(&'static str, Value)> {
    vec![
        ("general.architecture", Value::String(arch.into())),
        ("llama.context_length", Value::U32(CONTEXT as u32)),
        ("llama.embedding_length", Value::U32(DIM as u32)),
        ("llama.block_count", Value::U32(LAYERS as u32)),
        ("llama.feed_forward_length", Value::U32(FFN as u32)),
        ("llama.attention.head_count", Value::U32(HEADS as u32)),
        ("llama.attention.head_count_kv", Value::U32(KV_HEADS as u32)),
        ("llama.rope.freq_base", Value::F32(10_000.0)),
        ("llama.attention.layer_norm_rms_epsilon", Value::F32(1e-5)),
    ]
}

/// A tiny random model's file: matrices in `kind`, norms in F32, the head tied.
pub(super) fn tiny_file(kind: TensorKind) -> Vec<u8> {
    let tensors = tiny_tensors(42);
    let encoded: Vec<(String, Vec<u64>, TensorKind, Vec<u8>)> = tensors
        .into_iter()
        .map(|(name, dims, values)| {
            let k = if dims.len() == 1 {
                TensorKind::F32
            } else {
                kind
            };
            let bytes = quantize(k, &values).unwrap();
            (name, dims, k, bytes)
        })
        .collect();
    let refs: Vec<(&str, &[u64], TensorKind, &[u8])> = encoded
        .iter()
        .map(|(n, d, k, b)| (n.as_str(), d.as_slice(), *k, b.as_slice()))
        .collect();
    gguf::write(&tiny_metadata("llama"), &refs)
}

fn tiny_model(kind: TensorKind) -> Arc<Model> {
    let g = Gguf::parse(tiny_file(kind)).unwrap();
    Arc::new(Model::load(g, 1 << 20).unwrap())
}

/// The forward pass written plainly, in f32 over dequantized weights, with no cache:
/// the last token's logits.
fn reference_logits(model: &Model, tokens: &[u32]) -> Vec<f32> {
    let g = model.gguf();
    let w = |name: &str| {
        let t = g.tensor(name).unwrap();
        let cols = t.dims[0] as usize;
        let rows = t.data.len() / quant::row_bytes(t.kind, cols).unwrap();
        let mut out = vec![0f32; rows * cols];
        let rb = t.data.len() / rows;
        for r in 0..rows {
            dequantize_row(
                &t.data[r * rb..(r + 1) * rb],
                t.kind,
                &mut out[r * cols..(r + 1) * cols],
            )
            .unwrap();
        }
        (out, cols)
    };
    let mul = |(m, cols): &(Vec<f32>, usize), x: &[f32]| -> Vec<f32> {
        m.chunks(*cols)
            .map(|row| row.iter().zip(x).map(|(a, b)| a * b).sum())
            .collect()
    };
    let norm = |x: &[f32], (wt, _): &(Vec<f32>, usize)| -> Vec<f32> {
        let ms = x.iter().map(|v| v * v).sum::<f32>() / x.len() as f32;
        x.iter()
            .zip(wt)
            .map(|(v, w)| v / (ms + 1e-5).sqrt() * w)
            .collect()
    };
    let hd = DIM / HEADS;
    let rope = |v: &mut [f32], pos: usize| {
        for head in v.chunks_mut(hd) {
            for i in 0..hd / 2 {
                let theta = pos as f64 * 10_000f64.powf(-2.0 * i as f64 / hd as f64);
                let (c, s) = (theta.cos() as f32, theta.sin() as f32);
                let (a, b) = (head[2 * i], head[2 * i + 1]);
                head[2 * i] = a * c - b * s;
                head[2 * i + 1] = a * s + b * c;
            }
        }
    };
    let (embd, _) = w("token_embd.weight");
    let mut xs: Vec<Vec<f32>> = tokens
        .iter()
        .map(|&t| embd[t as usize * DIM..(t as usize + 1) * DIM].to_vec())
        .collect();
    for l in 0..LAYERS {
        let p = |s: &str| w(&format!("blk.{l}.{s}.weight"));
        let (an, q, k, v, o) = (
            p("attn_norm"),
            p("attn_q"),
            p("attn_k"),
            p("attn_v"),
            p("attn_output"),
        );
        let (fnm, gate, up, down) = (p("ffn_norm"), p("ffn_gate"), p("ffn_up"), p("ffn_down"));
        let mut ks = Vec::new();
        let mut vs = Vec::new();
        let mut qs = Vec::new();
        for (pos, x) in xs.iter().enumerate() {
            let h = norm(x, &an);
            let (mut qv, mut kv) = (mul(&q, &h), mul(&k, &h));
            rope(&mut qv, pos);
            rope(&mut kv, pos);
            qs.push(qv);
            ks.push(kv);
            vs.push(mul(&v, &h));
        }
        for (pos, x) in xs.iter_mut().enumerate() {
            let mut att = vec![0f32; DIM];
            for h in 0..HEADS {
                let kh = h / (HEADS / KV_HEADS);
                let qh = &qs[pos][h * hd..(h + 1) * hd];
                let scores: Vec<f32> = (0..=pos)
                    .map(|p| {
                        let kk = &ks[p][kh * hd..(kh + 1) * hd];
                        qh.iter().zip(kk).map(|(a, b)| a * b).sum::<f32>() / (hd as f32).sqrt()
                    })
                    .collect();
                let max = scores.iter().cloned().fold(f32::MIN, f32::max);
                let e: Vec<f32> = scores.iter().map(|s| (s - max).exp()).collect();
                let sum: f32 = e.iter().sum();
                for (p, e) in e.iter().enumerate() {
                    for i in 0..hd {
                        att[h * hd + i] += e / sum * vs[p][kh * hd + i];
                    }
                }
            }
            for (x, o) in x.iter_mut().zip(mul(&o, &att)) {
                *x += o;
            }
            let h = norm(x, &fnm);
            let act: Vec<f32> = mul(&gate, &h)
                .iter()
                .zip(mul(&up, &h))
                .map(|(g, u)| g / (1.0 + (-g).exp()) * u)
                .collect();
            for (x, d) in x.iter_mut().zip(mul(&down, &act)) {
                *x += d;
            }
        }
    }
    let last = norm(xs.last().unwrap(), &w("output_norm.weight"));
    mul(&w("token_embd.weight"), &last)
}

pub(super) fn argmax(x: &[f32]) -> u32 {
    let mut best = 0;
    for (i, v) in x.iter().enumerate() {
        if *v > x[best] {
            best = i;
        }
    }
    best as u32
}

pub(super) fn prompt(seed: u64, len: usize) -> Vec<u32> {
    let mut rng = Rng(seed);
    (0..len)
        .map(|_| (rng.next_u64() % VOCAB as u64) as u32)
        .collect()
}

/// Largest |a - b| over the largest |b|.
fn relative_error(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    let scale = b.iter().fold(0f32, |m, v| m.max(v.abs()));
    a.iter().zip(b).fold(0f32, |m, (x, y)| m.max((x - y).abs())) / scale
}

#[test]
fn the_config_comes_from_the_metadata_with_the_context_capped_at_the_trained() {
    let m = tiny_model(TensorKind::F32);
    let c = m.config();
    assert_eq!(
        (
            c.vocab, c.dim, c.layers, c.heads, c.kv_heads, c.ffn, c.context
        ),
        (VOCAB, DIM, LAYERS, HEADS, KV_HEADS, FFN, CONTEXT)
    );
    assert_eq!((c.rope_base, c.rms_eps), (10_000.0, 1e-5));
    let small = Model::load(Gguf::parse(tiny_file(TensorKind::F32)).unwrap(), 50).unwrap();
    assert_eq!(small.config().context, 50);
}

#[test]
fn the_forward_pass_equals_a_naive_reference_for_f32_q8_0_and_q4_1_weights() {
    // Quantized weights meet 8-bit activations (as in ggml): a looser tolerance.
    for (kind, tol) in [
        (TensorKind::F32, 1e-5),
        (TensorKind::Q8_0, 0.03),
        (TensorKind::Q4_1, 0.03),
    ] {
        let model = tiny_model(kind);
        let tokens = prompt(3, 12);
        let mut s = Session::new(model.clone());
        let got = s.prefill(&tokens, 64).unwrap().unwrap();
        let want = reference_logits(&model, &tokens);
        let err = relative_error(&got, &want);
        assert!(err < tol, "{kind:?}: relative error {err}");
        // And one step on, through the cache.
        let mut longer = tokens.clone();
        longer.push(7);
        let got = s.step(7).unwrap();
        let err = relative_error(&got, &reference_logits(&model, &longer));
        assert!(err < tol, "{kind:?} after a step: relative error {err}");
    }
}

fn greedy(s: &mut Session, prompt: &[u32], steps: usize) -> (Vec<u32>, Vec<f32>) {
    let mut logits = s.prefill(prompt, 64).unwrap().unwrap();
    let mut out = Vec::new();
    for _ in 0..steps {
        let t = argmax(&logits);
        out.push(t);
        logits = s.step(t).unwrap();
    }
    (out, logits)
}

#[test]
fn a_kept_prefix_gives_the_same_logits_and_tokens_as_a_fresh_run() {
    let model = tiny_model(TensorKind::Q4_1);
    let a = prompt(5, 30);
    let mut warm = Session::new(model.clone());
    let (generated, _) = greedy(&mut warm, &a, 20);
    assert_eq!(warm.tokens().len(), 50);
    // The next turn: A, what was generated, and B; the cache keeps all but B.
    let mut ab = a.clone();
    ab.extend(&generated);
    ab.extend(prompt(6, 9));
    let (warm_tokens, warm_logits) = greedy(&mut warm, &ab, 10);
    let mut fresh = Session::new(model.clone());
    let (fresh_tokens, fresh_logits) = greedy(&mut fresh, &ab, 10);
    assert_eq!(warm_tokens, fresh_tokens);
    assert_eq!(warm_logits, fresh_logits);
    assert_eq!(warm.tokens(), fresh.tokens());
    // A prompt that diverges inside the cache drops what follows the shared prefix.
    let mut other = a[..10].to_vec();
    other.extend(prompt(8, 5));
    let warm_other = warm.prefill(&other, 64).unwrap().unwrap();
    assert_eq!(warm.tokens(), &other[..]);
    let fresh_other = Session::new(model).prefill(&other, 64).unwrap().unwrap();
    assert_eq!(warm_other, fresh_other);
}

#[test]
fn truncating_then_reading_again_equals_a_fresh_run() {
    let model = tiny_model(TensorKind::Q8_0);
    let tokens = prompt(9, 40);
    let mut s = Session::new(model.clone());
    s.prefill(&tokens, 64).unwrap();
    s.truncate(17);
    assert_eq!(s.tokens(), &tokens[..17]);
    let mut again = Vec::new();
    for &t in &tokens[17..] {
        again = s.step(t).unwrap();
    }
    let fresh = Session::new(model).prefill(&tokens, 64).unwrap().unwrap();
    assert_eq!(again, fresh);
}

#[test]
fn prefill_in_chunks_of_1_3_and_64_equals_one_chunk() {
    let model = tiny_model(TensorKind::Q4_1);
    let tokens = prompt(10, 70);
    let whole = Session::new(model.clone())
        .prefill(&tokens, 1000)
        .unwrap()
        .unwrap();
    for chunk in [1, 3, 64] {
        let mut s = Session::new(model.clone());
        let mut calls = 1;
        let logits = loop {
            match s.prefill(&tokens, chunk).unwrap() {
                Some(l) => break l,
                None => calls += 1,
            }
        };
        assert_eq!(calls, tokens.len().div_ceil(chunk), "chunk {chunk}");
        assert_eq!(logits, whole, "chunk {chunk}");
    }
}

#[test]
fn a_full_context_and_bad_tokens_are_clear_errors_that_keep_the_cache() {
    let model = tiny_model(TensorKind::F32);
    let mut s = Session::new(model);
    let too_long = prompt(11, CONTEXT + 1);
    assert_eq!(
        s.prefill(&too_long, 64),
        Err(ModelError::ContextFull { limit: CONTEXT })
    );
    s.prefill(&too_long[..CONTEXT], 200).unwrap().unwrap();
    assert_eq!(s.step(1), Err(ModelError::ContextFull { limit: CONTEXT }));
    assert_eq!(s.tokens().len(), CONTEXT);
    s.truncate(5);
    let bad = VOCAB as u32;
    assert_eq!(
        s.step(bad),
        Err(ModelError::TokenOutOfRange {
            token: bad,
            vocab: VOCAB
        })
    );
    assert_eq!(s.tokens(), &too_long[..5]);
    assert_eq!(s.prefill(&[], 8), Err(ModelError::EmptyPrompt));
    assert!(
        ModelError::ContextFull { limit: 9 }
            .to_string()
            .contains("9 tokens")
    );
}

#[test]
fn unknown_architectures_missing_tensors_and_wrong_shapes_do_not_load() {
    let file = gguf::write(&tiny_metadata("mamba"), &[]);
    let err = Model::load(Gguf::parse(file).unwrap(), 64).unwrap_err();
    assert_eq!(err, ModelError::UnknownArchitecture("mamba".into()));
    // Refused with what the file has and what is supported.
    assert_eq!(
        err.to_string(),
        "model architecture \"mamba\" is not supported (llama, qwen2, qwen3, gemma2, gemma3, phi3 are)"
    );

    let tensors = tiny_tensors(1);
    let build = |skip: &str, reshape: &str| {
        let kept: Vec<(String, Vec<u64>, Vec<u8>)> = tensors
            .iter()
            .filter(|(n, _, _)| n != skip)
            .map(|(n, d, v)| {
                let mut d = d.clone();
                if n == reshape {
                    d.reverse();
                }
                (n.clone(), d, quantize(TensorKind::F32, v).unwrap())
            })
            .collect();
        let refs: Vec<(&str, &[u64], TensorKind, &[u8])> = kept
            .iter()
            .map(|(n, d, b)| (n.as_str(), d.as_slice(), TensorKind::F32, b.as_slice()))
            .collect();
        Model::load(
            Gguf::parse(gguf::write(&tiny_metadata("llama"), &refs)).unwrap(),
            64,
        )
    };
    let missing = build("blk.1.ffn_up.weight", "").unwrap_err();
    assert_eq!(
        missing,
        ModelError::MissingTensor("blk.1.ffn_up.weight".into())
    );
    let shaped = build("", "blk.0.attn_k.weight").unwrap_err();
    assert!(
        matches!(&shaped, ModelError::BadShape { tensor, .. } if tensor == "blk.0.attn_k.weight"),
        "{shaped}"
    );
    assert!(build("", "").is_ok());
}

/// A file of `tensors` (F32) as `arch`: the tiny model's metadata under that prefix,
/// with `extra` keys.
pub(super) fn file_as(
    arch: &str,
    extra: &[(&str, Value)],
    tensors: &[(String, Vec<u64>, Vec<f32>)],
) -> Gguf {
    let mut meta: Vec<(String, Value)> = tiny_metadata(arch)
        .into_iter()
        .map(|(k, v)| (k.replacen("llama.", &format!("{arch}."), 1), v))
        .collect();
    meta.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
    let meta: Vec<(&str, Value)> = meta.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
    let bytes: Vec<Vec<u8>> = tensors
        .iter()
        .map(|(_, _, v)| quantize(TensorKind::F32, v).unwrap())
        .collect();
    let refs: Vec<(&str, &[u64], TensorKind, &[u8])> = tensors
        .iter()
        .zip(&bytes)
        .map(|((n, d, _), b)| (n.as_str(), d.as_slice(), TensorKind::F32, b.as_slice()))
        .collect();
    Gguf::parse(gguf::write(&meta, &refs)).unwrap()
}

/// The tiny tensors with each block's `parts` joined, in that order, into `into`
/// (their rows one after another, as Phi-3's converter writes them).
pub(super) fn fused(
    tensors: Vec<(String, Vec<u64>, Vec<f32>)>,
    parts: &[&str],
    into: &str,
) -> Vec<(String, Vec<u64>, Vec<f32>)> {
    let mut out = Vec::new();
    for i in 0..LAYERS {
        let (mut rows, mut values) = (0, Vec::new());
        for part in parts {
            let name = format!("blk.{i}.{part}.weight");
            let (_, d, v) = tensors.iter().find(|(n, _, _)| *n == name).unwrap();
            rows += d[1];
            values.extend_from_slice(v);
        }
        out.push((
            format!("blk.{i}.{into}.weight"),
            vec![DIM as u64, rows],
            values,
        ));
    }
    let gone = |n: &str| parts.iter().any(|p| n.ends_with(&format!(".{p}.weight")));
    out.extend(tensors.into_iter().filter(|(n, _, _)| !gone(n)));
    out
}

#[test]
fn the_gpu_path_refuses_gemma_phi3_and_scaled_rope_with_a_typed_error() {
    assert_eq!(tiny_model(TensorKind::F32).check_gpu(), Ok(()));
    let scale = [("llama.rope.scaling.factor", Value::F32(4.0))];
    let scaled = Model::load(file_as("llama", &scale, &tiny_tensors(3)), 64).unwrap();
    assert!(matches!(scaled.check_gpu(), Err(ModelError::NotOnGpu(_))));
    let mut tensors = tiny_tensors(3);
    for i in 0..LAYERS {
        for part in ["post_attention_norm", "post_ffw_norm"] {
            let name = format!("blk.{i}.{part}.weight");
            tensors.push((name, vec![DIM as u64], vec![1.0; DIM]));
        }
    }
    let gemma = Model::load(file_as("gemma2", &[], &tensors), 64).unwrap();
    let err = gemma.check_gpu().unwrap_err();
    assert_eq!(
        err.to_string(),
        "the WebGPU path does not run gemma2 models"
    );
    // The CPU runs it, and Gemma 2's logits are soft-capped at 30.
    let mut session = Session::new(Arc::new(gemma));
    let logits = session.prefill(&[1, 2, 3], 64).unwrap().unwrap();
    assert!(logits.iter().all(|v| v.abs() < 30.0), "{logits:?}");
}

#[test]
fn phi3s_fused_q_k_v_give_the_logits_of_the_same_rows_apart() {
    let up = fused(tiny_tensors(3), &["ffn_gate", "ffn_up"], "ffn_up");
    let apart = Model::load(file_as("phi3", &[], &up), 64).unwrap();
    let qkv = fused(up, &["attn_q", "attn_k", "attn_v"], "attn_qkv");
    let together = Model::load(file_as("phi3", &[], &qkv), 64).unwrap();
    let tokens = prompt(5, 9);
    let mut a = Session::new(Arc::new(apart));
    let mut b = Session::new(Arc::new(together));
    assert_eq!(
        a.prefill(&tokens, 64).unwrap(),
        b.prefill(&tokens, 64).unwrap()
    );
    // Phi-3's feed-forward is one matrix of gate and up: a separate gate is no Phi-3.
    let err = Model::load(file_as("phi3", &[], &tiny_tensors(3)), 64).unwrap_err();
    assert!(
        matches!(&err, ModelError::BadShape { tensor, .. } if tensor == "blk.0.ffn_up.weight"),
        "{err}"
    );
}

#[test]
fn the_real_smollm2_picks_the_greedy_tokens_llama_cpp_picks() {
    let path = crate::testing::smollm2();
    let python = crate::testing::llama_cpp_python();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/reference.py");
    let json = std::env::temp_dir().join(format!("familiar-reference-{}.json", std::process::id()));
    let status = std::process::Command::new(python)
        .arg(script)
        .arg(&path)
        .arg(&json)
        .status();
    assert!(status.is_ok_and(|s| s.success()), "reference.py failed");
    let reference: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let _ = std::fs::remove_file(&json);
    let model =
        Arc::new(Model::load(Gguf::parse(std::fs::read(path).unwrap()).unwrap(), 512).unwrap());
    let mut session = Session::new(model);
    const NEAR_TIE: f64 = 0.5;
    let (mut steps, mut near_ties) = (0, 0);
    for case in reference["cases"].as_array().unwrap() {
        let prompt: Vec<u32> = case["prompt"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_u64().unwrap() as u32)
            .collect();
        let mut logits = session.prefill(&prompt, 64).unwrap().unwrap();
        // Teacher-forced: each step is fed llama.cpp's token, so one near-tie does not
        // send the rest down another path.
        for (i, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let field = |key: &str| step[key].as_f64().unwrap();
            let want = field("token") as u32;
            let got = argmax(&logits);
            steps += 1;
            if got != want {
                // Both sides quantize activations to 8 bits, and a last-bit difference
                // (f16 KV in llama.cpp, the order of sums) flips some roundings: the
                // logits drift 0.2 on average, 0.8 at most (measured), so a near-tie
                // may go the other way: to a token llama.cpp scores within NEAR_TIE.
                near_ties += 1;
                let theirs = step["top"].as_array().unwrap().iter().find_map(|pair| {
                    (pair[0].as_u64() == Some(u64::from(got))).then(|| pair[1].as_f64().unwrap())
                });
                assert!(
                    theirs.is_some_and(|l| field("logit") - l < NEAR_TIE),
                    "step {i} of {:?}: ours {got}, llama.cpp {want}: {}",
                    case["text"],
                    step["top"]
                );
            }
            let drift = (f64::from(logits[want as usize]) - field("logit")).abs();
            assert!(
                drift < 1.5,
                "step {i} of {:?}: logit off by {drift}",
                case["text"]
            );
            logits = session.step(want).unwrap();
        }
    }
    println!(
        "{} of {steps} greedy tokens as llama.cpp's; the rest near-ties",
        steps - near_ties
    );
    // 43 to 46 of 48 match as the order of sums changes: no more than 6 near-ties.
    assert!(
        steps >= 48 && near_ties <= steps / 8,
        "{near_ties} near-ties of {steps}"
    );
}
