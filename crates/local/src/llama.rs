//! The llama-family models (SmolLM2, Llama 2/3.x, TinyLlama, Qwen2/2.5, Qwen3, Gemma 2
//! and 3, Phi-3/3.5/4-mini): their configuration and weights checked out of a GGUF
//! file, and [`Session`], the forward pass with a KV cache that keeps the prefix a new
//! prompt shares with the last.
//!
//! The block is the usual one: RMSNorm, grouped-query attention with RoPE, RMSNorm,
//! SwiGLU feed-forward; a final norm and the output head (or the token embedding,
//! tied). Gemma and Phi-3 change more of it ([`arch`]); the others differ only in the
//! attention, as llama.cpp has them:
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

pub mod arch;
#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
mod gpu_session;
pub mod ops;
mod session;
pub mod team;

pub use arch::{Arch, SUPPORTED_ARCHITECTURES};
#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
pub use gpu_session::{GpuSession, GpuSessionError};
pub use session::Session;

use crate::gguf::{Gguf, TensorKind};
use crate::quant;
use arch::{Dims, Gemma, Meta, Rope};
use std::fmt;

/// The KV cache's memory for a whole window (every layer's f32 keys and values): the
/// window shrinks to fit it. SmolLM2 takes 46 KiB a token, 377 MiB for its 8,192.
pub const KV_CACHE_BUDGET: usize = 1 << 30;
/// The smallest window worth running: a model whose cache cannot hold it is refused.
const MIN_WINDOW: usize = 256;
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
    /// What the WebGPU pass does not run (yet): the CPU's [`Session`] does.
    NotOnGpu(String),
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
    /// A helper thread failed or stopped answering ([`team`]): the session goes on
    /// in its own thread.
    Helpers(String),
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
            ModelError::NotOnGpu(what) => write!(f, "the WebGPU path does not run {what}"),
            ModelError::ContextFull { limit } => {
                write!(f, "the context window is full ({limit} tokens)")
            }
            ModelError::TokenOutOfRange { token, vocab } => {
                write!(f, "token {token} is outside the vocabulary of {vocab}")
            }
            ModelError::EmptyPrompt => write!(f, "the prompt is empty"),
            ModelError::Shape(e) => write!(f, "{e}"),
            ModelError::Helpers(why) => write!(f, "a helper thread failed: {why}"),
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
    /// The rows of the tensor this matrix is (Phi-3's fused q, k, v and gate, up
    /// are row ranges of one tensor each).
    first_row: usize,
    rows: usize,
    cols: usize,
}

