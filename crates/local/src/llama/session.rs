//! One conversation's run of the model: the tokens read so far, their keys and values
//! per layer (the KV cache), and the forward pass that extends them.
//!
//! The worker keeps one session between requests; a new prompt keeps the longest
//! prefix it shares with what the cache holds (the system prompt and the earlier turns)
//! and reads only the rest, in chunks so an abort is seen between them.

use super::ops::{self, Attention, Scoring, add_bias, rms_norm, rope, rope_table_with};
use super::team::{Helpers, Job, Team};
use super::{Layer, Model, ModelError, Weight};
use crate::quant;
use std::sync::Arc;

/// A model's KV cache and the tokens it holds.
pub struct Session {
    model: Arc<Model>,
    tokens: Vec<u32>,
    /// Per layer, `tokens.len() × kv_dim` keys (after RoPE) and values, in f32: for
    /// SmolLM2 that is 46 KB a token, 94 MB for a 2048-token window, grown as used.
    keys: Vec<Vec<f32>>,
    values: Vec<Vec<f32>>,
    scratch: Scratch,
    /// The threads the products are shared with, if any.
    team: Option<Team>,
}

/// Buffers the forward pass reuses between calls.
#[derive(Default)]
struct Scratch {
    x: Vec<f32>,
    normed: Vec<f32>,
    q: Vec<f32>,
    k: Vec<f32>,
    v: Vec<f32>,
    attended: Vec<f32>,
    out: Vec<f32>,
    gate: Vec<f32>,
    up: Vec<f32>,
    scores: Vec<f32>,
    rope: Vec<(f32, f32)>,
    /// Gemma's sliding-window layers' angles, when they turn otherwise.
    local_rope: Vec<(f32, f32)>,
}

impl Session {
    pub fn new(model: Arc<Model>) -> Session {
        let layers = model.config.layers;
        Session {
            model,
            tokens: Vec::new(),
            keys: vec![Vec::new(); layers],
            values: vec![Vec::new(); layers],
            scratch: Scratch::default(),
            team: None,
        }
    }

    /// Shares every product's rows with `helpers` from now on, each of which holds
    /// the [`Model::places`] of its part.
    pub fn share_with(&mut self, helpers: Box<dyn Helpers>) {
        self.team = Some(Team::new(helpers));
    }

    /// How many threads the products run on.
    pub fn threads(&self) -> usize {
        self.team.as_ref().map_or(1, Team::parts)
    }

    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Each layer's cache, keys then values: (values held, room reserved).
    #[cfg(test)]
    pub(super) fn cache_sizes(&self) -> Vec<(usize, usize)> {
        self.keys
            .iter()
            .chain(&self.values)
            .map(|c| (c.len(), c.capacity()))
            .collect()
    }

    /// The tokens whose keys and values the cache holds.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// Forgets the cache after `len` tokens.
    pub fn truncate(&mut self, len: usize) {
        let len = len.min(self.tokens.len());
        self.tokens.truncate(len);
        let kv = self.model.config.kv_dim();
        for cache in self.keys.iter_mut().chain(self.values.iter_mut()) {
            cache.truncate(len * kv);
        }
    }

    /// Makes the cache hold exactly `prompt`: keeps the longest prefix it shares with
    /// what the cache holds, drops the rest, then reads at most `chunk` more tokens.
    /// Returns the last token's logits once all of `prompt` is read, None while more
    /// remains (call again with the same prompt to go on).
    pub fn prefill(
        &mut self,
        prompt: &[u32],
        chunk: usize,
    ) -> Result<Option<Vec<f32>>, ModelError> {
        let limit = self.model.config.context;
        if prompt.is_empty() {
            return Err(ModelError::EmptyPrompt);
        }
        if prompt.len() > limit {
            return Err(ModelError::ContextFull { limit });
        }
        let shared = self
            .tokens
            .iter()
            .zip(prompt)
            .take_while(|(a, b)| a == b)
            .count();
        // The last token is always read again: its logits are what the caller wants.
        let keep = shared.min(prompt.len() - 1);
        self.truncate(keep);
        let end = (keep + chunk.max(1)).min(prompt.len());
        let last = end == prompt.len();
        let logits = self.forward(prompt.get(keep..end).unwrap_or(&[]), last)?;
        Ok(if last { logits } else { None })
    }

    /// Appends one token; returns the logits for the next.
    pub fn step(&mut self, token: u32) -> Result<Vec<f32>, ModelError> {
        self.forward(&[token], true)?.ok_or(ModelError::EmptyPrompt)
    }

