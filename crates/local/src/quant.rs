//! The weight formats (F32, F16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, and the K-quants Q4_K, Q5_K, Q6_K
//! in [`kquant`], as ggml lays them out) and the
//! products the forward pass is made of: a row's dot product with a vector, and a
//! matrix–matrix product for prefill.
//!
//! Quantized weights meet activations the way llama.cpp's CPU backend has them meet:
//! the activations are themselves quantized to 8 bits per block of 32 (ggml's Q8_0 for
//! Q8_0/Q4_0/Q5_0 weights, Q8_1 with its block sum for Q4_1/Q5_1), and each block's product is an
//! integer dot product scaled once. That is the fast path on wasm (`i32x4_dot_i16x8`)
//! and keeps our logits close to llama.cpp's. F32 and F16 weights multiply in f32.
//!
//! What the weights mean is [`crate::llama`]'s business; where they are in the file is
//! [`crate::gguf`]'s.

mod kquant;

use crate::gguf::TensorKind;
use std::fmt;

/// Elements per quantized block.
pub const BLOCK: usize = 32;

/// Tokens whose activations are multiplied against one decoded weight block at a time:
/// their quantized activations (`TILE` × a row of up to a few thousand bytes) stay in
/// the L1 cache while the weights stream past once per tile.
const TILE: usize = 16;

/// A product whose operands do not fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shape mismatch: {}", self.0)
    }
}

impl std::error::Error for ShapeError {}

/// IEEE half to single precision (exact).
pub fn f16_to_f32(h: u16) -> f32 {
    let sign = (u32::from(h) & 0x8000) << 16;
    let exp = u32::from(h >> 10) & 0x1f;
    let mant = u32::from(h) & 0x3ff;
    match exp {
        0 => {
            // Zero or subnormal: mant × 2⁻²⁴, exact in f32.
            let v = mant as f32 * (1.0 / 16_777_216.0);
            if sign != 0 { -v } else { v }
        }
        31 => f32::from_bits(sign | 0x7f80_0000 | (mant << 13)),
        _ => f32::from_bits(sign | ((exp + 112) << 23) | (mant << 13)),
    }
}

/// Single to half precision, rounding to nearest even (as ggml's conversion does).
pub fn f32_to_f16(x: f32) -> u16 {
    let b = x.to_bits();
    let sign = ((b >> 16) & 0x8000) as u16;
    let exp = ((b >> 23) & 0xff) as i32;
    let mant = b & 0x7f_ffff;
    if exp == 255 {
        return sign | 0x7c00 | if mant != 0 { 0x200 } else { 0 };
    }
    let e = exp - 112;
    if e >= 31 {
        return sign | 0x7c00;
    }
    let (half, rem, mid) = if e <= 0 {
        if e < -10 {
            return sign;
        }
        let m = mant | 0x80_0000;
        let shift = (14 - e) as u32;
        (m >> shift, m & ((1 << shift) - 1), 1u32 << (shift - 1))
    } else {
        (((e as u32) << 10) | (mant >> 13), mant & 0x1fff, 0x1000)
    };
    // A carry out of the mantissa correctly bumps the exponent (up to infinity).
    let rounded = if rem > mid || (rem == mid && half & 1 == 1) {
        half + 1
    } else {
        half
    };
    sign | rounded as u16
}

/// A block's f16 scale, without branches: the half's exponent and mantissa shifted
/// into place and rebased by 2¹¹² (exact for normal and subnormal halves; a weight
/// scale is never infinite or NaN, which this would read as a large finite value).
#[inline(always)]
fn f16_at(bytes: &[u8], at: usize) -> f32 {
    match bytes.get(at..at + 2) {
        Some(&[lo, hi]) => {
            let h = u32::from(u16::from_le_bytes([lo, hi]));
            let magnitude = f32::from_bits((h & 0x7fff) << 13) * f32::from_bits(0x7780_0000);
            f32::from_bits(magnitude.to_bits() | ((h & 0x8000) << 16))
        }
        _ => 0.0,
    }
}

/// Bytes of one row of `cols` elements, or an error when `cols` is not whole blocks.
pub fn row_bytes(kind: TensorKind, cols: usize) -> Result<usize, ShapeError> {
    kind.bytes_for(cols as u64)
        .map(|b| b as usize)
        .ok_or_else(|| ShapeError(format!("{cols} columns are not whole {kind:?} blocks")))
}

