//! Repairs the ways model-written JSON commonly breaks, by re-reading it with a
//! forgiving parser that writes strict JSON as it goes.
//!
//! Forgiven: trailing, doubled and missing commas, a missing colon, a missing value
//! (null), single, curly and backtick quotes, unquoted keys, bare words and URLs as
//! values (text), `//`, `/* */` and `#` comments, Python's `True`/`False`/`None`,
//! JavaScript's `undefined`/`NaN`/`Infinity` (null), `"a" + "b"`, `...` for "and so
//! on", regex literals (text), wrappers such as `ObjectId("…")` or `NumberLong(5)` and
//! a JSONP callback (their inner value stands), a whole document written string-escaped
//! (`{\"a\": 1}`), raw control characters and stray quotes inside strings, a missing end
//! quote, loose numbers (`+1`, `.5`, `1.`; `007` or `1.2.3` are kept as text), an
//! object left unclosed before the next array item, Python's tuples and sets (lists),
//! digit separators (`1_000`), invisible spaces (zero-width, byte-order mark), a
//! doubled quote (`""key""`), a word with its opening quote missing (`{a": 1}`), a
//! stray word before a key, a list closed early (`{"a": [1], [2]}`) or in the wrong
//! bracket, an object closed early (`{"a": 1}, "b": 2}`), an object's `{` left out in a
//! list (`["a": 1]`), several values in a row (the list of them), an object written
//! unescaped inside a string (text), a stray line holding only a quote, quotes in a
//! regex's character class, a `#` note before the `}` of its line, prose between
//! members, a value that lost its opening quote, and truncation
//! (unterminated strings, missing closing brackets; a whole key whose value was cut off
//! keeps it as null, a key cut off itself is dropped). Anything else is refused with
//! the position where reading failed. Key order and duplicate keys are kept as written.
//! Where the two reference repairers read a class differently, the choice and its
//! reason are in `bench/json_repair/README.md`.
//!
//! Time is linear in the input: lookahead never passes the next structural character
//! (or, for a quoted key or a value after a quote, the next quote),
//! and going back over text already read (to end a string earlier than its quotes
//! said) is paid from a budget the size of the input.

mod lists;
mod objects;
mod scalars;
mod strings;

use super::JsonError;

/// Deeper nesting than this is refused: a hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// A document escaped more times than this is not unescaped further.
const MAX_UNESCAPES: usize = 3;

/// Rewrites `text` (one JSON value, possibly broken) as strict JSON.
pub fn repair(text: &str) -> Result<String, JsonError> {
    // `{"a": "b"}```: the closing fence of a block whose opening one was cut off.
    let text = match text.trim_end().strip_suffix("```") {
        Some(body) if !body.contains("```") => body,
        _ => text,
    };
    let first = repair_once(text);
    if first.is_ok() {
        return first;
    }
    // `{\"a\": \"b\"}`: the model wrote the document as the inside of a string.
    let mut text = std::borrow::Cow::Borrowed(text);
    for _ in 0..MAX_UNESCAPES {
        let Some(unescaped) = unescape_document(&text) else {
            break;
        };
        if let Ok(repaired) = repair_once(&unescaped) {
            return Ok(repaired);
        }
        text = std::borrow::Cow::Owned(unescaped);
    }
    first
}

fn repair_once(text: &str) -> Result<String, JsonError> {
    repair_counting(text).0
}

/// One repair, and the work it took: characters read, read again and looked at ahead.
fn repair_counting(text: &str) -> (Result<String, JsonError>, usize) {
    let chars: Vec<char> = text.chars().collect();
    let mut repairer = Repairer {
        rescan_budget: 2 * chars.len() + 64,
        chars,
        pos: 0,
        out: String::with_capacity(text.len() + 8),
        depth: 0,
        bare_words: 0,
        looked: std::cell::Cell::new(0),
        join_next: false,
    };
    let budget = repairer.rescan_budget;
    let result = repairer.run();
    let work = repairer.chars.len() + (budget - repairer.rescan_budget) + repairer.looked.get();
    (result, work)
}

