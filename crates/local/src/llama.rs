//! The llama-family models (SmolLM2, Llama 2/3.x, TinyLlama, Qwen2/2.5, Qwen3): their
//! configuration and weights checked out of a GGUF file, and [`Session`], the forward
//! pass with a KV cache that keeps the prefix a new prompt shares with the last.
//!
//! The block is the usual one: RMSNorm, grouped-query attention with RoPE, RMSNorm,
//! SwiGLU feed-forward; a final norm and the output head (or the token embedding,
//! tied). The families differ only in the attention, as llama.cpp has them:
//! - `llama`: RoPE on adjacent pairs (ggml's mode 0, which the GGUF converter's
//!   permutation of `attn_q`/`attn_k` expects); Llama 3.1+'s "llama3" RoPE scaling as
//!   the converter writes it, a `rope_freqs` tensor dividing each pair's angle;
//! - `qwen2`: RoPE on pairs half a head apart (NeoX, mode 2), and biases on q, k, v;
//! - `qwen3`: NeoX RoPE, and an RMSNorm over each head of q and k before it (QK-norm),
//!   with heads as wide as `attention.key_length` says (not `dim / heads`).
//!
//! The products are [`crate::quant`]'s, the other steps [`ops`]'; tokens and text are
//! the tokenizer's. On wasm with feature `gpu`, `GpuSession`
//! runs the same pass on WebGPU's kernels.
//!
//! Every size the metadata claims is checked before it sizes an allocation: widths
//! must be whole and non-zero, blocks must have their tensors in the file, and the
//! window is shrunk to what [`KV_CACHE_BUDGET`] holds, so a hostile header is a
//! [`ModelError::BadConfig`], never an out-of-memory abort in the worker.

#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
mod gpu_session;
pub mod ops;
mod session;

#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
pub use gpu_session::{GpuSession, GpuSessionError};
pub use session::Session;

use crate::gguf::{Gguf, TensorKind};
use crate::quant;
use std::fmt;

/// The KV cache's memory for a whole window (every layer's f32 keys and values): the
/// window shrinks to fit it. SmolLM2 takes 46 KiB a token, 377 MiB for its 8,192.
pub const KV_CACHE_BUDGET: usize = 1 << 30;
/// The smallest window worth running: a model whose cache cannot hold it is refused.
const MIN_WINDOW: usize = 256;
/// Tensors in one block (norms, attention, feed-forward).
const TENSORS_PER_BLOCK: usize = 9;

/// The architectures this crate runs, by `general.architecture`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arch {
    Llama,
    Qwen2,
    Qwen3,
}

/// What [`ModelError::UnknownArchitecture`] says is supported.
pub const SUPPORTED_ARCHITECTURES: &str = "llama, qwen2, qwen3";

impl Arch {
    fn from_name(name: &str) -> Option<Arch> {
        Some(match name {
            "llama" => Arch::Llama,
            "qwen2" => Arch::Qwen2,
            "qwen3" => Arch::Qwen3,
            _ => return None,
        })
    }

    /// The metadata keys' prefix.
    pub fn name(self) -> &'static str {
        match self {
            Arch::Llama => "llama",
            Arch::Qwen2 => "qwen2",
            Arch::Qwen3 => "qwen3",
        }
    }

    /// RoPE on pairs half the rotated width apart (NeoX), rather than adjacent.
    fn neox_rope(self) -> bool {
        self != Arch::Llama
    }
}

/// The shape of a model, from its metadata and checked against its tensors.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub arch: Arch,
    pub vocab: usize,
    pub dim: usize,
    pub layers: usize,
    pub heads: usize,
    pub kv_heads: usize,
    /// Each head's width: `attention.key_length`, else `dim / heads`.
    pub head_dim: usize,
    pub ffn: usize,
    pub rope_base: f32,
    pub rms_eps: f32,
    /// The window this model runs with: the smaller of the asked and the trained,
    /// and no more than [`KV_CACHE_BUDGET`] holds.
    pub context: usize,
}

impl Config {
    pub fn head_dim(&self) -> usize {
        self.head_dim
    }

    /// The queries' (and the attention output's) width: `heads × head_dim`.
    pub fn q_dim(&self) -> usize {
        self.heads * self.head_dim
    }

    pub fn kv_dim(&self) -> usize {
        self.kv_heads * self.head_dim()
    }
}

