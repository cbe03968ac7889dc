//! `product`: the weights' products with activations: the activations quantized to 8
//! bits per block (Q8_0, or Q8_1 with its block sums), block-by-block integer dot
//! products scaled once, tiled over tokens for prefill; F32 and F16 weights in f32.

use super::block::{BLOCK, Quant, RELAXED, left};
use super::half::{f16_to_f32, f32_to_f16};

/// Tokens whose activations are multiplied against one decoded weight block at a time:
/// their quantized activations (`TILE` × a row of up to a few thousand bytes) stay in
/// the L1 cache while the weights stream past once per tile.
pub(super) const TILE: usize = 16;

/// Activations quantized to 8 bits per block of 32 (ggml's Q8_0 / Q8_1): `x ≈ q·d`,
/// and `s = d·Σq`, the block's sum, which Q4_1's offset multiplies; `sums` is `Σq` as
/// an integer, which the relaxed build's zero multiplies (see [`RELAXED`]).
pub(super) struct Q8Activations {
    pub(super) q: Vec<i8>,
    pub(super) d: Vec<f32>,
    pub(super) s: Vec<f32>,
    pub(super) sums: Vec<i32>,
}

pub(super) fn quantize_activations(x: &[f32]) -> Q8Activations {
    let blocks = x.len() / BLOCK;
    let mut out = Q8Activations {
        q: Vec::with_capacity(x.len()),
        d: Vec::with_capacity(blocks),
        s: Vec::with_capacity(blocks),
        sums: Vec::with_capacity(blocks),
    };
    for block in x.chunks_exact(BLOCK) {
        let amax = block.iter().fold(0f32, |a, v| a.max(v.abs()));
        let d = amax / 127.0;
        let id = if amax != 0.0 { 127.0 / amax } else { 0.0 };
        let mut sum = 0i32;
        for &v in block {
            let q = round_even(v * id) as i8;
            sum += i32::from(q);
            out.q.push(q);
        }
        // ggml keeps d and s as halves; rounding them alike keeps us near its logits.
        out.d.push(f16_to_f32(f32_to_f16(d)));
        out.s.push(f16_to_f32(f32_to_f16(d * sum as f32)));
        out.sums.push(sum);
    }
    out
}

/// Rounds to the nearest integer, ties to even, for |x| < 2²²: adding 1.5·2²³ pushes the
/// fraction out of the mantissa under the default rounding mode. `round_ties_even`
/// calls libm's `rintf` on baseline x86-64, a tenth of a forward pass.
#[inline(always)]
pub(super) fn round_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (x + MAGIC) - MAGIC
}

/// `Σ w·a` over one block of decoded quants `q` and activations `a` whose sum is
/// `sum`, in integers: exact, so both builds give the same. In the relaxed build, the
/// unsigned quants' dot with the zero taken off after.
#[inline(always)]
fn block_dot<K: Quant>(q: &[i8; BLOCK], a: &[i8], sum: i32) -> i32 {
    if RELAXED && !K::SIGNED {
        dot_unsigned(q, a) - i32::from(K::ZERO) * sum
    } else {
        dot_block(q, a)
    }
}

/// Decoded quants as signed values, their zero taken off: the prompt's product
/// multiplies each block with many tokens, where the relaxed dot (three x86
/// instructions without AVX-VNNI, and `zero·Σa` per token) was slower than
/// sign-extending the block once per tile for every token to share.
#[inline(always)]
fn signed<K: Quant>(mut q: [i8; BLOCK]) -> [i8; BLOCK] {
    if left(K::ZERO) != 0 {
        for q in &mut q {
            *q -= left(K::ZERO);
        }
    }
    q
}

/// `Σ q·a` for quants `q` in 0..=63: without relaxed SIMD, the signed product.
#[cfg(not(all(target_arch = "wasm32", target_feature = "relaxed-simd")))]
#[inline(always)]
fn dot_unsigned(q: &[i8; BLOCK], a: &[i8]) -> i32 {
    dot_block(q, a)
}

