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

use std::collections::HashMap;
use std::fmt;

const MAGIC: &[u8; 4] = b"GGUF";
const DEFAULT_ALIGNMENT: u64 = 32;
/// Arrays inside arrays: real files nest none; the reader recurses, so it stops here.
const MAX_DEPTH: u32 = 8;

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

/// A metadata value, as GGUF types it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    U8(u8),
    I8(i8),
    U16(u16),
    I16(i16),
    U32(u32),
    I32(i32),
    U64(u64),
    I64(i64),
    F32(f32),
    F64(f64),
    Bool(bool),
    String(String),
    Array(Vec<Value>),
}

impl Value {
    /// Any integer as i128, so both signed and unsigned fit without loss.
    fn integer(&self) -> Option<i128> {
        Some(match *self {
            Value::U8(v) => v.into(),
            Value::I8(v) => v.into(),
            Value::U16(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::U32(v) => v.into(),
            Value::I32(v) => v.into(),
            Value::U64(v) => v.into(),
            Value::I64(v) => v.into(),
            _ => return None,
        })
    }
}

/// The tensor formats this crate computes with (ggml type ids 0, 1, 2, 3, 6, 7, 8, 12,
/// 13, 14): the K-quants are the `Q4_K_M`, `Q5_K_M` and `Q6_K` files of the model
/// hubs, and Q5_0/Q5_1 what llama.cpp's quantiser puts in them for the matrices whose
/// rows are not whole 256-blocks (Qwen2.5-0.5B's 896 columns, SmolLM2's 576).
#[allow(non_camel_case_types)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TensorKind {
    F32,
    F16,
    Q4_0,
    Q4_1,
    Q5_0,
    Q5_1,
    Q8_0,
    Q4_K,
    Q5_K,
    Q6_K,
}

impl TensorKind {
    fn from_id(id: u32) -> Result<TensorKind, GgufError> {
        Ok(match id {
            0 => TensorKind::F32,
            1 => TensorKind::F16,
            2 => TensorKind::Q4_0,
            3 => TensorKind::Q4_1,
            6 => TensorKind::Q5_0,
            7 => TensorKind::Q5_1,
            8 => TensorKind::Q8_0,
            12 => TensorKind::Q4_K,
            13 => TensorKind::Q5_K,
            14 => TensorKind::Q6_K,
            other => return Err(GgufError::UnsupportedTensorType(other)),
        })
    }

    /// Elements per block: rows of a quantized tensor are whole blocks.
    pub fn block_elements(self) -> usize {
        match self {
            TensorKind::F32 | TensorKind::F16 => 1,
            TensorKind::Q4_0
            | TensorKind::Q4_1
            | TensorKind::Q5_0
            | TensorKind::Q5_1
            | TensorKind::Q8_0 => 32,
            TensorKind::Q4_K | TensorKind::Q5_K | TensorKind::Q6_K => 256,
        }
    }

    /// Bytes per block.
    pub fn block_bytes(self) -> usize {
        match self {
            TensorKind::F32 => 4,
            TensorKind::F16 => 2,
            TensorKind::Q4_0 => 18,
            TensorKind::Q4_1 => 20,
            TensorKind::Q5_0 => 22,
            TensorKind::Q5_1 => 24,
            TensorKind::Q8_0 => 34,
            TensorKind::Q4_K => 144,
            TensorKind::Q5_K => 176,
            TensorKind::Q6_K => 210,
        }
    }

    /// Bytes holding `elements` values, or None when they are not whole blocks.
    pub fn bytes_for(self, elements: u64) -> Option<u64> {
        let per = self.block_elements() as u64;
        if !elements.is_multiple_of(per) {
            return None;
        }
        (elements / per).checked_mul(self.block_bytes() as u64)
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
}

/// Why a file could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum GgufError {
    NotGguf,
    UnsupportedVersion(u32),
    /// The file ends (or a size points) past its length while reading `what`.
    Truncated {
        what: &'static str,
        at: u64,
    },
    UnknownValueType(u32),
    UnsupportedTensorType(u32),
    BadString {
        at: u64,
    },
    BadAlignment(u64),
    BadTensor {
        name: String,
        reason: &'static str,
    },
    DuplicateTensor(String),
    /// Decoding `what` would take the header past [`Limits::header_memory`].
    TooLarge {
        what: &'static str,
        at: u64,
        limit: usize,
    },
    /// Arrays nested deeper than any real file's.
    TooDeep {
        at: u64,
    },
    /// More tensors than [`Limits::tensors`].
    TooManyTensors {
        count: u64,
        limit: usize,
    },
}