/// Why a model cannot load or run.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelError {
    UnknownArchitecture(String),
    MissingMetadata(String),
    MissingTensor(String),
    BadShape {
        tensor: String,
        expected: Vec<u64>,
        found: Vec<u64>,
    },
    BadConfig(String),
    /// The window holds `limit` tokens and the request needs more.
    ContextFull {
        limit: usize,
    },
    TokenOutOfRange {
        token: u32,
        vocab: usize,
    },
    EmptyPrompt,
    Shape(quant::ShapeError),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::UnknownArchitecture(a) => {
                write!(
                    f,
                    "model architecture {a:?} is not supported ({SUPPORTED_ARCHITECTURES} are)"
                )
            }
            ModelError::MissingMetadata(key) => write!(f, "model metadata lacks {key}"),
            ModelError::MissingTensor(name) => write!(f, "model lacks tensor {name}"),
            ModelError::BadShape {
                tensor,
                expected,
                found,
            } => {
                write!(
                    f,
                    "tensor {tensor} has shape {found:?}, the config needs {expected:?}"
                )
            }
            ModelError::BadConfig(why) => write!(f, "model config: {why}"),
            ModelError::ContextFull { limit } => {
                write!(f, "the context window is full ({limit} tokens)")
            }
            ModelError::TokenOutOfRange { token, vocab } => {
                write!(f, "token {token} is outside the vocabulary of {vocab}")
            }
            ModelError::EmptyPrompt => write!(f, "the prompt is empty"),
            ModelError::Shape(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ModelError {}

impl From<quant::ShapeError> for ModelError {
    fn from(e: quant::ShapeError) -> Self {
        ModelError::Shape(e)
    }
}

/// Where one weight matrix lives in the file's bytes, found once at load.
#[derive(Clone, Debug)]
struct Weight {
    name: String,
    kind: TensorKind,
    rows: usize,
    cols: usize,
}

#[derive(Clone, Debug)]
struct Layer {
    attn_norm: Vec<f32>,
    q: Weight,
    k: Weight,
    v: Weight,
    /// Qwen2's biases on the projections (llama.cpp reads them for llama too).
    q_bias: Option<Vec<f32>>,
    k_bias: Option<Vec<f32>>,
    v_bias: Option<Vec<f32>>,
    /// Qwen3's RMSNorm weights over each head of q and of k (QK-norm).
    q_norm: Option<Vec<f32>>,
    k_norm: Option<Vec<f32>>,
    o: Weight,
    ffn_norm: Vec<f32>,
    gate: Weight,
    up: Weight,
    down: Weight,
}

/// A loaded model: the file (owned) and the weights' places in it.
pub struct Model {
    gguf: Gguf,
    config: Config,
    /// Rotated dimensions per head (`rope.dimension_count`, else the whole head).
    rope_dims: usize,
    /// Llama 3.1+'s RoPE scaling: each rotated pair's angle divided by its factor.
    rope_freqs: Option<Vec<f32>>,
    embedding: Weight,
    layers: Vec<Layer>,
    output_norm: Vec<f32>,
    output: Weight,
}

impl fmt::Debug for Model {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Model")
            .field("config", &self.config)
            .finish()
    }
}

