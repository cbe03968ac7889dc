//! `block`: the 32-element block formats (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1) as ggml lays
//! them out, each decoded to small integers and its scale and offset.

use super::half::f16_at;

/// Elements per quantized block.
pub const BLOCK: usize = 32;

pub(super) fn decode_blocks<K: Quant>(row: &[u8], out: &mut [f32]) {
    for (block, out) in row.chunks_exact(K::BYTES).zip(out.chunks_exact_mut(BLOCK)) {
        let (q, d, m) = K::decode(block);
        for (o, &q) in out.iter_mut().zip(q.iter()) {
            *o = (i32::from(q) - i32::from(left(K::ZERO))) as f32 * d + m;
        }
    }
}

/// Whether the products multiply with relaxed SIMD's 8-bit dot (the worker's relaxed
/// build, `+relaxed-simd`). That instruction multiplies its second operand exactly on
/// every implementation only when its top bit is clear, so there the quants are
/// decoded unsigned and their zero taken off after, once per block, as `zero·Σa`;
/// elsewhere they are decoded signed, as ggml has them.
pub(super) const RELAXED: bool = cfg!(all(target_arch = "wasm32", target_feature = "relaxed-simd"));

/// What decoding takes off quants stored above `zero`: all of it, but none in the
/// relaxed build.
#[inline(always)]
pub(super) const fn taken(zero: i8) -> i8 {
    if RELAXED { 0 } else { zero }
}

/// The zero left in decoded quants, for the product to take off: `zero` in the
/// relaxed build, 0 elsewhere.
#[inline(always)]
pub(super) const fn left(zero: i8) -> i8 {
    zero - taken(zero)
}

/// A quantized block format: its bytes, and its values as small integers `q` with
/// `value = (q − left(ZERO))·d + m`.
pub(super) trait Quant {
    const BYTES: usize;
    /// Whether the activations need their block sums (Q8_1) for the `m` term.
    const OFFSET: bool;
    /// What the stored quants count up from (Q4_0's 8, Q5_0's 16).
    const ZERO: i8;
    /// Whether the stored quants are signed (Q8_0's -128..=127): no relaxed dot.
    const SIGNED: bool;
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32);
}

pub(super) struct Q8_0;
pub(super) struct Q4_0;
pub(super) struct Q4_1;
pub(super) struct Q5_0;
pub(super) struct Q5_1;

impl Quant for Q8_0 {
    const BYTES: usize = 34;
    const OFFSET: bool = false;
    const ZERO: i8 = 0;
    const SIGNED: bool = true;
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
    const ZERO: i8 = 8;
    const SIGNED: bool = false;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let mut q = [0i8; BLOCK];
        let (lo, hi) = q.split_at_mut(16);
        for ((l, h), &b) in lo.iter_mut().zip(hi.iter_mut()).zip(block.iter().skip(2)) {
            *l = (b & 15) as i8 - taken(Self::ZERO);
            *h = (b >> 4) as i8 - taken(Self::ZERO);
        }
        (q, f16_at(block, 0), 0.0)
    }
}

impl Quant for Q4_1 {
    const BYTES: usize = 20;
    const OFFSET: bool = true;
    const ZERO: i8 = 0;
    const SIGNED: bool = false;
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
    const ZERO: i8 = 16;
    const SIGNED: bool = false;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let q = decode_q5(
            block.get(2..6).unwrap_or(&[]),
            block.get(6..).unwrap_or(&[]),
            taken(Self::ZERO),
        );
        (q, f16_at(block, 0), 0.0)
    }
}

impl Quant for Q5_1 {
    const BYTES: usize = 24;
    const OFFSET: bool = true;
    const ZERO: i8 = 0;
    const SIGNED: bool = false;
    #[inline(always)]
    fn decode(block: &[u8]) -> ([i8; BLOCK], f32, f32) {
        let q = decode_q5(
            block.get(4..8).unwrap_or(&[]),
            block.get(8..).unwrap_or(&[]),
            taken(Self::ZERO),
        );
        (q, f16_at(block, 0), f16_at(block, 2))
    }
}
