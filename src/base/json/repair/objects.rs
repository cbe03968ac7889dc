//! Objects: members up to the closing brace, keys in any quotes or none, a missing
//! colon or value, stray words before a key, a list closed early whose items go on,
//! and a set literal read as a list. Values are left to the rest of the repairer.

use super::strings;
use super::{Context, Fail, JsonError, Parent, Repairer, scalars};

impl Repairer {
    pub(super) fn object(&mut self, parent: Parent) -> Result<(), JsonError> {
        let (out_start, open_at) = (self.out.len(), self.pos);
        self.pos += 1;
        self.out.push('{');
        self.members(parent, true, Some((out_start, open_at)))
    }

    /// An object's members up to its `}` (its `{` already written); `first` when none
    /// has been written yet. `opened` is where the object began in the output and the
    /// input, when it had a `{` of its own: a set literal (`{"a", "b"}`) is read again
    /// from there as a list.
    pub(super) fn members(
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
                    // `{"a": 1, quick brown fox. "b": 2}`: prose before the real key.
                    Some(c) if c != ':' => {
                        if let Some(key_at) = self.prose_then_key(ahead) {
                            self.pos = key_at;
                            return self.key();
                        }
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
}

impl Repairer {
    /// Where a quoted key starts after words of prose on the same line, from `at`
    /// (`quick brown fox. "b": 2`); none when structure comes first.
    fn prose_then_key(&self, at: usize) -> Option<usize> {
        let mut end = at;
        while let Some(&c) = self.chars.get(end) {
            self.look(1);
            if strings::closers(c).is_some() {
                return self.quoted_key_at(end).then_some(end);
            }
            if matches!(c, ':' | ',' | '{' | '}' | '[' | ']' | '\n') {
                return None;
            }
            end += 1;
        }
        None
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

fn is_key_char(c: char) -> bool {
    c.is_alphanumeric() || matches!(c, '_' | '$' | '-')
}
