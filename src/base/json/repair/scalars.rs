//! Values that are not strings, objects or arrays: numbers (loose spellings fixed,
//! invalid ones kept as text), literals in Python's and JavaScript's spellings, bare
//! words and URLs (text), regex literals (text), and wrappers such as `ObjectId("…")`.

use super::strings::{self, push_string};
use super::{Context, EndedEarly, Fail, JsonError, MAX_DEPTH, Parent, Repairer};

impl Repairer {
    /// A number; `007`, `1.2.3`, `2026-01-01` or `10px` are kept as text; digit group
    /// separators go (`1_000`); a dangling exponent (`1e`, `2e+`) is dropped wherever it
    /// stands, as both reference repairers read it; a lone sign is text (`-`) unless the
    /// text ends there (cut off: the value was lost).
    pub(super) fn number(&mut self, context: Context) -> Result<(), Fail> {
        let start = self.pos;
        while self.peek().is_some_and(|c| {
            c.is_alphanumeric()
                || matches!(c, '.' | '+' | '-' | '_' | '@' | '%')
                || (matches!(c, ':' | '/') && self.peek_at(1).is_some_and(|n| n.is_ascii_digit()))
        }) {
            self.pos += 1;
        }
        let token = self.text(start, self.pos);
        if let Some(number) = normalize_number(&token) {
            self.out.push_str(&number);
            self.skip_stray_end_quote();
            return Ok(());
        }
        let dangling = token.trim_end_matches(['+', '-']);
        if let Some(mantissa) = dangling.strip_suffix(['e', 'E'])
            && let Some(number) = normalize_number(mantissa)
        {
            self.out.push_str(&number);
            return Ok(());
        }
        if matches!(token.trim_start_matches(['-', '+']), "Infinity" | "NaN") {
            self.out.push_str("null");
            return Ok(());
        }
        if self.peek().is_none() {
            let cut = token.trim_end_matches(['.', 'e', 'E', '+', '-']);
            if let Some(number) = normalize_number(cut) {
                self.out.push_str(&number);
                return Ok(());
            }
            if cut.trim_start_matches(['-', '+']).is_empty() {
                return Err(Fail::Ended(EndedEarly));
            }
        }
        if context == Context::Top {
            self.pos = start;
            return Err(Fail::Error(
                self.error(format!("`{token}` is not a number")),
            ));
        }
        push_string(&mut self.out, &token);
        Ok(())
    }

    /// `true`/`false`/`null` in their Python and JavaScript spellings, a literal cut
    /// off by the end of the text, a wrapper call, or (inside an object or a list) a
    /// bare word or URL taken as text up to the next `,`, closing bracket or line end.
    pub(super) fn word(&mut self, context: Context) -> Result<(), Fail> {
        let mut start = self.pos;
        let mut word = self.read_word();
        if word == "new" {
            // `new Date("…")`: the constructor's argument stands, as for a wrapper.
            let (next, c) = self.next_solid(self.pos);
            if c.is_some_and(char::is_alphabetic) {
                self.pos = next;
                start = next;
                word = self.read_word();
            }
        }
        if self.wrapper_opens() {
            return self.unwrap_call(context);
        }
        let at_end = self.peek().is_none();
        if let Some(literal) = literal(&word, at_end) {
            self.out.push_str(literal);
            return Ok(());
        }
        if context == Context::Top {
            self.pos = start;
            return Err(Fail::Error(
                self.error(format!("`{word}` is not a JSON value")),
            ));
        }
        if context == Context::ObjectValue
            && let Some(quote) = self.end_quote_of_bare_text()
        {
            // `{"a": yes, no",}`: a value whose opening quote was left out.
            self.bare_words += 1;
            let text = self.text(start, quote);
            self.pos = quote + 1;
            push_string(&mut self.out, &text);
            return Ok(());
        }
        self.bare_text_end(context);
        self.bare_words += 1;
        let text = self.text(start, self.pos);
        let text = text.trim_end().trim_end_matches(['"', '\'', '”', '’', '`']);
        push_string(&mut self.out, text);
        Ok(())
    }

    /// Moves to the end of a bare word or phrase: the next `,`, closing bracket or line
    /// end, past brackets the text opened itself (`words{in brackets}`), and (as an
    /// object's value) before a quoted key that begins the next member
    /// (`{"a": value "b": 1}`).
    fn bare_text_end(&mut self, context: Context) {
        let mut open = 0usize;
        while let Some(c) = self.peek() {
            match c {
                '{' | '[' => open += 1,
                '}' | ']' if open > 0 => open -= 1,
                ',' if open > 0 => {}
                ',' | '}' | ']' | '\n' => return,
                q if context == Context::ObjectValue
                    && strings::closers(q).is_some()
                    && self.pos > 0
                    && self
                        .chars
                        .get(self.pos - 1)
                        .is_some_and(|p| p.is_whitespace())
                    && self.quoted_key_at(self.pos) =>
                {
                    return;
                }
                _ => {}
            }
            self.pos += 1;
        }
    }

