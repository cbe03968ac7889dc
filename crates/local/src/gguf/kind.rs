//! `kind`: the tensor formats this crate computes with, by their ggml type ids, and
//! the bytes a run of elements takes in each.

use super::error::GgufError;

/// The tensor formats this crate computes with (ggml type ids 0, 1, 2, 3, 6, 7, 8, 12,
/// 13, 14): the K-quants are the `Q4_K_M`, `Q5_K_M` and `Q6_K` files of the model
/// hubs, and Q5_0/Q5_1 what llama.cpp's quantiser puts in them for the matrices whose
/// rows are not whole 256-blocks (Qwen2.5-0.5B's 896 columns, SmolLM2's 576).
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorKind {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q4_K,
    Q5_K,
    Q6_K,
}

impl TensorKind {
    /// ggml's type id.
    pub fn id(self) -> u32 {
        match self {
            TensorKind::F32 => 0,
            TensorKind::F16 => 1,
            TensorKind::Q4_0 => 2,
            TensorKind::Q4_1 => 3,
            TensorKind::Q5_0 => 6,
            TensorKind::Q5_1 => 7,
            TensorKind::Q8_0 => 8,
            TensorKind::Q4_K => 12,
            TensorKind::Q5_K => 13,
            TensorKind::Q6_K => 14,
        }
    }

    /// The format of ggml's type `id`; an error for one this crate does not compute with.
    pub fn from_id(id: u32) -> Result<TensorKind, GgufError> {
        Ok(match id {
            0 => TensorKind::F32,
            1 => TensorKind::F16,
            2 => TensorKind::Q4_0,
            3 => TensorKind::Q4_1,
            6 => TensorKind::Q5_0,
            7 => TensorKind::Q5_1,
            8 => TensorKind::Q8_0,
            12 => TensorKind::Q4_K,
            13 => TensorKind::Q5_K,
            14 => TensorKind::Q6_K,
            other => return Err(GgufError::UnsupportedTensorType(other)),
        })
    }

    /// Elements per block: rows of a quantized tensor are whole blocks.
    pub fn block_elements(self) -> usize {
        match self {
            TensorKind::F32 | TensorKind::F16 => 1,
            TensorKind::Q4_0
            | TensorKind::Q4_1
            | TensorKind::Q5_0
            | TensorKind::Q5_1
            | TensorKind::Q8_0 => 32,
            TensorKind::Q4_K | TensorKind::Q5_K | TensorKind::Q6_K => 256,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            TensorKind::F32 => 4,
            TensorKind::F16 => 2,
            TensorKind::Q4_0 => 18,
            TensorKind::Q4_1 => 20,
            TensorKind::Q5_0 => 22,
            TensorKind::Q5_1 => 24,
            TensorKind::Q8_0 => 34,
            TensorKind::Q4_K => 144,
            TensorKind::Q5_K => 176,
            TensorKind::Q6_K => 210,
        }
    }

    /// Bytes holding `elements` values, or None when they are not whole blocks.
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        let per = self.block_elements() as u64;
        if !elements.is_multiple_of(per) {
            return None;
        }
        (elements / per).checked_mul(self.block_bytes() as u64)
    }
}