impl Model {
    /// Checks the file is a model of a supported family whose tensors fit its metadata, and runs
    /// it with a window of `min(context, trained)` tokens, or fewer when the KV cache
    /// for that many would pass [`KV_CACHE_BUDGET`].
    pub fn load(gguf: Gguf, context: usize) -> Result<Model, ModelError> {
        let name = gguf.str("general.architecture").unwrap_or("(none)");
        let arch = Arch::from_name(name)
            .ok_or_else(|| ModelError::UnknownArchitecture(name.to_string()))?;
        let key = |k: &str| format!("{}.{k}", arch.name());
        let need = |k: &str| {
            let k = key(k);
            let v = gguf
                .u64(&k)
                .ok_or_else(|| ModelError::MissingMetadata(k.clone()))?;
            size(&k, v)
        };
        let optional = |k: &str| gguf.u64(&key(k)).map(|v| size(&key(k), v)).transpose();
        let dim = need("embedding_length")?;
        let heads = need("attention.head_count")?;
        let kv_heads = optional("attention.head_count_kv")?.unwrap_or(heads);
        // Only ever the smaller of this and the asked: too large for memory is no harm.
        let trained = gguf
            .u64(&key("context_length"))
            .map_or(2048, |v| usize::try_from(v).unwrap_or(usize::MAX));
        let embd = gguf
            .tensor("token_embd.weight")
            .ok_or_else(|| ModelError::MissingTensor("token_embd.weight".into()))?;
        let vocab = size(
            "token_embd.weight rows",
            embd.dims.get(1).copied().unwrap_or(0),
        )?;
        let bad = |why: String| Err(ModelError::BadConfig(why));
        if heads == 0 || kv_heads == 0 || heads % kv_heads != 0 {
            return bad(format!("{heads} heads and {kv_heads} KV heads"));
        }
        let head_dim = match optional("attention.key_length")? {
            Some(k) => k,
            None if dim % heads == 0 => dim / heads,
            None => return bad(format!("{dim} wide with {heads} heads")),
        };
        let value_dim = optional("attention.value_length")?.unwrap_or(head_dim);
        if head_dim == 0 || value_dim != head_dim || heads.checked_mul(head_dim).is_none() {
            return bad(format!(
                "heads {head_dim} wide with values {value_dim} wide"
            ));
        }
        let mut config = Config {
            arch,
            vocab,
            dim,
            layers: need("block_count")?,
            heads,
            kv_heads,
            head_dim,
            ffn: need("feed_forward_length")?,
            rope_base: gguf.f32(&key("rope.freq_base")).unwrap_or(10_000.0),
            rms_eps: gguf
                .f32(&key("attention.layer_norm_rms_epsilon"))
                .unwrap_or(1e-5),
            context: 1,
        };
        if dim == 0 || config.ffn == 0 || vocab == 0 {
            return bad(format!(
                "{dim} wide, {} feed-forward, {vocab} tokens: none may be 0",
                config.ffn
            ));
        }
        // Each block is 9 tensors the file must hold: checked before a Vec is sized by it.
        let tensors = gguf.tensors().count();
        if config.layers.saturating_mul(TENSORS_PER_BLOCK) > tensors {
            return bad(format!(
                "{} blocks, but the file has {tensors} tensors",
                config.layers
            ));
        }
        let per_token = config
            .layers
            .checked_mul(config.kv_dim())
            .and_then(|n| n.checked_mul(2 * size_of::<f32>()));
        config.context = window(context, trained, per_token)?;
        let rope_dims = gguf
            .u64(&key("rope.dimension_count"))
            .map_or(head_dim, |v| usize::try_from(v).unwrap_or(usize::MAX));
        if rope_dims > head_dim || !rope_dims.is_multiple_of(2) {
            return bad(format!("rope over {rope_dims} of a head of {head_dim}"));
        }
        let rope_freqs = match gguf.tensor("rope_freqs.weight") {
            Some(_) => Some(vector(&gguf, "rope_freqs.weight", rope_dims / 2)?),
            None => None,
        };
        let (q_dim, kv, ffn, vocab) = (config.q_dim(), config.kv_dim(), config.ffn, config.vocab);
        let weight = |name: &str, rows: usize, cols: usize| matrix(&gguf, name, rows, cols);
        let norm = |name: &str| vector(&gguf, name, dim);
        // Present or not as the family has it; a wrong shape is an error either way.
        let maybe = |name: String, len: usize, required: bool| match gguf.tensor(&name) {
            None if !required => Ok(None),
            _ => vector(&gguf, &name, len).map(Some),
        };
        let (biases, qk_norm) = (arch == Arch::Qwen2, arch == Arch::Qwen3);
        let mut layers = Vec::with_capacity(config.layers);
        for i in 0..config.layers {
            let n = |part: &str| format!("blk.{i}.{part}.weight");
            let b = |part: &str| format!("blk.{i}.{part}.bias");
            layers.push(Layer {
                attn_norm: norm(&n("attn_norm"))?,
                q: weight(&n("attn_q"), q_dim, dim)?,
                k: weight(&n("attn_k"), kv, dim)?,
                v: weight(&n("attn_v"), kv, dim)?,
                q_bias: maybe(b("attn_q"), q_dim, biases)?,
                k_bias: maybe(b("attn_k"), kv, biases)?,
                v_bias: maybe(b("attn_v"), kv, biases)?,
                q_norm: maybe(n("attn_q_norm"), head_dim, qk_norm)?,
                k_norm: maybe(n("attn_k_norm"), head_dim, qk_norm)?,
                o: weight(&n("attn_output"), dim, q_dim)?,
                ffn_norm: norm(&n("ffn_norm"))?,
                gate: weight(&n("ffn_gate"), ffn, dim)?,
                up: weight(&n("ffn_up"), ffn, dim)?,
                down: weight(&n("ffn_down"), dim, ffn)?,
            });
        }
        let embedding = weight("token_embd.weight", vocab, dim)?;
        let output = match gguf.tensor("output.weight") {
            Some(_) => weight("output.weight", vocab, dim)?,
            None => embedding.clone(),
        };
        let output_norm = norm("output_norm.weight")?;
        Ok(Model {
            gguf,
            config,
            rope_dims,
            rope_freqs,
            embedding,
            layers,
            output_norm,
            output,
        })
    }

