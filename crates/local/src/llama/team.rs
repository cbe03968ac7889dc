//! The forward pass on several threads: every weight matrix's rows shared out among
//! the session's thread and its [`Helpers`], each helper holding only its share
//! ([`Shard`]), so a product costs a share of the time and the weights are held once
//! (the session's copy of the whole file, and one share per helper besides).
//!
//! The products that read the same input go out together as one [`Job`] (q, k and v;
//! the output projection; gate and up; down; the head): about four a layer, each a
//! post and a wait. How the helpers are reached is the implementor's business: Web
//! Workers under `Atomics` in the worker (`crate::worker`), serial calls in the tests.
//! This module owns what is the same everywhere: who has which rows, and putting the
//! shares back together in the order one thread would have written them. A row's
//! product is the same code whichever thread runs it, so the logits are the same bits.

use std::ops::Range;

use super::{Model, ModelError, Weight};
use crate::gguf::TensorKind;
use crate::quant;

/// The threads a session hands its products to, besides its own.
pub trait Helpers {
    /// How many helpers there are: the rows are shared `count() + 1` ways, the
    /// session's own thread taking part 0.
    fn count(&self) -> usize;
    /// Starts every helper on `job` over the activations `x` (whole rows of the job's
    /// columns, one per token).
    fn post(&mut self, job: u32, x: &[f32]);
    /// Waits for every helper of the last [`Helpers::post`]: `out` receives their
    /// outputs one after another, part 1 first, each as [`Shard::run`] writes it.
    fn collect(&mut self, out: &mut [f32]) -> Result<(), String>;
}

/// One post's products: those that read the same input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Job {
    /// Layer `i`'s q, k and v.
    Qkv(usize),
    /// Layer `i`'s output projection.
    Out(usize),
    /// Layer `i`'s gate and up.
    GateUp(usize),
    /// Layer `i`'s down projection.
    Down(usize),
    /// The output head.
    Head,
}

impl Job {
    /// Its number in a model of `layers` blocks: four a layer, then the head.
    pub fn id(self, layers: usize) -> u32 {
        let id = match self {
            Job::Qkv(i) => 4 * i,
            Job::Out(i) => 4 * i + 1,
            Job::GateUp(i) => 4 * i + 2,
            Job::Down(i) => 4 * i + 3,
            Job::Head => 4 * layers,
        };
        u32::try_from(id).unwrap_or(u32::MAX)
    }
}

/// Part `part`'s rows of `rows` shared `parts` ways: contiguous, in order, differing
/// in length by one at most.
pub fn share(rows: usize, part: usize, parts: usize) -> Range<usize> {
    let parts = parts.max(1);
    rows * part / parts..rows * (part + 1) / parts
}

/// Where one of a helper's matrices is in the file: its share's rows, as bytes
/// `start..end`, of a `kind` matrix `cols` wide. What the worker's script copies into
/// the helper's [`Shard::add`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub job: u32,
    pub kind: u32,
    pub rows: usize,
    pub cols: usize,
    pub start: usize,
    pub end: usize,
}

/// The buffers a post needs, in floats: the largest input (a prefill chunk of
/// `tokens`) and the largest output of any one helper.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sizes {
    pub input: usize,
    pub output: usize,
}

impl Model {
    /// Each job's matrices, in the order their outputs are laid out.
    fn jobs(&self) -> Vec<(u32, Vec<&Weight>)> {
        let layers = self.config.layers;
        let mut jobs = Vec::with_capacity(4 * layers + 1);
        for (i, l) in self.layers.iter().enumerate() {
            jobs.push((Job::Qkv(i).id(layers), vec![&l.q, &l.k, &l.v]));
            jobs.push((Job::Out(i).id(layers), vec![&l.o]));
            jobs.push((Job::GateUp(i).id(layers), vec![&l.gate, &l.up]));
            jobs.push((Job::Down(i).id(layers), vec![&l.down]));
        }
        jobs.push((Job::Head.id(layers), vec![&self.output]));
        jobs
    }

