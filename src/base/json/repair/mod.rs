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
//! object left unclosed before the next array item, and truncation (unterminated
//! strings, missing closing brackets, a key left without its value). Anything else is
//! refused with the position where reading failed. Key order and duplicate keys are
//! kept as written.
//!
//! Time is linear in the input: lookahead never passes the next structural character,
//! and going back over text already read (to end a string earlier than its quotes
//! said) is paid from a budget the size of the input.

mod scalars;
mod strings;

use super::JsonError;

/// Deeper nesting than this is refused: a hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// A document escaped more times than this is not unescaped further.
const MAX_UNESCAPES: usize = 3;

/// Rewrites `text` (one JSON value, possibly broken) as strict JSON.
pub fn repair(text: &str) -> Result<String, JsonError> {
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
    let chars: Vec<char> = text.chars().collect();
    let mut repairer = Repairer {
        rescan_budget: 2 * chars.len() + 64,
        chars,
        pos: 0,
        out: String::with_capacity(text.len() + 8),
        depth: 0,
    };
    repairer.skip_space();
    if repairer.peek().is_none() {
        return Err(JsonError::NoJson);
    }
    repairer.top_value()?;
    repairer.rest_is_empty()?;
    serde_json::from_str::<serde::de::IgnoredAny>(&repairer.out).map_err(|e| {
        JsonError::Unrepairable {
            at: repairer.pos,
            reason: format!("the repaired text is still not JSON ({e})"),
        }
    })?;
    Ok(repairer.out)
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
}

impl Repairer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// The first character at or after `from` that is not whitespace, and its index.
    fn next_solid(&self, from: usize) -> (usize, Option<char>) {
        let mut at = from;
        while self.chars.get(at).is_some_and(|c| c.is_whitespace()) {
            at += 1;
        }
        (at, self.chars.get(at).copied())
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

    /// Skips whitespace and comments.
    fn skip_space(&mut self) {
        loop {
            match (self.peek(), self.peek_at(1)) {
                (Some(c), _) if c.is_whitespace() => self.pos += 1,
                (Some('/'), Some('/')) | (Some('#'), _) => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
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

    fn object(&mut self, parent: Parent) -> Result<(), JsonError> {
        self.pos += 1;
        self.out.push('{');
        let mut first = true;
        loop {
            self.skip_space();
            match self.peek() {
                None | Some(']') => break,
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                Some(',') => self.pos += 1,
                // `[{"a": 1, {"b": 2}]`: the object was left open before the next item.
                Some('{') if parent == Parent::Array => break,
                _ if self.skip_ellipsis() => {}
                Some(_) => {
                    if !self.member(first)? {
                        break;
                    }
                    first = false;
                }
            }
        }
        self.out.push('}');
        Ok(())
    }

    /// Reads `key: value`; false when the input ended before the value began (the
    /// dangling key is dropped).
    fn member(&mut self, first: bool) -> Result<bool, JsonError> {
        let start = self.out.len();
        if !first {
            self.out.push(',');
        }
        self.key()?;
        self.skip_space();
        match self.peek() {
            Some(':' | '=') => self.pos += 1,
            None => {
                self.out.truncate(start);
                return Ok(false);
            }
            // `"key" "value"`: the colon is missing, not the sense.
            Some(_) if self.value_follows() => {}
            Some(c) => return Err(self.error(format!("expected `:` after a key, found `{c}`"))),
        }
        self.out.push(':');
        self.skip_space();
        if matches!(self.peek(), Some(',' | '}' | ']')) {
            // `{"a": }`: the value was left out.
            self.out.push_str("null");
            return Ok(true);
        }
        match self.value_or_end(Context::ObjectValue, Parent::Object) {
            Ok(()) => Ok(true),
            Err(Fail::Ended(_)) => {
                self.out.truncate(start);
                Ok(false)
            }
            Err(Fail::Error(error)) => Err(error),
        }
    }

    /// Whether a value (not more of a key) starts here: a quote, a number, a bracket
    /// or a literal such as `true`.
    fn value_follows(&self) -> bool {
        match self.peek() {
            Some(c) if strings::closers(c).is_some() => true,
            Some(c) if c.is_ascii_digit() || matches!(c, '{' | '[' | '-' | '+') => true,
            Some(c) if c.is_alphabetic() => {
                let mut end = self.pos;
                while self.chars.get(end).is_some_and(|c| c.is_alphanumeric()) {
                    end += 1;
                }
                scalars::literal(&self.text(self.pos, end), false).is_some()
            }
            _ => false,
        }
    }

    fn key(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            Some(q) if strings::closers(q).is_some() => self.string(strings::Role::Key),
            Some(c) if is_key_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_key_char) {
                    self.pos += 1;
                }
                let key = self.text(start, self.pos);
                strings::push_string(&mut self.out, &key);
                Ok(())
            }
            Some(c) => Err(self.error(format!("expected a key, found `{c}`"))),
            None => Err(self.error("the text ends where a key should be")),
        }
    }

    fn array(&mut self, parent: Parent) -> Result<(), JsonError> {
        self.pos += 1;
        self.out.push('[');
        let mut first = true;
        loop {
            self.skip_space();
            match self.peek() {
                None | Some('}') => break,
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(',') => self.pos += 1,
                _ if self.skip_ellipsis() => {}
                Some(_) => {
                    let (out_start, item_start) = (self.out.len(), self.pos);
                    if !first {
                        self.out.push(',');
                    }
                    match self.value_or_end(Context::Array, Parent::Array) {
                        Ok(()) => first = false,
                        Err(Fail::Ended(_)) => {
                            self.out.truncate(out_start);
                            break;
                        }
                        Err(Fail::Error(error)) => return Err(error),
                    }
                    // `{"a": [1, 2, "b": 3}`: a key means the list ended before it.
                    if parent == Parent::Object
                        && self.next_solid(self.pos).1 == Some(':')
                        && self.rewind(item_start)
                    {
                        self.out.truncate(out_start);
                        break;
                    }
                }
            }
        }
        self.out.push(']');
        Ok(())
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

fn is_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '-')
}
