//! ggml's K-quants (Q4_K, Q5_K, Q6_K): super-blocks of 256 weights whose sub-blocks
//! carry small integer scales (and, for Q4_K/Q5_K, mins) under one f16 scale pair.
//!
//! A super-block is decoded into its integers — 256 quants, and a scale and a min for
//! each group of 16 (Q4_K/Q5_K's sub-blocks of 32 give two groups the same) — and meets
//! the activations quantized as ggml's Q8_K (256 per block, an f32 scale, the sum of
//! each group of 16), as llama.cpp's CPU backend has them meet:
//! `d·d₈·Σ_g scale_g·(q_g·a_g) − dmin·d₈·Σ_g min_g·Σa_g`, all sums in integers. In the
//! relaxed build (`block::RELAXED`) Q6_K's quants stay unsigned (0..=63), the operand
//! relaxed SIMD's dot multiplies exactly, and its zero of 32 comes off after as
//! `32·Σ_g scale_g·Σa_g`.

use super::block::{left, taken};
use super::half::f16_at;
use super::product::{TILE, round_even};
use crate::gguf::TensorKind;

/// Weights per super-block.
pub(super) const SUPER: usize = 256;
/// Weights per group sharing one integer scale.
const GROUP: usize = 16;
const GROUPS: usize = SUPER / GROUP;

/// A super-block's integers: weight `i` is `d·scales[i/16]·(q[i] − left(zero)) −
/// dmin·mins[i/16]`, `zero` its format's (`block::left`: 0 but in the relaxed build).
pub(super) struct Decoded {
    q: [i8; SUPER],
    scales: [i32; GROUPS],
    mins: [i32; GROUPS],
    d: f32,
    dmin: f32,
}

impl Default for Decoded {
    fn default() -> Self {
        Decoded {
            q: [0; SUPER],
            scales: [0; GROUPS],
            mins: [0; GROUPS],
            d: 0.0,
            dmin: 0.0,
        }
    }
}

/// A K-quant block format. Values, not a trait's types: one copy of the product serves
/// all three (the decode, called once per 256 weights, is not worth a copy each in
/// the worker's bytes).
pub(super) struct Format {
    bytes: usize,
    /// Whether weights have mins (Q4_K, Q5_K): the activations' group sums are needed.
    mins: bool,
    /// What the stored quants count up from (Q6_K's 32).
    zero: i8,
    decode: fn(&[u8], &mut Decoded),
}

pub(super) const Q4K: Format = Format {
    bytes: 144,
    mins: true,
    zero: 0,
    decode: decode_q4k,
};
pub(super) const Q5K: Format = Format {
    bytes: 176,
    mins: true,
    zero: 0,
    decode: decode_q5k,
};
pub(super) const Q6K: Format = Format {
    bytes: 210,
    mins: false,
    zero: 32,
    decode: decode_q6k,
};

/// The K-quant format of a tensor kind, chosen at run time: a constant argument would
/// let LLVM specialize the product per format again.
fn format(kind: TensorKind) -> &'static Format {
    match kind {
        TensorKind::Q5_K => &Q5K,
        TensorKind::Q6_K => &Q6K,
        _ => &Q4K,
    }
}

/// Byte `i` of a block; blocks are checked whole before they are decoded.
#[inline(always)]
fn at(block: &[u8], i: usize) -> u8 {
    block.get(i).copied().unwrap_or(0)
}

/// Q4_K/Q5_K's 6-bit scale and min of sub-block `j` (of 8), packed in 12 bytes from
/// byte 4 (ggml's `get_scale_min_k4`).
#[inline(always)]
fn scale_min(block: &[u8], j: usize) -> (i32, i32) {
    let s = |i: usize| at(block, 4 + i);
    let (sc, m) = if j < 4 {
        (s(j) & 63, s(j + 4) & 63)
    } else {
        (
            (s(j + 4) & 0xf) | ((s(j - 4) >> 6) << 4),
            (s(j + 4) >> 4) | ((s(j) >> 6) << 4),
        )
    };
    (i32::from(sc), i32::from(m))
}

/// The scales, mins and f16 pair Q4_K and Q5_K share.
#[inline(always)]
fn scales_and_mins(block: &[u8], out: &mut Decoded) {
    for j in 0..8 {
        let (sc, m) = scale_min(block, j);
        out.scales[2 * j..2 * j + 2].fill(sc);
        out.mins[2 * j..2 * j + 2].fill(m);
    }
    out.d = f16_at(block, 0);
    out.dmin = f16_at(block, 2);
}

