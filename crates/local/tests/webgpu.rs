//! The WebGPU kernels (`src/gpu/`) against the CPU code they stand in for, on random
//! inputs and random weights of every format, in a dedicated worker (where the model
//! runs) of headless Chromium, whose WebGPU is SwiftShader's (`--enable-unsafe-webgpu`,
//! `webdriver.json` beside this crate's `Cargo.toml`). `scripts/test.sh` runs them.
//!
//! The bounds, each relative to the magnitude a result is made of:
//! - weight products against the f64 sum of the CPU's decoded weights
//!   (`quant::dequantize_row`) times the f32 activations: `EXACT` of `Σ|w·x|`, f32
//!   summation's rounding (the kernel decodes the same bits to the same f32 values);
//! - weight products against the CPU's own product (`quant::matmul`), which quantizes
//!   activations to 8 bits per block (Q8_0/Q8_1/Q8_K, as ggml): `1/254` of
//!   `Σ|w|·max|x|` for the quantized formats (half a step of a block's 127 steps of
//!   its largest value), `EXACT` for F32 and F16 (no activation rounding on the CPU);
//! - norms, RoPE, attention and the elementwise steps against `llama::ops`: `1e-6` of
//!   `1 + |value|`, f32 rounding in a different order (the worst seen is 1.7e-7).
//!
//! Each test logs its worst error found (`--nocapture` shows them).
#![cfg(all(target_arch = "wasm32", feature = "gpu"))]
#![allow(clippy::unwrap_used, clippy::panic)]

use familiar_local::gguf::TensorKind;
use familiar_local::gpu::{Gpu, GpuError};
use familiar_local::llama::ops::{self, Attention};
use familiar_local::quant;
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_dedicated_worker);

/// f32 summation's bound, relative to `Σ|w·x|` (the worst seen on SwiftShader is
/// 5e-8).
const EXACT: f64 = 1e-6;
/// 8-bit activations' bound, relative to `Σ|w|·max|x|`.
const ACTIVATIONS: f64 = 1.0 / 254.0;

/// xorshift64*, as the crate's unit tests have it.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in [-1, 1).
    fn float(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0
    }

    fn floats(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.float()).collect()
    }
}

async fn gpu() -> Gpu {
    match Gpu::open().await {
        Ok(gpu) => gpu,
        Err(e) => {
            panic!("{e} (Chromium needs --enable-unsafe-webgpu: crates/local/webdriver.json)")
        }
    }
}

/// Random weights of `kind`: the crate's quantizer for the formats it writes; for the
/// K-quants (read here, written by llama.cpp) every byte random but the f16 scales,
/// set to modest values so sums stay finite.
fn weights(kind: TensorKind, rng: &mut Rng, rows: usize, cols: usize) -> Vec<u8> {
    let half = |v: f32| quant::f32_to_f16(v).to_le_bytes();
    let (d, dmin) = match kind {
        TensorKind::Q4_K | TensorKind::Q5_K => (0..2, Some(2..4)),
        TensorKind::Q6_K => (208..210, None),
        _ => {
            let values = rng.floats(rows * cols);
            return quant::quantize(kind, &values).unwrap();
        }
    };
    let blocks = rows * cols / kind.block_elements();
    let mut out = Vec::new();
    for _ in 0..blocks {
        let mut b: Vec<u8> = (0..kind.block_bytes())
            .map(|_| rng.next_u64() as u8)
            .collect();
        b[d.clone()].copy_from_slice(&half(0.003 + 0.01 * rng.float().abs()));
        if let Some(m) = dmin.clone() {
            b[m].copy_from_slice(&half(0.02 * rng.float().abs()));
        }
        out.extend(b);
    }
    out
}

