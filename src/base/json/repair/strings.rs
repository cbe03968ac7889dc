//! Strings as models write them: in any quotes, with raw control characters, stray
//! quotes inside, or the end quote missing. Where the end quote is missing, the string
//! ends where the structure resumes (a `,` before the next key, the next list item, a
//! closing bracket) rather than swallowing the rest of the document.

use super::{JsonError, Repairer, is_space};

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
    /// Where a raw line break (and only spaces after it) ends the text so far: the
    /// line was broken before the end quote, as layout.
    line_break: Option<usize>,
    /// `(` read minus `)` read: a quote before a `)` that closes a `(` of the text
    /// (`"(5'3")"`) is text.
    parens: isize,
    /// `[` read minus `]` read: a quote inside a regex's character class (`['"]`) is
    /// text.
    brackets: isize,
    /// Braces still open of an object written inside the text (`"the answer is
    /// {"k": 1}, so"`): every quote up to its `}` is text.
    object_depth: usize,
    /// `{` read and not yet closed, and `}` read that closed nothing: an object
    /// written in the text opens only where none was closed that the text did not
    /// open (`"x}, {"a": …` ended the string at `x`).
    braces_open: usize,
    braces_stray: usize,
    /// A markdown fence (```) is in the text: a snippet of code, whose quotes are text.
    fence: bool,
}

