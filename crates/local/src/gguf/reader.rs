//! `reader`: a bounds-checked cursor over the file's bytes, with what is left of the
//! memory budget: every size it reads is checked against the bytes left, every
//! allocation charged before it is made.

use super::error::GgufError;
use super::value::{MAX_DEPTH, Value};

/// A bounds-checked cursor over the file, with what is left of the memory budget.
pub(super) struct Reader<'a> {
    pub(super) bytes: &'a [u8],
    pub(super) at: usize,
    pub(super) budget: usize,
    pub(super) limit: usize,
}

impl<'a> Reader<'a> {
    /// Takes `items × each` bytes from the budget, refusing what would overdraw it.
    pub(super) fn charge(
        &mut self,
        items: usize,
        each: usize,
        what: &'static str,
    ) -> Result<(), GgufError> {
        match items.checked_mul(each) {
            Some(cost) if cost <= self.budget => {
                self.budget -= cost;
                Ok(())
            }
            _ => Err(GgufError::TooLarge {
                what,
                at: self.at as u64,
                limit: self.limit,
            }),
        }
    }

    pub(super) fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], GgufError> {
        let end = self.at.checked_add(n);
        match end.and_then(|end| self.bytes.get(self.at..end)) {
            Some(s) => {
                self.at += n;
                Ok(s)
            }
            None => Err(GgufError::Truncated {
                what,
                at: self.at as u64,
            }),
        }
    }

    fn array<const N: usize>(&mut self, what: &'static str) -> Result<[u8; N], GgufError> {
        let s = self.take(N, what)?;
        let mut out = [0u8; N];
        out.copy_from_slice(s);
        Ok(out)
    }

    pub(super) fn u32(&mut self, what: &'static str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    pub(super) fn u64(&mut self, what: &'static str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count of items each at least `min_item` bytes long, refused when the rest of
    /// the file cannot hold them (so a garbled count never allocates gigabytes).
    pub(super) fn count(
        &mut self,
        min_item: usize,
        what: &'static str,
    ) -> Result<usize, GgufError> {
        let at = self.at as u64;
        let n = self.u64(what)?;
        let left = self.bytes.len().saturating_sub(self.at) as u64;
        if n.saturating_mul(min_item.max(1) as u64) > left {
            return Err(GgufError::Truncated { what, at });
        }
        usize::try_from(n).map_err(|_| GgufError::Truncated { what, at })
    }

    /// A string, its bytes charged to the budget before they are copied.
    pub(super) fn string(&mut self, what: &'static str) -> Result<String, GgufError> {
        let at = self.at as u64;
        let len = self.count(1, what)?;
        self.charge(len, 1, what)?;
        let raw = self.take(len, what)?;
        String::from_utf8(raw.to_vec()).map_err(|_| GgufError::BadString { at })
    }

    pub(super) fn value(&mut self, type_id: u32, depth: u32) -> Result<Value, GgufError> {
        const W: &str = "metadata value";
        Ok(match type_id {
            0 => Value::U8(u8::from_le_bytes(self.array(W)?)),
            1 => Value::I8(i8::from_le_bytes(self.array(W)?)),
            2 => Value::U16(u16::from_le_bytes(self.array(W)?)),
            3 => Value::I16(i16::from_le_bytes(self.array(W)?)),
            4 => Value::U32(u32::from_le_bytes(self.array(W)?)),
            5 => Value::I32(i32::from_le_bytes(self.array(W)?)),
            6 => Value::F32(f32::from_le_bytes(self.array(W)?)),
            7 => Value::Bool(self.array::<1>(W)?[0] != 0),
            8 => Value::String(self.string(W)?),
            9 => {
                if depth >= MAX_DEPTH {
                    return Err(GgufError::TooDeep { at: self.at as u64 });
                }
                let elem = self.u32("array type")?;
                let min = match elem {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    8 | 10..=12 => 8,
                    9 => 12,
                    other => return Err(GgufError::UnknownValueType(other)),
                };
                let n = self.count(min, "array length")?;
                // A byte in the file can be a whole `Value` in memory: pay first.
                self.charge(n, size_of::<Value>(), "array")?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value(elem, depth + 1)?);
                }
                Value::Array(items)
            }
            10 => Value::U64(u64::from_le_bytes(self.array(W)?)),
            11 => Value::I64(i64::from_le_bytes(self.array(W)?)),
            12 => Value::F64(f64::from_le_bytes(self.array(W)?)),
            other => return Err(GgufError::UnknownValueType(other)),
        })
    }
}