/// The weight product on the GPU against the decoded weights' exact product and the
/// CPU's, for one token and for more than a tile of them.
async fn products_match(kind: TensorKind, seed: u64) {
    let gpu = gpu().await;
    let mut rng = Rng(seed);
    let (rows, cols) = (37, 512);
    let w = weights(kind, &mut rng, rows, cols);
    let matrix = gpu.matrix(&w, kind, rows, cols).unwrap();
    let mut decoded = vec![0f32; rows * cols];
    for (row, out) in w
        .chunks_exact(w.len() / rows)
        .zip(decoded.chunks_exact_mut(cols))
    {
        quant::dequantize_row(row, kind, out).unwrap();
    }
    let (mut worst_exact, mut worst_cpu) = (0f64, 0f64);
    for n in [1, 11] {
        let x = rng.floats(n * cols);
        let (input, out) = (gpu.tensor(&x), gpu.zeros(n * rows));
        let (input, out) = (input.unwrap(), out.unwrap());
        gpu.matmul(&matrix, &input, &out).unwrap();
        let got = gpu.read(&out).await.unwrap();
        let mut cpu = vec![0f32; n * rows];
        quant::matmul(&w, kind, rows, cols, &x, &mut cpu).unwrap();
        for t in 0..n {
            let xt = &x[t * cols..(t + 1) * cols];
            let xmax = xt.iter().fold(0f64, |m, v| m.max(f64::from(v.abs())));
            for r in 0..rows {
                let wr = &decoded[r * cols..(r + 1) * cols];
                let exact: f64 = wr
                    .iter()
                    .zip(xt)
                    .map(|(&w, &x)| f64::from(w) * f64::from(x))
                    .sum();
                let magnitude: f64 = wr
                    .iter()
                    .zip(xt)
                    .map(|(&w, &x)| f64::from((w * x).abs()))
                    .sum();
                let weight: f64 = wr.iter().map(|w| f64::from(w.abs())).sum();
                let g = f64::from(got[t * rows + r]);
                let e = (g - exact).abs() / magnitude;
                let c = (g - f64::from(cpu[t * rows + r])).abs() / (weight * xmax);
                assert!(
                    e <= EXACT,
                    "{kind:?} token {t} row {r}: {g} vs exact {exact} ({e:e})"
                );
                let bound = match kind {
                    TensorKind::F32 | TensorKind::F16 => EXACT,
                    _ => ACTIVATIONS,
                };
                assert!(
                    c <= bound,
                    "{kind:?} token {t} row {r}: {g} vs the CPU's {} ({c:e})",
                    cpu[t * rows + r]
                );
                worst_exact = worst_exact.max(e);
                worst_cpu = worst_cpu.max(c);
            }
        }
    }
    console_log!(
        "{kind:?}: worst error against exact {worst_exact:.2e} of Σ|w·x|, against the CPU {worst_cpu:.2e} of Σ|w|·max|x|"
    );
}

#[wasm_bindgen_test]
async fn f32_products_match_the_cpu() {
    products_match(TensorKind::F32, 1).await;
}

#[wasm_bindgen_test]
async fn f16_products_match_the_cpu() {
    products_match(TensorKind::F16, 2).await;
}

#[wasm_bindgen_test]
async fn q4_0_products_match_the_cpu() {
    products_match(TensorKind::Q4_0, 3).await;
}

#[wasm_bindgen_test]
async fn q4_1_products_match_the_cpu() {
    products_match(TensorKind::Q4_1, 4).await;
}

#[wasm_bindgen_test]
async fn q5_0_products_match_the_cpu() {
    products_match(TensorKind::Q5_0, 5).await;
}

#[wasm_bindgen_test]
async fn q5_1_products_match_the_cpu() {
    products_match(TensorKind::Q5_1, 6).await;
}

#[wasm_bindgen_test]
async fn q8_0_products_match_the_cpu() {
    products_match(TensorKind::Q8_0, 7).await;
}

#[wasm_bindgen_test]
async fn q4_k_products_match_the_cpu() {
    products_match(TensorKind::Q4_K, 8).await;
}

#[wasm_bindgen_test]
async fn q5_k_products_match_the_cpu() {
    products_match(TensorKind::Q5_K, 9).await;
}

#[wasm_bindgen_test]
async fn q6_k_products_match_the_cpu() {
    products_match(TensorKind::Q6_K, 10).await;
}

/// The worst `|got − want| / (1 + |want|)`, failing past `bound`.
fn compare(what: &str, got: &[f32], want: &[f32], bound: f64) -> f64 {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    let mut worst = 0f64;
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let e = f64::from((g - w).abs()) / (1.0 + f64::from(w.abs()));
        assert!(e <= bound, "{what} at {i}: {g} vs the CPU's {w} ({e:e})");
        worst = worst.max(e);
    }
    console_log!("{what}: worst error {worst:.2e} of 1 + |value|");
    worst
}

async fn read(gpu: &Gpu, t: &familiar_local::gpu::Tensor) -> Vec<f32> {
    gpu.read(t).await.unwrap()
}