fn decode_q4k(block: &[u8], out: &mut Decoded) {
    scales_and_mins(block, out);
    // Each 32 bytes hold two sub-blocks: low nibbles, then high nibbles.
    let qs = block.get(16..144).unwrap_or(&[]);
    for (chunk, q) in qs.chunks_exact(32).zip(out.q.chunks_exact_mut(64)) {
        let (lo, hi) = q.split_at_mut(32);
        for ((l, h), &b) in lo.iter_mut().zip(hi.iter_mut()).zip(chunk) {
            *l = (b & 0xf) as i8;
            *h = (b >> 4) as i8;
        }
    }
}

fn decode_q5k(block: &[u8], out: &mut Decoded) {
    scales_and_mins(block, out);
    // As Q4_K, with each quant's fifth bit in `qh`: bit 2j for sub-block 2j.
    let qh = block.get(16..48).unwrap_or(&[]);
    let qs = block.get(48..176).unwrap_or(&[]);
    for (j, (chunk, q)) in qs
        .chunks_exact(32)
        .zip(out.q.chunks_exact_mut(64))
        .enumerate()
    {
        let (lo, hi) = q.split_at_mut(32);
        for (((l, h), &b), &high) in lo.iter_mut().zip(hi.iter_mut()).zip(chunk).zip(qh) {
            *l = ((b & 0xf) | (((high >> (2 * j)) & 1) << 4)) as i8;
            *h = ((b >> 4) | (((high >> (2 * j + 1)) & 1) << 4)) as i8;
        }
    }
}

fn decode_q6k(block: &[u8], out: &mut Decoded) {
    // Per 128 weights: 64 bytes of low nibbles, 32 of high 2-bit pairs.
    for half in 0..2 {
        for l in 0..32 {
            let (lo0, lo1) = (at(block, 64 * half + l), at(block, 64 * half + l + 32));
            let hi = at(block, 128 + 32 * half + l);
            let q = |low: u8, shift: u32| (low | (((hi >> shift) & 3) << 4)) as i8 - taken(32);
            let y = 128 * half + l;
            out.q[y] = q(lo0 & 0xf, 0);
            out.q[y + 32] = q(lo1 & 0xf, 2);
            out.q[y + 64] = q(lo0 >> 4, 4);
            out.q[y + 96] = q(lo1 >> 4, 6);
        }
    }
    for (g, s) in out.scales.iter_mut().enumerate() {
        *s = i32::from(at(block, 192 + g) as i8);
    }
    out.d = f16_at(block, 208);
    out.dmin = 0.0;
}

/// Decodes a row of whole super-blocks to f32.
pub(super) fn dequantize(kind: TensorKind, row: &[u8], out: &mut [f32]) {
    let f = format(kind);
    let mut b = Decoded::default();
    let zero = f32::from(left(f.zero));
    for (block, out) in row.chunks_exact(f.bytes).zip(out.chunks_exact_mut(SUPER)) {
        (f.decode)(block, &mut b);
        for (g, (out, q)) in out
            .chunks_exact_mut(GROUP)
            .zip(b.q.chunks_exact(GROUP))
            .enumerate()
        {
            let scale = b.d * b.scales[g] as f32;
            let min = b.dmin * b.mins[g] as f32;
            for (o, &q) in out.iter_mut().zip(q) {
                *o = scale * (f32::from(q) - zero) - min;
            }
        }
    }
}

/// Activations as ggml's Q8_K: `x ≈ q·d` per block of 256, with each group's `Σq`.
struct Q8K {
    q: Vec<i8>,
    d: Vec<f32>,
    sums: Vec<i32>,
}

/// ggml's `quantize_row_q8_K`: the scale from the value of largest magnitude (sign
/// kept, so it maps to -127 exactly), rounding to nearest even.
fn quantize_activations(x: &[f32]) -> Q8K {
    let blocks = x.len() / SUPER;
    let mut out = Q8K {
        q: Vec::with_capacity(x.len()),
        d: Vec::with_capacity(blocks),
        sums: Vec::with_capacity(blocks * GROUPS),
    };
    for block in x.chunks_exact(SUPER) {
        let max = block
            .iter()
            .fold(0f32, |m, &v| if v.abs() > m.abs() { v } else { m });
        if max == 0.0 {
            out.q.extend([0i8; SUPER]);
            out.d.push(0.0);
            out.sums.extend([0; GROUPS]);
            continue;
        }
        let iscale = -127.0 / max;
        for group in block.chunks_exact(GROUP) {
            let mut sum = 0;
            for &v in group {
                let q = round_even(iscale * v).min(127.0) as i8;
                sum += i32::from(q);
                out.q.push(q);
            }
            out.sums.push(sum);
        }
        out.d.push(1.0 / iscale);
    }
    out
}

