//! Splits reasoning that arrives inline as `<think>…</think>` from the answer text,
//! even when a tag is cut across stream chunks.

use crate::llm::Delta;

const OPEN: &str = "<think>";
const CLOSE: &str = "</think>";

/// Routes streamed content to text or reasoning deltas.
#[derive(Debug, Default)]
pub struct ThinkSplitter {
    thinking: bool,
    /// Content held back because it may be the start of a tag.
    pending: String,
}

impl ThinkSplitter {
    /// Splits one content fragment; returns the deltas it completes.
    pub fn push(&mut self, fragment: &str) -> Vec<Delta> {
        self.pending.push_str(fragment);
        let mut out = Vec::new();
        loop {
            let tag = if self.thinking { CLOSE } else { OPEN };
            if let Some(at) = self.pending.find(tag) {
                let before: String = self.pending.drain(..at).collect();
                self.pending.drain(..tag.len());
                self.emit(before, &mut out);
                self.thinking = !self.thinking;
                continue;
            }
            let keep = partial_tag_suffix(&self.pending, tag);
            let ready: String = self.pending.drain(..self.pending.len() - keep).collect();
            self.emit(ready, &mut out);
            return out;
        }
    }

    /// The end of the stream: whatever was held back is content after all.
    pub fn finish(&mut self) -> Vec<Delta> {
        let rest = std::mem::take(&mut self.pending);
        let mut out = Vec::new();
        self.emit(rest, &mut out);
        out
    }

    fn emit(&self, text: String, out: &mut Vec<Delta>) {
        if text.is_empty() {
            return;
        }
        out.push(if self.thinking {
            Delta::Reasoning { text }
        } else {
            Delta::Text { text }
        });
    }
}

/// The length of the longest suffix of `text` that is a proper prefix of `tag`.
fn partial_tag_suffix(text: &str, tag: &str) -> usize {
    (1..tag.len())
        .rev()
        .find(|&n| tag.get(..n).is_some_and(|prefix| text.ends_with(prefix)))
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Splits `input` at every boundary and checks the merged output each time.
    fn split_everywhere(input: &str) -> (String, String) {
        let mut expected = None;
        for at in (0..=input.len()).filter(|&i| input.is_char_boundary(i)) {
            let mut splitter = ThinkSplitter::default();
            let mut deltas = splitter.push(&input[..at]);
            deltas.extend(splitter.push(&input[at..]));
            deltas.extend(splitter.finish());
            let (mut text, mut reasoning) = (String::new(), String::new());
            for delta in deltas {
                match delta {
                    Delta::Text { text: t } => text.push_str(&t),
                    Delta::Reasoning { text: t } => reasoning.push_str(&t),
                    Delta::ToolCall { .. } => unreachable!(),
                }
            }
            let got = (text, reasoning);
            assert_eq!(
                expected.get_or_insert_with(|| got.clone()),
                &got,
                "split at {at}"
            );
        }
        expected.unwrap()
    }

    #[test]
    fn inline_reasoning_is_split_from_the_answer_at_any_chunking() {
        let (text, reasoning) = split_everywhere("<think>the user wants é</think>It is noon.");
        assert_eq!(reasoning, "the user wants é");
        assert_eq!(text, "It is noon.");
    }

    #[test]
    fn text_that_only_looks_like_a_tag_start_is_kept() {
        let (text, reasoning) = split_everywhere("a < b and <thin ice");
        assert_eq!(text, "a < b and <thin ice");
        assert!(reasoning.is_empty());
    }

    #[test]
    fn an_unclosed_think_block_is_all_reasoning() {
        let (text, reasoning) = split_everywhere("<think>still going");
        assert_eq!((text.as_str(), reasoning.as_str()), ("", "still going"));
    }
}