fn up(gpu: &Gpu, values: &[f32]) -> familiar_local::gpu::Tensor {
    gpu.tensor(values).unwrap()
}

#[wasm_bindgen_test]
async fn rms_norm_matches_the_cpu_over_rows_and_over_heads() {
    let gpu = gpu().await;
    let mut rng = Rng(11);
    // The model's rows (wider than a workgroup, not a multiple of it), then QK-norm's
    // rows of one head.
    for (rows, width) in [(5, 96), (20, 16)] {
        let x: Vec<f32> = rng.floats(rows * width).iter().map(|v| 3.0 * v).collect();
        let w = rng.floats(width);
        let out = gpu.zeros(rows * width).unwrap();
        gpu.rms_norm(&up(&gpu, &x), &up(&gpu, &w), 1e-5, &out)
            .unwrap();
        let mut want = Vec::new();
        ops::rms_norm(&x, &w, 1e-5, &mut want);
        compare(
            &format!("rms_norm {rows}×{width}"),
            &read(&gpu, &out).await,
            &want,
            1e-6,
        );
    }
}

async fn rope_matches(neox: bool, factors: Option<&[f32]>) {
    let gpu = gpu().await;
    let mut rng = Rng(12);
    // Two heads of 16, 12 of each rotated, three positions from 7.
    let (rows, width, head_dim, dims) = (3, 32, 16, 12);
    let mut x = rng.floats(rows * width);
    let mut table = Vec::new();
    ops::rope_table(10_000.0, dims, factors, 7, rows, &mut table);
    let flat: Vec<f32> = table.iter().flat_map(|&(c, s)| [c, s]).collect();
    let on_gpu = up(&gpu, &x);
    gpu.rope(&on_gpu, width, head_dim, dims / 2, neox, &up(&gpu, &flat))
        .unwrap();
    ops::rope(&mut x, width, head_dim, dims / 2, neox, &table);
    let name = format!("rope (neox {neox}, factors {})", factors.is_some());
    compare(&name, &read(&gpu, &on_gpu).await, &x, 1e-6);
}

#[wasm_bindgen_test]
async fn rope_on_adjacent_pairs_matches_the_cpu_with_and_without_frequency_factors() {
    rope_matches(false, None).await;
    rope_matches(false, Some(&[1.0, 1.5, 2.0, 4.0, 8.0, 8.0])).await;
}

#[wasm_bindgen_test]
async fn neox_rope_matches_the_cpu() {
    rope_matches(true, None).await;
}

#[wasm_bindgen_test]
async fn attention_of_several_queries_against_a_cache_matches_the_cpu() {
    let gpu = gpu().await;
    let mut rng = Rng(13);
    // More cached positions than a workgroup has threads; two query heads a KV head.
    let shape = Attention {
        n: 3,
        start: 70,
        heads: 4,
        kv_heads: 2,
        head_dim: 16,
    };
    let positions = shape.start + shape.n;
    let scaled = |v: Vec<f32>| v.iter().map(|v| 2.0 * v).collect::<Vec<f32>>();
    let q = scaled(rng.floats(shape.n * shape.q_dim()));
    let keys = scaled(rng.floats(positions * shape.kv_dim()));
    let values = rng.floats(positions * shape.kv_dim());
    let scores = gpu.zeros(shape.n * shape.heads * positions).unwrap();
    let out = gpu.zeros(shape.n * shape.q_dim()).unwrap();
    gpu.attention(
        shape,
        &up(&gpu, &q),
        &up(&gpu, &keys),
        &up(&gpu, &values),
        &scores,
        &out,
    )
    .unwrap();
    let (mut s, mut want) = (Vec::new(), Vec::new());
    ops::attend(shape, &q, &keys, &values, &mut s, &mut want);
    compare("attention", &read(&gpu, &out).await, &want, 1e-6);
}