/// `Σ_g scales[g] · (w_g · a_g)` over a super-block, in integers.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn scaled_dot(w: &Decoded, a: &[i8]) -> i32 {
    let mut total = 0;
    for ((w, a), &s) in
        w.q.chunks_exact(GROUP)
            .zip(a.chunks_exact(GROUP))
            .zip(&w.scales)
    {
        let mut sum = 0i32;
        for (&w, &a) in w.iter().zip(a) {
            sum += i32::from(w) * i32::from(a);
        }
        total += s * sum;
    }
    total
}

/// `Σ_g scales[g] · (w_g · a_g)` over a super-block: each group's dot in 32-bit lanes
/// ([`group_dot`]), scaled and accumulated in lanes.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn scaled_dot(w: &Decoded, a: &[i8]) -> i32 {
    use core::arch::wasm32::*;
    let mut acc = i32x4_splat(0);
    for ((w, a), &s) in
        w.q.chunks_exact(GROUP)
            .zip(a.chunks_exact(GROUP))
            .zip(&w.scales)
    {
        let dot = group_dot(super::product::load(w), super::product::load(a));
        acc = i32x4_add(acc, i32x4_mul(dot, i32x4_splat(s)));
    }
    super::product::lanes_sum(acc)
}

/// A group of 16 quants dotted with its activations into four 32-bit lanes: each side
/// sign-extended to 16 bits and multiplied pairwise.
#[cfg(all(
    target_arch = "wasm32",
    target_feature = "simd128",
    not(target_feature = "relaxed-simd")
))]
#[inline(always)]
fn group_dot(w: core::arch::wasm32::v128, a: core::arch::wasm32::v128) -> core::arch::wasm32::v128 {
    use core::arch::wasm32::*;
    i32x4_add(
        i32x4_dot_i16x8(i16x8_extend_low_i8x16(w), i16x8_extend_low_i8x16(a)),
        i32x4_dot_i16x8(i16x8_extend_high_i8x16(w), i16x8_extend_high_i8x16(a)),
    )
}

/// The same with relaxed SIMD: one 8-bit dot product (the quants unsigned, 0..=63, so
/// exact on every implementation: see `product::dot_unsigned`).
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
#[inline(always)]
fn group_dot(w: core::arch::wasm32::v128, a: core::arch::wasm32::v128) -> core::arch::wasm32::v128 {
    use core::arch::wasm32::*;
    i32x4_relaxed_dot_i8x16_i7x16_add(a, w, i32x4_splat(0))
}

/// One decoded super-block of format `f` against block `at` of the activations.
#[inline(always)]
fn block_dot(w: &Decoded, f: &Format, acts: &Q8K, at: usize) -> f32 {
    let a = acts.q.get(at * SUPER..(at + 1) * SUPER).unwrap_or(&[]);
    let d = acts.d.get(at).copied().unwrap_or(0.0);
    let sums = acts.sums.get(at * GROUPS..(at + 1) * GROUPS).unwrap_or(&[]);
    let mut dot = scaled_dot(w, a);
    if left(f.zero) != 0 {
        let scaled: i32 = w.scales.iter().zip(sums).map(|(s, a)| s * a).sum();
        dot -= i32::from(left(f.zero)) * scaled;
    }
    let mut v = w.d * d * dot as f32;
    if f.mins {
        let m: i32 = w.mins.iter().zip(sums).map(|(m, s)| m * s).sum();
        v -= w.dmin * d * m as f32;
    }
    v
}

/// `out[t·rows + r] = W[r] · x[t]` (shapes checked by the caller): tiles of tokens,
/// each super-block decoded once per tile and summed in block order per token, so a
/// token's result does not depend on how many tokens it is read with.
pub(super) fn matmul(
    kind: TensorKind,
    weights: &[u8],
    rows: usize,
    cols: usize,
    x: &[f32],
    out: &mut [f32],
) {
    let f = format(kind);
    let acts = quantize_activations(x);
    let blocks = cols / SUPER;
    let n = x.len() / cols;
    let rb = blocks * f.bytes;
    let mut w = Decoded::default();
    for t0 in (0..n).step_by(TILE) {
        let tile = TILE.min(n - t0);
        for (r, row) in weights.chunks_exact(rb).enumerate() {
            let mut acc = [0f32; TILE];
            for (b, block) in row.chunks_exact(f.bytes).enumerate() {
                (f.decode)(block, &mut w);
                for (t, acc) in acc.iter_mut().enumerate().take(tile) {
                    *acc += block_dot(&w, f, &acts, (t0 + t) * blocks + b);
                }
            }
            for (t, acc) in acc.iter().enumerate().take(tile) {
                if let Some(o) = out.get_mut((t0 + t) * rows + r) {
                    *o = *acc;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
