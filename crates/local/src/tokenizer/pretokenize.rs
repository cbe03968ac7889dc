//! Pre-tokenization: cutting text into the words BPE merges within, by hand-written
//! scanners that reproduce llama.cpp's (`unicode.cpp`) for each `tokenizer.ggml.pre`
//! this crate knows. No regex engine: each pattern is a few branches over code points.
//!
//! The scanners work on code points with byte offsets; each word is a byte range of
//! the input. The BPE itself (merges) lives in the parent module.

use super::letters::LETTERS;

/// The pre-tokenizer a model names in `tokenizer.ggml.pre`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pre {
    /// GPT-2's pattern: `'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+`.
    Gpt2,
    /// SmolLM (and StarCoder): every number code point a word of its own, then GPT-2's.
    SmolLm,
    /// Llama 3: case-insensitive contractions, `[^\r\n\p{L}\p{N}]?\p{L}+`, numbers in
    /// threes, punctuation with trailing newlines, newline runs.
    Llama3,
    /// Qwen 2: as Llama 3 but numbers one digit at a time.
    Qwen2,
}

impl Pre {
    /// The pre-tokenizer for a `tokenizer.ggml.pre` value (absent: GPT-2), or `None`
    /// for one this crate does not reproduce.
    pub fn from_name(name: Option<&str>) -> Option<Pre> {
        match name {
            None | Some("gpt2" | "default") => Some(Pre::Gpt2),
            Some("smollm" | "starcoder" | "refact") => Some(Pre::SmolLm),
            Some("llama-bpe" | "llama3") => Some(Pre::Llama3),
            Some("qwen2") => Some(Pre::Qwen2),
            Some(_) => None,
        }
    }

    /// The words of `text`, as byte ranges that cover it exactly, in order.
    pub fn split(self, text: &str) -> Vec<(usize, usize)> {
        let cpts: Vec<(usize, char)> = text.char_indices().collect();
        let mut words = Vec::with_capacity(cpts.len() / 3 + 1);
        let mut out = Words {
            cpts: &cpts,
            end_byte: text.len(),
            words: &mut words,
        };
        match self {
            Pre::Gpt2 => gpt2(&mut out, 0, cpts.len()),
            Pre::Llama3 => llama3(&mut out, 0, cpts.len(), 3),
            Pre::Qwen2 => llama3(&mut out, 0, cpts.len(), 1),
            Pre::SmolLm => {
                // First pass `\p{N}`: each number code point is a piece; GPT-2's pattern
                // then runs inside the pieces between them, blind to what lies outside
                // (its look-ahead stops at a piece's end, as llama.cpp's does).
                let mut start = 0;
                for (i, &(_, c)) in cpts.iter().enumerate() {
                    if c.is_numeric() {
                        gpt2(&mut out, start, i);
                        out.push(i, i + 1);
                        start = i + 1;
                    }
                }
                gpt2(&mut out, start, cpts.len());
            }
        }
        words
    }
}

/// Whether a code point is a letter (`\p{L}`).
pub fn is_letter(c: char) -> bool {
    let c = c as u32;
    if c < 0x80 {
        return (c | 0x20).wrapping_sub(u32::from(b'a')) < 26;
    }
    LETTERS
        .binary_search_by(|&(first, last)| {
            if last < c {
                std::cmp::Ordering::Less
            } else if first > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// A code point's class, as the patterns see it; `Out` past the piece's ends.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Letter,
    Number,
    Space,
    Other,
    Out,
}

fn class_of(c: char) -> Class {
    if is_letter(c) {
        Class::Letter
    } else if c.is_numeric() {
        Class::Number
    } else if c.is_whitespace() {
        Class::Space
    } else {
        Class::Other
    }
}

/// The words found so far, and the code points they are cut from.
struct Words<'a> {
    cpts: &'a [(usize, char)],
    end_byte: usize,
    words: &'a mut Vec<(usize, usize)>,
}

impl Words<'_> {
    /// Records code points `from..to` as one word (nothing when empty).
    fn push(&mut self, from: usize, to: usize) {
        if to > from {
            let byte = |i: usize| self.cpts.get(i).map_or(self.end_byte, |&(b, _)| b);
            self.words.push((byte(from), byte(to)));
        }
    }
}

/// A view of one piece `ini..end` of the code points.
struct Piece<'a> {
    cpts: &'a [(usize, char)],
    ini: usize,
    end: usize,
}

impl Piece<'_> {
    fn cpt(&self, pos: usize) -> Option<char> {
        if pos >= self.ini && pos < self.end {
            self.cpts.get(pos).map(|&(_, c)| c)
        } else {
            None
        }
    }
    fn class(&self, pos: usize) -> Class {
        self.cpt(pos).map_or(Class::Out, class_of)
    }
    /// The length of a contraction (`'s`, `'re`, …) at `pos`, if one starts there.
    fn contraction(&self, pos: usize, any_case: bool) -> Option<usize> {
        if self.cpt(pos) != Some('\'') {
            return None;
        }
        let low = |c: Option<char>| c.map(|c| if any_case { c.to_ascii_lowercase() } else { c });
        let next = low(self.cpt(pos + 1));
        if matches!(next, Some('s' | 't' | 'm' | 'd')) {
            return Some(2);
        }
        match (next, low(self.cpt(pos + 2))) {
            (Some('r'), Some('e')) | (Some('v'), Some('e')) | (Some('l'), Some('l')) => Some(3),
            _ => None,
        }
    }
    /// How many whitespace code points run from `pos`.
    fn spaces(&self, pos: usize) -> usize {
        let mut n = 0;
        while self.class(pos + n) == Class::Space {
            n += 1;
        }
        n
    }
}

