//! Repairs the ways model-written JSON commonly breaks, by re-reading it with a
//! forgiving parser that writes strict JSON as it goes.
//!
//! Forgiven: trailing and missing commas, a missing colon before a value, single and
//! curly quotes, unquoted keys, `//` and `/* */` comments, Python's `True`/`False`/
//! `None`, JavaScript's `undefined`/`NaN`/`Infinity` (null), `"a" + "b"`, `...` for
//! "and so on", wrappers such as `ObjectId("…")` or `NumberLong(5)` and a JSONP
//! callback (their inner value stands), raw newlines and stray double quotes inside
//! strings, loose numbers (`+1`, `.5`, `1.`), bare words as object values, and
//! truncation (unterminated strings, missing closing brackets, a key left without its
//! value). Anything else is refused with the position where reading failed.
//! Key order and duplicate keys are kept as written.

use super::JsonError;

/// Deeper nesting than this is refused: a hostile input cannot exhaust the stack.
pub const MAX_DEPTH: usize = 128;

/// Rewrites `text` (one JSON value, possibly broken) as strict JSON.
pub fn repair(text: &str) -> Result<String, JsonError> {
    let mut repairer = Repairer {
        chars: text.chars().collect(),
        pos: 0,
        out: String::with_capacity(text.len() + 8),
        depth: 0,
    };
    repairer.skip_space();
    if repairer.peek().is_none() {
        return Err(JsonError::NoJson);
    }
    repairer.value(Context::Top)?;
    serde_json::from_str::<serde::de::IgnoredAny>(&repairer.out).map_err(|e| {
        JsonError::Unrepairable {
            at: repairer.pos,
            reason: format!("the repaired text is still not JSON ({e})"),
        }
    })?;
    Ok(repairer.out)
}

/// Where a value sits; it decides what may end a bare word.
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
}

impl Repairer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn error(&self, reason: impl Into<String>) -> JsonError {
        JsonError::Unrepairable {
            at: self.pos,
            reason: reason.into(),
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

    fn value(&mut self, context: Context) -> Result<(), JsonError> {
        match self.value_or_end(context) {
            Ok(()) => Ok(()),
            Err(Fail::Ended(_)) => Err(self.error("the text ends where a value should be")),
            Err(Fail::Error(error)) => Err(error),
        }
    }

    fn value_or_end(&mut self, context: Context) -> Result<(), Fail> {
        self.skip_space();
        match self.peek() {
            None => Err(Fail::Ended(EndedEarly)),
            Some('{') => self.nested(Self::object),
            Some('[') => self.nested(Self::array),
            Some(q) if opening_quote(q).is_some() => self.string().map_err(Fail::Error),
            Some(c) if c == '-' || c == '+' || c == '.' || c.is_ascii_digit() => {
                self.number().map_err(Fail::Error)
            }
            Some(c) if c.is_alphabetic() || c == '_' => self.word(context).map_err(Fail::Error),
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

    fn nested(&mut self, read: fn(&mut Self) -> Result<(), JsonError>) -> Result<(), Fail> {
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

    fn object(&mut self) -> Result<(), JsonError> {
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
            Some(c)
                if opening_quote(c).is_some() || c.is_ascii_digit() || matches!(c, '{' | '[') => {}
            Some(c) => return Err(self.error(format!("expected `:` after a key, found `{c}`"))),
        }
        self.out.push(':');
        match self.value_or_end(Context::ObjectValue) {
            Ok(()) => Ok(true),
            Err(Fail::Ended(_)) => {
                self.out.truncate(start);
                Ok(false)
            }
            Err(Fail::Error(error)) => Err(error),
        }
    }

    fn key(&mut self) -> Result<(), JsonError> {
        match self.peek() {
            Some(q) if opening_quote(q).is_some() => self.string(),
            Some(c) if is_key_char(c) => {
                let start = self.pos;
                while self.peek().is_some_and(is_key_char) {
                    self.pos += 1;
                }
                let key: String = self
                    .chars
                    .get(start..self.pos)
                    .unwrap_or_default()
                    .iter()
                    .collect();
                push_string(&mut self.out, &key);
                Ok(())
            }
            Some(c) => Err(self.error(format!("expected a key, found `{c}`"))),
            None => Err(self.error("the text ends where a key should be")),
        }
    }

    fn array(&mut self) -> Result<(), JsonError> {
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
                    let start = self.out.len();
                    if !first {
                        self.out.push(',');
                    }
                    match self.value_or_end(Context::Array) {
                        Ok(()) => first = false,
                        Err(Fail::Ended(_)) => {
                            self.out.truncate(start);
                            break;
                        }
                        Err(Fail::Error(error)) => return Err(error),
                    }
                }
            }
        }
        self.out.push(']');
        Ok(())
    }