    /// Part `part`'s share of every matrix (of `parts`), where the file holds it.
    pub fn places(&self, part: usize, parts: usize) -> Vec<Place> {
        let mut places = Vec::new();
        for (job, weights) in self.jobs() {
            for w in weights {
                let rows = share(w.rows, part, parts);
                let row = quant::row_bytes(w.kind, w.cols).unwrap_or(0);
                let at = self.gguf.tensor(&w.name).map_or(0, |t| t.offset);
                places.push(Place {
                    job,
                    kind: w.kind.id(),
                    rows: rows.len(),
                    cols: w.cols,
                    start: at + (w.first_row + rows.start) * row,
                    end: at + (w.first_row + rows.end) * row,
                });
            }
        }
        places
    }

    /// The buffers helpers need when the rows are shared `parts` ways and a post
    /// carries at most `tokens` tokens (the head's, always one).
    pub fn team_sizes(&self, parts: usize, tokens: usize) -> Sizes {
        let (mut input, mut output) = (0, 0);
        for (job, weights) in self.jobs() {
            let n = if job == Job::Head.id(self.config.layers) {
                1
            } else {
                tokens
            };
            input = weights.iter().map(|w| n * w.cols).fold(input, usize::max);
            for part in 1..parts {
                let rows: usize = weights
                    .iter()
                    .map(|w| share(w.rows, part, parts).len())
                    .sum();
                output = output.max(n * rows);
            }
        }
        Sizes { input, output }
    }
}

/// A helper's share of a model's matrices, by job.
#[derive(Default)]
pub struct Shard {
    jobs: Vec<Vec<Piece>>,
}

struct Piece {
    kind: TensorKind,
    rows: usize,
    cols: usize,
    bytes: Vec<u8>,
}

/// More jobs than any model has ([`Job::id`] of a 65,536-layer head): a bound on what
/// a message can make a shard allocate.
const MAX_JOBS: usize = 4 * 65_536 + 1;

impl Shard {
    pub fn new() -> Shard {
        Shard::default()
    }

    /// Appends a matrix share (`rows` of `cols`, ggml type `kind`) to `job`'s.
    pub fn add(
        &mut self,
        job: u32,
        kind: u32,
        rows: usize,
        cols: usize,
        bytes: Vec<u8>,
    ) -> Result<(), ModelError> {
        let bad = |why: String| ModelError::Helpers(why);
        let kind = TensorKind::from_id(kind).map_err(|e| bad(e.to_string()))?;
        let job = usize::try_from(job).unwrap_or(usize::MAX);
        if job >= MAX_JOBS {
            return Err(bad(format!("job {job} is past any model's")));
        }
        let need = quant::row_bytes(kind, cols)?.checked_mul(rows);
        if need != Some(bytes.len()) {
            return Err(bad(format!(
                "{} bytes for {rows} rows of {cols} {kind:?}",
                bytes.len()
            )));
        }
        if self.jobs.len() <= job {
            self.jobs.resize_with(job + 1, Vec::new);
        }
        if let Some(pieces) = self.jobs.get_mut(job) {
            pieces.push(Piece {
                kind,
                rows,
                cols,
                bytes,
            });
        }
        Ok(())
    }

    /// How many values [`Shard::run`] writes for `job` over `inputs` activations.
    pub fn output_len(&self, job: u32, inputs: usize) -> usize {
        let pieces = usize::try_from(job).ok().and_then(|job| self.jobs.get(job));
        pieces.map_or(0, |pieces| {
            pieces.iter().map(|p| inputs / p.cols.max(1) * p.rows).sum()
        })
    }