/// `Σ q·a` for quants `q` in 0..=63: relaxed SIMD's 8-bit dot product, four products
/// into each 32-bit lane in one instruction (x86's `pmaddubsw` and `pmaddwd` under
/// it). Its second operand is read as signed or unsigned as the machine likes; with
/// the top bit clear both readings agree, and pairs of products (at most 2·128·63)
/// cannot saturate 16 bits, so the sum is exact everywhere.
#[cfg(all(target_arch = "wasm32", target_feature = "relaxed-simd"))]
#[inline(always)]
fn dot_unsigned(q: &[i8; BLOCK], a: &[i8]) -> i32 {
    use core::arch::wasm32::*;
    let mut acc = i32x4_splat(0);
    for (q, a) in q.chunks_exact(16).zip(a.chunks_exact(16)) {
        acc = i32x4_relaxed_dot_i8x16_i7x16_add(load(a), load(q), acc);
    }
    lanes_sum(acc)
}

/// `Σ a·b` over one block, in integers.
#[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
#[inline(always)]
fn dot_block(a: &[i8; BLOCK], b: &[i8]) -> i32 {
    let mut sum = 0i32;
    for (&a, &b) in a.iter().zip(b.iter().take(BLOCK)) {
        sum += i32::from(a) * i32::from(b);
    }
    sum
}

/// `Σ a·b` over one block: sign-extend to 16 bits, multiply pairwise and add to 32.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn dot_block(a: &[i8; BLOCK], b: &[i8]) -> i32 {
    use core::arch::wasm32::*;
    let mut acc = i32x4_splat(0);
    for (a, b) in a.chunks_exact(16).zip(b.chunks_exact(16)) {
        let va = load(a);
        let vb = load(b);
        acc = i32x4_add(
            acc,
            i32x4_dot_i16x8(i16x8_extend_low_i8x16(va), i16x8_extend_low_i8x16(vb)),
        );
        acc = i32x4_add(
            acc,
            i32x4_dot_i16x8(i16x8_extend_high_i8x16(va), i16x8_extend_high_i8x16(vb)),
        );
    }
    lanes_sum(acc)
}

/// The sum of a vector's four 32-bit lanes.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(super) fn lanes_sum(v: core::arch::wasm32::v128) -> i32 {
    use core::arch::wasm32::i32x4_extract_lane;
    i32x4_extract_lane::<0>(v)
        + i32x4_extract_lane::<1>(v)
        + i32x4_extract_lane::<2>(v)
        + i32x4_extract_lane::<3>(v)
}

/// Sixteen bytes as a vector, without `unsafe`: LLVM folds the lanes into one load.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
pub(super) fn load(s: &[i8]) -> core::arch::wasm32::v128 {
    let mut a = [0i8; 16];
    a.copy_from_slice(s);
    core::arch::wasm32::i8x16(
        a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13],
        a[14], a[15],
    )
}

/// `Σ a·b` in f32, with independent accumulators so the loop vectorizes (a plain
/// `sum()` is one serial chain of adds: LLVM may not reorder float additions).
#[inline(always)]
pub(crate) fn dot_f32(a: &[f32], b: &[f32]) -> f32 {
    let mut acc = [0f32; 8];
    let (a8, b8) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f32 = a8
        .remainder()
        .iter()
        .zip(b8.remainder())
        .map(|(x, y)| x * y)
        .sum();
    for (a, b) in a8.zip(b8) {
        for i in 0..8 {
            acc[i] += a[i] * b[i];
        }
    }
    acc.iter().sum::<f32>() + tail
}

