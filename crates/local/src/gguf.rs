//! The GGUF file: its metadata (key → value) and its tensor table, read in place from
//! the file's bytes, which this owns; and a writer for the tests' tiny models.
//!
//! Only the layout lives here: what the weights mean is [`crate::llama`]'s business,
//! how a block of quantized weights decodes is [`crate::quant`]'s. Every offset and
//! size read from the file is checked against its length, so a truncated or garbled
//! file is an error, never a panic or an out-of-bounds read; and every allocation the
//! header asks for is checked before it is made: a count against the bytes left (N
//! items need N times their smallest encoding), the decoded header against a memory
//! budget ([`Limits`]: a byte array costs a `Value` per byte once decoded), the tensor
//! table against a count no model comes near. A hostile file is an error, never an
//! out-of-memory abort, which in wasm would kill the worker.
//!
//! The parts: [`value`] types the metadata, [`kind`] the tensor formats, [`reader`] is
//! the bounds-checked cursor with its memory budget, [`error`] says what went wrong;
//! this module parses the file with them and lends out its values and tensors.

mod error;
mod kind;
mod reader;
mod value;
mod writer;

use std::collections::HashMap;
use std::fmt;

pub use error::GgufError;
pub use kind::TensorKind;
pub use value::Value;
pub use writer::write;

use reader::Reader;

const MAGIC: &[u8; 4] = b"GGUF";
const DEFAULT_ALIGNMENT: u64 = 32;

/// What a file may make the parser allocate beyond its own bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// The decoded metadata and tensor table, in bytes of memory (values, strings,
    /// arrays, map entries, names). Real models need a few MiB to a few tens (a
    /// 150,000-token vocabulary with its merges is about 20 MiB).
    pub header_memory: usize,
    /// Tensors in the table. Real models have hundreds to a few thousand.
    pub tensors: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_memory: 256 << 20,
            tensors: 1 << 16,
        }
    }
}

/// One tensor, borrowed from the file.
#[derive(Clone, Copy, Debug)]
pub struct Tensor<'a> {
    pub name: &'a str,
    /// ggml order: `dims[0]` is the row length (the fastest-moving index).
    pub dims: &'a [u64],
    pub kind: TensorKind,
    pub data: &'a [u8],
    /// Where `data` begins in the file: what a helper thread copies its rows from.
    pub offset: usize,
}

struct TensorInfo {
    name: String,
    dims: Vec<u64>,
    kind: TensorKind,
    /// Absolute byte range in the file, checked at parse.
    start: usize,
    len: usize,
}

/// A parsed GGUF file, owning its bytes.
pub struct Gguf {
    bytes: Vec<u8>,
    version: u32,
    metadata: HashMap<String, Value>,
    tensors: Vec<TensorInfo>,
    by_name: HashMap<String, usize>,
}

impl fmt::Debug for Gguf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Gguf")
            .field("version", &self.version)
            .field("bytes", &self.bytes.len())
            .field("metadata", &self.metadata.len())
            .field("tensors", &self.tensors.len())
            .finish()
    }
}

/// A metadata map entry as the map holds it, doubled for the map's spare capacity.
const ENTRY_COST: usize = 2 * (size_of::<(String, Value)>() + 1);
/// A tensor as the parser holds it: its table row, the name's map entry and the row
/// kept while offsets are checked.
const TENSOR_COST: usize = size_of::<TensorInfo>()
    + 2 * (size_of::<(String, usize)>() + 1)
    + size_of::<(String, Vec<u64>, TensorKind, u64)>();

impl Gguf {
    /// Parses a GGUF v2 or v3 file, checking every tensor's bytes lie inside it, within
    /// the default [`Limits`].
    pub fn parse(bytes: Vec<u8>) -> Result<Gguf, GgufError> {
        Gguf::parse_within(bytes, Limits::default())
    }

