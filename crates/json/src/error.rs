//! [`ReadError`]: why a value did not read as the type asked for, and the path to
//! where (`rules[0].keywords`), in serde_json's words. How the reader makes one
//! (`de::Error`) is the reader's, beside its hand-over to [`crate::fields`].

use std::fmt;

use serde::de::Unexpected;

/// Why a value did not read as the type asked for, and where.
#[derive(Debug)]
pub struct ReadError {
    /// From the outside in.
    path: Vec<Segment>,
    error: serde_json::Error,
}

#[derive(Debug)]
pub(crate) enum Segment {
    Key(String),
    Index(usize),
}

impl ReadError {
    pub(crate) fn at(mut self, segment: Segment) -> Self {
        self.path.insert(0, segment);
        self
    }

    /// The error of the value at `key` of an object.
    pub(crate) fn at_key(self, key: &str) -> Self {
        self.at(Segment::Key(key.to_owned()))
    }

    /// The path to the value that was wrong, as `serde_path_to_error` writes it:
    /// `.` for the value itself, else `rules[0].keywords`.
    pub fn path(&self) -> String {
        if self.path.is_empty() {
            return ".".into();
        }
        let mut path = String::new();
        for segment in &self.path {
            match segment {
                Segment::Index(index) => path.push_str(&format!("[{index}]")),
                Segment::Key(key) => {
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(key);
                }
            }
        }
        path
    }

    /// The error without its path.
    pub fn into_inner(self) -> serde_json::Error {
        self.error
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.error.fmt(f)
    }
}

impl std::error::Error for ReadError {}

/// What was found, in serde_json's words (`null`, ``floating point `1.5` ``, ``string
/// "a"``). Written here rather than through serde's `Unexpected` display, whose float
/// arm alone links core's float printing (18 KB of wasm) into a build that prints no
/// float: serde_json's numbers print floats with their own short algorithm.
pub(crate) struct Described<'a>(pub(crate) Unexpected<'a>);

impl fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Unexpected::Bool(b) => write!(f, "boolean `{b}`"),
            Unexpected::Unsigned(n) => write!(f, "integer `{n}`"),
            Unexpected::Signed(n) => write!(f, "integer `{n}`"),
            Unexpected::Float(x) => match serde_json::Number::from_f64(x) {
                Some(number) => write!(f, "floating point `{number}`"),
                None => f.write_str("floating point"),
            },
            Unexpected::Char(c) => write!(f, "character `{c}`"),
            Unexpected::Str(s) => write!(f, "string {s:?}"),
            Unexpected::Bytes(_) => f.write_str("byte array"),
            Unexpected::Unit => f.write_str("null"),
            Unexpected::Option => f.write_str("Option value"),
            Unexpected::NewtypeStruct => f.write_str("newtype struct"),
            Unexpected::Seq => f.write_str("sequence"),
            Unexpected::Map => f.write_str("map"),
            Unexpected::Enum => f.write_str("enum"),
            Unexpected::UnitVariant => f.write_str("unit variant"),
            Unexpected::NewtypeVariant => f.write_str("newtype variant"),
            Unexpected::TupleVariant => f.write_str("tuple variant"),
            Unexpected::StructVariant => f.write_str("struct variant"),
            Unexpected::Other(other) => f.write_str(other),
        }
    }
}

impl From<serde_json::Error> for ReadError {
    fn from(error: serde_json::Error) -> Self {
        Self {
            path: Vec::new(),
            error,
        }
    }
}
