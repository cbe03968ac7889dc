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
//! list (`["a": 1]`), several values in a row (the list of them), and truncation
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

    fn object(&mut self, parent: Parent) -> Result<(), JsonError> {
        let (out_start, open_at) = (self.out.len(), self.pos);
        self.pos += 1;
        self.out.push('{');
        self.members(parent, true, Some((out_start, open_at)))
    }

    /// An object's members up to its `}` (its `{` already written); `first` when none
    /// has been written yet. `opened` is where the object began in the output and the
    /// input, when it had a `{` of its own: a set literal (`{"a", "b"}`) is read again
    /// from there as a list.
    fn members(
        &mut self,
        parent: Parent,
        mut first: bool,
        opened: Option<(usize, usize)>,
    ) -> Result<(), JsonError> {
        loop {
            self.skip_space();
            match self.peek() {
                None | Some(']') => break,
                Some('}') => {
                    self.pos += 1;
                    break;
                }
                Some(',') => self.pos += 1,
                // `[{"a":1, {"b":2}]`: the object was left open before the next item.
                Some('{') if parent == Parent::Array => break,
                // `{"a": [1], [2]}`: the list was closed too early; its items go on.
                Some('[') if self.out.ends_with(']') => self.continue_list()?,
                _ if self.skip_ellipsis() => {}
                Some(_) => match self.member(first)? {
                    Member::Read => first = false,
                    Member::Dropped => {}
                    Member::Ended => break,
                    Member::SetItem => {
                        if let Some((out_start, open_at)) = opened
                            && first
                            && self.rewind(open_at + 1)
                        {
                            // `{"a", "b"}`: Python's set, meant as a list.
                            self.out.truncate(out_start);
                            self.out.push('[');
                            self.items(Parent::Top, '}')?;
                            return Ok(());
                        }
                        return Err(self.error("expected `:` after a key"));
                    }
                },
            }
        }
        self.out.push('}');
        Ok(())
    }

    /// Reads a list that follows a list value where a key should be, and joins its
    /// items to that list (whose `]` ends the output).
    fn continue_list(&mut self) -> Result<(), JsonError> {
        let mark = self.out.len();
        self.nested(|r| r.array(Parent::Object))
            .map_err(|fail| match fail {
                Fail::Error(error) => error,
                Fail::Ended(_) => self.error("the text ends inside a list"),
            })?;
        let added = self.out.split_off(mark);
        let inner = added
            .get(1..added.len().saturating_sub(1))
            .unwrap_or_default();
        self.out.pop();
        if !inner.is_empty() {
            if !self.out.ends_with('[') {
                self.out.push(',');
            }
            self.out.push_str(inner);
        }
        self.out.push(']');
        Ok(())
    }

    /// Reads `key: value`.
    fn member(&mut self, first: bool) -> Result<Member, JsonError> {
        let start = self.out.len();
        if !first {
            self.out.push(',');
        }
        let key_at = self.pos;
        if !self.key()? {
            self.out.truncate(start);
            return Ok(Member::Dropped);
        }
        // Whether the key was written out whole (its end quote, or a bare key's end,
        // was read): a key cut off by the end of the text is dropped, a whole key whose
        // value was cut off keeps it as null.
        let whole = self.pos > key_at + 1
            && (self.peek().is_some()
                || self
                    .chars
                    .get(self.pos - 1)
                    .is_some_and(|c| strings::closers(*c).is_some()));
        self.skip_space();
        match self.peek() {
            Some(':' | '=') => self.pos += 1,
            None if whole => {
                self.out.push_str(":null");
                return Ok(Member::Read);
            }
            None => {
                self.out.truncate(start);
                return Ok(Member::Ended);
            }
            Some(',' | '}') if first => return Ok(Member::SetItem),
            // `"key" "value"`: the colon is missing, not the sense.
            Some(_) if self.value_follows() => {}
            Some(c) => return Err(self.error(format!("expected `:` after a key, found `{c}`"))),
        }
        self.out.push(':');
        self.skip_space();
        if matches!(self.peek(), Some(',' | '}' | ']')) {
            // `{"a": }`: the value was left out.
            self.out.push_str("null");
            return Ok(Member::Read);
        }
        match self.value_or_end(Context::ObjectValue, Parent::Object) {
            Ok(()) => Ok(Member::Read),
            Err(Fail::Ended(_)) => {
                self.out.push_str("null");
                Ok(Member::Read)
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
                self.look(end - self.pos);
                scalars::literal(&self.text(self.pos, end), false).is_some()
            }
            _ => false,
        }
    }

    /// Writes the key; false when what stood there was no key but a stray word before
    /// the end of the object (`{"a": 1 AAAA }`).
    fn key(&mut self) -> Result<bool, JsonError> {
        match self.peek() {
            Some(q) if strings::closers(q).is_some() => {
                self.string(strings::Role::Key)?;
                Ok(true)
            }
            Some(c) if is_key_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_key_char) {
                    self.pos += 1;
                }
                let end = self.pos;
                let (ahead, next) = self.next_solid(end);
                match next {
                    // `{a": 1}`: the opening quote was left out, the closing one stays.
                    Some(q)
                        if ahead == end
                            && strings::closers(q).is_some()
                            && self.next_solid(end + 1).1 == Some(':') =>
                    {
                        self.pos = end + 1;
                    }
                    // `{"a": 1, COMMENT "b": 2}`: a stray word before the real key.
                    Some(q)
                        if ahead > end
                            && strings::closers(q).is_some()
                            && self.quoted_key_at(ahead) =>
                    {
                        self.pos = ahead;
                        return self.key();
                    }
                    Some('}') => {
                        self.pos = ahead;
                        return Ok(false);
                    }
                    _ => {}
                }
                let key = self.text(start, end);
                strings::push_string(&mut self.out, &key);
                Ok(true)
            }
            Some(c) => Err(self.error(format!("expected a key, found `{c}`"))),
            None => Err(self.error("the text ends where a key should be")),
        }
    }

    fn array(&mut self, parent: Parent) -> Result<(), JsonError> {
        self.pos += 1;
        self.out.push('[');
        self.items(parent, ']').map(|_| ())
    }

    /// A Python tuple: `(1, 2)` is the list `[1, 2]`, `()` the empty list, and `(1)`
    /// (no comma) the value inside.
    fn tuple(&mut self) -> Result<(), JsonError> {
        let start = self.out.len();
        self.pos += 1;
        self.out.push('[');
        let (count, comma) = self.items(Parent::Array, ')')?;
        if count == 1 && !comma {
            self.out.remove(start);
            self.out.pop();
        }
        Ok(())
    }

    /// A list's items up to `close` (its opening bracket already written), then the
    /// closing `]`; how many items were written, and whether a comma was read.
    fn items(&mut self, parent: Parent, close: char) -> Result<(usize, bool), JsonError> {
        let (mut count, mut comma) = (0usize, false);
        loop {
            self.skip_space();
            match self.peek() {
                None => break,
                Some(c) if c == close => {
                    self.pos += 1;
                    break;
                }
                // `[{"a": 1}}, {"b": 2}]`: a stray brace before the next item; in an
                // object (`{"a": [1, 2}, "b": 3}`), the list's end in the wrong bracket.
                Some('}') if close == ']' && self.next_solid(self.pos + 1).1 == Some(',') => {
                    self.pos += 1;
                    if parent == Parent::Object {
                        break;
                    }
                }
                Some('}' | ']' | ')') => break,
                Some(',') => {
                    self.pos += 1;
                    comma = true;
                }
                _ if self.skip_ellipsis() => {}
                Some(_) => {
                    let (out_start, item_start) = (self.out.len(), self.pos);
                    if count > 0 {
                        self.out.push(',');
                    }
                    match self.value_or_end(Context::Array, Parent::Array) {
                        Ok(()) => count += 1,
                        Err(Fail::Ended(_)) => {
                            self.out.truncate(out_start);
                            break;
                        }
                        Err(Fail::Error(error)) => return Err(error),
                    }
                    if self.next_solid(self.pos).1 != Some(':') {
                        continue;
                    }
                    // `{"a": [1, 2, "b": 3}`: a key means the list ended before it.
                    if parent == Parent::Object {
                        if self.rewind(item_start) {
                            self.out.truncate(out_start);
                            count -= 1;
                            break;
                        }
                    } else if self
                        .chars
                        .get(item_start)
                        .is_some_and(|c| strings::closers(*c).is_some())
                        && self.rewind(item_start)
                    {
                        // `["a": 1]`: an object whose `{` was left out.
                        self.out.truncate(out_start);
                        if count > 1 {
                            self.out.push(',');
                        }
                        self.out.push('{');
                        self.depth += 1;
                        let read = self.members(Parent::Array, true, None);
                        self.depth -= 1;
                        read?;
                    }
                }
            }
        }
        self.out.push(']');
        Ok((count, comma))
    }
}

/// What reading one member found.
enum Member {
    Read,
    /// A stray word, written as nothing.
    Dropped,
    /// The text ended before the member did.
    Ended,
    /// A key with no value before a `,` or `}`: an item of a set literal.
    SetItem,
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

fn is_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '-')
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod tests;
