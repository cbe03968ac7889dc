//! Compiling a JSON Schema (the subset tool parameters use) into grammar nodes.
//!
//! Supported: `type` (object, string, number, integer, boolean, null, array, or a list
//! of them), `properties`, `required`, `enum`, `const`, `items`, `anyOf`/`oneOf`,
//! `minLength`/`maxLength`, `minItems`/`maxItems`, `minimum`/`maximum` of an integer
//! (a range of up to 128 values is listed value by value; a wider one bounds the sign
//! and the digits) and of a number (the sign and digits only), and a string's `not`
//! when it lists values (`{"enum": [...]}` or `{"const": …}`: contents the string
//! must not be). `additionalProperties` is taken as false: only the listed properties
//! are emitted. Other keywords beside a `type` (`pattern`, `format`, `exclusiveMinimum`,
//! `description`, …) are not enforced; a schema with
//! nothing this compiler reads (`{}`, `true`, a `$ref`) accepts any JSON value, of
//! bounded depth and size. Properties come in the schema map's order: serde_json's
//! map is sorted by key unless its `preserve_order` feature is on, in which case the
//! declared order is kept.
//!
//! Every node is bounded (strings at 256 characters unless `maxLength` says, arrays at
//! 16 items unless `maxItems` says, numbers at 15 integer and 6 fraction digits), so
//! every output the grammar allows is finite and can be completed.

use serde_json::Value;

use super::ConstraintError;
use super::trie::{NO_TRIE, Trie};

pub type NodeId = u32;

/// Characters in a string without `maxLength`.
pub const DEFAULT_MAX_STRING: u32 = 256;
/// Items in an array without `maxItems`.
pub const DEFAULT_MAX_ITEMS: u32 = 16;
/// How deep "any value" nests arrays and objects.
const ANY_DEPTH: u32 = 2;
/// Entries of an object inside "any value", and characters of its strings.
const ANY_ENTRIES: u32 = 8;
const ANY_STRING: u32 = 64;
/// Integers a bounded range lists one by one at most.
const MAX_LISTED: i64 = 128;
/// Integer digits of a number without bounds.
const MAX_DIGITS: u8 = 15;
/// Schema nesting refused beyond this (a guard against hostile schemas).
const MAX_DEPTH: u32 = 32;

/// A number node: signed unless `minimum` is 0 or more; as many integer digits as
/// the larger of the bounds has, when both are given.
fn number(integer: bool, obj: &serde_json::Map<String, Value>) -> Node {
    let bound = |key: &str| obj.get(key).and_then(Value::as_f64);
    let (lo, hi) = (bound("minimum"), bound("maximum"));
    // Counted, not formatted: a float's formatting would add 12 KB to the worker.
    let digits = |v: f64| {
        let (mut n, mut digits) = (v.abs().min(1e15) as u64, 1u8);
        while n >= 10 {
            n /= 10;
            digits += 1;
        }
        digits.min(MAX_DIGITS)
    };
    Node::Num {
        integer,
        signed: lo.is_none_or(|lo| lo < 0.0),
        most: match (lo, hi) {
            (Some(lo), Some(hi)) => digits(lo).max(digits(hi)),
            _ => MAX_DIGITS,
        },
    }
}

/// What a literal trie's word means when it ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The literal is the whole value.
    Done,
    /// The literal is followed by this node (a tool call's arguments).
    Then(NodeId),
    /// An object key (with its `,` and `:`): the value of property `j` follows.
    Prop(u32),
    /// An object's closing brace.
    Close,
}

/// One grammar node.
#[derive(Debug, Clone)]
pub enum Node {
    /// One of a set of literals, a trie of their bytes.
    Lit(u32),
    /// A string; `avoid` is the trie of contents it must not be (`not: {enum}`), or
    /// [`NO_TRIE`].
    Str {
        min: u32,
        max: u32,
        avoid: u32,
    },
    /// A number; `signed` when a minus may lead, `most` integer digits at most.
    Num {
        integer: bool,
        signed: bool,
        most: u8,
    },
    Arr {
        items: NodeId,
        min: u32,
        max: u32,
    },
    /// An object with fixed properties (their value nodes), and for every position
    /// (`2 * next + first`) the trie of the keys (or `}`) that may come there.
    Obj {
        props: Vec<NodeId>,
        keys: Vec<u32>,
    },
    /// An object with any string keys (inside "any value").
    Map {
        values: NodeId,
        max: u32,
    },
    AnyOf(Vec<NodeId>),
    Seq(Vec<NodeId>),
}

/// The nodes and literal tries of a grammar under construction.
#[derive(Debug, Clone, Default)]
pub struct Nodes {
    pub nodes: Vec<Node>,
    pub tries: Vec<Trie<End>>,
    any: Vec<NodeId>,
}