#[wasm_bindgen_test]
async fn the_gate_the_bias_and_the_residual_add_match_the_cpu() {
    let gpu = gpu().await;
    let mut rng = Rng(14);
    let len = 1000;
    let (x, y) = (
        rng.floats(len).iter().map(|v| 6.0 * v).collect::<Vec<_>>(),
        rng.floats(len),
    );
    let bias = rng.floats(40);
    let (gx, gy) = (up(&gpu, &x), up(&gpu, &y));
    gpu.silu_gate(&gx, &gy).unwrap();
    let mut want = x.clone();
    ops::silu_gate(&mut want, &y);
    compare("silu_gate", &read(&gpu, &gx).await, &want, 1e-6);
    gpu.add(&gx, &gy).unwrap();
    ops::add(&mut want, &y);
    compare("add", &read(&gpu, &gx).await, &want, 1e-6);
    gpu.add_bias(&gx, &up(&gpu, &bias)).unwrap();
    ops::add_bias(&mut want, Some(&bias));
    compare("add_bias", &read(&gpu, &gx).await, &want, 1e-6);
}

#[wasm_bindgen_test]
async fn a_vocabulary_of_rows_and_long_vectors_spread_over_two_dispatch_dimensions() {
    // WebGPU caps a dispatch dimension at 65,535 workgroups: a head of more than 32,768
    // rows (SmolLM2's 49,152) takes a second row of them, as does an elementwise step
    // of more than 65,535 × 64 values.
    let gpu = gpu().await;
    let mut rng = Rng(15);
    let (rows, cols, n) = (40_000, 32, 2);
    let w = quant::quantize(TensorKind::Q8_0, &rng.floats(rows * cols)).unwrap();
    let x = rng.floats(n * cols);
    let out = gpu.zeros(n * rows).unwrap();
    let m = gpu.matrix(&w, TensorKind::Q8_0, rows, cols).unwrap();
    gpu.matmul(&m, &up(&gpu, &x), &out).unwrap();
    let mut cpu = vec![0f32; n * rows];
    quant::matmul(&w, TensorKind::Q8_0, rows, cols, &x, &mut cpu).unwrap();
    let got = read(&gpu, &out).await;
    // Every row written (none left at 0 where the CPU has a value), each within the
    // 8-bit activations' bound (32 weights of at most 1 times values of at most 1).
    let worst = got
        .iter()
        .zip(&cpu)
        .fold(0f32, |m, (g, c)| m.max((g - c).abs()));
    assert!(
        f64::from(worst) <= ACTIVATIONS * 32.0,
        "40,000 rows: a product {worst} from the CPU's"
    );
    let len = 65_535 * 64 + 100;
    let (a, b) = (rng.floats(len), rng.floats(len));
    let on_gpu = up(&gpu, &a);
    gpu.add(&on_gpu, &up(&gpu, &b)).unwrap();
    let mut want = a;
    ops::add(&mut want, &b);
    compare(
        "add over two dimensions",
        &read(&gpu, &on_gpu).await,
        &want,
        1e-6,
    );
}

#[wasm_bindgen_test]
async fn the_adapter_says_what_it_is() {
    let gpu = gpu().await;
    let info: serde_json::Value = serde_json::from_str(&gpu.adapter()).unwrap();
    console_log!("WebGPU adapter: {info}");
    assert!(
        info.get("vendor").is_some() && info.get("fallback").is_some(),
        "{info}"
    );
}

#[wasm_bindgen_test]
async fn operands_that_do_not_fit_are_an_error_before_anything_runs() {
    let gpu = gpu().await;
    let w = quant::quantize(TensorKind::Q8_0, &[0.5; 64]).unwrap();
    assert!(matches!(
        gpu.matrix(&w, TensorKind::Q8_0, 3, 32),
        Err(GpuError::Shape(_))
    ));
    let m = gpu.matrix(&w, TensorKind::Q8_0, 2, 32).unwrap();
    let (x, out) = (up(&gpu, &[1.0; 33]), up(&gpu, &[0.0; 2]));
    assert!(matches!(gpu.matmul(&m, &x, &out), Err(GpuError::Shape(_))));
    let x = up(&gpu, &[1.0; 64]);
    assert!(matches!(gpu.matmul(&m, &x, &out), Err(GpuError::Shape(_))));
    assert!(matches!(
        gpu.write(&out, 1, &[1.0, 2.0]),
        Err(GpuError::Shape(_))
    ));
}

#[wasm_bindgen_test]
async fn a_closed_device_is_an_error_not_a_trap() {
    let gpu = gpu().await;
    let t = up(&gpu, &[1.0, 2.0]);
    gpu.close();
    match gpu.add(&t, &t) {
        Err(GpuError::Device(why)) => assert!(why.contains("closed"), "{why}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(gpu.read(&t).await, Err(GpuError::Device(_))));
}