/// GPT-2's pattern over code points `ini..end` (llama.cpp's `custom_gpt2`).
fn gpt2(out: &mut Words, ini: usize, end: usize) {
    let p = Piece {
        cpts: out.cpts,
        ini,
        end,
    };
    let mut pos = ini;
    while pos < end {
        let start = pos;
        let cpt = p.cpt(pos);
        if let Some(n) = p.contraction(pos, false) {
            pos += n;
        } else {
            let lead = usize::from(cpt == Some(' '));
            let class = p.class(pos + lead);
            match class {
                Class::Letter | Class::Number | Class::Other => {
                    pos += lead;
                    while p.class(pos) == class {
                        pos += 1;
                    }
                }
                Class::Space | Class::Out => {
                    let n = p.spaces(pos);
                    // `\s+(?!\S)`: leave the last space to the word that follows.
                    pos += if n > 1 && pos + n < end {
                        n - 1
                    } else {
                        n.max(1)
                    };
                }
            }
        }
        out.push(start, pos);
    }
}

/// Llama 3's pattern over code points `ini..end` (llama.cpp's `custom_llama3`), with
/// numbers cut into groups of `digits`.
fn llama3(out: &mut Words, ini: usize, end: usize, digits: usize) {
    let p = Piece {
        cpts: out.cpts,
        ini,
        end,
    };
    let mut pos = ini;
    let is_newline = |c: Option<char>| matches!(c, Some('\r' | '\n'));
    while pos < end {
        let start = pos;
        let cpt = p.cpt(pos);
        let class = p.class(pos);
        if let Some(n) = p.contraction(pos, true) {
            pos += n;
        } else if !is_newline(cpt)
            && class != Class::Number
            && (class == Class::Letter || p.class(pos + 1) == Class::Letter)
        {
            // `[^\r\n\p{L}\p{N}]?\p{L}+`
            pos += 1;
            while p.class(pos) == Class::Letter {
                pos += 1;
            }
        } else if class == Class::Number {
            // `\p{N}{1,digits}`
            while p.class(pos) == Class::Number && pos - start < digits {
                pos += 1;
            }
        } else {
            let lead = usize::from(cpt == Some(' '));
            if p.class(pos + lead) == Class::Other {
                // ` ?[^\s\p{L}\p{N}]+[\r\n]*`
                pos += lead;
                while p.class(pos) == Class::Other {
                    pos += 1;
                }
                while is_newline(p.cpt(pos)) {
                    pos += 1;
                }
            } else {
                let n = p.spaces(pos);
                let last_newline = (pos..pos + n).rev().find(|&i| is_newline(p.cpt(i)));
                pos = match last_newline {
                    // `\s*[\r\n]+`
                    Some(i) => i + 1,
                    // `\s+(?!\S)`, then `\s+`
                    None if n > 1 && pos + n < end => pos + n - 1,
                    None => pos + n.max(1),
                };
            }
        }
        out.push(start, pos);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(pre: Pre, text: &str) -> Vec<&str> {
        pre.split(text)
            .into_iter()
            .filter_map(|(a, b)| text.get(a..b))
            .collect()
    }

    #[test]
    fn gpt2_keeps_the_space_before_a_word_and_the_last_of_a_run_of_spaces() {
        assert_eq!(
            words(Pre::Gpt2, "Hello  world's 42!!\n"),
            ["Hello", " ", " world", "'s", " 42", "!!", "\n"]
        );
    }

    #[test]
    fn smollm_cuts_every_digit_apart() {
        assert_eq!(words(Pre::SmolLm, "a 123b"), ["a", " ", "1", "2", "3", "b"]);
    }

    #[test]
    fn llama3_groups_digits_in_threes_and_newlines_with_their_spaces() {
        assert_eq!(
            words(Pre::Llama3, "I'M 12345  \n\nok?\n"),
            ["I", "'M", " ", "123", "45", "  \n\n", "ok", "?\n"]
        );
    }

    #[test]
    fn combining_marks_are_not_letters() {
        assert!(is_letter('ह'));
        assert!(!is_letter('ि'));
        assert!(is_letter('é') && is_letter('Ж') && is_letter('中'));
        assert!(!is_letter('1') && !is_letter(' ') && !is_letter('!'));
    }

    #[test]
    fn words_cover_the_text_exactly() {
        let text = "  Ünïcödé\t\tテキスト 🙂‍↔️ x=1;\r\n";
        for pre in [Pre::Gpt2, Pre::SmolLm, Pre::Llama3, Pre::Qwen2] {
            let joined: String = words(pre, text).concat();
            assert_eq!(joined, text, "{pre:?}");
        }
    }
}
