//! Strings as models write them: in any quotes, with raw control characters, stray
//! quotes inside, or the end quote missing. Where the end quote is missing, the string
//! ends where the structure resumes (a `,` before the next key, the next list item, a
//! closing bracket) rather than swallowing the rest of the document.

use super::{JsonError, Repairer};

/// What a string is, which decides where a missing end quote most likely was.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    Key,
    Value,
    ArrayItem,
}

/// A quote kept inside a string: its index in the input and the text's length then.
#[derive(Clone, Copy)]
struct Mark {
    at: usize,
    len: usize,
}

/// What one scan of a string learned about the quotes it kept.
#[derive(Default)]
struct Kept {
    /// The latest quote taken as text.
    last: Option<Mark>,
    /// The first quote taken as text that opens a line or follows a comma: in a list,
    /// where the next item would start.
    item: Option<Mark>,
    /// Quotes taken as text after `item` that open no line and follow no comma: an
    /// odd count means one of them closes a quotation `item` opened (`He said, "hi"
    /// to me`); an even one, that `item` opened the next item.
    inner: usize,
    /// A key's first `:`: where an unclosed key most likely ended.
    colon: Option<Mark>,
}

impl Repairer {
    /// A string in any quotes, joined with any `+ "…"` after it.
    pub(super) fn string(&mut self, role: Role) -> Result<(), JsonError> {
        let mut value = self.string_value(role)?;
        // `"a" + "b"`: JavaScript's concatenation, joined (in a loop: no recursion).
        while let Some(next) = self.concatenated() {
            self.pos = next;
            value.push_str(&self.string_value(role)?);
        }
        push_string(&mut self.out, &value);
        Ok(())
    }

    /// One quoted string's text.
    fn string_value(&mut self, role: Role) -> Result<String, JsonError> {
        let Some(open) = self.peek() else {
            return Err(self.error("expected a string"));
        };
        let closers = closers(open).unwrap_or(&['"']);
        self.pos += 1;
        let mut value = String::new();
        let mut kept = Kept::default();
        loop {
            let Some(c) = self.peek() else {
                self.end_unterminated(&mut value, &kept, role);
                break;
            };
            self.pos += 1;
            if c == '\\' {
                self.escape(&mut value);
            } else if closers.contains(&c) {
                if self.closes_string(role, &mut value, &kept) {
                    break;
                }
                let mark = Mark {
                    at: self.pos - 1,
                    len: value.len(),
                };
                kept.last = Some(mark);
                if !opens_item(&value) {
                    kept.inner += usize::from(kept.item.is_some());
                } else if kept.item.is_none() {
                    kept.item = Some(mark);
                }
                value.push(c);
            } else {
                if c == ':' && role == Role::Key && kept.colon.is_none() {
                    kept.colon = Some(Mark {
                        at: self.pos - 1,
                        len: value.len(),
                    });
                }
                value.push(c);
            }
        }
        Ok(value)
    }

    /// Whether the quote just read ends the string: it does when what follows can
    /// follow a string (`"He said "hi" to me"` keeps its inner quotes). When the string
    /// must have ended earlier, at a quote it took as text, it is cut back there.
    fn closes_string(&mut self, role: Role, value: &mut String, kept: &Kept) -> bool {
        let (ahead, next) = self.next_solid(self.pos);
        let closes = match next {
            None => true,
            Some(c) => {
                matches!(
                    c,
                    ',' | '}' | ']' | ')' | ':' | '"' | '\'' | '/' | '#' | '='
                ) || (ahead > self.pos && self.chars.get(self.pos) == Some(&'\n'))
                    // `{"a" 1}`: a key's quote followed by a space ends it.
                    || (role == Role::Key && ahead > self.pos)
                    || self.concatenated().is_some()
            }
        };
        if !closes {
            return false;
        }
        let cut = match role {
            // `"a": "x, "b": 1`: the quote before `b` opened the next key.
            Role::Value if next == Some(':') => kept.last,
            // `"a: 1, "b": 2`: the key ended at its colon.
            Role::Key if kept.last.is_some() => kept.colon,
            // `["a, "b"]`: a quote opening a line or after a comma, unmatched, began
            // the next item.
            Role::ArrayItem if kept.inner.is_multiple_of(2) => kept.item,
            _ => None,
        };
        if let Some(mark) = cut {
            self.cut_back(value, mark, true);
        }
        true
    }