impl fmt::Display for GgufError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GgufError::NotGguf => write!(f, "not a GGUF file (no GGUF magic)"),
            GgufError::UnsupportedVersion(v) => {
                write!(f, "GGUF version {v} is not supported (2 and 3 are)")
            }
            GgufError::Truncated { what, at } => {
                write!(
                    f,
                    "GGUF file truncated or garbled: {what} at byte {at} runs past the end"
                )
            }
            GgufError::UnknownValueType(t) => write!(f, "unknown GGUF metadata value type {t}"),
            GgufError::UnsupportedTensorType(t) => write!(
                f,
                "tensor type {t} ({}) is not supported (F32, F16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q4_K, Q5_K, Q6_K are)",
                ggml_type_name(*t)
            ),
            GgufError::BadString { at } => write!(f, "GGUF string at byte {at} is not UTF-8"),
            GgufError::BadAlignment(a) => write!(f, "general.alignment {a} is not a power of two"),
            GgufError::BadTensor { name, reason } => write!(f, "tensor {name}: {reason}"),
            GgufError::DuplicateTensor(name) => write!(f, "tensor {name} appears twice"),
            GgufError::TooLarge { what, at, limit } => write!(
                f,
                "GGUF header too large: {what} at byte {at} would take it past {} MiB of memory",
                limit >> 20
            ),
            GgufError::TooDeep { at } => write!(
                f,
                "GGUF array at byte {at} is nested more than {MAX_DEPTH} deep"
            ),
            GgufError::TooManyTensors { count, limit } => write!(
                f,
                "GGUF file lists {count} tensors, more than the {limit} this reader accepts"
            ),
        }
    }
}

impl std::error::Error for GgufError {}

fn ggml_type_name(id: u32) -> &'static str {
    const NAMES: [&str; 31] = [
        "F32", "F16", "Q4_0", "Q4_1", "Q4_2", "Q4_3", "Q5_0", "Q5_1", "Q8_0", "Q8_1", "Q2_K",
        "Q3_K", "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ2_XXS", "IQ2_XS", "IQ3_XXS", "IQ1_S", "IQ4_NL",
        "IQ3_S", "IQ2_S", "IQ4_XS", "I8", "I16", "I32", "I64", "F64", "IQ1_M", "BF16",
    ];
    NAMES.get(id as usize).copied().unwrap_or("unknown")
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

/// A bounds-checked cursor over the file, with what is left of the memory budget.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
    budget: usize,
    limit: usize,
}

/// A metadata map entry as the map holds it, doubled for the map's spare capacity.
const ENTRY_COST: usize = 2 * (size_of::<(String, Value)>() + 1);
/// A tensor as the parser holds it: its table row, the name's map entry and the row
/// kept while offsets are checked.
const TENSOR_COST: usize = size_of::<TensorInfo>()
    + 2 * (size_of::<(String, usize)>() + 1)
    + size_of::<(String, Vec<u64>, TensorKind, u64)>();

impl<'a> Reader<'a> {
    /// Takes `items × each` bytes from the budget, refusing what would overdraw it.
    fn charge(&mut self, items: usize, each: usize, what: &'static str) -> Result<(), GgufError> {
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

    fn take(&mut self, n: usize, what: &'static str) -> Result<&'a [u8], GgufError> {
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

    fn u32(&mut self, what: &'static str) -> Result<u32, GgufError> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn u64(&mut self, what: &'static str) -> Result<u64, GgufError> {
        Ok(u64::from_le_bytes(self.array(what)?))
    }

    /// A count of items each at least `min_item` bytes long, refused when the rest of
    /// the file cannot hold them (so a garbled count never allocates gigabytes).
    fn count(&mut self, min_item: usize, what: &'static str) -> Result<usize, GgufError> {
        let at = self.at as u64;
        let n = self.u64(what)?;
        let left = self.bytes.len().saturating_sub(self.at) as u64;
        if n.saturating_mul(min_item.max(1) as u64) > left {
            return Err(GgufError::Truncated { what, at });
        }
        usize::try_from(n).map_err(|_| GgufError::Truncated { what, at })
    }

    /// A string, its bytes charged to the budget before they are copied.
    fn string(&mut self, what: &'static str) -> Result<String, GgufError> {
        let at = self.at as u64;
        let len = self.count(1, what)?;
        self.charge(len, 1, what)?;
        let raw = self.take(len, what)?;
        String::from_utf8(raw.to_vec()).map_err(|_| GgufError::BadString { at })
    }

    fn value(&mut self, type_id: u32, depth: u32) -> Result<Value, GgufError> {
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
        })
    }
}

mod writer;

pub use writer::write;

// Native only: its property tests use proptest, a native dev-dependency.
#[cfg(all(test, not(target_arch = "wasm32")))]
mod hostile;
#[cfg(test)]
mod tests;