/// One level of string escapes taken off a document that starts string-escaped
/// (`{\"`, `[\"`, `{\n  \"`), or `None` when it does not.
fn unescape_document(text: &str) -> Option<String> {
    let mut rest = text.trim_start().strip_prefix(['{', '['])?;
    // Past the opening brackets and spaces, raw or escaped (`[\n  {\"a\": 1}]`).
    loop {
        rest = rest.trim_start_matches(|c: char| c.is_whitespace() || c == '{' || c == '[');
        match ["\\n", "\\r", "\\t"]
            .iter()
            .find_map(|escape| rest.strip_prefix(escape))
        {
            Some(after) => rest = after,
            None => break,
        }
    }
    if !rest.trim_start_matches('\\').starts_with('"') || !rest.starts_with('\\') {
        return None;
    }
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(c @ ('"' | '\\' | '/')) => out.push(c),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    Some(out)
}

/// Where a value sits; it decides what may end a bare word and which repairs apply.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    Top,
    Array,
    ObjectValue,
}

/// A value came out empty because the input ended first.
struct EndedEarly;

enum Fail {
    Ended(EndedEarly),
    Error(JsonError),
}

impl From<JsonError> for Fail {
    fn from(error: JsonError) -> Self {
        Self::Error(error)
    }
}

struct Repairer {
    chars: Vec<char>,
    pos: usize,
    out: String,
    depth: usize,
    /// Characters that may still be read again: going back is paid from here, so the
    /// whole repair reads at most about three times the input.
    rescan_budget: usize,
    /// Bare words read as text so far.
    bare_words: usize,
    /// Characters looked at ahead without being read (tests hold it linear).
    looked: std::cell::Cell<usize>,
    /// The string just ended lost its end quote before a `+`: the next one joins it.
    join_next: bool,
}

