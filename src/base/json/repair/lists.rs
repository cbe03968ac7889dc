//! Lists: items up to the closing bracket, Python tuples, a stray brace before the
//! next item, and the object whose `{` was left out (`["a": 1]`).

use super::strings;
use super::{Context, Fail, JsonError, Parent, Repairer};

impl Repairer {
    pub(super) fn array(&mut self, parent: Parent) -> Result<(), JsonError> {
        self.pos += 1;
        self.out.push('[');
        self.items(parent, ']').map(|_| ())
    }

    /// A Python tuple: `(1, 2)` is the list `[1, 2]`, `()` the empty list, and `(1)`
    /// (no comma) the value inside.
    pub(super) fn tuple(&mut self) -> Result<(), JsonError> {
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
    pub(super) fn items(
        &mut self,
        parent: Parent,
        close: char,
    ) -> Result<(usize, bool), JsonError> {
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