/// F32/F16 weights: each row decoded once into f32, then dotted with every token.
pub(super) fn matmul_float(
    weights: &[u8],
    rows: usize,
    cols: usize,
    x: &[f32],
    out: &mut [f32],
    decode: impl Fn(&[u8], &mut [f32]),
) {
    let mut buf = vec![0f32; cols];
    let rb = weights.len() / rows.max(1);
    for (r, row) in weights.chunks_exact(rb).enumerate() {
        decode(row, &mut buf);
        for (t, xt) in x.chunks_exact(cols).enumerate() {
            out[t * rows + r] = dot_f32(&buf, xt);
        }
    }
}

/// Quantized weights: tiles of tokens; within one, each row's blocks are decoded once
/// and dotted with every token's quantized activations.
pub(super) fn matmul_quant<K: Quant>(
    weights: &[u8],
    rows: usize,
    cols: usize,
    x: &[f32],
    out: &mut [f32],
) {
    let acts = quantize_activations(x);
    let blocks = cols / BLOCK;
    let n = x.len() / cols;
    let rb = blocks * K::BYTES;
    let mut partial = vec![0f32; blocks];
    if n == 1 {
        for (row, out) in weights.chunks_exact(rb).zip(out.iter_mut()) {
            *out = row_dot::<K>(row, &acts, &mut partial);
        }
        return;
    }
    for t0 in (0..n).step_by(TILE) {
        let tile = TILE.min(n - t0);
        for (r, row) in weights.chunks_exact(rb).enumerate() {
            // Summed in the order `row_dot` sums, so a token's result does not depend
            // on how many tokens it is read with.
            let mut acc = [[0f32; 4]; TILE];
            for (b, block) in row.chunks_exact(K::BYTES).enumerate() {
                let (q, d, m) = K::decode(block);
                let q = signed::<K>(q);
                for (t, acc) in acc.iter_mut().enumerate().take(tile) {
                    // In bounds: t0 + t < n and b < blocks, checked against x at entry.
                    let at = (t0 + t) * blocks + b;
                    let mut v = d
                        * acts.d[at]
                        * dot_block(&q, &acts.q[at * BLOCK..at * BLOCK + BLOCK]) as f32;
                    if K::OFFSET {
                        v += m * acts.s[at];
                    }
                    acc[b & 3] += v;
                }
            }
            for (t, acc) in acc.iter().enumerate().take(tile) {
                out[(t0 + t) * rows + r] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
            }
        }
    }
}

/// One row against one token's activations (generation's case). Each block's scaled
/// product goes to `partial` first, then four accumulators sum them (block `b` into
/// `b % 4`): a running total would make each block wait on the last one's add, and an
/// accumulator array indexed by `b & 3` lives in memory.
#[inline(always)]
fn row_dot<K: Quant>(row: &[u8], acts: &Q8Activations, partial: &mut [f32]) -> f32 {
    let blocks = row.chunks_exact(K::BYTES).zip(acts.q.chunks_exact(BLOCK));
    let scales = acts.d.iter().zip(&acts.s).zip(&acts.sums);
    for (((block, q), ((&dx, &sx), &sum)), p) in blocks.zip(scales).zip(partial.iter_mut()) {
        let (w, d, m) = K::decode(block);
        let v = d * dx * block_dot::<K>(&w, q, sum) as f32;
        *p = if K::OFFSET { v + m * sx } else { v };
    }
    sum4(partial)
}

/// `Σ x` with four accumulators, element `i` into `i % 4`, combined pairwise.
#[inline(always)]
fn sum4(x: &[f32]) -> f32 {
    let mut acc = [0f32; 4];
    let chunks = x.chunks_exact(4);
    for (a, &r) in acc.iter_mut().zip(chunks.remainder()) {
        *a += r;
    }
    // The remainder's blocks come last in `b % 4` order too: add them after.
    let mut main = [0f32; 4];
    for c in chunks {
        for i in 0..4 {
            main[i] += c[i];
        }
    }
    for (m, a) in main.iter_mut().zip(acc) {
        *m += a;
    }
    (main[0] + main[1]) + (main[2] + main[3])
}
