//! `choice`: the tool decision, made over whole options.
//!
//! After the call's opening the model chooses one of the tools, or none. Decoded a
//! token at a time under a grammar, a tool is chosen by its first token alone: a
//! transcript that just showed `page_elements` makes `page` likely, and the one tool
//! on offer that starts with it (`page_forms`) is then forced, however unlikely its
//! ending. So each option is read whole instead, one token per unit of work, and:
//! - a tool is chosen by the probability of its whole option (the sum of its tokens'
//!   log probabilities: a name's predictable ending adds nothing, an unlikely one
//!   weighs);
//! - no tool is chosen over them when its option is likelier than the first token the
//!   calls share (SmolLM2's `]` against the `\n` that opens any call): the model's
//!   own decision to call, before it says which; when the calls share no first token
//!   (a `none` among the names), against the best call whole.
//!
//! The options share the opening in the KV cache; each is read after it and cut away
//! again.

use super::GenerateError;
use super::forward::Forward;

/// What scoring needs of the model: a token read after the cache, and the cache cut.
pub(super) trait Reader {
    async fn step(&mut self, token: u32) -> Result<Vec<f32>, GenerateError>;
    fn truncate(&mut self, len: usize);
}

impl Reader for Forward {
    async fn step(&mut self, token: u32) -> Result<Vec<f32>, GenerateError> {
        Forward::step(self, token).await
    }

    fn truncate(&mut self, len: usize) {
        Forward::truncate(self, len);
    }
}

/// The options of one tool decision and how far their reading is.
#[derive(Debug, Clone)]
pub(super) struct Choice {
    /// Each option's tokens.
    options: Vec<Vec<u32>>,
    /// The option that calls no tool.
    none: Option<usize>,
    /// Where the options start in the cache, and the logits there (kept at the first
    /// step).
    start: usize,
    logits: Option<Vec<f32>>,
    /// The option being read and how many of its tokens.
    at: usize,
    read: usize,
    /// Each option read: its first token's log probability and its whole's.
    scores: Vec<(f32, f32)>,
}

impl Choice {
    /// A choice among `options` (each as tokens; `none` the one that calls no tool),
    /// read after the first `start` tokens of the cache.
    pub(super) fn new(options: Vec<Vec<u32>>, none: Option<usize>, start: usize) -> Choice {
        Choice {
            options,
            none,
            start,
            logits: None,
            at: 0,
            read: 0,
            scores: Vec::new(),
        }
    }

    /// Reads one token of the option being read; the chosen option's index once all
    /// are read. `logits` are the model's after the tokens read so far; returns the
    /// next logits to pass.
    pub(super) async fn step(
        &mut self,
        session: &mut impl Reader,
        logits: &[f32],
    ) -> Result<(Option<usize>, Vec<f32>), GenerateError> {
        if self.options.len() < 2 {
            return Ok((Some(0), Vec::new()));
        }
        if self.logits.is_none() {
            self.logits = Some(logits.to_vec());
        }
        let tokens = self.options.get(self.at).cloned().unwrap_or_default();
        if let Some(&token) = tokens.get(self.read) {
            let p = log_probability(logits, token);
            match self.scores.get_mut(self.at) {
                Some((_, whole)) => *whole += p,
                None => self.scores.push((p, p)),
            }
            self.read += 1;
            if self.read < tokens.len() {
                return Ok((None, session.step(token).await?));
            }
        }
        if self.scores.len() <= self.at {
            self.scores.push((f32::NEG_INFINITY, f32::NEG_INFINITY));
        }
        self.at += 1;
        self.read = 0;
        if self.at < self.options.len() {
            session.truncate(self.start);
            return Ok((None, self.logits.clone().unwrap_or_default()));
        }
        Ok((Some(self.decide()), Vec::new()))
    }

    /// The best call by its whole, unless no call is likelier.
    fn decide(&self) -> usize {
        let calls = (0..self.options.len()).filter(|&i| Some(i) != self.none);
        let best = calls.clone().fold(None, |best: Option<(usize, f32)>, i| {
            let whole = self.scores.get(i).map_or(f32::NEG_INFINITY, |s| s.1);
            match best {
                Some((_, top)) if top >= whole => best,
                _ => Some((i, whole)),
            }
        });
        let Some((call, whole)) = best else {
            return self.none.unwrap_or(0);
        };
        let Some(none) = self.none else { return call };
        let firsts: Vec<Option<&u32>> = calls.clone().map(|i| self.first_token(i)).collect();
        let shared = firsts.windows(2).all(|w| w.first() == w.get(1));
        let calling = match shared {
            true => self.scores.get(call).map_or(f32::NEG_INFINITY, |s| s.0),
            false => whole,
        };
        let declining = self.scores.get(none).map_or(f32::NEG_INFINITY, |s| s.1);
        if declining > calling { none } else { call }
    }

    fn first_token(&self, option: usize) -> Option<&u32> {
        self.options.get(option).and_then(|o| o.first())
    }
}