    pub fn config(&self) -> &Config {
        &self.config
    }

    /// The file, whose metadata the tokenizer and the chat template read.
    pub fn gguf(&self) -> &Gguf {
        &self.gguf
    }

    /// A weight matrix's bytes: checked at load, so found here.
    fn bytes(&self, w: &Weight) -> &[u8] {
        self.gguf.tensor(&w.name).map_or(&[], |t| t.data)
    }

    /// `out = W·x` for every token of `x`.
    fn matmul(&self, w: &Weight, x: &[f32], out: &mut Vec<f32>) -> Result<(), ModelError> {
        out.clear();
        out.resize(x.len() / w.cols.max(1) * w.rows, 0.0);
        quant::matmul(self.bytes(w), w.kind, w.rows, w.cols, x, out)?;
        Ok(())
    }
}

/// A size from the metadata, refused when this machine's `usize` cannot hold it (on
/// wasm32, `as usize` would keep its low 32 bits and load a different model).
fn size(key: &str, value: u64) -> Result<usize, ModelError> {
    usize::try_from(value).map_err(|_| {
        ModelError::BadConfig(format!("{key} of {value} is past this machine's memory"))
    })
}

/// The window: the smaller of the `asked` and the `trained`, shrunk to the tokens whose
/// keys and values (`per_token` bytes each; None when that overflows) fit
/// [`KV_CACHE_BUDGET`]; refused when fewer than [`MIN_WINDOW`] (or the asked) fit.
fn window(asked: usize, trained: usize, per_token: Option<usize>) -> Result<usize, ModelError> {
    let wanted = asked.min(trained).max(1);
    let fits = match per_token {
        Some(0) => usize::MAX,
        Some(bytes) => KV_CACHE_BUDGET / bytes,
        None => 0,
    };
    let least = wanted.min(MIN_WINDOW);
    if fits < least {
        let needs = per_token.map_or("more memory than there is".into(), |bytes| {
            format!("{} MiB", bytes.saturating_mul(least) >> 20)
        });
        return Err(ModelError::BadConfig(format!(
            "a window of {least} tokens needs {needs} of KV cache, more than the {} MiB budget",
            KV_CACHE_BUDGET >> 20
        )));
    }
    Ok(wanted.min(fits))
}

fn matrix(gguf: &Gguf, name: &str, rows: usize, cols: usize) -> Result<Weight, ModelError> {
    let t = gguf
        .tensor(name)
        .ok_or_else(|| ModelError::MissingTensor(name.to_string()))?;
    let expected = vec![cols as u64, rows as u64];
    if t.dims != expected.as_slice() {
        return Err(ModelError::BadShape {
            tensor: name.into(),
            expected,
            found: t.dims.to_vec(),
        });
    }
    quant::row_bytes(t.kind, cols)?;
    Ok(Weight {
        name: name.to_string(),
        kind: t.kind,
        rows,
        cols,
    })
}

fn vector(gguf: &Gguf, name: &str, len: usize) -> Result<Vec<f32>, ModelError> {
    let t = gguf
        .tensor(name)
        .ok_or_else(|| ModelError::MissingTensor(name.to_string()))?;
    if t.dims != [len as u64] {
        let expected = vec![len as u64];
        return Err(ModelError::BadShape {
            tensor: name.into(),
            expected,
            found: t.dims.to_vec(),
        });
    }
    let mut out = vec![0f32; len];
    quant::dequantize_row(t.data, t.kind, &mut out)?;
    Ok(out)
}

#[cfg(test)]
mod families;
#[cfg(test)]
mod hostile;
#[cfg(test)]
mod tests;