/// Decodes one row of weights to f32.
pub fn dequantize_row(row: &[u8], kind: TensorKind, out: &mut [f32]) -> Result<(), ShapeError> {
    let need = row_bytes(kind, out.len())?;
    if row.len() != need {
        return Err(ShapeError(format!(
            "row of {} bytes for {} {kind:?} values",
            row.len(),
            out.len()
        )));
    }
    match kind {
        TensorKind::F32 => {
            for (o, b) in out.iter_mut().zip(row.chunks_exact(4)) {
                *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }
        TensorKind::F16 => {
            for (o, b) in out.iter_mut().zip(row.chunks_exact(2)) {
                *o = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
            }
        }
        TensorKind::Q8_0 => decode_blocks::<Q8_0>(row, out),
        TensorKind::Q4_0 => decode_blocks::<Q4_0>(row, out),
        TensorKind::Q4_1 => decode_blocks::<Q4_1>(row, out),
        TensorKind::Q5_0 => decode_blocks::<Q5_0>(row, out),
        TensorKind::Q5_1 => decode_blocks::<Q5_1>(row, out),
        TensorKind::Q4_K | TensorKind::Q5_K | TensorKind::Q6_K => {
            kquant::dequantize(kind, row, out)
        }
    }
    Ok(())
}

fn decode_blocks<K: Quant>(row: &[u8], out: &mut [f32]) {
    for (block, out) in row.chunks_exact(K::BYTES).zip(out.chunks_exact_mut(BLOCK)) {
        let (q, d, m) = K::decode(block);
        for (o, &q) in out.iter_mut().zip(q.iter()) {
            *o = f32::from(q) * d + m;
        }
    }
}

/// Quantizes values (whole blocks) as ggml's reference quantizers do: the tests' tiny
/// models and fixtures. The K-quants are only read here (llama.cpp's quantizer writes
/// the reference tests' files): asking for one is an error.
pub fn quantize(kind: TensorKind, values: &[f32]) -> Result<Vec<u8>, ShapeError> {
    row_bytes(kind, values.len())?;
    let mut out = Vec::new();
    match kind {
        TensorKind::F32 => values
            .iter()
            .for_each(|v| out.extend_from_slice(&v.to_le_bytes())),
        TensorKind::F16 => values
            .iter()
            .for_each(|v| out.extend_from_slice(&f32_to_f16(*v).to_le_bytes())),
        TensorKind::Q8_0 => {
            for x in values.chunks_exact(BLOCK) {
                let amax = x.iter().fold(0f32, |a, v| a.max(v.abs()));
                let d = amax / 127.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
                out.extend(x.iter().map(|v| (v * id).round() as i8 as u8));
            }
        }
        TensorKind::Q4_0 => {
            for x in values.chunks_exact(BLOCK) {
                let max = x
                    .iter()
                    .fold(0f32, |a, &v| if v.abs() > a.abs() { v } else { a });
                let d = max / -8.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
                let q = |v: f32| ((v * id + 8.5) as i32).clamp(0, 15) as u8;
                out.extend((0..16).map(|j| q(x[j]) | (q(x[j + 16]) << 4)));
            }
        }
        TensorKind::Q4_1 => {
            for x in values.chunks_exact(BLOCK) {
                let min = x.iter().fold(f32::INFINITY, |a, &v| a.min(v));
                let max = x.iter().fold(f32::NEG_INFINITY, |a, &v| a.max(v));
                let d = (max - min) / 15.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
                out.extend_from_slice(&f32_to_f16(min).to_le_bytes());
                let q = |v: f32| (((v - min) * id + 0.5) as i32).clamp(0, 15) as u8;
                out.extend((0..16).map(|j| q(x[j]) | (q(x[j + 16]) << 4)));
            }
        }
        TensorKind::Q5_0 => {
            for x in values.chunks_exact(BLOCK) {
                let max = x
                    .iter()
                    .fold(0f32, |a, &v| if v.abs() > a.abs() { v } else { a });
                let d = max / -16.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                let q: Vec<u32> = x
                    .iter()
                    .map(|v| (v * id + 16.5).clamp(0.0, 31.0) as u32)
                    .collect();
                out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
                push_q5(&mut out, &q);
            }
        }
        TensorKind::Q5_1 => {
            for x in values.chunks_exact(BLOCK) {
                let min = x.iter().fold(f32::INFINITY, |a, &v| a.min(v));
                let max = x.iter().fold(f32::NEG_INFINITY, |a, &v| a.max(v));
                let d = (max - min) / 31.0;
                let id = if d != 0.0 { 1.0 / d } else { 0.0 };
                let q: Vec<u32> = x
                    .iter()
                    .map(|v| ((v - min) * id + 0.5).clamp(0.0, 31.0) as u32)
                    .collect();
                out.extend_from_slice(&f32_to_f16(d).to_le_bytes());
                out.extend_from_slice(&f32_to_f16(min).to_le_bytes());
                push_q5(&mut out, &q);
            }
        }
        TensorKind::Q4_K | TensorKind::Q5_K | TensorKind::Q6_K => {
            return Err(ShapeError(format!("{kind:?} is read, not written, here")));
        }
    }
    Ok(out)
}

/// 32 five-bit quants as ggml packs them: the fifth bits (`qh`, quant `j` at bit `j`),
/// then the low nibbles, quant `j` and `j + 16` sharing a byte.
fn push_q5(out: &mut Vec<u8>, q: &[u32]) {
    let qh = q
        .iter()
        .enumerate()
        .fold(0u32, |h, (j, &q)| h | ((q >> 4) << j));
    out.extend_from_slice(&qh.to_le_bytes());
    out.extend((0..16).map(|j| (q[j] & 15) as u8 | (((q[j + 16] & 15) as u8) << 4)));
}

/// A quantized block format: its bytes, and its values as small integers `q` with
/// `value = q·d + m`.
trait Quant {
    const BYTES: usize;
    /// Whether the activations need their block sums (Q8_1) for the `m` term.
    const OFFSET: bool;
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32);
}

