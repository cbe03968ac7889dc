//! `repetition`: the guard that ends a text answer, or a call's arguments, where it
//! starts saying again what it already said.
//!
//! A small model with nothing more to say loops ("I'm sorry, I'm sorry…", a sentence
//! again and again) until its token budget runs out. Greedy decoding makes a loop
//! certain once it starts: the same tokens lead to the same tokens. So when the last
//! [`RUN`] tokens of an answer already stand earlier in it, the answer ends before
//! them; the text of the last `RUN - 1` tokens is held back from the stream until the
//! next token shows it is no repeat, so what was streamed is never taken back. A
//! call's arguments ("I remember you. I remember you. …") end the same way, then are
//! closed by their grammar's shortest completion, as when the budget runs out.

/// Tokens a repeat must run to end the answer: shorter runs ("of the") recur in
/// any prose.
pub(super) const RUN: usize = 5;

/// Where the answer's final [`RUN`] tokens begin, when they stand earlier in it too.
pub(super) fn repeat_start(tokens: &[u32]) -> Option<usize> {
    let start = tokens.len().checked_sub(RUN)?;
    let last = tokens.get(start..)?;
    tokens
        .windows(RUN)
        .take(start)
        .any(|w| w == last)
        .then_some(start)
}

/// Of `ends` (the text's length after each token), the length that may be streamed:
/// all but the last `RUN - 1` tokens' text.
pub(super) fn streamable(ends: &[usize]) -> usize {
    let safe = ends.len().saturating_sub(RUN - 1);
    safe.checked_sub(1)
        .and_then(|i| ends.get(i))
        .copied()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_said_again_ends_the_answer_where_the_repeat_begins() {
        // "I'm sorry, I'm sorry, I'm sorry": I 'm sorry , I 'm sorry , I …
        let sorry = [1, 2, 3, 4, 1, 2, 3, 4, 1];
        assert_eq!(repeat_start(&sorry), Some(4));
        assert_eq!(repeat_start(&sorry[..8]), None);
        // A sentence said twice is cut at its second saying's fifth token.
        let twice = [9, 10, 11, 12, 13, 14, 9, 10, 11, 12, 13];
        assert_eq!(repeat_start(&twice), Some(6));
    }

    #[test]
    fn shorter_runs_and_fresh_text_go_on() {
        assert_eq!(repeat_start(&[1, 2, 3, 7, 1, 2, 3, 8, 1, 2, 3, 9]), None);
        assert_eq!(repeat_start(&[5, 6, 7]), None);
        assert_eq!(repeat_start(&[]), None);
    }

    #[test]
    fn the_last_tokens_text_is_held_back_from_the_stream() {
        assert_eq!(streamable(&[2, 4, 6]), 0);
        assert_eq!(streamable(&[2, 4, 6, 8]), 0);
        assert_eq!(streamable(&[2, 4, 6, 8, 10]), 2);
        assert_eq!(streamable(&[2, 4, 6, 8, 10, 12, 14]), 6);
    }
}