/// `log softmax(logits)[token]`.
pub(super) fn log_probability(logits: &[f32], token: u32) -> f32 {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f32 = logits.iter().map(|l| (l - max).exp()).sum();
    let at = logits
        .get(token as usize)
        .copied()
        .unwrap_or(f32::NEG_INFINITY);
    at - max - sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::forward::now;

    /// A model over five tokens whose next-token shares depend on the last token
    /// read: after the opening, 1 (0.5) before 3 (0.3) before 4, "none" (0.2); after
    /// 1, the ending 2 is unlikely (0.1); after 0, the shared opening of calls, 1 is
    /// likeliest.
    struct Table {
        read: Vec<u32>,
    }

    fn shares(p: [f32; 5]) -> Vec<f32> {
        p.iter().map(|p| p.ln()).collect()
    }

    const OPENING: [f32; 5] = [0.0, 0.5, 0.0, 0.3, 0.2];

    impl Reader for Table {
        async fn step(&mut self, token: u32) -> Result<Vec<f32>, GenerateError> {
            self.read.push(token);
            Ok(match token {
                1 => shares([0.3, 0.0, 0.1, 0.3, 0.3]),
                0 => shares([0.1, 0.5, 0.1, 0.2, 0.1]),
                _ => shares([0.2; 5]),
            })
        }

        fn truncate(&mut self, len: usize) {
            self.read.truncate(len);
        }
    }

    fn choose(options: Vec<Vec<u32>>, none: Option<usize>, opening: [f32; 5]) -> (usize, Vec<u32>) {
        let mut table = Table { read: Vec::new() };
        let mut choice = Choice::new(options, none, 0);
        let mut logits = shares(opening);
        for _ in 0..100 {
            let (chosen, next) = now(choice.step(&mut table, &logits))
                .unwrap_or_else(|| unreachable!("the table never waits"))
                .unwrap_or_else(|e| unreachable!("{e}"));
            if let Some(chosen) = chosen {
                return (chosen, table.read);
            }
            logits = next;
        }
        unreachable!("the choice never ended")
    }

    #[test]
    fn a_likely_first_token_with_an_unlikely_ending_loses_to_a_likelier_whole() {
        // [1, 2] (0.5 × 0.1) against [3] (0.3): the first token alone would take [1, 2].
        let (chosen, read) = choose(vec![vec![1, 2], vec![3]], None, OPENING);
        assert_eq!(chosen, 1);
        // Each option was read after the opening and cut away again.
        assert!(read.is_empty(), "{read:?}");
        // A likely ending keeps it: [1, 3] (0.5 × 0.3) against [3] (0.3)? No: 0.15.
        assert_eq!(choose(vec![vec![1, 3], vec![3]], None, OPENING).0, 1);
        assert_eq!(choose(vec![vec![3]], None, OPENING).0, 0);
    }

    #[test]
    fn no_call_wins_against_the_first_token_calls_share_not_against_one_calls_whole() {
        // Calls [0, 1] and [0, 3] open with 0 (0.0 after the opening here: never).
        let never = [0.0, 0.5, 0.0, 0.3, 0.2];
        assert_eq!(
            choose(vec![vec![0, 1], vec![0, 3], vec![4]], Some(2), never).0,
            2
        );
        // 0 at 0.4 against no call's 0.2: a call, the likelier whole ([0, 1]: 0.5 after 0).
        let calls = [0.4, 0.2, 0.0, 0.2, 0.2];
        assert_eq!(
            choose(vec![vec![0, 3], vec![0, 1], vec![4]], Some(2), calls).0,
            1
        );
        // Though each call whole (0.4 × 0.5 = 0.2, 0.4 × 0.2) is no likelier than 0.2.
        let close = [0.4, 0.1, 0.0, 0.1, 0.21];
        assert_eq!(choose(vec![vec![0, 1], vec![4]], Some(1), close).0, 0);
        // With no shared first token, no call is one option among the others: 0.2
        // against 0.05 and 0.06, though 1 was the likeliest first token.
        let named = vec![vec![1, 2], vec![3, 2], vec![4]];
        assert_eq!(choose(named, Some(2), OPENING).0, 2);
        assert_eq!(
            choose(vec![vec![1, 2], vec![3], vec![4]], Some(2), OPENING).0,
            1
        );
    }

    #[test]
    fn a_tokens_log_probability_is_its_softmax_share() {
        let logits = [0.0, (3.0f32).ln(), f32::NEG_INFINITY];
        assert!((log_probability(&logits, 1) - (0.75f32).ln()).abs() < 1e-6);
        assert!((log_probability(&logits, 0) - (0.25f32).ln()).abs() < 1e-6);
        assert_eq!(log_probability(&logits, 2), f32::NEG_INFINITY);
        assert_eq!(log_probability(&logits, 9), f32::NEG_INFINITY);
    }
}