    /// A string in any quotes; an unterminated one is closed at the end of the text.
    fn string(&mut self) -> Result<(), JsonError> {
        let mut value = self.string_value()?;
        // `"a" + "b"`: JavaScript's concatenation, joined (in a loop: no recursion).
        while let Some(next) = self.concatenated() {
            self.pos = next;
            value.push_str(&self.string_value()?);
        }
        push_string(&mut self.out, &value);
        Ok(())
    }

    /// One quoted string's text.
    fn string_value(&mut self) -> Result<String, JsonError> {
        let Some(open) = self.peek() else {
            return Err(self.error("expected a string"));
        };
        let closers = opening_quote(open).unwrap_or(&['"']);
        self.pos += 1;
        let mut value = String::new();
        // The first quote taken as part of the text: if the string then runs to the
        // end of the input, that guess was wrong and the string ends there instead.
        let mut first_kept_quote = None;
        loop {
            let Some(c) = self.peek() else {
                if let Some((pos, len)) = first_kept_quote {
                    self.pos = pos;
                    value.truncate(len);
                }
                break;
            };
            self.pos += 1;
            if c == '\\' {
                self.escape(&mut value);
            } else if closers.contains(&c) {
                if self.closes_string() {
                    break;
                }
                first_kept_quote.get_or_insert((self.pos, value.len()));
                value.push(c);
            } else {
                value.push(c);
            }
        }
        Ok(value)
    }

    /// Where the next string starts when a `+` joins one to the string just read.
    fn concatenated(&self) -> Option<usize> {
        let mut ahead = self.pos;
        let skip = |ahead: &mut usize| {
            while self.chars.get(*ahead).is_some_and(|c| c.is_whitespace()) {
                *ahead += 1;
            }
        };
        skip(&mut ahead);
        if self.chars.get(ahead) != Some(&'+') {
            return None;
        }
        ahead += 1;
        skip(&mut ahead);
        self.chars
            .get(ahead)
            .is_some_and(|c| opening_quote(*c).is_some())
            .then_some(ahead)
    }

    /// Whether the quote just read ends the string: it does when what follows can
    /// follow a string. `"He said "hi" to me"` keeps its inner quotes.
    fn closes_string(&self) -> bool {
        let mut ahead = self.pos;
        while self.chars.get(ahead).is_some_and(|c| c.is_whitespace()) {
            ahead += 1;
        }
        match self.chars.get(ahead) {
            None => true,
            Some(c) => {
                matches!(
                    c,
                    ',' | '}' | ']' | ')' | ':' | '"' | '\'' | '/' | '#' | '='
                ) || (ahead > self.pos && self.chars.get(self.pos) == Some(&'\n'))
                    || self.concatenated().is_some()
            }
        }
    }

    fn escape(&mut self, value: &mut String) {
        let Some(c) = self.peek() else {
            return;
        };
        self.pos += 1;
        match c {
            'n' => value.push('\n'),
            't' => value.push('\t'),
            'r' => value.push('\r'),
            'b' => value.push('\u{8}'),
            'f' => value.push('\u{c}'),
            'u' => {
                let hex: String = self.chars.iter().skip(self.pos).take(4).collect();
                match u32::from_str_radix(&hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 4)
                {
                    Some(code) => {
                        self.pos += 4;
                        self.push_code_unit(code, value);
                    }
                    None => value.push_str("\\u"),
                }
            }
            '"' | '\\' | '/' | '\'' => value.push(c),
            other => {
                value.push('\\');
                value.push(other);
            }
        }
    }

    /// Pushes a `\uXXXX` code unit, pairing surrogates; a lone one becomes U+FFFD.
    fn push_code_unit(&mut self, code: u32, value: &mut String) {
        if (0xD800..0xDC00).contains(&code)
            && self.peek() == Some('\\')
            && self.peek_at(1) == Some('u')
        {
            let hex: String = self.chars.iter().skip(self.pos + 2).take(4).collect();
            if let Ok(low @ 0xDC00..=0xDFFF) = u32::from_str_radix(&hex, 16) {
                self.pos += 6;
                let combined = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                value.push(char::from_u32(combined).unwrap_or('\u{fffd}'));
                return;
            }
        }
        value.push(char::from_u32(code).unwrap_or('\u{fffd}'));
    }