struct Q8_0;
struct Q4_0;
struct Q4_1;
struct Q5_0;
struct Q5_1;

impl Quant for Q8_0 {
    const BYTES: usize = 34;
    const OFFSET: bool = false;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let mut q = [0i8; BLOCK];
        for (q, &b) in q.iter_mut().zip(block.iter().skip(2)) {
            *q = b as i8;
        }
        (q, f16_at(block, 0), 0.0)
    }
}

impl Quant for Q4_0 {
    const BYTES: usize = 18;
    const OFFSET: bool = false;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let mut q = [0i8; BLOCK];
        let (lo, hi) = q.split_at_mut(16);
        for ((l, h), &b) in lo.iter_mut().zip(hi.iter_mut()).zip(block.iter().skip(2)) {
            *l = (b & 15) as i8 - 8;
            *h = (b >> 4) as i8 - 8;
        }
        (q, f16_at(block, 0), 0.0)
    }
}

impl Quant for Q4_1 {
    const BYTES: usize = 20;
    const OFFSET: bool = true;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let mut q = [0i8; BLOCK];
        let (lo, hi) = q.split_at_mut(16);
        for ((l, h), &b) in lo.iter_mut().zip(hi.iter_mut()).zip(block.iter().skip(4)) {
            *l = (b & 15) as i8;
            *h = (b >> 4) as i8;
        }
        (q, f16_at(block, 0), f16_at(block, 2))
    }
}

/// Q5_0/Q5_1's quants: a low nibble (quants `j` and `j + 16` share byte `j` of `qs`)
/// and a fifth bit from `qh` (bit `j` for quant `j`).
#[inline(always)]
fn decode_q5(qh: &[u8], qs: &[u8], offset: i8) -> [i8; BLOCK] {
    let qh = match qh {
        &[a, b, c, d] => u32::from_le_bytes([a, b, c, d]),
        _ => 0,
    };
    let mut q = [0i8; BLOCK];
    let (lo, hi) = q.split_at_mut(16);
    for (j, ((l, h), &b)) in lo.iter_mut().zip(hi.iter_mut()).zip(qs).enumerate() {
        *l = ((b & 15) | ((((qh >> j) & 1) as u8) << 4)) as i8 - offset;
        *h = ((b >> 4) | ((((qh >> (j + 16)) & 1) as u8) << 4)) as i8 - offset;
    }
    q
}

impl Quant for Q5_0 {
    const BYTES: usize = 22;
    const OFFSET: bool = false;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let q = decode_q5(
            block.get(2..6).unwrap_or(&[]),
            block.get(6..).unwrap_or(&[]),
            16,
        );
        (q, f16_at(block, 0), 0.0)
    }
}

impl Quant for Q5_1 {
    const BYTES: usize = 24;
    const OFFSET: bool = true;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let q = decode_q5(
            block.get(4..8).unwrap_or(&[]),
            block.get(8..).unwrap_or(&[]),
            0,
        );
        (q, f16_at(block, 0), f16_at(block, 2))
    }
}

