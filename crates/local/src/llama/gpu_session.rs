//! `gpu_session`: [`super::Session`]'s forward pass on WebGPU (issue 44): the same
//! steps in the same order, each a kernel of [`crate::gpu`], the model's matrices
//! uploaded once as the file has them and the KV cache kept on the device for the
//! whole window. A call records the pass and reads back only the last token's logits.
//!
//! What stays on the CPU: the embedding rows (dequantized for the batch's tokens, a
//! row each) and RoPE's angle table ([`ops::rope_table`], so both paths rotate by the
//! same f32 angles). Activations are f32 throughout, where the CPU's products round them
//! to 8 bits: the two paths' logits differ by that rounding (`tests/webgpu_forward.rs`
//! states the bound), not by their order of sums alone.

use super::ops::{self, Attention};
use super::{Model, ModelError, Weight};
use crate::gpu::{Gpu, GpuError, Matrix, Tensor};
use crate::quant;
use std::fmt;
use std::sync::Arc;

/// Why a step on the GPU failed: the model's reasons, as on the CPU, or the device's.
#[derive(Clone, Debug, PartialEq)]
pub enum GpuSessionError {
    Model(ModelError),
    Gpu(GpuError),
}

impl fmt::Display for GpuSessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuSessionError::Model(e) => write!(f, "{e}"),
            GpuSessionError::Gpu(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for GpuSessionError {}

impl From<ModelError> for GpuSessionError {
    fn from(e: ModelError) -> Self {
        GpuSessionError::Model(e)
    }
}

impl From<GpuError> for GpuSessionError {
    fn from(e: GpuError) -> Self {
        GpuSessionError::Gpu(e)
    }
}

impl From<quant::ShapeError> for GpuSessionError {
    fn from(e: quant::ShapeError) -> Self {
        GpuSessionError::Model(ModelError::Shape(e))
    }
}

/// One block's weights on the device.
struct LayerOnGpu {
    attn_norm: Tensor,
    q: Matrix,
    k: Matrix,
    v: Matrix,
    q_bias: Option<Tensor>,
    k_bias: Option<Tensor>,
    v_bias: Option<Tensor>,
    q_norm: Option<Tensor>,
    k_norm: Option<Tensor>,
    o: Matrix,
    ffn_norm: Tensor,
    gate: Matrix,
    up: Matrix,
    down: Matrix,
}

/// A model's weights and KV cache on a WebGPU device, and the tokens the cache holds.
pub struct GpuSession {
    gpu: Gpu,
    model: Arc<Model>,
    layers: Vec<LayerOnGpu>,
    output_norm: Tensor,
    output: Matrix,
    /// Per layer, the whole window's keys (after RoPE) and values.
    keys: Vec<Tensor>,
    values: Vec<Tensor>,
    tokens: Vec<u32>,
    /// The activations of the last few batch sizes read (a prompt's chunk, its rest,
    /// one token), kept so a step allocates nothing on the device.
    batches: Vec<Batch>,
    /// The last token's row, normed, and its logits.
    last: Tensor,
    last_normed: Tensor,
    logits: Tensor,
}

/// Batch sizes whose activations stay allocated.
const KEPT_BATCHES: usize = 3;

/// A batch's activations on the device, for `n` tokens.
struct Batch {
    n: usize,
    x: Tensor,
    normed: Tensor,
    q: Tensor,
    k: Tensor,
    v: Tensor,
    /// Where a QK-norm writes (a kernel may not read and write one buffer).
    spare_q: Tensor,
    spare_k: Tensor,
    attended: Tensor,
    out: Tensor,
    gate: Tensor,
    up: Tensor,
    /// Room for every query's scores against the whole window.
    scores: Tensor,
    rope: Tensor,
}

impl GpuSession {
    /// Uploads `model`'s weights to `gpu` and makes room for its whole window's cache.
    pub fn new(gpu: Gpu, model: Arc<Model>) -> Result<GpuSession, GpuSessionError> {
        model.check_gpu()?;
        let c = &model.config;
        let matrix = |w: &Weight| gpu.matrix(model.bytes(w), w.kind, w.rows, w.cols);
        let vector = |v: &[f32]| gpu.tensor(v);
        let maybe = |v: &Option<Vec<f32>>| v.as_deref().map(vector).transpose();
        let mut layers = Vec::with_capacity(model.layers.len());
        for l in &model.layers {
            layers.push(LayerOnGpu {
                attn_norm: vector(&l.attn_norm)?,
                q: matrix(&l.q)?,
                k: matrix(&l.k)?,
                v: matrix(&l.v)?,
                q_bias: maybe(&l.q_bias)?,
                k_bias: maybe(&l.k_bias)?,
                v_bias: maybe(&l.v_bias)?,
                q_norm: maybe(&l.q_norm)?,
                k_norm: maybe(&l.k_norm)?,
                o: matrix(&l.o)?,
                ffn_norm: vector(&l.ffn_norm)?,
                gate: matrix(&l.gate)?,
                up: matrix(&l.up)?,
                down: matrix(&l.down)?,
            });
        }
        let cache = c.context * c.kv_dim();
        let mut keys = Vec::with_capacity(c.layers);
        let mut values = Vec::with_capacity(c.layers);
        for _ in 0..c.layers {
            keys.push(gpu.zeros(cache)?);
            values.push(gpu.zeros(cache)?);
        }
        let output_norm = vector(&model.output_norm)?;
        let output = matrix(&model.output)?;
        let (last, last_normed, logits) =
            (gpu.zeros(c.dim)?, gpu.zeros(c.dim)?, gpu.zeros(c.vocab)?);
        Ok(GpuSession {
            gpu,
            model,
            layers,
            output_norm,
            output,
            keys,
            values,
            tokens: Vec::new(),
            batches: Vec::new(),
            last,
            last_normed,
            logits,
        })
    }

    /// [`GpuSession::new`], then one token read and forgotten, all under the device's
    /// error scopes: a model that does not fit the device (out of memory), a kernel it
    /// refuses or a device lost while loading fail here, at load, and not at the first
    /// request; the kernels are compiled by then too.
    pub async fn load(gpu: Gpu, model: Arc<Model>) -> Result<GpuSession, GpuSessionError> {
        gpu.guard()?;
        let mut session = GpuSession::new(gpu, model)?;
        let warm = session.step(0).await;
        session.gpu.unguard().await?;
        warm?;
        session.truncate(0);
        Ok(session)
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// The adapter the session runs on, as [`Gpu::adapter`] says it.
    pub fn adapter(&self) -> String {
        self.gpu.adapter()
    }

    /// The tokens whose keys and values the cache holds.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Forgets the cache after `len` tokens.
    pub fn truncate(&mut self, len: usize) {
        self.tokens.truncate(len);
    }

    /// As [`super::Session::prefill`]: keeps the prefix the cache shares with `prompt`,
    /// reads at most `chunk` more tokens, and returns the last token's logits once all
    /// of `prompt` is read.
    pub async fn prefill(
        &mut self,
        prompt: &[u32],
        chunk: usize,
    ) -> Result<Option<Vec<f32>>, GpuSessionError> {
        let limit = self.model.config.context;
        if prompt.is_empty() {
            return Err(ModelError::EmptyPrompt.into());
        }
        if prompt.len() > limit {
            return Err(ModelError::ContextFull { limit }.into());
        }
        let shared = self
            .tokens
            .iter()
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count();
        let keep = shared.min(prompt.len() - 1);
        self.truncate(keep);
        let end = (keep + chunk.max(1)).min(prompt.len());
        let last = end == prompt.len();
        let logits = self
            .forward(prompt.get(keep..end).unwrap_or(&[]), last)
            .await?;
        Ok(if last { logits } else { None })
    }

    /// Appends one token; returns the logits for the next.
    pub async fn step(&mut self, token: u32) -> Result<Vec<f32>, GpuSessionError> {
        self.forward(&[token], true)
            .await?
            .ok_or(ModelError::EmptyPrompt.into())
    }

    async fn forward(
        &mut self,
        batch: &[u32],
        logits: bool,
    ) -> Result<Option<Vec<f32>>, GpuSessionError> {
        let config = &self.model.config;
        if self.tokens.len() + batch.len() > config.context {
            return Err(ModelError::ContextFull {
                limit: config.context,
            }
            .into());
        }
        if let Some(&token) = batch.iter().find(|&&t| t as usize >= config.vocab) {
            return Err(ModelError::TokenOutOfRange {
                token,
                vocab: config.vocab,
            }
            .into());
        }
        if batch.is_empty() {
            return Err(ModelError::EmptyPrompt.into());
        }
        let b = self.batch(batch)?;
        let n = batch.len();
        let run = self.layers_on(&b, n);
        let result = match run {
            Ok(()) if logits => self.logits(&b, n).await.map(Some),
            Ok(()) => Ok(None),
            Err(e) => Err(e),
        };
        self.keep(b);
        let result = result?;
        self.tokens.extend_from_slice(batch);
        Ok(result)
    }

    fn layers_on(&self, b: &Batch, n: usize) -> Result<(), GpuSessionError> {
        for i in 0..self.layers.len() {
            self.attention(i, b, n)?;
            self.feed_forward(i, b)?;
        }
        Ok(())
    }

    /// The batch's activations (kept from an earlier batch of its size, or new), holding
    /// its tokens' embeddings and RoPE angles.
    fn batch(&mut self, batch: &[u32]) -> Result<Batch, GpuSessionError> {
        let (model, n) = (&self.model, batch.len());
        let c = &model.config;
        let mut x = vec![0f32; n * c.dim];
        let row = quant::row_bytes(model.embedding.kind, c.dim)?;
        let table = model.bytes(&model.embedding);
        for (&token, x) in batch.iter().zip(x.chunks_exact_mut(c.dim)) {
            let at = token as usize * row;
            let bytes = table.get(at..at + row).unwrap_or(&[]);
            quant::dequantize_row(bytes, model.embedding.kind, x)?;
        }
        let mut angles = Vec::new();
        let freqs = model.rope_freqs.as_deref();
        let start = self.tokens.len();
        ops::rope_table(c.rope_base, model.rope_dims, freqs, start, n, &mut angles);
        let flat: Vec<f32> = angles.iter().flat_map(|&(cos, sin)| [cos, sin]).collect();
        let b = match self.batches.iter().position(|b| b.n == n) {
            Some(i) => self.batches.remove(i),
            None => self.allocate(n, flat.len())?,
        };
        self.gpu.write(&b.x, 0, &x)?;
        self.gpu.write(&b.rope, 0, &flat)?;
        Ok(b)
    }

    fn allocate(&self, n: usize, angles: usize) -> Result<Batch, GpuSessionError> {
        let (gpu, c) = (&self.gpu, &self.model.config);
        let (qd, kv) = (c.q_dim(), c.kv_dim());
        Ok(Batch {
            n,
            x: gpu.zeros(n * c.dim)?,
            normed: gpu.zeros(n * c.dim)?,
            q: gpu.zeros(n * qd)?,
            k: gpu.zeros(n * kv)?,
            v: gpu.zeros(n * kv)?,
            spare_q: gpu.zeros(n * qd)?,
            spare_k: gpu.zeros(n * kv)?,
            attended: gpu.zeros(n * qd)?,
            out: gpu.zeros(n * c.dim)?,
            gate: gpu.zeros(n * c.ffn)?,
            up: gpu.zeros(n * c.ffn)?,
            scores: gpu.zeros(n * c.heads * c.context)?,
            rope: gpu.zeros(angles)?,
        })
    }

    /// Keeps a batch's activations for the next batch of its size, the most recent
    /// [`KEPT_BATCHES`] sizes only.
    fn keep(&mut self, b: Batch) {
        self.batches.insert(0, b);
        self.batches.truncate(KEPT_BATCHES);
    }

    /// `x += Wo · attention(…)`, as the CPU's `attention` in session.rs.
    fn attention(&self, i: usize, b: &Batch, n: usize) -> Result<(), GpuSessionError> {
        let (gpu, model) = (&self.gpu, &self.model);
        let c = &model.config;
        let (layer, keys, values) = match (self.layers.get(i), self.keys.get(i), self.values.get(i))
        {
            (Some(l), Some(k), Some(v)) => (l, k, v),
            _ => return Err(ModelError::BadConfig(format!("no layer {i}")).into()),
        };
        let eps = c.rms_eps;
        gpu.rms_norm(&b.x, &layer.attn_norm, eps, &b.normed)?;
        gpu.matmul(&layer.q, &b.normed, &b.q)?;
        gpu.matmul(&layer.k, &b.normed, &b.k)?;
        gpu.matmul(&layer.v, &b.normed, &b.v)?;
        for (x, bias) in [
            (&b.q, &layer.q_bias),
            (&b.k, &layer.k_bias),
            (&b.v, &layer.v_bias),
        ] {
            if let Some(bias) = bias {
                gpu.add_bias(x, bias)?;
            }
        }
        // QK-norm writes to the spare, then the spare is copied back: no kernel reads
        // and writes one buffer.
        for (x, spare, norm) in [
            (&b.q, &b.spare_q, &layer.q_norm),
            (&b.k, &b.spare_k, &layer.k_norm),
        ] {
            if let Some(norm) = norm {
                gpu.rms_norm(x, norm, eps, spare)?;
                gpu.copy(spare, 0, x, 0, x.len())?;
            }
        }
        let (hd, half, neox) = (c.head_dim, model.rope_dims / 2, c.arch.neox_rope());
        gpu.rope(&b.q, c.q_dim(), hd, half, neox, &b.rope)?;
        gpu.rope(&b.k, c.kv_dim(), hd, half, neox, &b.rope)?;
        let (start, kv) = (self.tokens.len(), c.kv_dim());
        gpu.copy(&b.k, 0, keys, start * kv, n * kv)?;
        gpu.copy(&b.v, 0, values, start * kv, n * kv)?;
        let shape = Attention {
            n,
            start,
            heads: c.heads,
            kv_heads: c.kv_heads,
            head_dim: hd,
        };
        gpu.attention(shape, &b.q, keys, values, &b.scores, &b.attended)?;
        gpu.matmul(&layer.o, &b.attended, &b.out)?;
        gpu.add(&b.x, &b.out)?;
        Ok(())
    }

    /// `x += W_down · (silu(W_gate · norm(x)) ⊙ W_up · norm(x))`.
    fn feed_forward(&self, i: usize, b: &Batch) -> Result<(), GpuSessionError> {
        let gpu = &self.gpu;
        let Some(layer) = self.layers.get(i) else {
            return Err(ModelError::BadConfig(format!("no layer {i}")).into());
        };
        gpu.rms_norm(&b.x, &layer.ffn_norm, self.model.config.rms_eps, &b.normed)?;
        gpu.matmul(&layer.gate, &b.normed, &b.gate)?;
        gpu.matmul(&layer.up, &b.normed, &b.up)?;
        gpu.silu_gate(&b.gate, &b.up)?;
        gpu.matmul(&layer.down, &b.gate, &b.out)?;
        gpu.add(&b.x, &b.out)?;
        Ok(())
    }

    /// The last token's logits: the final norm and the head, then the one read back.
    async fn logits(&self, b: &Batch, n: usize) -> Result<Vec<f32>, GpuSessionError> {
        let (gpu, c) = (&self.gpu, &self.model.config);
        gpu.copy(&b.x, (n - 1) * c.dim, &self.last, 0, c.dim)?;
        gpu.rms_norm(&self.last, &self.output_norm, c.rms_eps, &self.last_normed)?;
        gpu.matmul(&self.output, &self.last_normed, &self.logits)?;
        Ok(gpu.read(&self.logits).await?)
    }
}