impl Repairer {
    fn run(&mut self) -> Result<String, JsonError> {
        self.skip_space();
        if self.peek().is_none() {
            return Err(JsonError::NoJson);
        }
        self.top_value()?;
        let end = self.pos;
        if let Err(error) = self.rest_is_empty() {
            self.more_at_the_top(end, error)?;
        }
        serde_json::from_str::<serde::de::IgnoredAny>(&self.out).map_err(|e| {
            JsonError::Unrepairable {
                at: self.pos,
                reason: format!("the repaired text is still not JSON ({e})"),
            }
        })?;
        Ok(std::mem::take(&mut self.out))
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// The first character at or after `from` that is not whitespace, and its index.
    fn next_solid(&self, from: usize) -> (usize, Option<char>) {
        let mut at = from;
        while self.chars.get(at).copied().is_some_and(is_space) {
            at += 1;
        }
        self.look(at - from + 1);
        (at, self.chars.get(at).copied())
    }

    /// Counts characters looked at ahead.
    fn look(&self, count: usize) {
        self.looked.set(self.looked.get() + count);
    }

    fn text(&self, start: usize, end: usize) -> String {
        self.chars
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .collect()
    }

    fn error(&self, reason: impl Into<String>) -> JsonError {
        JsonError::Unrepairable {
            at: self.pos,
            reason: reason.into(),
        }
    }

    /// Moves back to `to`, if the budget allows; false (and no move) when it does not.
    fn rewind(&mut self, to: usize) -> bool {
        let cost = self.pos.saturating_sub(to);
        if cost > self.rescan_budget {
            return false;
        }
        self.rescan_budget -= cost;
        self.pos = to;
        true
    }

    /// After the value: nothing but spaces, comments, stray closing brackets, commas
    /// or a `;`. Anything else means the value was not the whole of the text.
    fn rest_is_empty(&mut self) -> Result<(), JsonError> {
        loop {
            self.skip_space();
            match self.peek() {
                None => return Ok(()),
                Some('}' | ']' | ',' | ';' | ')') => self.pos += 1,
                Some(c) => return Err(self.error(format!("unexpected `{c}` after the value"))),
            }
        }
    }

    /// Text after the top value (`error` says where): an object closed too early whose
    /// members go on (`{"a": 1}, "b": 2}`), or several values in a row (`1, 2, 3`,
    /// `{}\n{}`), read as the list of them. A bare word among them (prose after the
    /// value) refuses the list: then the value was not the whole text.
    fn more_at_the_top(&mut self, end: usize, error: JsonError) -> Result<(), JsonError> {
        let (comma, next) = self.next_solid(end);
        if self.out.ends_with('}') && next == Some(',') {
            let (key_at, key) = self.next_solid(comma + 1);
            let key_follows = key.is_some_and(|c| strings::closers(c).is_some())
                && self.next_solid(key_at + 1).1 != Some('}');
            if key_follows && self.rewind(key_at) {
                self.out.pop();
                self.members(Parent::Top, self.out.ends_with('{'), None)?;
                return self.rest_is_empty();
            }
        }
        let words = self.bare_words;
        if !self.rewind(0) {
            return Err(error);
        }
        self.out.clear();
        self.out.push('[');
        let (count, _) = self.items(Parent::Top, '\0')?;
        self.skip_space();
        // A stray closing bracket after them: a fragment of a larger value, not a list.
        if count < 2 || self.bare_words > words || self.peek().is_some() {
            return Err(error);
        }
        Ok(())
    }

    /// Skips whitespace and comments.
    fn skip_space(&mut self) {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(c), _) if is_space(c) => self.pos += 1,
                (Some('/'), Some('/')) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                (Some('#'), _) => self.skip_hash_comment(),
                (Some('/'), Some('*')) => {
                    self.pos += 2;
                    while self.peek().is_some()
                        && !(self.peek() == Some('*') && self.peek_at(1) == Some('/'))
                    {
                        self.pos += 1;
                    }
                    self.pos = (self.pos + 2).min(self.chars.len());
                }
                _ => return,
            }
        }
    }

    /// Skips a `#` comment to its line's end, or to a closing bracket that the
    /// structure goes on after on the same line (`"v" # note }, "k": 1`): a note
    /// written inline, before the bracket that ends its object. (A `//` comment runs
    /// to the line's end, as JSONC and JSON5 define it; no JSON dialect defines `#`.)
    fn skip_hash_comment(&mut self) {
        let mut open = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '\n' => return,
                '{' | '[' => open += 1,
                '}' | ']' if open > 0 => open -= 1,
                '}' | ']' => {
                    let (at, next) = self.next_solid(self.pos + 1);
                    let same_line = self
                        .chars
                        .get(self.pos..at)
                        .is_some_and(|gap| !gap.contains(&'\n'));
                    if same_line && next == Some(',') {
                        return;
                    }
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    /// The one value the text holds.
    fn top_value(&mut self) -> Result<(), JsonError> {
        match self.value_or_end(Context::Top, Parent::Top) {
            Ok(()) => Ok(()),
            Err(Fail::Ended(_)) => Err(self.error("the text ends where a value should be")),
            Err(Fail::Error(error)) => Err(error),
        }
    }

    fn value_or_end(&mut self, context: Context, parent: Parent) -> Result<(), Fail> {
        self.skip_space();
        match self.peek() {
            None => Err(Fail::Ended(EndedEarly)),
            Some('{') => self.nested(|r| r.object(parent)),
            Some('[') => self.nested(|r| r.array(parent)),
            Some('(') => self.nested(Self::tuple),
            Some(q) if strings::closers(q).is_some() => {
                let role = match context {
                    Context::Array => strings::Role::ArrayItem,
                    _ => strings::Role::Value,
                };
                self.string(role).map_err(Fail::Error)
            }
            Some('/') => self.regex(context).map_err(Fail::Error),
            Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => {
                self.number(context)
            }
            Some(c) if c.is_alphabetic() || c == '_' || c == '$' => self.word(context),
            Some(c) => Err(Fail::Error(self.error(format!("unexpected `{c}`")))),
        }
    }

    /// Skips `...` or `…`, which models write for "and so on" in a list or an object.
    fn skip_ellipsis(&mut self) -> bool {
        if self.peek() == Some('…') {
            self.pos += 1;
            return true;
        }
        let dots = (0..3).all(|i| self.peek_at(i) == Some('.'));
        if dots {
            self.pos += 3;
        }
        dots
    }

    fn nested(
        &mut self,
        read: impl FnOnce(&mut Self) -> Result<(), JsonError>,
    ) -> Result<(), Fail> {
        if self.depth >= MAX_DEPTH {
            return Err(Fail::Error(
                self.error(format!("nesting deeper than {MAX_DEPTH}")),
            ));
        }
        self.depth += 1;
        let result = read(self);
        self.depth -= 1;
        result.map_err(Fail::Error)
    }
}

/// What holds the container being read: an unclosed object inside a list ends at the
/// next item, a list inside an object at the next key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parent {
    Top,
    Array,
    Object,
}

/// Whitespace, and the invisible characters that copied text carries between tokens:
/// zero-width spaces and joiners, the byte-order mark, the Mongolian vowel separator.
pub(super) fn is_space(c: char) -> bool {
    c.is_whitespace()
        || matches!(
            c,
            '\u{200b}'..='\u{200d}' | '\u{2060}' | '\u{feff}' | '\u{180e}'
        )
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