/// Activations quantized to 8 bits per block of 32 (ggml's Q8_0 / Q8_1): `x ≈ q·d`,
/// and `s = d·Σq`, the block's sum, which Q4_1's offset multiplies.
struct Q8Activations {
    q: Vec<i8>,
    d: Vec<f32>,
    s: Vec<f32>,
}

fn quantize_activations(x: &[f32]) -> Q8Activations {
    let blocks = x.len() / BLOCK;
    let mut out = Q8Activations {
        q: Vec::with_capacity(x.len()),
        d: Vec::with_capacity(blocks),
        s: Vec::with_capacity(blocks),
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
    }
    out
}

/// Rounds to the nearest integer, ties to even, for |x| < 2²²: adding 1.5·2²³ pushes the
/// fraction out of the mantissa under the default rounding mode. `round_ties_even`
/// calls libm's `rintf` on baseline x86-64, a tenth of a forward pass.
#[inline(always)]
fn round_even(x: f32) -> f32 {
    const MAGIC: f32 = 12_582_912.0;
    (x + MAGIC) - MAGIC
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
    i32x4_extract_lane::<0>(acc)
        + i32x4_extract_lane::<1>(acc)
        + i32x4_extract_lane::<2>(acc)
        + i32x4_extract_lane::<3>(acc)
}

/// Sixteen bytes as a vector, without `unsafe`: LLVM folds the lanes into one load.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn load(s: &[i8]) -> core::arch::wasm32::v128 {
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

/// One weight row's dot product with `x` (activations quantized as in [`matmul`]).
pub fn dot(row: &[u8], kind: TensorKind, x: &[f32]) -> Result<f32, ShapeError> {
    let mut out = [0f32];
    matmul(row, kind, 1, x.len(), x, &mut out)?;
    Ok(out[0])
}

/// `out[t·rows + r] = Σ_c W[r][c] · x[t·cols + c]` for every token `t` of `x`: many
/// tokens' activations against one weight matrix of `rows` rows of `cols` (ggml row
/// order), each weight block decoded once per tile of tokens.
pub fn matmul(
    weights: &[u8],
    kind: TensorKind,
    rows: usize,
    cols: usize,
    x: &[f32],
    out: &mut [f32],
) -> Result<(), ShapeError> {
    let rb = row_bytes(kind, cols)?;
    if cols == 0 || !x.len().is_multiple_of(cols) || weights.len() != rb * rows {
        return Err(ShapeError(format!(
            "{} weight bytes as {rows}×{cols} {kind:?}, {} activations",
            weights.len(),
            x.len()
        )));
    }
    let n = x.len() / cols;
    if out.len() != n * rows {
        return Err(ShapeError(format!(
            "output of {} for {n}×{rows}",
            out.len()
        )));
    }
    match kind {
        TensorKind::F32 => matmul_float(weights, rows, cols, x, out, |row, buf| {
            for (o, b) in buf.iter_mut().zip(row.chunks_exact(4)) {
                *o = f32::from_le_bytes([b[0], b[1], b[2], b[3]]);
            }
        }),
        TensorKind::F16 => matmul_float(weights, rows, cols, x, out, |row, buf| {
            for (o, b) in buf.iter_mut().zip(row.chunks_exact(2)) {
                *o = f16_to_f32(u16::from_le_bytes([b[0], b[1]]));
            }
        }),
        TensorKind::Q8_0 => matmul_quant::<Q8_0>(weights, rows, cols, x, out),
        TensorKind::Q4_0 => matmul_quant::<Q4_0>(weights, rows, cols, x, out),
        TensorKind::Q4_1 => matmul_quant::<Q4_1>(weights, rows, cols, x, out),
        TensorKind::Q5_0 => matmul_quant::<Q5_0>(weights, rows, cols, x, out),
        TensorKind::Q5_1 => matmul_quant::<Q5_1>(weights, rows, cols, x, out),
        TensorKind::Q4_K | TensorKind::Q5_K | TensorKind::Q6_K => {
            kquant::matmul(kind, weights, rows, cols, x, out)
        }
    }
    Ok(())
}

/// F32/F16 weights: each row decoded once into f32, then dotted with every token.
fn matmul_float(
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
fn matmul_quant<K: Quant>(weights: &[u8], rows: usize, cols: usize, x: &[f32], out: &mut [f32]) {
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
    for (((block, q), (&dx, &sx)), p) in blocks
        .zip(acts.d.iter().zip(&acts.s))
        .zip(partial.iter_mut())
    {
        let (w, d, m) = K::decode(block);
        let v = d * dx * dot_block(&w, q) as f32;
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

#[cfg(test)]
mod tests;