    /// [`Gguf::parse`] within these limits.
    pub fn parse_within(bytes: Vec<u8>, limits: Limits) -> Result<Gguf, GgufError> {
        let mut r = Reader {
            bytes: &bytes,
            at: 0,
            budget: limits.header_memory,
            limit: limits.header_memory,
        };
        if r.take(4, "magic").map_err(|_| GgufError::NotGguf)? != MAGIC {
            return Err(GgufError::NotGguf);
        }
        let version = r.u32("version")?;
        if !(2..=3).contains(&version) {
            return Err(GgufError::UnsupportedVersion(version));
        }
        // Smallest tensor info: 8 (name len) + 4 (n_dims) + 4 (type) + 8 (offset).
        let n_tensors = r.count(24, "tensor count")?;
        if n_tensors > limits.tensors {
            return Err(GgufError::TooManyTensors {
                count: n_tensors as u64,
                limit: limits.tensors,
            });
        }
        // Smallest key/value: 8 (key len) + 4 (type) + 1.
        let n_kv = r.count(13, "metadata count")?;
        r.charge(n_kv, ENTRY_COST, "metadata count")?;
        let mut metadata = HashMap::with_capacity(n_kv);
        for _ in 0..n_kv {
            let key = r.string("metadata key")?;
            let type_id = r.u32("metadata type")?;
            let value = r.value(type_id, 0)?;
            metadata.insert(key, value);
        }
        let alignment = match metadata.get("general.alignment").and_then(Value::integer) {
            None => DEFAULT_ALIGNMENT,
            Some(a) if a > 0 && a <= 1 << 20 && (a as u64).is_power_of_two() => a as u64,
            Some(a) => return Err(GgufError::BadAlignment(a.clamp(0, u64::MAX as i128) as u64)),
        };
        r.charge(n_tensors, TENSOR_COST, "tensor count")?;
        let mut raw = Vec::with_capacity(n_tensors);
        for _ in 0..n_tensors {
            let name = r.string("tensor name")?;
            // The name is kept twice: in the table and as the map's key.
            r.charge(name.len(), 1, "tensor name")?;
            let n_dims = r.u32("tensor dims")? as usize;
            if n_dims > 4 {
                return Err(GgufError::BadTensor {
                    name,
                    reason: "more than 4 dimensions",
                });
            }
            r.charge(n_dims, size_of::<u64>(), "tensor dims")?;
            let mut dims = Vec::with_capacity(n_dims);
            for _ in 0..n_dims {
                dims.push(r.u64("tensor dim")?);
            }
            let kind = TensorKind::from_id(r.u32("tensor type")?)?;
            let offset = r.u64("tensor offset")?;
            raw.push((name, dims, kind, offset));
        }
        let data_start = (r.at as u64).div_ceil(alignment) * alignment;
        let mut tensors = Vec::with_capacity(raw.len());
        let mut by_name = HashMap::with_capacity(raw.len());
        for (name, dims, kind, offset) in raw {
            let bad = |reason| GgufError::BadTensor {
                name: name.clone(),
                reason,
            };
            if offset % alignment != 0 {
                return Err(bad("offset not aligned"));
            }
            let elements = dims
                .iter()
                .try_fold(1u64, |acc, &d| acc.checked_mul(d))
                .ok_or_else(|| bad("element count overflows"))?;
            if dims
                .first()
                .is_some_and(|&row| row % kind.block_elements() as u64 != 0)
            {
                return Err(bad("row length is not a whole number of blocks"));
            }
            if !elements.is_multiple_of(kind.block_elements() as u64) {
                return Err(bad("size is not whole blocks"));
            }
            let len = kind
                .bytes_for(elements)
                .ok_or_else(|| bad("byte size overflows"))?;
            let start = data_start
                .checked_add(offset)
                .ok_or_else(|| bad("offset overflows"))?;
            let end = start
                .checked_add(len)
                .ok_or_else(|| bad("size overflows"))?;
            let (Ok(start), Ok(len)) = (usize::try_from(start), usize::try_from(len)) else {
                return Err(GgufError::Truncated {
                    what: "tensor data",
                    at: start,
                });
            };
            if end > bytes.len() as u64 {
                return Err(GgufError::Truncated {
                    what: "tensor data",
                    at: start as u64,
                });
            }
            if by_name.insert(name.clone(), tensors.len()).is_some() {
                return Err(GgufError::DuplicateTensor(name));
            }
            tensors.push(TensorInfo {
                name,
                dims,
                kind,
                start,
                len,
            });
        }
        Ok(Gguf {
            bytes,
            version,
            metadata,
            tensors,
            by_name,
        })
    }

    /// The file's format version (2 or 3).
    pub fn version(&self) -> u32 {
        self.version
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.metadata.get(key)
    }

    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key)? {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// Any non-negative integer value.
    pub fn u64(&self, key: &str) -> Option<u64> {
        u64::try_from(self.get(key)?.integer()?).ok()
    }

    /// An F32 or F64 value.
    pub fn f32(&self, key: &str) -> Option<f32> {
        match *self.get(key)? {
            Value::F32(v) => Some(v),
            Value::F64(v) => Some(v as f32),
            _ => None,
        }
    }

    /// An array whose items are all strings.
    pub fn strings(&self, key: &str) -> Option<Vec<&str>> {
        match self.get(key)? {
            Value::Array(items) => items
                .iter()
                .map(|v| match v {
                    Value::String(s) => Some(s.as_str()),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// An array whose items are all integers (each fitting an i64).
    pub fn ints(&self, key: &str) -> Option<Vec<i64>> {
        match self.get(key)? {
            Value::Array(items) => items
                .iter()
                .map(|v| i64::try_from(v.integer()?).ok())
                .collect(),
            _ => None,
        }
    }

    /// An array whose items are all floats (F32 or F64): e.g. the vocabulary's scores.
    pub fn floats(&self, key: &str) -> Option<Vec<f32>> {
        match self.get(key)? {
            Value::Array(items) => items
                .iter()
                .map(|v| match *v {
                    Value::F32(x) => Some(x),
                    Value::F64(x) => Some(x as f32),
                    _ => None,
                })
                .collect(),
            _ => None,
        }
    }

    /// The metadata keys, in no particular order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.metadata.keys().map(String::as_str)
    }

    pub fn tensor(&self, name: &str) -> Option<Tensor<'_>> {
        self.by_name.get(name).and_then(|&i| self.view(i))
    }

    pub fn tensors(&self) -> impl Iterator<Item = Tensor<'_>> {
        (0..self.tensors.len()).filter_map(|i| self.view(i))
    }

    fn view(&self, i: usize) -> Option<Tensor<'_>> {
        let t = self.tensors.get(i)?;
        Some(Tensor {
            name: &t.name,
            dims: &t.dims,
            kind: t.kind,
            data: self.bytes.get(t.start..t.start.checked_add(t.len)?)?,
            offset: t.start,
        })
    }
}

// Native only: its property tests use proptest, a native dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod hostile;
#[cfg(test)]
mod tests;