    /// Reads `batch` after the cached tokens; the last one's logits when asked. On an
    /// error the cache is left as it was.
    fn forward(&mut self, batch: &[u32], logits: bool) -> Result<Option<Vec<f32>>, ModelError> {
        let config = &self.model.config;
        let start = self.tokens.len();
        if start + batch.len() > config.context {
            return Err(ModelError::ContextFull {
                limit: config.context,
            });
        }
        if let Some(&token) = batch.iter().find(|&&t| t as usize >= config.vocab) {
            return Err(ModelError::TokenOutOfRange {
                token,
                vocab: config.vocab,
            });
        }
        let mut result = self.run(batch, logits);
        if matches!(result, Err(ModelError::Helpers(_))) {
            // A helper that fails is let go, and the batch read again on this thread
            // alone: slower, never lost.
            self.team = None;
            self.truncate(start);
            result = self.run(batch, logits);
        }
        if result.is_err() {
            self.truncate(start);
        } else {
            self.tokens.extend_from_slice(batch);
        }
        result
    }

    fn run(&mut self, batch: &[u32], logits: bool) -> Result<Option<Vec<f32>>, ModelError> {
        let model = Arc::clone(&self.model);
        let config = &model.config;
        let (dim, n) = (config.dim, batch.len());
        let s = &mut self.scratch;
        s.x.clear();
        s.x.resize(n * dim, 0.0);
        let row = quant::row_bytes(model.embedding.kind, dim)?;
        let table = model.bytes(&model.embedding);
        for (&token, x) in batch.iter().zip(s.x.chunks_exact_mut(dim)) {
            let at = token as usize * row;
            let bytes = table.get(at..at + row).unwrap_or(&[]);
            quant::dequantize_row(bytes, model.embedding.kind, x)?;
        }
        if model.gemma.is_some() {
            let scale = (dim as f32).sqrt();
            s.x.iter_mut().for_each(|v| *v *= scale);
        }
        let (start, dims) = (self.tokens.len(), model.rope_dims);
        let freqs = model.rope_freqs.as_deref();
        rope_table_with(model.rope, dims, freqs, start, n, &mut s.rope);
        if let Some(g) = &model.gemma {
            rope_table_with(g.local_rope, dims, None, start, n, &mut s.local_rope);
        }
        let team = &mut self.team;
        for (i, layer) in model.layers.iter().enumerate() {
            let (keys, values) = match (self.keys.get_mut(i), self.values.get_mut(i)) {
                (Some(k), Some(v)) => (k, v),
                _ => return Err(ModelError::BadConfig(format!("no cache for layer {i}"))),
            };
            let local = model.gemma.as_ref().is_some_and(|g| g.is_local(i));
            let block = Block {
                model: &model,
                layer,
                i,
            };
            attention(block, team, local, s, keys, values)?;
            feed_forward(block, team, s)?;
        }
        if !logits {
            return Ok(None);
        }
        let last = s.x.get((n - 1) * dim..n * dim).unwrap_or(&[]);
        rms_norm(last, &model.output_norm, config.rms_eps, &mut s.normed);
        let mut out = Vec::new();
        let head = Job::Head.id(config.layers);
        multiply(
            &model,
            team,
            head,
            &s.normed,
            &mut [(&model.output, &mut out)],
        )?;
        if let Some(cap) = model.gemma.as_ref().and_then(|g| g.final_softcap) {
            ops::softcap(&mut out, cap);
        }
        Ok(Some(out))
    }
}