impl Nodes {
    pub fn push(&mut self, node: Node) -> NodeId {
        self.nodes.push(node);
        (self.nodes.len() - 1) as NodeId
    }

    /// A node matching exactly one of `words`, each ending as its `End` says.
    pub fn literals<'a>(&mut self, words: impl IntoIterator<Item = (&'a [u8], End)>) -> NodeId {
        let trie = self.trie(words);
        self.push(Node::Lit(trie))
    }

    /// A trie of `words` (the first of equal words wins), by its index.
    fn trie<'a>(&mut self, words: impl IntoIterator<Item = (&'a [u8], End)>) -> u32 {
        let mut trie = Trie::default();
        for (word, end) in words {
            let at = trie.insert(word);
            if let Some(node) = trie.node_mut(at) {
                node.end.get_or_insert(end);
            }
        }
        self.tries.push(trie);
        (self.tries.len() - 1) as u32
    }

    /// A node for a JSON Schema.
    pub fn schema(&mut self, schema: &Value, depth: u32) -> Result<NodeId, ConstraintError> {
        if depth > MAX_DEPTH {
            return Err(ConstraintError::Schema(
                "nested deeper than 32 levels".into(),
            ));
        }
        let obj = match schema {
            Value::Bool(true) => return Ok(self.any(ANY_DEPTH)),
            Value::Object(obj) => obj,
            other => return Err(ConstraintError::Schema(format!("not a schema: {other}"))),
        };
        if let Some(value) = obj.get("const") {
            return Ok(self.values(std::slice::from_ref(value)));
        }
        if let Some(values) = obj.get("enum") {
            return match values.as_array() {
                Some(list) if !list.is_empty() => Ok(self.values(list)),
                _ => Err(ConstraintError::Schema(
                    "`enum` is not a non-empty array".into(),
                )),
            };
        }
        if let Some(options) = obj.get("anyOf").or_else(|| obj.get("oneOf")) {
            let list = options.as_array().filter(|l| !l.is_empty());
            let list = list.ok_or_else(|| {
                ConstraintError::Schema("`anyOf` is not a non-empty array".into())
            })?;
            let ids = list
                .iter()
                .map(|s| self.schema(s, depth + 1))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(self.push(Node::AnyOf(ids)));
        }
        match obj.get("type") {
            Some(Value::String(t)) => self.typed(t, obj, depth),
            Some(Value::Array(types)) if !types.is_empty() => {
                let mut ids = Vec::new();
                for t in types {
                    let t = t
                        .as_str()
                        .ok_or_else(|| ConstraintError::Schema(format!("bad type {t}")))?;
                    ids.push(self.typed(t, obj, depth)?);
                }
                Ok(self.push(Node::AnyOf(ids)))
            }
            Some(other) => Err(ConstraintError::Schema(format!("bad type {other}"))),
            None if obj.contains_key("properties") => self.typed("object", obj, depth),
            None if obj.contains_key("items") => self.typed("array", obj, depth),
            None => Ok(self.any(ANY_DEPTH)),
        }
    }

    fn typed(
        &mut self,
        t: &str,
        obj: &serde_json::Map<String, Value>,
        depth: u32,
    ) -> Result<NodeId, ConstraintError> {
        let bound = |key: &str| {
            obj.get(key)
                .and_then(Value::as_u64)
                .map(|v| v.min(u64::from(u32::MAX / 2)) as u32)
        };
        let range = |min: &str, max: &str, default: u32| {
            let lo = bound(min).unwrap_or(0);
            let hi = bound(max).unwrap_or(default.max(lo));
            if lo > hi {
                Err(ConstraintError::Schema(format!(
                    "`{min}` {lo} above `{max}` {hi}"
                )))
            } else {
                Ok((lo, hi))
            }
        };
        match t {
            "string" => {
                let (min, max) = range("minLength", "maxLength", DEFAULT_MAX_STRING)?;
                let avoid = self.avoided(obj.get("not"));
                Ok(self.push(Node::Str { min, max, avoid }))
            }
            "number" => Ok(self.push(number(false, obj))),
            "integer" => Ok(self.integer(obj)),
            "boolean" => Ok(self.literals([(&b"true"[..], End::Done), (&b"false"[..], End::Done)])),
            "null" => Ok(self.literals([(&b"null"[..], End::Done)])),
            "array" => {
                let (min, max) = range("minItems", "maxItems", DEFAULT_MAX_ITEMS)?;
                let items = match obj.get("items") {
                    Some(s) => self.schema(s, depth + 1)?,
                    None => self.any(ANY_DEPTH),
                };
                Ok(self.push(Node::Arr { items, min, max }))
            }
            "object" => self.object(obj, depth),
            other => Err(ConstraintError::Schema(format!("unknown type {other:?}"))),
        }
    }

    fn object(
        &mut self,
        obj: &serde_json::Map<String, Value>,
        depth: u32,
    ) -> Result<NodeId, ConstraintError> {
        let required: Vec<&str> = obj
            .get("required")
            .and_then(Value::as_array)
            .map_or(Vec::new(), |r| r.iter().filter_map(Value::as_str).collect());
        let mut props: Vec<(String, NodeId, bool)> = Vec::new();
        if let Some(Value::Object(map)) = obj.get("properties") {
            for (name, schema) in map {
                let id = self.schema(schema, depth + 1)?;
                props.push((name.clone(), id, required.contains(&name.as_str())));
            }
        }
        // A required name with no schema of its own takes any value.
        for name in required {
            if !props.iter().any(|(n, _, _)| n == name) {
                let id = self.any(ANY_DEPTH);
                props.push((name.to_string(), id, true));
            }
        }
        let mut keys = Vec::with_capacity(2 * (props.len() + 1));
        for next in 0..=props.len() {
            for first in [false, true] {
                let mut words: Vec<(Vec<u8>, End)> = Vec::new();
                let mut closable = true;
                for (j, (name, _, required)) in props.iter().enumerate().skip(next) {
                    let mut word = if first { Vec::new() } else { b",".to_vec() };
                    word.extend(serde_json::to_vec(name).unwrap_or_default());
                    word.push(b':');
                    words.push((word, End::Prop(j as u32)));
                    if *required {
                        closable = false;
                        break;
                    }
                }
                if closable {
                    words.push((b"}".to_vec(), End::Close));
                }
                keys.push(self.trie(words.iter().map(|(w, e)| (w.as_slice(), *e))));
            }
        }
        let props = props.into_iter().map(|(_, id, _)| id).collect();
        Ok(self.push(Node::Obj { props, keys }))
    }

    /// An integer within the schema's `minimum` and `maximum`: every value when they
    /// leave at most [`MAX_LISTED`] (so a small model writes no out-of-range value),
    /// else a number no longer than the bounds allow.
    fn integer(&mut self, obj: &serde_json::Map<String, Value>) -> NodeId {
        let (lo, hi) = (
            obj.get("minimum").and_then(Value::as_i64),
            obj.get("maximum").and_then(Value::as_i64),
        );
        if let (Some(lo), Some(hi)) = (lo, hi)
            && lo <= hi
            && hi - lo < MAX_LISTED
        {
            let values: Vec<Value> = (lo..=hi).map(Value::from).collect();
            return self.values(&values);
        }
        self.push(number(true, obj))
    }

    /// The trie of the strings a `not` lists (`{"enum": [...]}` or `{"const": …}`),
    /// as their contents; [`NO_TRIE`] when it lists none.
    fn avoided(&mut self, not: Option<&Value>) -> u32 {
        let listed = not.and_then(|n| match (n.get("enum"), n.get("const")) {
            (Some(Value::Array(values)), _) => Some(values.clone()),
            (_, Some(value)) => Some(vec![value.clone()]),
            _ => None,
        });
        let words: Vec<&str> = listed.iter().flatten().filter_map(Value::as_str).collect();
        if words.is_empty() {
            return NO_TRIE;
        }
        self.trie(words.iter().map(|w| (w.as_bytes(), End::Done)))
    }

    /// A node matching one of these JSON values, written compactly.
    fn values(&mut self, values: &[Value]) -> NodeId {
        let words: Vec<Vec<u8>> = values
            .iter()
            .map(|v| serde_json::to_vec(v).unwrap_or_default())
            .collect();
        self.literals(words.iter().map(|w| (w.as_slice(), End::Done)))
    }

    /// Any JSON value, nesting at most `depth` arrays and objects.
    pub fn any(&mut self, depth: u32) -> NodeId {
        if let Some(&id) = self.any.get(depth as usize) {
            return id;
        }
        let inner = if depth == 0 {
            None
        } else {
            Some(self.any(depth - 1))
        };
        if let Some(&id) = self.any.get(depth as usize) {
            return id;
        }
        let mut options = vec![
            self.push(Node::Str {
                min: 0,
                max: ANY_STRING,
                avoid: NO_TRIE,
            }),
            self.push(Node::Num {
                integer: false,
                signed: true,
                most: MAX_DIGITS,
            }),
            self.literals([
                (&b"true"[..], End::Done),
                (&b"false"[..], End::Done),
                (&b"null"[..], End::Done),
            ]),
        ];
        if let Some(inner) = inner {
            options.push(self.push(Node::Arr {
                items: inner,
                min: 0,
                max: ANY_ENTRIES,
            }));
            options.push(self.push(Node::Map {
                values: inner,
                max: ANY_ENTRIES,
            }));
        }
        let id = self.push(Node::AnyOf(options));
        // The recursion above filled every shallower depth, so this one is next.
        self.any.push(id);
        id
    }
}