    /// Ends a string the text ended inside: closing brackets and commas at its end
    /// were structure, not text (`{"a": "hello}`), and a key ends at its colon.
    fn end_unterminated(&mut self, value: &mut String, kept: &Kept, role: Role) {
        let mark = match (role, kept.colon) {
            (Role::Key, Some(colon)) => colon,
            _ => Mark {
                at: self.pos,
                len: value.len(),
            },
        };
        self.cut_back(value, mark, false);
    }

    /// Ends the string at `mark`, giving back the structure before it (spaces, commas,
    /// closing brackets the string does not open; opening ones too when `openers`) to
    /// be read again. Nothing changes if the rescan budget is spent.
    fn cut_back(&mut self, value: &mut String, mark: Mark, openers: bool) {
        if !self.rewind(mark.at) {
            return;
        }
        value.truncate(mark.len);
        let mut at = mark.at;
        let mut unmatched = Unmatched::of(value);
        while let Some(last) = value.chars().next_back() {
            let structural = last.is_whitespace()
                || last == ','
                || (openers && matches!(last, '{' | '['))
                || unmatched.closes(last);
            let previous = at.checked_sub(1).and_then(|i| self.chars.get(i));
            if !structural || previous != Some(&last) || !self.rewind(at - 1) {
                break;
            }
            unmatched.drop(last);
            value.pop();
            at -= 1;
        }
    }

    /// Where the next string starts when a `+` joins one to the string just read.
    pub(super) fn concatenated(&self) -> Option<usize> {
        let (plus, next) = self.next_solid(self.pos);
        if next != Some('+') {
            return None;
        }
        let (ahead, next) = self.next_solid(plus + 1);
        next.is_some_and(|c| closers(c).is_some()).then_some(ahead)
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
                    // `"\u00` cut off by the end of the text: the character is lost.
                    None if self.pos + hex.len() == self.chars.len()
                        && hex.chars().all(|c| c.is_ascii_hexdigit()) =>
                    {
                        self.pos += hex.len();
                    }
                    None => value.push_str("\\u"),
                }
            }
            '"' | '\\' | '/' | '\'' | '`' => value.push(c),
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
}

/// Counts of closing brackets in a string's text that nothing in it opened.
struct Unmatched {
    braces: usize,
    brackets: usize,
}

impl Unmatched {
    fn of(text: &str) -> Self {
        let (mut braces, mut brackets, mut open_braces, mut open_brackets) = (0, 0, 0usize, 0usize);
        for c in text.chars() {
            match c {
                '{' => open_braces += 1,
                '[' => open_brackets += 1,
                '}' if open_braces > 0 => open_braces -= 1,
                ']' if open_brackets > 0 => open_brackets -= 1,
                '}' => braces += 1,
                ']' => brackets += 1,
                _ => {}
            }
        }
        Self { braces, brackets }
    }

    fn closes(&self, c: char) -> bool {
        (c == '}' && self.braces > 0) || (c == ']' && self.brackets > 0)
    }

    fn drop(&mut self, c: char) {
        match c {
            '}' => self.braces = self.braces.saturating_sub(1),
            ']' => self.brackets = self.brackets.saturating_sub(1),
            _ => {}
        }
    }
}

/// Whether a quote after `text` would open a line or follow a comma.
fn opens_item(text: &str) -> bool {
    let trimmed = text.trim_end_matches([' ', '\t']);
    trimmed.ends_with([',', '\n', '\r'])
}

/// The quotes that may close a string opened by `c`, if `c` opens one.
pub(super) fn closers(c: char) -> Option<&'static [char]> {
    match c {
        '"' => Some(&['"']),
        '\'' => Some(&['\'']),
        '`' => Some(&['`']),
        '“' | '”' => Some(&['”', '"', '“']),
        '‘' | '’' => Some(&['’', '\'']),
        _ => None,
    }
}

/// Appends `value` as a JSON string literal.
pub(super) fn push_string(out: &mut String, value: &str) {
    match serde_json::to_string(value) {
        Ok(quoted) => out.push_str(&quoted),
        Err(_) => out.push_str("\"\""),
    }
}