    fn number(&mut self) -> Result<(), JsonError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.pos += 1;
        }
        let raw: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect();
        let number =
            normalize_number(&raw).ok_or_else(|| self.error(format!("`{raw}` is not a number")))?;
        self.out.push_str(&number);
        Ok(())
    }

    /// `true`/`false`/`null` in their Python and JavaScript spellings, a literal cut
    /// off by the end of the text, or (as an object value) a bare word taken as text.
    fn word(&mut self, context: Context) -> Result<(), JsonError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        let word: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect();
        if self.wrapper_opens() {
            return self.unwrap_call(context);
        }
        let at_end = self.peek().is_none();
        if let Some(literal) = literal(&word, at_end) {
            self.out.push_str(literal);
            return Ok(());
        }
        if context != Context::ObjectValue {
            self.pos = start;
            return Err(self.error(format!("`{word}` is not a JSON value")));
        }
        while self
            .peek()
            .is_some_and(|c| !matches!(c, ',' | '}' | ']' | '\n'))
        {
            self.pos += 1;
        }
        let text: String = self
            .chars
            .get(start..self.pos)
            .unwrap_or_default()
            .iter()
            .collect();
        push_string(&mut self.out, text.trim_end());
        Ok(())
    }
}

impl Repairer {
    /// Whether a `(` follows the word just read: `ObjectId("…")`, `NumberLong(5)`,
    /// `ISODate("…")`, or a JSONP callback around the whole value.
    fn wrapper_opens(&mut self) -> bool {
        let mut ahead = self.pos;
        while self.chars.get(ahead).is_some_and(|c| c.is_whitespace()) {
            ahead += 1;
        }
        if self.chars.get(ahead) != Some(&'(') {
            return false;
        }
        self.pos = ahead + 1;
        true
    }

    /// The value inside a wrapper's parentheses stands for the whole; `()` is null.
    fn unwrap_call(&mut self, context: Context) -> Result<(), JsonError> {
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("nesting deeper than {MAX_DEPTH}")));
        }
        self.skip_space();
        if self.peek() == Some(')') {
            self.out.push_str("null");
        } else {
            let inner = if context == Context::Top {
                Context::Top
            } else {
                Context::Array
            };
            self.depth += 1;
            let read = self.value(inner);
            self.depth -= 1;
            read?;
        }
        self.skip_space();
        if self.peek() == Some(')') {
            self.pos += 1;
        }
        self.skip_space();
        if context == Context::Top && self.peek() == Some(';') {
            self.pos += 1;
        }
        Ok(())
    }
}

/// The quotes that may close a string opened by `c`, if `c` opens one.
fn opening_quote(c: char) -> Option<&'static [char]> {
    match c {
        '"' => Some(&['"']),
        '\'' => Some(&['\'']),
        '“' | '”' => Some(&['”', '"', '“']),
        '‘' | '’' => Some(&['’', '\'']),
        _ => None,
    }
}

fn is_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '-')
}

fn literal(word: &str, at_end: bool) -> Option<&'static str> {
    const LITERALS: [(&str, &str); 13] = [
        ("true", "true"),
        ("True", "true"),
        ("TRUE", "true"),
        ("false", "false"),
        ("False", "false"),
        ("FALSE", "false"),
        ("null", "null"),
        ("None", "null"),
        ("NULL", "null"),
        ("undefined", "null"),
        ("nil", "null"),
        ("NaN", "null"),
        ("Infinity", "null"),
    ];
    LITERALS
        .iter()
        .find(|(spelling, _)| {
            *spelling == word || (at_end && !word.is_empty() && spelling.starts_with(word))
        })
        .map(|(_, json)| *json)
}

/// Loose number spellings to strict JSON: `+1` → `1`, `.5` → `0.5`, `1.` → `1`,
/// `007` → `7`, a dangling exponent dropped.
fn normalize_number(raw: &str) -> Option<String> {
    let (sign, digits) = match raw.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", raw.strip_prefix('+').unwrap_or(raw)),
    };
    let digits = digits.trim_end_matches(['e', 'E', '+', '-']);
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let (mantissa, exponent) = match digits.find(['e', 'E']) {
        Some(at) => digits.split_at(at),
        None => (digits, ""),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let int = int.trim_start_matches('0');
    let int = if int.is_empty() { "0" } else { int };
    let mut out = format!("{sign}{int}");
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out.push_str(exponent);
    serde_json::from_str::<serde_json::Number>(&out)
        .ok()
        .map(|_| out)
}

/// Appends `value` as a JSON string literal.
fn push_string(out: &mut String, value: &str) {
    match serde_json::to_string(value) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}
