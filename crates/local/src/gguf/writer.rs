//! The GGUF writer: the tests' tiny models and fixtures, in the layout
//! [`super::Gguf::parse`] reads.

use super::{DEFAULT_ALIGNMENT, MAGIC, TensorKind, Value};

impl Value {
    fn type_id(&self) -> u32 {
        match self {
            Value::U8(_) => 0,
            Value::I8(_) => 1,
            Value::U16(_) => 2,
            Value::I16(_) => 3,
            Value::U32(_) => 4,
            Value::I32(_) => 5,
            Value::F32(_) => 6,
            Value::Bool(_) => 7,
            Value::String(_) => 8,
            Value::Array(_) => 9,
            Value::U64(_) => 10,
            Value::I64(_) => 11,
            Value::F64(_) => 12,
        }
    }
}

/// Writes a GGUF v3 file: the tests' tiny models and fixtures. Tensors are aligned to
/// `general.alignment` when the metadata gives a power of two, else to 32. Tensor
/// data is written as given; its length should match `dims` and `kind`.
pub fn write(metadata: &[(&str, Value)], tensors: &[(&str, &[u64], TensorKind, &[u8])]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&3u32.to_le_bytes());
    out.extend_from_slice(&(tensors.len() as u64).to_le_bytes());
    out.extend_from_slice(&(metadata.len() as u64).to_le_bytes());
    for (key, value) in metadata {
        write_string(&mut out, key);
        out.extend_from_slice(&value.type_id().to_le_bytes());
        write_value(&mut out, value);
    }
    let align = metadata
        .iter()
        .find(|(key, _)| *key == "general.alignment")
        .and_then(|(_, v)| usize::try_from(v.integer()?).ok())
        .filter(|a| a.is_power_of_two())
        .unwrap_or(DEFAULT_ALIGNMENT as usize);
    let mut offset = 0usize;
    for (name, dims, kind, data) in tensors {
        write_string(&mut out, name);
        out.extend_from_slice(&(dims.len() as u32).to_le_bytes());
        for d in *dims {
            out.extend_from_slice(&d.to_le_bytes());
        }
        out.extend_from_slice(&kind.id().to_le_bytes());
        out.extend_from_slice(&(offset as u64).to_le_bytes());
        offset += data.len().div_ceil(align) * align;
    }
    out.resize(out.len().div_ceil(align) * align, 0);
    for (_, _, _, data) in tensors {
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(align) * align, 0);
    }
    out
}

fn write_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as u64).to_le_bytes());
    out.extend_from_slice(s.as_bytes());
}

fn write_value(out: &mut Vec<u8>, value: &Value) {
    match value {
        Value::U8(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::I8(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::U16(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::I16(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::U32(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::I32(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::U64(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::I64(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::F64(v) => out.extend_from_slice(&v.to_le_bytes()),
        Value::Bool(v) => out.push(u8::from(*v)),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            // An empty array's element type is immaterial; say U8.
            let elem = items.first().map_or(0, Value::type_id);
            out.extend_from_slice(&elem.to_le_bytes());
            out.extend_from_slice(&(items.len() as u64).to_le_bytes());
            for item in items {
                write_value(out, item);
            }
        }
    }
}
