//! Settings → Telemetry: the OpenTelemetry collector the runs' spans go to, and its
//! headers, which do not follow a changed address unless typed again.

use leptos::prelude::*;

use super::Problems;
use crate::app::settings::{FieldProblem, Settings};

/// The Telemetry fieldset's fields, as typed.
#[derive(Clone, Copy)]
pub(super) struct Fields {
    collector: RwSignal<String>,
    collector_headers: RwSignal<String>,
    /// Whether the person typed the collector's headers since the last save: only then
    /// may saved headers go to a changed collector address.
    headers_typed: RwSignal<bool>,
}

impl Fields {
    pub(super) fn new(initial: &Settings) -> Self {
        Self {
            collector: RwSignal::new(initial.collector.clone()),
            collector_headers: RwSignal::new(initial.collector_headers.clone()),
            headers_typed: RwSignal::new(false),
        }
    }

    /// The collector and its headers, into `settings`.
    pub(super) fn read(&self, settings: &mut Settings) {
        settings.collector = self.collector.get_untracked();
        settings.collector_headers = self.collector_headers.get_untracked();
    }

    /// The saved headers `settings` would send to another collector than `before`'s,
    /// unless the person typed them again.
    pub(super) fn moved_headers(
        &self,
        settings: &Settings,
        before: &Settings,
    ) -> Option<FieldProblem> {
        if self.headers_typed.get_untracked() {
            return None;
        }
        settings.moved_collector_headers(before)
    }

    /// Saved: the headers typed are the saved ones.
    pub(super) fn saved(&self) {
        self.headers_typed.set(false);
    }

    /// The Telemetry fieldset.
    pub(super) fn view(self, problems: Problems) -> impl IntoView {
        let Self {
            collector,
            collector_headers,
            headers_typed,
        } = self;
        view! {
            <fieldset>
                <legend>"Telemetry"</legend>
                <label>"Collector"<input class="collector" type="url" bind:value=collector placeholder="https://otel.example.com:4318" aria-invalid=problems.invalid("collector") aria-describedby=problems.described("collector", "hint-collector") /></label>
                <p class="field-hint" id="hint-collector">"An OpenTelemetry collector's OTLP/HTTP address: each run's spans go there (names, ids and times; no prompts). Empty: none."</p>
                <label>"Headers"<textarea class="collector-headers" rows="2" bind:value=collector_headers on:input=move |_| headers_typed.set(true) placeholder="x-api-key: …" aria-invalid=problems.invalid("collector") /></label>
                {problems.error("collector")}
            </fieldset>
        }
    }
}
