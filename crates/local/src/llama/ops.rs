//! The forward pass's steps other than the weight products, on the CPU: RMSNorm, RoPE
//! (its angle table and the rotation), attention of query positions against the KV
//! cache (Gemma's soft-capped and sliding-window kind too), the SwiGLU and GELU gates,
//! soft-capping, biases and the residual add.
//!
//! [`super::Session`] composes them; they are public so that the GPU kernels
//! ([`crate::gpu`]) are tested against this very code, not against a copy of it.

use super::arch::Rope;
use crate::quant;

/// The shape of one attention step: `n` query positions after `start` cached ones.
#[derive(Clone, Copy, Debug)]
pub struct Attention {
    pub n: usize,
    pub start: usize,
    pub heads: usize,
    pub kv_heads: usize,
    pub head_dim: usize,
}

impl Attention {
    pub fn q_dim(&self) -> usize {
        self.heads * self.head_dim
    }

    pub fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim
    }
}

/// Each row of `x` (rows of `weight.len()`) scaled to unit root-mean-square, times
/// the weight.
pub fn rms_norm(x: &[f32], weight: &[f32], eps: f32, out: &mut Vec<f32>) {
    out.clear();
    for row in x.chunks_exact(weight.len().max(1)) {
        let mean = row.iter().map(|v| v * v).sum::<f32>() / row.len() as f32;
        let scale = 1.0 / (mean + eps).sqrt();
        out.extend(row.iter().zip(weight).map(|(v, w)| v * scale * w));
    }
}

/// Adds a bias to every row of `x` (rows of the bias's length), when there is one.
pub fn add_bias(x: &mut [f32], bias: Option<&[f32]>) {
    if let Some(bias) = bias.filter(|b| !b.is_empty()) {
        for row in x.chunks_exact_mut(bias.len()) {
            row.iter_mut().zip(bias).for_each(|(x, b)| *x += b);
        }
    }
}

/// `gate = gelu(gate) ⊙ up`, Gemma's GEGLU, with GELU's tanh approximation.
pub fn gelu_gate(gate: &mut [f32], up: &[f32]) {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    for (g, u) in gate.iter_mut().zip(up) {
        let x = *g;
        *g = 0.5 * x * (1.0 + (SQRT_2_OVER_PI * x * (1.0 + 0.044_715 * x * x)).tanh()) * u;
    }
}

/// `cap·tanh(x/cap)`: Gemma 2's soft cap on attention scores and logits.
pub fn softcap(x: &mut [f32], cap: f32) {
    x.iter_mut()
        .for_each(|v| *v = (*v * (1.0 / cap)).tanh() * cap);
}

/// `gate = silu(gate) ⊙ up`, SwiGLU's product.
pub fn silu_gate(gate: &mut [f32], up: &[f32]) {
    for (g, u) in gate.iter_mut().zip(up) {
        *g = *g / (1.0 + (-*g).exp()) * u;
    }
}

/// The residual add, `x += o`.
pub fn add(x: &mut [f32], o: &[f32]) {
    x.iter_mut().zip(o).for_each(|(x, o)| *x += o);
}

pub(super) fn softmax(x: &mut [f32]) {
    let max = x.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
    let mut sum = 0.0;
    for v in x.iter_mut() {
        *v = (*v - max).exp();
        sum += *v;
    }
    x.iter_mut().for_each(|v| *v /= sum);
}

/// How a layer's dot products of query and key become attention scores.
#[derive(Clone, Copy, Debug)]
pub struct Scoring {
    /// Multiplies each dot product: `1/√head_dim`, or 1 where the queries were scaled.
    pub scale: f32,
    /// Gemma 2's soft cap on the scores.
    pub softcap: Option<f32>,
    /// A sliding window: the positions a query sees, itself included.
    pub window: Option<usize>,
}

/// `out` (`n × q_dim`, zeroed here) = each query head's softmax-weighted values over
/// the positions it sees: query `t` sees the cache's `start + t + 1` first positions
/// (`keys`/`values` are positions × `kv_dim`); query heads share KV heads in groups.
pub fn attend(
    shape: Attention,
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    scores: &mut Vec<f32>,
    out: &mut Vec<f32>,
) {
    let scoring = Scoring {
        scale: 1.0 / (shape.head_dim as f32).sqrt(),
        softcap: None,
        window: None,
    };
    attend_with(shape, scoring, q, keys, values, scores, out);
}