    /// Where the end quote of a value that lost its opening one stands: the first
    /// quote on the line, before any `:` or bracket, with a `,` between (without one
    /// the bare text ends there anyway), and the structure going on after it.
    fn end_quote_of_bare_text(&self) -> Option<usize> {
        let mut at = self.pos;
        let mut comma = false;
        while let Some(&c) = self.chars.get(at) {
            self.look(1);
            if strings::closers(c).is_some() {
                let after = self.next_solid(at + 1).1;
                return (comma && matches!(after, None | Some(',' | '}'))).then_some(at);
            }
            match c {
                ':' | '{' | '}' | '[' | ']' | '\n' => return None,
                ',' => comma = true,
                _ => {}
            }
            at += 1;
        }
        None
    }

    /// Whether a quoted string that a `:` follows starts at `at` (on its line).
    pub(super) fn quoted_key_at(&self, at: usize) -> bool {
        let Some(open) = self.chars.get(at).copied() else {
            return false;
        };
        let closers = strings::closers(open).unwrap_or(&['"']);
        let mut end = at + 1;
        while let Some(&c) = self.chars.get(end) {
            self.look(1);
            if closers.contains(&c) {
                return self.next_solid(end + 1).1 == Some(':');
            }
            if c == '\n' {
                return false;
            }
            end += 1;
        }
        false
    }

    /// `12345"`: a quote left after a number, before the next delimiter, is dropped.
    fn skip_stray_end_quote(&mut self) {
        if self.peek().is_some_and(|c| strings::closers(c).is_some())
            && matches!(
                self.next_solid(self.pos + 1).1,
                None | Some(',' | '}' | ']')
            )
        {
            self.pos += 1;
        }
    }

    fn read_word(&mut self) -> String {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
        {
            self.pos += 1;
        }
        self.text(start, self.pos)
    }

    /// A JavaScript regex literal (`/ab+c/i`) or a bare path, kept as its text.
    pub(super) fn regex(&mut self, context: Context) -> Result<(), JsonError> {
        let start = self.pos;
        self.pos += 1;
        let mut in_class = false;
        loop {
            match self.peek() {
                None | Some('\n') => {
                    self.pos = start;
                    return Err(self.error("unexpected `/`"));
                }
                Some('\\') => self.pos += 2,
                Some('[') => {
                    in_class = true;
                    self.pos += 1;
                }
                Some(']') => {
                    in_class = false;
                    self.pos += 1;
                }
                Some('/') if !in_class => {
                    self.pos += 1;
                    break;
                }
                Some(_) => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.chars.len());
        while self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            self.pos += 1;
        }
        // `/usr/local/bin`: not a regex but a path, read on as a bare word.
        while self
            .peek()
            .is_some_and(|c| !c.is_whitespace() && !matches!(c, ',' | '}' | ']'))
        {
            self.pos += 1;
        }
        if context == Context::Top {
            self.pos = start;
            return Err(self.error("a regex is not a JSON value"));
        }
        let text = self.text(start, self.pos);
        push_string(&mut self.out, &text);
        Ok(())
    }

    /// Whether a `(` follows the word just read: `ObjectId("…")`, `NumberLong(5)`,
    /// `ISODate("…")`, or a JSONP callback around the whole value.
    fn wrapper_opens(&mut self) -> bool {
        let (ahead, next) = self.next_solid(self.pos);
        if next != Some('(') {
            return false;
        }
        self.pos = ahead + 1;
        true
    }

    /// The value inside a wrapper's parentheses stands for the whole; `()` is null.
    fn unwrap_call(&mut self, context: Context) -> Result<(), Fail> {
        if self.depth >= MAX_DEPTH {
            return Err(Fail::Error(
                self.error(format!("nesting deeper than {MAX_DEPTH}")),
            ));
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
            let read = self.value_or_end(inner, Parent::Top);
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

/// The JSON literal a word spells, if any; at the end of the text a prefix counts
/// (`tr` → `true`).
pub(super) fn literal(word: &str, at_end: bool) -> Option<&'static str> {
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
/// `1_000` → `1000` (Python's and Rust's digit separators, only between digits).
/// `None` for what is not a number as written: `007`, `1.2.3`, `1e`, `-`, `_1`.
fn normalize_number(raw: &str) -> Option<String> {
    let separated = raw.contains('_');
    if separated {
        let bytes = raw.as_bytes();
        let between_digits = bytes.iter().enumerate().all(|(i, &b)| {
            b != b'_'
                || (i > 0
                    && bytes.get(i - 1).is_some_and(u8::is_ascii_digit)
                    && bytes.get(i + 1).is_some_and(u8::is_ascii_digit))
        });
        if !between_digits {
            return None;
        }
        return normalize_number(&raw.replace('_', ""));
    }
    let (sign, unsigned) = match raw.strip_prefix('-') {
        Some(rest) => ("-", rest),
        None => ("", raw.strip_prefix('+').unwrap_or(raw)),
    };
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(at) => unsigned.split_at(at),
        None => (unsigned, ""),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    let leading_zero = int.len() > 1 && int.starts_with('0');
    if !digits(int) || !digits(frac) || (int.is_empty() && frac.is_empty()) || leading_zero {
        return None;
    }
    let int = if int.is_empty() { "0" } else { int };
    let mut out = format!("{sign}{int}");
    if !frac.is_empty() {
        out.push('.');
        out.push_str(frac);
    }
    out.push_str(exponent);
    // Read as a `Value`, the one parse the bundle compiles (a `Number` would link
    // serde's float printing through its error messages).
    serde_json::from_str::<serde_json::Value>(&out)
        .is_ok_and(|value| value.is_number())
        .then_some(out)
}
