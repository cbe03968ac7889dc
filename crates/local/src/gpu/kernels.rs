//! `kernels`: the WGSL sources (`wgsl/`) and how each is put together: the weight
//! product gets its format's decoder, found by the block's bytes and elements.

use crate::gguf::TensorKind;

const QUANT: &str = include_str!("wgsl/quant.wgsl");
const MATMUL: &str = include_str!("wgsl/matmul.wgsl");
pub(super) const RMS_NORM: &str = include_str!("wgsl/rms_norm.wgsl");
pub(super) const ROPE: &str = include_str!("wgsl/rope.wgsl");
pub(super) const ATTENTION: &str = include_str!("wgsl/attention.wgsl");
pub(super) const ELEMENTWISE: &str = include_str!("wgsl/elementwise.wgsl");

/// Tokens a weight-product workgroup reads at once (`TILE` in matmul.wgsl).
pub(super) const TILE: usize = 8;
/// Rows per step of a dispatch's x dimension (`ROWS_PER_Y` in matmul.wgsl): WebGPU
/// caps a dimension at 65,535 workgroups.
pub(super) const ROWS_PER_Y: usize = 32_768;
/// Invocations per workgroup of the elementwise kernels.
pub(super) const THREADS: usize = 64;

/// The decoder (in quant.wgsl) of a format's element `j` of the block at byte `b`.
fn decoder(kind: TensorKind) -> &'static str {
    match kind {
        TensorKind::F32 => "f32_at",
        TensorKind::F16 => "f16_at",
        TensorKind::Q4_0 => "q4_0",
        TensorKind::Q4_1 => "q4_1",
        TensorKind::Q5_0 => "q5_0",
        TensorKind::Q5_1 => "q5_1",
        TensorKind::Q8_0 => "q8_0",
        TensorKind::Q4_K => "q4_k",
        TensorKind::Q5_K => "q5_k",
        TensorKind::Q6_K => "q6_k",
    }
}

/// The weight product for `kind`: its pipeline's key and source.
pub(super) fn matmul(kind: TensorKind) -> (String, String) {
    let (elements, bytes) = (kind.block_elements(), kind.block_bytes());
    // F32 and F16 are "blocks" of one element, read from the row's start.
    let find = if elements == 1 {
        format!("{}(base, c)", decoder(kind))
    } else {
        format!(
            "{}(base + (c / {elements}u) * {bytes}u, c % {elements}u)",
            decoder(kind)
        )
    };
    let source = format!(
        "fn decode(base: u32, c: u32) -> f32 {{\n    return {find};\n}}\n{QUANT}\n{MATMUL}"
    );
    (format!("matmul {kind:?}"), source)
}
