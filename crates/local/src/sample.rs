//! Picking the next token from the logits: greedy at temperature 0, else top-k, then
//! top-p (nucleus) over a softmax at the temperature, drawn from a small seeded PRNG
//! so a seed replays a generation exactly.
//!
//! Under a [`Constraint`] only tokens it allows are ever picked. Checking a token is
//! cheap and masking the whole vocabulary is not free, so the best candidates are
//! tested first and the full mask is applied only when none of them passes (or when
//! the candidate pool is the whole vocabulary anyway).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::constraint::{Constraint, Vocabulary};

/// Candidates tested one by one before falling back to the full mask.
const LAZY_CANDIDATES: usize = 64;

/// PCG-XSH-RR 32: small, fast, good enough for sampling.
#[derive(Debug, Clone)]
struct Pcg32 {
    state: u64,
}

impl Pcg32 {
    const MUL: u64 = 6_364_136_223_846_793_005;
    const INC: u64 = 1_442_695_040_888_963_407;

    fn new(seed: u64) -> Pcg32 {
        let mut rng = Pcg32 { state: 0 };
        rng.next_u32();
        rng.state = rng.state.wrapping_add(seed);
        rng.next_u32();
        rng
    }

    fn next_u32(&mut self) -> u32 {
        let old = self.state;
        self.state = old.wrapping_mul(Self::MUL).wrapping_add(Self::INC);
        let xorshifted = (((old >> 18) ^ old) >> 27) as u32;
        xorshifted.rotate_right((old >> 59) as u32)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f32 {
        (self.next_u32() >> 8) as f32 / (1u32 << 24) as f32
    }
}

/// How tokens are picked.
#[derive(Debug, Clone)]
pub struct Sampler {
    temperature: f32,
    top_k: usize,
    top_p: f32,
    rng: Pcg32,
}

impl Sampler {
    /// `temperature` ≤ 0 is greedy; `top_k` 0 keeps every token; `top_p` ≥ 1 keeps
    /// the whole distribution.
    pub fn new(temperature: f32, top_k: usize, top_p: f32, seed: u64) -> Sampler {
        Sampler {
            temperature,
            top_k,
            top_p,
            rng: Pcg32::new(seed),
        }
    }

    /// The greedy sampler.
    pub fn greedy() -> Sampler {
        Sampler::new(0.0, 0, 1.0, 0)
    }

    /// The next token, or None when nothing is allowed (a finished constraint). Under
    /// a constraint the logits may come back masked.
    pub fn sample(
        &mut self,
        logits: &mut [f32],
        constraint: Option<(&Constraint, &Vocabulary)>,
    ) -> Option<u32> {
        let greedy = self.temperature <= 0.0 || self.top_k == 1;
        let pool = if greedy {
            1
        } else if self.top_k == 0 {
            usize::MAX
        } else {
            self.top_k
        };
        // Tokens further below the best than this weigh under e^-30: left out.
        let width = NEGLIGIBLE * self.temperature.max(1.0);
        let candidates = match constraint {
            None => best(logits, pool, width),
            Some((c, vocab)) => {
                // Tested best first, the first `pool` allowed are exactly the best
                // `pool` of the masked logits; when the tested ones run out first
                // and more remain untested, only the full mask can say.
                let mut allowed = Vec::new();
                let mut exhausted = false;
                if pool <= LAZY_CANDIDATES {
                    let tested = best(logits, LAZY_CANDIDATES, width);
                    exhausted = tested.len() < LAZY_CANDIDATES;
                    for id in tested {
                        if allowed.len() < pool && c.allows(vocab, id) {
                            allowed.push(id);
                        }
                    }
                }
                if (allowed.len() < pool && !exhausted) || allowed.is_empty() {
                    c.mask(vocab, logits);
                    allowed = best(logits, pool, width);
                }
                allowed
            }
        };
        if greedy {
            return candidates.first().copied();
        }
        self.draw(logits, &candidates)
    }

    /// Draws from the softmax of the candidates (best first) at the temperature,
    /// keeping the smallest prefix whose probability reaches top-p.
    fn draw(&mut self, logits: &[f32], candidates: &[u32]) -> Option<u32> {
        let top = logits.get(*candidates.first()? as usize).copied()?;
        let mut weights: Vec<f32> = candidates
            .iter()
            .map(|&id| {
                logits
                    .get(id as usize)
                    .map_or(0.0, |&l| ((l - top) / self.temperature).exp())
            })
            .collect();
        let total: f32 = weights.iter().sum();
        if self.top_p < 1.0 {
            let mut mass = 0.0;
            let keep = weights.iter().position(|&w| {
                mass += w / total;
                mass >= self.top_p
            });
            weights.truncate(keep.map_or(weights.len(), |k| k + 1));
        }
        let total: f32 = weights.iter().sum();
        let mut target = self.rng.unit() * total;
        for (&id, &w) in candidates.iter().zip(&weights) {
            if target < w {
                return Some(id);
            }
            target -= w;
        }
        // Rounding left a sliver: the last kept candidate.
        candidates.get(weights.len().checked_sub(1)?).copied()
    }
}

/// Below the best logit by this much (times the temperature, when above 1), a
/// token's weight is under e^-30: left out of the candidates, so sorting stays short.
const NEGLIGIBLE: f32 = 30.0;

/// The `n` tokens with the highest finite logits, best first (the lower id among
/// equals), none more than `width` below the best. A heap, not a sort: the crate
/// keeps to no slice sort (each would compile its own copy into the wasm).
fn best(logits: &[f32], n: usize, width: f32) -> Vec<u32> {
    let top = logits
        .iter()
        .copied()
        .filter(|l| l.is_finite())
        .fold(f32::NEG_INFINITY, f32::max);
    let floor = top - width;
    let mut heap: BinaryHeap<Ranked> = (0..logits.len() as u32)
        .filter_map(|id| {
            let l = *logits.get(id as usize)?;
            (l.is_finite() && l >= floor).then_some(Ranked {
                logit: l,
                id: Reverse(id),
            })
        })
        .collect();
    let mut out = Vec::with_capacity(n.min(heap.len()));
    while out.len() < n {
        let Some(r) = heap.pop() else { break };
        out.push(r.id.0);
    }
    out
}

/// A token ordered by logit, then by lower id.
#[derive(PartialEq)]
struct Ranked {
    logit: f32,
    id: Reverse<u32>,
}

impl Eq for Ranked {}

impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.logit
            .total_cmp(&other.logit)
            .then(self.id.cmp(&other.id))
    }
}

#[cfg(test)]
mod tests;
