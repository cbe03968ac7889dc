//! Tracing a run for OpenTelemetry, from inside the tab: the run's events become spans
//! named as the GenAI semantic conventions name them (`tracer`), made of plain,
//! serializable data (`span`), and written as the OTLP/HTTP JSON a collector reads
//! (`otlp`). Pure: no clock, no network. The times come with the events, the ids from a
//! seed the host draws, and sending (batching, retries, keeping spans while the
//! collector is away) is the web exporter's, behind the `telemetry` feature.

mod about;
mod export;
mod mask;
mod otlp;
mod span;
mod tools;
mod tracer;
mod within;

pub use export::{BATCH, Collector, MAX_KEPT, Outbox, Sent};
pub use mask::MASKED;
pub use otlp::{Resource, SCOPE, export_request, otlp_span};
pub use span::{Attribute, Ids, Kind, Span, SpanEvent, Status, Value};
pub use tracer::{Agent, Capture, MAX_CAPTURED_CHARS, ModelUsage, Parent, Tracer};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod usage_tests;