/// [`attend`] with the layer's own [`Scoring`]: a sliding window drops the positions
/// before the window's from what a query sees.
pub fn attend_with(
    shape: Attention,
    scoring: Scoring,
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    scores: &mut Vec<f32>,
    out: &mut Vec<f32>,
) {
    let (qd, kv, hd) = (shape.q_dim(), shape.kv_dim(), shape.head_dim);
    out.clear();
    out.resize(shape.n * qd, 0.0);
    let group = (shape.heads / shape.kv_heads.max(1)).max(1);
    for t in 0..shape.n {
        let seen = shape.start + t + 1;
        let first = scoring.window.map_or(0, |w| seen.saturating_sub(w));
        for h in 0..shape.heads {
            let q = q.get(t * qd + h * hd..t * qd + (h + 1) * hd).unwrap_or(&[]);
            let kv_at = (h / group) * hd;
            scores.clear();
            scores.extend((first..seen).map(|p| {
                let k = keys.get(p * kv + kv_at..p * kv + kv_at + hd).unwrap_or(&[]);
                quant::dot_f32(q, k) * scoring.scale
            }));
            if let Some(cap) = scoring.softcap {
                softcap(scores, cap);
            }
            softmax(scores);
            let Some(out) = out.get_mut(t * qd + h * hd..t * qd + (h + 1) * hd) else {
                continue;
            };
            for (p, &w) in (first..).zip(scores.iter()) {
                let v = values
                    .get(p * kv + kv_at..p * kv + kv_at + hd)
                    .unwrap_or(&[]);
                for (o, v) in out.iter_mut().zip(v) {
                    *o += w * v;
                }
            }
        }
    }
}

/// cos and sin of each rotated pair's angle for `n` positions from `start`, computed as
/// ggml does (the angle's frequency a running product in f32, divided by the pair's
/// frequency factor when the model has them), so ours match.
pub fn rope_table(
    base: f32,
    dims: usize,
    factors: Option<&[f32]>,
    start: usize,
    n: usize,
    out: &mut Vec<(f32, f32)>,
) {
    let rope = Rope {
        base,
        scale: 1.0,
        magnitude: 1.0,
    };
    rope_table_with(rope, dims, factors, start, n, out);
}

/// [`rope_table`] for a [`Rope`] scaled linearly (each angle times its scale, after
/// the pair's factor, as ggml's `rope_yarn` without YaRN) and in magnitude.
pub fn rope_table_with(
    rope: Rope,
    dims: usize,
    factors: Option<&[f32]>,
    start: usize,
    n: usize,
    out: &mut Vec<(f32, f32)>,
) {
    out.clear();
    let step = rope.base.powf(-2.0 / dims.max(1) as f32);
    for pos in start..start + n {
        let mut theta = pos as f32;
        for i in 0..dims / 2 {
            let angle = match factors.and_then(|f| f.get(i)) {
                Some(f) => theta / f,
                None => theta,
            } * rope.scale;
            out.push((angle.cos() * rope.magnitude, angle.sin() * rope.magnitude));
            theta *= step;
        }
    }
}

/// Rotates the first `2·half` values of every head of every row: pairs adjacent, or
/// (NeoX) value `i` with value `i + half`.
pub fn rope(
    x: &mut [f32],
    width: usize,
    head_dim: usize,
    half: usize,
    neox: bool,
    table: &[(f32, f32)],
) {
    if half == 0 || width == 0 || head_dim == 0 {
        return;
    }
    for (row, angles) in x.chunks_exact_mut(width).zip(table.chunks_exact(half)) {
        for head in row.chunks_exact_mut(head_dim) {
            if neox {
                let (lo, rest) = head.split_at_mut(half);
                for ((a, b), &(cos, sin)) in lo.iter_mut().zip(rest.iter_mut()).zip(angles) {
                    (*a, *b) = (*a * cos - *b * sin, *a * sin + *b * cos);
                }
            } else {
                for (pair, &(cos, sin)) in head.chunks_exact_mut(2).zip(angles) {
                    if let [a, b] = pair {
                        (*a, *b) = (*a * cos - *b * sin, *a * sin + *b * cos);
                    }
                }
            }
        }
    }
}
