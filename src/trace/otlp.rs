//! Spans as an OTLP/HTTP JSON export request (`ExportTraceServiceRequest`), the body a
//! collector's `/v1/traces` reads: `resourceSpans` → `scopeSpans` → `spans`, keys in
//! lowerCamelCase, trace and span ids in lowercase hex, times as Unix nanoseconds in
//! strings, 64-bit integers as strings, enums as their numbers (what OTLP's JSON
//! encoding asks). Held to the OpenTelemetry project's own definitions by the test
//! command, which decodes what the tests write with `scripts/otlp_receiver.py check`.
//! Sending it is the exporter's.

use serde_json::{Value as Json, json};

use super::span::{Attribute, Kind, Span, SpanEvent, Status, Value};

/// The scope the spans are reported under (`InstrumentationScope`).
pub const SCOPE: &str = "familiar";

/// Who reports: the resource's attributes.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// `service.name`: what the host calls its page or game.
    pub service_name: String,
    /// Anything else the host adds (`deployment.environment.name`, …).
    pub attributes: Vec<Attribute>,
}

impl Default for Resource {
    fn default() -> Self {
        Self {
            service_name: "familiar".into(),
            attributes: Vec::new(),
        }
    }
}

/// The export request for `spans`, reported by `resource`.
pub fn export_request(spans: &[Span], resource: &Resource) -> Json {
    let mut attributes = vec![
        Attribute::text("service.name", &resource.service_name),
        Attribute::text("telemetry.sdk.name", "familiar"),
        Attribute::text("telemetry.sdk.language", "rust"),
        Attribute::text("telemetry.sdk.version", env!("CARGO_PKG_VERSION")),
    ];
    attributes.extend(resource.attributes.iter().cloned());
    json!({
        "resourceSpans": [{
            "resource": {"attributes": key_values(&attributes)},
            "scopeSpans": [{
                "scope": {"name": SCOPE, "version": env!("CARGO_PKG_VERSION")},
                "spans": spans.iter().map(otlp_span).collect::<Vec<_>>(),
            }],
        }],
    })
}

/// Milliseconds since the epoch as OTLP's nanoseconds (a `fixed64`, written as a
/// string); a time before the epoch is written as the epoch.
fn nanos(ms: i64) -> String {
    let ms = u64::try_from(ms).unwrap_or(0);
    ms.saturating_mul(1_000_000).to_string()
}

/// One span as OTLP JSON writes it (a host's `onSpan` gets this).
pub fn otlp_span(span: &Span) -> Json {
    let mut out = json!({
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": match span.kind {
            Kind::Internal => 1,
            Kind::Client => 3,
        },
        "startTimeUnixNano": nanos(span.start_ms),
        "endTimeUnixNano": nanos(span.end_ms.unwrap_or(span.start_ms)),
        "attributes": key_values(&span.attributes),
        "events": span.events.iter().map(event).collect::<Vec<_>>(),
        "status": match &span.status {
            Status::Unset => json!({}),
            Status::Error(message) => json!({"code": 2, "message": message}),
        },
    });
    if let (Some(parent), Some(fields)) = (&span.parent_span_id, out.as_object_mut()) {
        fields.insert("parentSpanId".into(), json!(parent));
    }
    out
}

fn event(event: &SpanEvent) -> Json {
    json!({
        "timeUnixNano": nanos(event.at_ms),
        "name": event.name,
        "attributes": key_values(&event.attributes),
    })
}

fn key_values(attributes: &[Attribute]) -> Vec<Json> {
    attributes
        .iter()
        .map(|a| json!({"key": a.key, "value": any_value(&a.value)}))
        .collect()
}

/// An `AnyValue`: the one field its type names.
fn any_value(value: &Value) -> Json {
    match value {
        Value::Text(text) => json!({"stringValue": text}),
        // int64 is written as a string in OTLP JSON.
        Value::Int(n) => json!({"intValue": n.to_string()}),
        Value::Bool(b) => json!({"boolValue": b}),
        // JSON has no NaN or infinity; OTLP spells them as protobuf's JSON does.
        Value::Double(x) if x.is_nan() => json!({"doubleValue": "NaN"}),
        Value::Double(x) if x.is_infinite() => {
            json!({"doubleValue": if *x > 0.0 { "Infinity" } else { "-Infinity" }})
        }
        Value::Double(x) => json!({"doubleValue": x}),
        Value::Texts(texts) => json!({"arrayValue": {
            "values": texts.iter().map(|t| json!({"stringValue": t})).collect::<Vec<_>>(),
        }}),
    }
}
