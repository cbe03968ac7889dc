//! The architectures this crate runs, by `general.architecture`, and what each changes
//! in the llama block, read from the metadata as llama.cpp (`src/models/<arch>.cpp` and
//! its hyperparameter loader) reads it:
//! - `gemma2`: the embeddings scaled by `√dim`; a norm after the attention and after the
//!   feed-forward as well as before each; a GELU-gated feed-forward; attention scores
//!   and the logits soft-capped (`cap·tanh(x/cap)`, caps 50 and 30 unless the file says);
//!   every other layer (`attention.sliding_window_pattern`, 2) sliding-window, 4096
//!   positions unless the file says;
//! - `gemma3`: the same without soft-capping, with QK-norm; when the file names a
//!   window, five layers in six (pattern 6) slide over it and turn RoPE at base 10,000
//!   (`rope.freq_base_swa`) unscaled, the others at the file's base, scaled;
//! - `phi3`: one `attn_qkv` matrix for q, k and v, one `ffn_up` for the gate and up
//!   halves; RoPE's long or short factors (`rope_factors_long`/`_short`) by whether the
//!   window passes `rope.scaling.original_context_length`. llama.cpp ignores Phi-3's
//!   sliding window ("Phi SWA is currently disabled"), and so does this crate.
//!
//! Gemma's norm weights need no `+1`: the converter adds it before writing the file.
//! Each query is scaled by `1/√head_dim` (`attention.key_length`), but in the 27B
//! models (46 layers of Gemma 2, 62 of Gemma 3) by `1/√(dim/heads)`, as llama.cpp
//! picks it by the layer count.

use super::ModelError;
use crate::gguf::Gguf;

/// The file's metadata under an architecture's prefix (`gemma2.` …): one call for each
/// key read, where closures inlined at each would cost the worker's wasm kilobytes.
pub(super) struct Meta<'a> {
    pub gguf: &'a Gguf,
    pub arch: Arch,
}

impl Meta<'_> {
    fn key(&self, k: &str) -> String {
        format!("{}.{k}", self.arch.name())
    }

    #[inline(never)]
    fn f32(&self, k: &str) -> Option<f32> {
        self.gguf.f32(&self.key(k))
    }

    /// A count, as large as `usize` holds.
    #[inline(never)]
    fn count(&self, k: &str) -> Option<usize> {
        let v = self.gguf.u64(&self.key(k))?;
        Some(usize::try_from(v).unwrap_or(usize::MAX))
    }

    fn str(&self, k: &str) -> Option<&str> {
        self.gguf.str(&self.key(k))
    }
}

/// The architectures this crate runs, by `general.architecture`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Llama,
    Qwen2,
    Qwen3,
    Gemma2,
    Gemma3,
    Phi3,
}

/// What [`ModelError::UnknownArchitecture`] says is supported.
pub const SUPPORTED_ARCHITECTURES: &str = "llama, qwen2, qwen3, gemma2, gemma3, phi3";

impl Arch {
    pub(super) fn from_name(name: &str) -> Option<Arch> {
        Some(match name {
            "llama" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "qwen3" => Arch::Qwen3,
            "gemma2" => Arch::Gemma2,
            "gemma3" => Arch::Gemma3,
            "phi3" => Arch::Phi3,
            _ => return None,
        })
    }

    /// The metadata keys' prefix.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
            Arch::Qwen3 => "qwen3",
            Arch::Gemma2 => "gemma2",
            Arch::Gemma3 => "gemma3",
            Arch::Phi3 => "phi3",
        }
    }

    /// RoPE on pairs half the rotated width apart (NeoX), rather than adjacent.
    pub(super) fn neox_rope(self) -> bool {
        self != Arch::Llama
    }

    /// Tensors a block holds at least: Phi-3 fuses q, k, v and the gate with up.
    pub(super) fn tensors_per_block(self) -> usize {
        match self {
            Arch::Phi3 => 6,
            _ => 9,
        }
    }

    /// Whether the WebGPU pass (`GpuSession`) has this architecture's steps.
    pub fn on_gpu(self) -> bool {
        matches!(self, Arch::Llama | Arch::Qwen2 | Arch::Qwen3)
    }

    pub(super) fn is_gemma(self) -> bool {
        matches!(self, Arch::Gemma2 | Arch::Gemma3)
    }

    /// Layers of the 27B model, whose queries are scaled by `dim / heads`.
    fn layers_of_27b(self) -> Option<usize> {
        match self {
            Arch::Gemma2 => Some(46),
            Arch::Gemma3 => Some(62),
            _ => None,
        }
    }
}

