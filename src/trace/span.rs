//! What a trace is made of: [`Span`]s with typed attributes, events and a status, and
//! the seeded source of their ids. Plain data that serializes, so a tracer saved with
//! its run carries its open spans and its random state across a reload. How spans are
//! made from a run's events is `tracer`'s; how they are written for a collector,
//! `otlp`'s.

use crate::base::json::Read;
use serde::Serialize;

/// An attribute's value, as OpenTelemetry types them (`AnyValue`).
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Value {
    Text(String),
    Int(i64),
    Bool(bool),
    Double(f64),
    Texts(Vec<String>),
}

/// A named value on a span or a span event.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Attribute {
    pub key: String,
    pub value: Value,
}

impl Attribute {
    pub fn text(key: &str, value: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            value: Value::Text(value.into()),
        }
    }

    pub fn int(key: &str, value: i64) -> Self {
        Self {
            key: key.into(),
            value: Value::Int(value),
        }
    }

    pub fn bool(key: &str, value: bool) -> Self {
        Self {
            key: key.into(),
            value: Value::Bool(value),
        }
    }

    pub fn texts(key: &str, values: Vec<String>) -> Self {
        Self {
            key: key.into(),
            value: Value::Texts(values),
        }
    }
}

/// Something that happened at a moment within a span (an approval, a grant, an error).
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct SpanEvent {
    pub name: String,
    /// Milliseconds since the Unix epoch.
    pub at_ms: i64,
    #[serde(default)]
    pub attributes: Vec<Attribute>,
}

/// Who is on each side of a span: OpenTelemetry's `SpanKind`, the two the GenAI
/// conventions use here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Work inside the tab: an agent's run, a tool call.
    Internal,
    /// A request to a model.
    Client,
}

/// How a span ended (OpenTelemetry's `Status`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    #[default]
    Unset,
    Error(String),
}

/// One unit of work in a trace.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Span {
    /// 32 lowercase hex digits (16 bytes), never all zero.
    pub trace_id: String,
    /// 16 lowercase hex digits (8 bytes), never all zero.
    pub span_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_span_id: Option<String>,
    pub name: String,
    pub kind: Kind,
    /// Milliseconds since the Unix epoch.
    pub start_ms: i64,
    /// `None` while the span is open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_ms: Option<i64>,
    #[serde(default)]
    pub attributes: Vec<Attribute>,
    #[serde(default)]
    pub events: Vec<SpanEvent>,
    #[serde(default)]
    pub status: Status,
}

impl Span {
    /// The value of its attribute `key`, if set.
    pub fn attribute(&self, key: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|a| a.key == key)
            .map(|a| &a.value)
    }

    /// Sets `attribute`, replacing one of the same key.
    pub fn set(&mut self, attribute: Attribute) {
        match self.attributes.iter_mut().find(|a| a.key == attribute.key) {
            Some(existing) => existing.value = attribute.value,
            None => self.attributes.push(attribute),
        }
    }
}

/// Where trace and span ids come from: SplitMix64 from a seed the host draws (the
/// browser's `crypto.getRandomValues`), so tests are reproducible and the state, a
/// single number, saves with the run and continues after a reload without repeating
/// an id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Ids {
    state: u64,
}

impl Ids {
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A next draw that is not zero (an all-zero id is invalid in OpenTelemetry).
    fn next_nonzero(&mut self) -> u64 {
        loop {
            let n = self.next();
            if n != 0 {
                return n;
            }
        }
    }

    /// A draw to seed another source with (a run traced inside a tool call's span).
    pub fn draw(&mut self) -> u64 {
        self.next()
    }

    /// A new trace id: 32 lowercase hex digits.
    pub fn trace_id(&mut self) -> String {
        format!("{:016x}{:016x}", self.next_nonzero(), self.next())
    }

    /// A new span id: 16 lowercase hex digits.
    pub fn span_id(&mut self) -> String {
        format!("{:016x}", self.next_nonzero())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_lowercase_hex_of_the_right_length_and_never_repeat() {
        let mut ids = Ids::new(7);
        let traces: Vec<String> = (0..50).map(|_| ids.trace_id()).collect();
        let spans: Vec<String> = (0..500).map(|_| ids.span_id()).collect();
        let hex = |s: &str| {
            s.chars()
                .all(|c| c.is_ascii_digit() || ('a'..='f').contains(&c))
        };
        assert!(traces.iter().all(|t| t.len() == 32 && hex(t)));
        assert!(spans.iter().all(|s| s.len() == 16 && hex(s)));
        let distinct: std::collections::HashSet<&String> = spans.iter().collect();
        assert_eq!(distinct.len(), spans.len());
    }

    #[test]
    fn a_saved_id_source_continues_where_it_stopped() {
        let mut ids = Ids::new(42);
        ids.span_id();
        let saved = serde_json::to_value(&ids).unwrap();
        let mut resumed: Ids = crate::base::json::from_value(saved).unwrap();
        assert_eq!(resumed.span_id(), ids.span_id());
        assert_ne!(Ids::new(43).span_id(), Ids::new(42).span_id());
    }

    #[test]
    fn setting_an_attribute_twice_keeps_the_last_value_once() {
        let mut span = Span {
            trace_id: "1".repeat(32),
            span_id: "2".repeat(16),
            parent_span_id: None,
            name: "chat m".into(),
            kind: Kind::Client,
            start_ms: 0,
            end_ms: None,
            attributes: Vec::new(),
            events: Vec::new(),
            status: Status::Unset,
        };
        span.set(Attribute::int("gen_ai.usage.input_tokens", 3));
        span.set(Attribute::int("gen_ai.usage.input_tokens", 5));
        assert_eq!(span.attributes.len(), 1);
        assert_eq!(
            span.attribute("gen_ai.usage.input_tokens"),
            Some(&Value::Int(5))
        );
    }
}