impl Weight {
    /// `rows` of this matrix from its `first`.
    fn rows(&self, first: usize, rows: usize) -> Weight {
        Weight {
            first_row: self.first_row + first,
            rows,
            ..self.clone()
        }
    }
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
    /// Gemma's norms of the attention's and the feed-forward's outputs.
    post_attn_norm: Option<Vec<f32>>,
    post_ffn_norm: Option<Vec<f32>>,
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
    /// Llama 3.1+'s RoPE scaling, or Phi-3's long or short factors: each rotated
    /// pair's angle divided by its factor.
    rope_freqs: Option<Vec<f32>>,
    /// RoPE's base (`config.rope_base`), linear scaling and magnitude.
    rope: Rope,
    /// What Gemma changes in the block.
    gemma: Option<Gemma>,
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
        let rope = Rope::read(&Meta { gguf: &gguf, arch });
        let mut config = Config {
            arch,
            vocab,
            dim,
            layers: need("block_count")?,
            heads,
            kv_heads,
            head_dim,
            ffn: need("feed_forward_length")?,
            rope_base: rope.base,
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
        // Each block is 6 or 9 tensors the file must hold: checked before a Vec is sized
        // by it.
        let tensors = gguf.tensors().count();
        if config.layers.saturating_mul(arch.tensors_per_block()) > tensors {
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
        let orig_context = gguf
            .u64(&key("rope.scaling.original_context_length"))
            .map_or(trained, |v| usize::try_from(v).unwrap_or(usize::MAX));
        let rope_freqs = rope_factors(&gguf, config.context > orig_context)
            .map(|name| vector(&gguf, name, rope_dims / 2))
            .transpose()?;
        let dims = Dims {
            layers: config.layers,
            dim,
            heads,
            head_dim,
        };
        let gemma = Gemma::read(&Meta { gguf: &gguf, arch }, dims, rope)?;
        let layers = (0..config.layers)
            .map(|i| block(&gguf, &config, i))
            .collect::<Result<Vec<_>, _>>()?;
        let embedding = matrix(&gguf, "token_embd.weight", vocab, dim)?;
        // Gemma's head is always the embedding, as llama.cpp reads it.
        let output = match gguf.tensor("output.weight") {
            Some(_) if gemma.is_none() => matrix(&gguf, "output.weight", vocab, dim)?,
            _ => embedding.clone(),
        };
        let output_norm = vector(&gguf, "output_norm.weight", dim)?;
        Ok(Model {
            gguf,
            config,
            rope_dims,
            rope_freqs,
            rope,
            gemma,
            embedding,
            layers,
            output_norm,
            output,
        })
    }

    /// Refuses a model the WebGPU pass would run wrong: an architecture whose steps it
    /// lacks, or RoPE it does not scale.
    pub fn check_gpu(&self) -> Result<(), ModelError> {
        let arch = self.config.arch;
        if !arch.on_gpu() {
            return Err(ModelError::NotOnGpu(format!("{} models", arch.name())));
        }
        if !self.rope.is_plain() {
            return Err(ModelError::NotOnGpu("scaled RoPE".into()));
        }
        Ok(())
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
        self.row_bytes(w, 0..w.rows)
    }

    /// The bytes of `rows` of a weight matrix.
    fn row_bytes(&self, w: &Weight, rows: std::ops::Range<usize>) -> &[u8] {
        let data = self.gguf.tensor(&w.name).map_or(&[][..], |t| t.data);
        let row = quant::row_bytes(w.kind, w.cols).unwrap_or(0);
        data.get((w.first_row + rows.start) * row..(w.first_row + rows.end) * row)
            .unwrap_or(&[])
    }

    /// `out = W·x` for every token of `x`.
    fn matmul(&self, w: &Weight, x: &[f32], out: &mut Vec<f32>) -> Result<(), ModelError> {
        self.matmul_rows(w, 0..w.rows, x, out)
    }

    /// `out = W[rows]·x` for every token of `x`: `rows` of the matrix only.
    fn matmul_rows(
        &self,
        w: &Weight,
        rows: std::ops::Range<usize>,
        x: &[f32],
        out: &mut Vec<f32>,
    ) -> Result<(), ModelError> {
        out.clear();
        out.resize(x.len() / w.cols.max(1) * rows.len(), 0.0);
        let bytes = self.row_bytes(w, rows.clone());
        quant::matmul(bytes, w.kind, rows.len(), w.cols, x, out)?;
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

/// One block's weights, present or not as the family has them; a wrong shape is an
/// error either way.
fn block(gguf: &Gguf, config: &Config, i: usize) -> Result<Layer, ModelError> {
    let (arch, dim, head_dim) = (config.arch, config.dim, config.head_dim);
    let (q_dim, kv, ffn) = (config.q_dim(), config.kv_dim(), config.ffn);
    let t = Tensors { gguf, block: i };
    let (biases, qk_norm) = (
        arch == Arch::Qwen2,
        matches!(arch, Arch::Qwen3 | Arch::Gemma3),
    );
    let gemma = arch.is_gemma();
    let attn_norm = t.vector("attn_norm.weight", dim)?;
    // Phi-3's q, k, v are one matrix's rows, in that order; so are its gate and up.
    let (q, k, v) = match t.has("attn_qkv.weight") {
        true if arch == Arch::Phi3 => {
            // Saturating: a hostile header's widths fail the shape check, never overflow.
            let rows = q_dim.saturating_add(kv.saturating_mul(2));
            let qkv = t.matrix("attn_qkv.weight", rows, dim)?;
            (
                qkv.rows(0, q_dim),
                qkv.rows(q_dim, kv),
                qkv.rows(q_dim + kv, kv),
            )
        }
        _ => (
            t.matrix("attn_q.weight", q_dim, dim)?,
            t.matrix("attn_k.weight", kv, dim)?,
            t.matrix("attn_v.weight", kv, dim)?,
        ),
    };
    let q_bias = t.maybe("attn_q.bias", q_dim, biases)?;
    let k_bias = t.maybe("attn_k.bias", kv, biases)?;
    let v_bias = t.maybe("attn_v.bias", kv, biases)?;
    let q_norm = t.maybe("attn_q_norm.weight", head_dim, qk_norm)?;
    let k_norm = t.maybe("attn_k_norm.weight", head_dim, qk_norm)?;
    let o = t.matrix("attn_output.weight", dim, q_dim)?;
    let post_attn_norm = t.maybe("post_attention_norm.weight", dim, gemma)?;
    let ffn_norm = t.vector("ffn_norm.weight", dim)?;
    let (gate, up) = match arch {
        Arch::Phi3 => {
            let up = t.matrix("ffn_up.weight", ffn.saturating_mul(2), dim)?;
            (up.rows(0, ffn), up.rows(ffn, ffn))
        }
        _ => (
            t.matrix("ffn_gate.weight", ffn, dim)?,
            t.matrix("ffn_up.weight", ffn, dim)?,
        ),
    };
    Ok(Layer {
        attn_norm,
        q,
        k,
        v,
        q_bias,
        k_bias,
        v_bias,
        q_norm,
        k_norm,
        o,
        post_attn_norm,
        post_ffn_norm: t.maybe("post_ffw_norm.weight", dim, gemma)?,
        ffn_norm,
        gate,
        up,
        down: t.matrix("ffn_down.weight", dim, ffn)?,
    })
}

/// One block's tensors, by their names' ends (`blk.{block}.{part}`): calls rather than
/// closures inlined at each tensor, which cost the worker's wasm kilobytes.
struct Tensors<'a> {
    gguf: &'a Gguf,
    block: usize,
}

impl Tensors<'_> {
    fn name(&self, part: &str) -> String {
        format!("blk.{}.{part}", self.block)
    }

    fn has(&self, part: &str) -> bool {
        self.gguf.tensor(&self.name(part)).is_some()
    }

    #[inline(never)]
    fn matrix(&self, part: &str, rows: usize, cols: usize) -> Result<Weight, ModelError> {
        matrix(self.gguf, &self.name(part), rows, cols)
    }

    #[inline(never)]
    fn vector(&self, part: &str, len: usize) -> Result<Vec<f32>, ModelError> {
        vector(self.gguf, &self.name(part), len)
    }

    /// Present or not as the family has it (`required`: an error when absent); a wrong
    /// shape is an error either way.
    #[inline(never)]
    fn maybe(
        &self,
        part: &str,
        len: usize,
        required: bool,
    ) -> Result<Option<Vec<f32>>, ModelError> {
        let name = self.name(part);
        match self.gguf.tensor(&name) {
            None if !required => Ok(None),
            _ => vector(self.gguf, &name, len).map(Some),
        }
    }
}

/// The tensor of RoPE's per-pair factors: Llama 3.1's `rope_freqs`, else Phi-3's
/// long factors when the window passes the trained one, its short ones otherwise.
fn rope_factors(gguf: &Gguf, long: bool) -> Option<&'static str> {
    let names = match long {
        true => ["rope_freqs.weight", "rope_factors_long.weight"],
        false => ["rope_freqs.weight", "rope_factors_short.weight"],
    };
    names.into_iter().find(|name| gguf.tensor(name).is_some())
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
        first_row: 0,
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