/// How RoPE turns the pairs at a layer: `angle = scale · pos · base^(−2i/dims)` (over
/// the pair's factor, when the model has them), cos and sin times `magnitude`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rope {
    pub base: f32,
    /// Linear scaling, `1 / rope.scaling.factor` (1 when unscaled).
    pub scale: f32,
    /// `rope.scaling.attn_factor` (Phi-3's long-context files), else 1.
    pub magnitude: f32,
}

impl Rope {
    /// The file's RoPE, as llama.cpp's loader and context read it: the factor of
    /// `rope.scaling.factor` (or the older `rope.scale_linear`) unless the scaling type
    /// is `none`. YaRN's interpolation is not reproduced: a `yarn` file turns unscaled.
    pub(super) fn read(m: &Meta) -> Rope {
        let factor = m
            .f32("rope.scaling.factor")
            .or_else(|| m.f32("rope.scale_linear"))
            .filter(|&f| f > 0.0);
        let kind = m.str("rope.scaling.type").unwrap_or("linear");
        let (scale, magnitude) = match kind {
            "none" | "yarn" => (1.0, 1.0),
            _ => (
                factor.map_or(1.0, |f| 1.0 / f),
                m.f32("rope.scaling.attn_factor").unwrap_or(1.0),
            ),
        };
        Rope {
            base: m.f32("rope.freq_base").unwrap_or(10_000.0),
            scale,
            magnitude,
        }
    }

    /// Turns as llama and Qwen always have: the base alone.
    pub fn is_plain(&self) -> bool {
        self.scale == 1.0 && self.magnitude == 1.0
    }
}

/// What Gemma 2 and 3 change in the block (llama.cpp's `gemma2` and `gemma3` graphs).
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Gemma {
    /// Each query's scale (see the module's notes).
    pub query_scale: f32,
    /// Gemma 2's caps on the attention scores and on the logits.
    pub attn_softcap: Option<f32>,
    pub final_softcap: Option<f32>,
    /// Positions a local layer's query sees, itself included; None: no local layers.
    pub window: Option<usize>,
    /// Every `period`-th layer (counting from 1) is global, the rest local; 0: all local.
    pub period: usize,
    /// The local layers' RoPE.
    pub local_rope: Rope,
}

/// Gemma's shape, for [`Gemma::read`].
pub(super) struct Dims {
    pub layers: usize,
    pub dim: usize,
    pub heads: usize,
    pub head_dim: usize,
}

impl Gemma {
    /// Gemma's settings from the file, None for the other architectures.
    pub(super) fn read(m: &Meta, d: Dims, global: Rope) -> Result<Option<Gemma>, ModelError> {
        let arch = m.arch;
        if !arch.is_gemma() {
            return Ok(None);
        }
        let gemma2 = arch == Arch::Gemma2;
        let width = match arch.layers_of_27b() == Some(d.layers) {
            true => d.dim / d.heads.max(1),
            false => d.head_dim,
        };
        let window = m.count("attention.sliding_window");
        let window = match (gemma2, window) {
            (true, None) => Some(4096),
            (_, Some(0)) | (false, None) => None,
            (_, Some(w)) => Some(w),
        };
        let period = m
            .count("attention.sliding_window_pattern")
            .unwrap_or(if gemma2 { 2 } else { 6 });
        let cap = |k: &str, default: Option<f32>| -> Result<Option<f32>, ModelError> {
            match m.f32(k).or(default) {
                // Said without the number: formatting a float costs the worker 12 KB.
                Some(c) if !(c >= 0.0 && c.is_finite()) => {
                    Err(ModelError::BadConfig(format!("{k} is no soft cap")))
                }
                c => Ok(c.filter(|&c| c > 0.0)),
            }
        };
        let local_rope = match gemma2 {
            true => global,
            false => Rope {
                base: 10_000.0,
                scale: 1.0,
                magnitude: 1.0,
            },
        };
        Ok(Some(Gemma {
            query_scale: 1.0 / (width as f32).sqrt(),
            attn_softcap: match gemma2 {
                true => cap("attn_logit_softcapping", Some(50.0))?,
                false => None,
            },
            final_softcap: cap("final_logit_softcapping", gemma2.then_some(30.0))?,
            window,
            period,
            local_rope: Rope {
                base: m.f32("rope.freq_base_swa").unwrap_or(local_rope.base),
                ..local_rope
            },
        }))
    }

    /// Whether `layer` attends over the sliding window (llama.cpp's `is_swa`).
    pub(super) fn is_local(&self, layer: usize) -> bool {
        self.window.is_some() && (self.period == 0 || layer % self.period < self.period - 1)
    }
}