    /// This share of `job`'s products of `x`: each matrix's `tokens × rows` after the
    /// last's, in `out`. Returns how many values it wrote.
    pub fn run(&self, job: u32, x: &[f32], out: &mut [f32]) -> Result<usize, ModelError> {
        let pieces = usize::try_from(job)
            .ok()
            .and_then(|job| self.jobs.get(job))
            .filter(|pieces| !pieces.is_empty())
            .ok_or_else(|| ModelError::Helpers(format!("this helper has no job {job}")))?;
        let mut at = 0;
        for p in pieces {
            let n = x.len() / p.cols.max(1);
            let len = n * p.rows;
            let into = out.get_mut(at..at + len).ok_or_else(|| {
                ModelError::Helpers(format!("no room for {len} values after {at}"))
            })?;
            quant::matmul(&p.bytes, p.kind, p.rows, p.cols, x, into)?;
            at += len;
        }
        Ok(at)
    }
}

/// A session's helpers and the buffers its share and theirs pass through.
pub(super) struct Team {
    helpers: Box<dyn Helpers>,
    own: Vec<f32>,
    gathered: Vec<f32>,
}

impl Team {
    pub(super) fn new(helpers: Box<dyn Helpers>) -> Team {
        Team {
            helpers,
            own: Vec::new(),
            gathered: Vec::new(),
        }
    }

    /// How many ways the rows are shared.
    pub(super) fn parts(&self) -> usize {
        self.helpers.count() + 1
    }

    /// `out = W·x` for each `(W, out)` of `products`, part 0's rows here while the
    /// helpers do theirs.
    #[inline(never)]
    pub(super) fn multiply(
        &mut self,
        model: &Model,
        job: u32,
        x: &[f32],
        products: &mut [(&Weight, &mut Vec<f32>)],
    ) -> Result<(), ModelError> {
        let parts = self.parts();
        self.helpers.post(job, x);
        // The helpers are collected even when this part fails, so none is left
        // writing into buffers the next post reuses.
        let mine = self.mine(model, x, parts, products);
        let tokens = |w: &Weight| x.len() / w.cols.max(1);
        let theirs: usize = products
            .iter()
            .map(|(w, _)| tokens(w) * (w.rows - share(w.rows, 0, parts).len()))
            .sum();
        self.gathered.clear();
        self.gathered.resize(theirs, 0.0);
        let collected = self.helpers.collect(&mut self.gathered);
        mine?;
        collected.map_err(ModelError::Helpers)?;
        let mut at = 0;
        for part in 1..parts {
            for (w, out) in products.iter_mut() {
                let rows = share(w.rows, part, parts);
                let len = tokens(w) * rows.len();
                place(
                    out,
                    w.rows,
                    rows,
                    self.gathered.get(at..at + len).unwrap_or(&[]),
                );
                at += len;
            }
        }
        Ok(())
    }

    /// Part 0's rows of each product, put in place in its output (sized here).
    fn mine(
        &mut self,
        model: &Model,
        x: &[f32],
        parts: usize,
        products: &mut [(&Weight, &mut Vec<f32>)],
    ) -> Result<(), ModelError> {
        for (w, out) in products.iter_mut() {
            let n = x.len() / w.cols.max(1);
            out.clear();
            out.resize(n * w.rows, 0.0);
            let rows = share(w.rows, 0, parts);
            model.matmul_rows(w, rows.clone(), x, &mut self.own)?;
            place(out, w.rows, rows, &self.own);
        }
        Ok(())
    }
}

/// Writes `share`, each token's `rows` of a product `width` rows wide, into `out`.
fn place(out: &mut [f32], width: usize, rows: Range<usize>, share: &[f32]) {
    if rows.is_empty() || width == 0 {
        return;
    }
    let len = rows.len();
    for (token, values) in out.chunks_exact_mut(width).zip(share.chunks_exact(len)) {
        if let Some(dst) = token.get_mut(rows.clone()) {
            dst.copy_from_slice(values);
        }
    }
}

#[cfg(test)]
mod tests;
