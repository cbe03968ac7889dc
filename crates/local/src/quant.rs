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
//!
//! The parts: [`half`] converts IEEE halves, [`block`] decodes the 32-element block
//! formats, [`product`] multiplies weights with activations, [`kquant`] does both for
//! the K-quants' super-blocks. This module picks the part for a tensor's format, and
//! writes the block formats for the tests' models.

mod block;
mod half;
mod kquant;
mod product;

use crate::gguf::TensorKind;
use std::fmt;

pub use block::BLOCK;
pub use half::{f16_to_f32, f32_to_f16};
pub(crate) use product::dot_f32;

use block::{Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, decode_blocks};
use product::{matmul_float, matmul_quant};

/// A product whose operands do not fit together.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ShapeError(pub String);

impl fmt::Display for ShapeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "shape mismatch: {}", self.0)
    }
}

impl std::error::Error for ShapeError {}

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
    if rows == 0 || n == 0 {
        // Nothing to write (a helper's empty share of a narrow matrix).
        return Ok(());
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

#[cfg(test)]
mod tests;