impl Repairer {
    /// A string in any quotes, joined with any `+ "…"` after it.
    pub(super) fn string(&mut self, role: Role) -> Result<(), JsonError> {
        let mut value = self.string_value(role)?;
        // `"a" + "b"`: JavaScript's concatenation, joined (in a loop: no recursion).
        loop {
            let next = if std::mem::take(&mut self.join_next) {
                self.pos
            } else if let Some(next) = self.concatenated() {
                next
            } else {
                break;
            };
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
        // `""value"`: a doubled opening quote (CSV's escape, or a slip); a key's
        // (`"" key":`) when text, not its end, follows.
        if self.peek() == Some(open)
            && (self.peek_at(1).is_some_and(char::is_alphanumeric)
                || (role == Role::Key
                    && self.peek_at(1).is_some_and(|c| c == ' ')
                    && self
                        .next_solid(self.pos + 1)
                        .1
                        .is_some_and(char::is_alphanumeric)))
        {
            self.pos += 1;
        }
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
                kept.line_break = None;
            } else if closers.contains(&c) {
                if self.closes_string(role, &mut value, &mut kept) {
                    drop_raw_line_break(&mut value, kept.line_break);
                    // `""key"":`: a doubled closing quote.
                    if self.peek() == Some(c)
                        && matches!(self.next_solid(self.pos + 1).1, Some(':' | ',' | '}' | ']'))
                    {
                        self.pos += 1;
                    }
                    break;
                }
                let mark = Mark {
                    at: self.pos - 1,
                    len: value.len(),
                };
                kept.last = Some(mark);
                kept.line_break = None;
                if !opens_item(&value) {
                    kept.inner += usize::from(kept.item.is_some());
                } else if kept.item.is_none() {
                    kept.item = Some(mark);
                }
                value.push(c);
            } else {
                let mark = Some(Mark {
                    at: self.pos - 1,
                    len: value.len(),
                });
                match c {
                    ':' if role == Role::Key && kept.colon.is_none() => kept.colon = mark,
                    '(' => kept.parens += 1,
                    ')' => kept.parens -= 1,
                    '[' => kept.brackets += 1,
                    ']' => kept.brackets -= 1,
                    '{' => {
                        kept.braces_open += 1;
                        kept.object_depth += usize::from(kept.object_depth > 0);
                    }
                    '}' => {
                        match kept.braces_open.checked_sub(1) {
                            Some(open) => kept.braces_open = open,
                            None => kept.braces_stray += 1,
                        }
                        kept.object_depth = kept.object_depth.saturating_sub(1);
                    }
                    '`' => kept.fence |= value.ends_with("``"),
                    _ => {}
                }
                match c {
                    '\n' if kept.line_break.is_none() => kept.line_break = Some(value.len()),
                    ' ' | '\t' | '\r' | '\n' => {}
                    _ => kept.line_break = None,
                }
                value.push(c);
            }
        }
        Ok(value)
    }

    /// Whether the quote just read ends the string: it does when what follows can
    /// follow a string (`"He said "hi" to me"` keeps its inner quotes). When the string
    /// must have ended earlier, at a quote it took as text, it is cut back there.
    fn closes_string(&mut self, role: Role, value: &mut String, kept: &mut Kept) -> bool {
        if kept.object_depth > 0 || (kept.brackets > 0 && self.in_character_class(kept.parens)) {
            return false;
        }
        if let Some((end, joined)) = separator_before_comment(value)
            && self.rewind(self.pos - 1)
        {
            // `"abc+/*c*/"def"`, `"abc,/*c*/"def"`: the first string lost its end quote
            // before a `+` or `,` and a comment; this quote opens the next string.
            value.truncate(end);
            self.join_next = joined;
            return true;
        }
        let (ahead, next) = self.next_solid(self.pos);
        if let Some(stray) = self.stray_quote_line(ahead, next, kept) {
            // A quote in a fenced snippet is code; elsewhere the line is a slip.
            if kept.fence {
                return false;
            }
            self.pos = stray + 1;
            return true;
        }
        let closes = match next {
            None => true,
            // `"(5'3")"`: the quote is inside the parentheses the text opened.
            Some(')') => kept.parens <= 0,
            Some(c) => {
                matches!(c, ',' | '}' | ']' | ':' | '"' | '\'' | '/' | '#' | '=')
                    || (ahead > self.pos && self.chars.get(self.pos) == Some(&'\n'))
                    // `{"a" 1}`: a key's quote followed by a space ends it.
                    || (role == Role::Key && ahead > self.pos)
                    || self.concatenated().is_some()
                    || self.fence_at(ahead)
                    // After a comma the quote more likely opens the next item.
                    || (!opens_item(value)
                        && self.value_then_delimiter(ahead, role, kept.last.is_none()))
                    || (ahead > self.pos
                        && kept.last.is_none()
                        && self.stray_word_then_end(ahead, role))
            }
        };
        if !closes {
            return false;
        }
        // `"is {"k": 1}, more"`: the quote before the key opened an object written in
        // the text, not the next member.
        if role == Role::Value
            && next == Some(':')
            && let Some(last) = kept.last
            && kept.braces_stray == 0
            && value
                .get(..last.len)
                .is_some_and(|before| before.trim_end().ends_with('{'))
        {
            kept.object_depth = 1;
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
    ///
    /// A value is never split further (`["a, b]` is not read as two items, nor
    /// `{"a": "x, b: 1}` as two members, though one reference repairer does each):
    /// the same text is a document cut off inside a string that held `, b]`, and a cut
    /// must repair to a prefix of what was being written.
    fn end_unterminated(&mut self, value: &mut String, kept: &Kept, role: Role) {
        let mark = match (role, kept.colon) {
            (Role::Key, Some(colon)) => colon,
            _ => Mark {
                at: self.pos,
                len: value.len(),
            },
        };
        self.cut_back(value, mark, false);
        // `["hello +]`: a `+` whose next string was lost.
        if let Some(joined) = value.strip_suffix('+')
            && joined.ends_with(char::is_whitespace)
        {
            let kept_len = joined.trim_end().len();
            value.truncate(kept_len);
        }
    }

    /// `"text⏎"⏎",`: the quote just read opens its line and the next line opens with
    /// another before the structure goes on; where that other quote is.
    fn stray_quote_line(&self, ahead: usize, next: Option<char>, kept: &Kept) -> Option<usize> {
        let quote = self.chars.get(self.pos - 1).copied()?;
        let on_next_line = self
            .chars
            .get(self.pos..ahead)
            .is_some_and(|gap| gap.contains(&'\n'));
        let after = self.next_solid(ahead + 1).1;
        (kept.line_break.is_some()
            && on_next_line
            && next == Some(quote)
            && matches!(after, None | Some(',' | '}' | ']')))
        .then_some(ahead)
    }

    /// Whether the quote just read sits in a character class the text opened
    /// (`['"]`, `[^'"]+`): a `]` follows within a few characters, and the text goes
    /// on after it (where a closing quote would be followed by structure, or by a
    /// comment: `"["]// note`). A `)` after it goes on the text only when the text
    /// opened a `(` (`"(['"])"`); else it ends a tuple (`("[")`).
    fn in_character_class(&self, parens: isize) -> bool {
        for at in self.pos..self.pos + 8 {
            self.look(1);
            match self.chars.get(at).copied() {
                // Invisible spaces count as spaces: `'['\u{feff}]` closes the string.
                Some(']') => {
                    self.look(2);
                    let after = (self.chars.get(at + 1), self.chars.get(at + 2));
                    return match after {
                        (Some('/'), Some('/' | '*')) | (Some('#'), _) | (None, _) => false,
                        (Some(')'), _) => parens > 0,
                        (Some(&c), _) => !is_space(c) && !matches!(c, ',' | '}' | ']' | ':'),
                    };
                }
                Some(c) if is_space(c) || matches!(c, '"' | ',' | '{' | '}') => return false,
                None => return false,
                Some(_) => {}
            }
        }
        false
    }

    /// Whether one bare word and then the end of the container (or of the text)
    /// follow at `at`: `"data" AAAA }`, `["a", "b" c]`. The quote closed the string;
    /// the word is a stray one (dropped before a `}`) or an item of its own.
    fn stray_word_then_end(&self, at: usize, role: Role) -> bool {
        let mut end = at;
        while self
            .chars
            .get(end)
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
        {
            end += 1;
        }
        self.look(end - at);
        if end == at {
            return false;
        }
        matches!(
            (role, self.next_solid(end).1),
            (Role::Value, None | Some('}')) | (Role::ArrayItem, None | Some(']'))
        )
    }

    /// Whether a markdown fence (```) starts at `at`.
    fn fence_at(&self, at: usize) -> bool {
        (0..3).all(|i| self.chars.get(at + i) == Some(&'`'))
    }

    /// Whether what starts at `at` is a value that the structure goes on after
    /// (`["a" 2]`, `{"b": "x" true}`, `{"a"2}`): a number or a literal, then a `,` or
    /// a closing bracket (or, for a list item, the end of the text). In a list, a word
    /// with a stray quote after it counts too (`["a" b", "c"]`), when `lone_quote`:
    /// this is the string's first quote (`"5" tall"` and `"a "b" c"` keep theirs). A word that is only
    /// a word (`"He said "hi" to me"`) is more of the string. The scan stops at the
    /// next quote, so each character is looked at once from here.
    fn value_then_delimiter(&self, at: usize, role: Role, lone_quote: bool) -> bool {
        let Some(first) = self.chars.get(at).copied() else {
            return false;
        };
        let number = first.is_ascii_digit() || matches!(first, '-' | '+');
        if !number && !first.is_alphabetic() {
            return false;
        }
        let mut end = at;
        while self.chars.get(end).is_some_and(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '.') || (number && matches!(c, '+' | '-'))
        }) {
            end += 1;
        }
        self.look(end - at);
        let word = self.text(at, end);
        let quoted = role == Role::ArrayItem
            && lone_quote
            && self.chars.get(end).is_some_and(|c| closers(*c).is_some());
        let literal = super::scalars::literal(&word, false).is_some();
        if !(number || literal || quoted) {
            return false;
        }
        let after = if quoted { end + 1 } else { end };
        match self.next_solid(after).1 {
            Some(',' | '}' | ']') => true,
            None => role == Role::ArrayItem,
            _ => false,
        }
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
            '"' | '\\' | '/' | '\'' | '`' | '“' | '”' | '„' | '‘' | '’' => value.push(c),
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

/// Drops a raw line break and the spaces after it from the end of a string whose end
/// quote opened the next line (`"text⏎"`): layout, not content.
fn drop_raw_line_break(value: &mut String, at: Option<usize>) {
    if let Some(at) = at
        && value
            .get(at..)
            .is_some_and(|tail| tail.starts_with('\n') && tail.trim().is_empty())
    {
        value.truncate(at);
    }
}

/// Where a string's text ends when it closes with a `+` or `,` and then a block
/// comment (`abc+/*c*/`, `abc/*c*/,`), and whether the separator was a `+`.
fn separator_before_comment(text: &str) -> Option<(usize, bool)> {
    let (mut rest, mut separator, mut comment) = (text, None, false);
    loop {
        rest = rest.trim_end();
        if let Some(body) = rest.strip_suffix("*/")
            && let Some(open) = last_comment_open(body)
        {
            rest = body.get(..open).unwrap_or_default();
            comment = true;
        } else if separator.is_none()
            && let Some(body) = rest.strip_suffix(['+', ','])
        {
            separator = Some(rest.ends_with('+'));
            rest = body;
        } else {
            break;
        }
    }
    let joined = separator.filter(|_| comment && !rest.is_empty())?;
    Some((rest.len(), joined))
}

/// Where the last `/*` in the end of `text` opens: a comment of a few hundred
/// characters at most, so that looking for it costs the same at every quote.
fn last_comment_open(text: &str) -> Option<usize> {
    let mut from = text.len().saturating_sub(256);
    while !text.is_char_boundary(from) {
        from -= 1;
    }
    let open = text.get(from..)?.rfind("/*")?;
    Some(from + open)
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
        '`' => Some(&['`', '´']),
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
