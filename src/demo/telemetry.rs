//! The demo's tracing: every run traced into its conversation's trace (the inspector
//! downloads it), and exported to the collector Settings name, when they name one
//! (`web::otlp`, its outbox kept in `localStorage`). Content stays out.

use std::rc::Rc;

use crate::app::Telemetry;
use crate::app::settings::{ModelSource, Settings};
use crate::trace::{Capture, Resource, Span};
use crate::web::otlp::Exporter;
use crate::web::{BrowserClock, BrowserStorage, Fetch};

/// Where the demo keeps the spans waiting for its collector.
const OUTBOX: &str = "familiar.otlp";

/// The demo session's tracing under `settings`.
pub fn telemetry(settings: &Settings) -> Telemetry {
    let exporter = settings.collector().ok().flatten().map(|collector| {
        let resource = Resource {
            service_name: "familiar-demo".into(),
            attributes: Vec::new(),
        };
        Exporter::new(
            collector,
            resource,
            OUTBOX.into(),
            Rc::new(BrowserStorage),
            Rc::new(Fetch),
            Rc::new(BrowserClock),
            Rc::new(js_sys::Math::random),
        )
    });
    let (provider, model) = match &settings.model {
        ModelSource::Rules => ("familiar.rules", "rules".to_owned()),
        ModelSource::Proxy(proxy) => ("openai", proxy.model.clone()),
        ModelSource::Local(_) => ("familiar.local", "local".to_owned()),
    };
    Telemetry {
        capture: Capture::default(),
        provider: provider.into(),
        model,
        sink: Rc::new(move |spans: &[Span]| {
            if let Some(exporter) = &exporter {
                exporter.push(spans);
            }
        }),
    }
}