/// `x += Wo · attention(RoPE(Wq·norm(x)), cache + RoPE(Wk·norm(x)), cache + Wv·norm(x))`,
/// with the family's biases after the projections and its QK-norm before RoPE; Gemma's
/// scaled queries, soft-capped scores, sliding window (`local` layers) and norm after.
fn attention(
    Block { model, layer, i }: Block,
    team: &mut Option<Team>,
    local: bool,
    s: &mut Scratch,
    keys: &mut Vec<f32>,
    values: &mut Vec<f32>,
) -> Result<(), ModelError> {
    let config = &model.config;
    let (dim, qd, kv, hd) = (
        config.dim,
        config.q_dim(),
        config.kv_dim(),
        config.head_dim(),
    );
    let n = s.x.len() / dim;
    rms_norm(&s.x, &layer.attn_norm, config.rms_eps, &mut s.normed);
    let qkv = &mut [
        (&layer.q, &mut s.q),
        (&layer.k, &mut s.k),
        (&layer.v, &mut s.v),
    ];
    multiply(model, team, Job::Qkv(i).id(config.layers), &s.normed, qkv)?;
    add_bias(&mut s.q, layer.q_bias.as_deref());
    add_bias(&mut s.k, layer.k_bias.as_deref());
    add_bias(&mut s.v, layer.v_bias.as_deref());
    if let Some(w) = &layer.q_norm {
        rms_norm(&s.q, w, config.rms_eps, &mut s.out);
        std::mem::swap(&mut s.q, &mut s.out);
    }
    if let Some(w) = &layer.k_norm {
        rms_norm(&s.k, w, config.rms_eps, &mut s.out);
        std::mem::swap(&mut s.k, &mut s.out);
    }
    let half = model.rope_dims / 2;
    let neox = config.arch.neox_rope();
    let table = if local { &s.local_rope } else { &s.rope };
    rope(&mut s.q, qd, hd, half, neox, table);
    rope(&mut s.k, kv, hd, half, neox, table);
    let mut scoring = Scoring {
        scale: 1.0 / (hd as f32).sqrt(),
        softcap: None,
        window: None,
    };
    if let Some(g) = &model.gemma {
        // llama.cpp scales Gemma's queries, then its scores by 1.
        s.q.iter_mut().for_each(|v| *v *= g.query_scale);
        scoring = Scoring {
            scale: 1.0,
            softcap: g.attn_softcap,
            window: g.window.filter(|_| local),
        };
    }
    let start = keys.len() / kv;
    let full = config.context * kv;
    grow(keys, s.k.len(), full);
    grow(values, s.v.len(), full);
    keys.extend_from_slice(&s.k);
    values.extend_from_slice(&s.v);
    let shape = Attention {
        n,
        start,
        heads: config.heads,
        kv_heads: config.kv_heads,
        head_dim: hd,
    };
    ops::attend_with(
        shape,
        scoring,
        &s.q,
        keys,
        values,
        &mut s.scores,
        &mut s.attended,
    );
    let out = Job::Out(i).id(config.layers);
    multiply(model, team, out, &s.attended, &mut [(&layer.o, &mut s.out)])?;
    add_normed(
        &mut s.x,
        &s.out,
        layer.post_attn_norm.as_deref(),
        model,
        &mut s.normed,
    );
    Ok(())
}

/// One block of a model: what its steps read.
#[derive(Clone, Copy)]
struct Block<'a> {
    model: &'a Model,
    layer: &'a Layer,
    i: usize,
}

/// `out = W·x` for each `(W, out)` of `products` (one [`Job`]'s), shared with the
/// team's helpers when there is a team. Called, not inlined, at each of the pass's
/// products: the worker's wasm would carry it five times.
#[inline(never)]
fn multiply(
    model: &Model,
    team: &mut Option<Team>,
    job: u32,
    x: &[f32],
    products: &mut [(&Weight, &mut Vec<f32>)],
) -> Result<(), ModelError> {
    match team {
        Some(team) => team.multiply(model, job, x, products),
        None => products
            .iter_mut()
            .try_for_each(|(w, out)| model.matmul(w, x, out)),
    }
}

/// The residual add, `x += o`, or `x += norm(o)` where the family norms it (Gemma).
fn add_normed(x: &mut [f32], o: &[f32], norm: Option<&[f32]>, model: &Model, tmp: &mut Vec<f32>) {
    match norm {
        Some(w) => {
            rms_norm(o, w, model.config.rms_eps, tmp);
            ops::add(x, tmp);
        }
        None => ops::add(x, o),
    }
}

/// Makes room for `extra` more values, doubling as a Vec would but never past `full`
/// (the whole window's), so the cache stays within the budget its window was sized by.
fn grow(cache: &mut Vec<f32>, extra: usize, full: usize) {
    let need = cache.len() + extra;
    if need > cache.capacity() {
        let target = need.max(cache.capacity() * 2).min(full.max(need));
        cache.reserve_exact(target - cache.len());
    }
}

/// `x += W_down · (silu(W_gate · norm(x)) ⊙ W_up · norm(x))`; Gemma's with GELU, and
/// normed before it is added.
fn feed_forward(
    Block { model, layer, i }: Block,
    team: &mut Option<Team>,
    s: &mut Scratch,
) -> Result<(), ModelError> {
    let layers = model.config.layers;
    rms_norm(&s.x, &layer.ffn_norm, model.config.rms_eps, &mut s.normed);
    let gate_up = &mut [(&layer.gate, &mut s.gate), (&layer.up, &mut s.up)];
    multiply(model, team, Job::GateUp(i).id(layers), &s.normed, gate_up)?;
    match model.gemma {
        Some(_) => ops::gelu_gate(&mut s.gate, &s.up),
        None => ops::silu_gate(&mut s.gate, &s.up),
    }
    let down = Job::Down(i).id(layers);
    multiply(model, team, down, &s.gate, &mut [(&layer.down, &mut s.out)])?;
    add_normed(
        &mut s.x,
        &s.out,
        layer.post_ffn_norm.as_deref(),
        model,
        &mut s.normed,
    );
    Ok(())
}
