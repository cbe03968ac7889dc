//! The exporter's outbox, pure: spans wait here until a collector has them. Sent in
//! batches of at most [`BATCH`], oldest first; a batch refused for a while (offline,
//! a 5xx, a 429) waits with exponential backoff and full jitter (`base::retry`'s
//! policy, its `Retry-After` honoured) and is tried again, never given up; one the
//! collector refuses for good (a 4xx: it will never read it) is dropped. At most
//! [`MAX_KEPT`] spans wait; past that the oldest go, counted. The outbox serializes, so
//! the web exporter keeps it across a reload; sending is the web exporter's, and the
//! times and random draws are the caller's.

use crate::base::json::Read;
use crate::base::retry::{RetryPolicy, is_retryable_status};
use serde::Serialize;

use super::span::Span;

/// The most spans one export request carries.
pub const BATCH: usize = 128;

/// The most spans kept waiting (a few hundred KB of storage at most).
pub const MAX_KEPT: usize = 1_000;

/// How long the waits get: from a second, doubling, to a minute at most, without
/// end (spans are kept while offline, and sent once the collector is back).
const BACKOFF: RetryPolicy = RetryPolicy {
    max_retries: u32::MAX,
    base_delay_ms: 1_000,
    max_delay_ms: 60_000,
};

/// How an export attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sent {
    /// The collector took the batch.
    Accepted,
    /// It answered with this status (or `None`: no answer, the network failed);
    /// `wait_ms`, what its `Retry-After` asked for.
    Failed {
        status: Option<u16>,
        wait_ms: Option<u64>,
    },
}

/// Spans waiting for the collector.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub struct Outbox {
    #[serde(default)]
    spans: Vec<Span>,
    /// Failed attempts in a row.
    #[serde(default)]
    failures: u32,
    /// No attempt before this time (ms since the epoch).
    #[serde(default)]
    not_before_ms: i64,
    /// Spans dropped: the oldest past [`MAX_KEPT`], and batches refused for good.
    #[serde(default)]
    dropped: u64,
    /// How many of the first spans are the batch being sent now: never dropped to make
    /// room, so the answer acknowledges the very spans it carried. Not kept: after a
    /// reload nothing is in flight.
    #[serde(skip)]
    in_flight: usize,
}

impl Outbox {
    /// Keeps `spans` to send; past [`MAX_KEPT`] the oldest go, but never one of the
    /// batch in flight (its answer is about those spans).
    pub fn push(&mut self, spans: Vec<Span>) {
        self.spans.extend(spans);
        let over = self.spans.len().saturating_sub(MAX_KEPT);
        if over > 0 {
            let from = self.in_flight.min(self.spans.len());
            let to = from.saturating_add(over).min(self.spans.len());
            self.spans.drain(from..to);
            self.dropped = self.dropped.saturating_add((to - from) as u64);
        }
    }

    /// How many spans wait.
    pub fn len(&self) -> usize {
        self.spans.len()
    }

    pub fn is_empty(&self) -> bool {
        self.spans.is_empty()
    }

    /// How many were dropped since it was made.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// The next batch to send at `now_ms`, oldest first, if any waits and the
    /// backoff allows; it is in flight until [`Outbox::sent`].
    pub fn batch(&mut self, now_ms: i64) -> Option<&[Span]> {
        if self.spans.is_empty() || now_ms < self.not_before_ms {
            return None;
        }
        self.in_flight = self.spans.len().min(BATCH);
        self.spans.get(..self.in_flight)
    }

    /// When the next attempt may be made (ms since the epoch).
    pub fn not_before_ms(&self) -> i64 {
        self.not_before_ms
    }

    /// Records how sending the batch of `count` spans (what [`Outbox::batch`] gave)
    /// ended at `now_ms`; `random` in [0, 1) draws the jitter.
    pub fn sent(&mut self, count: usize, outcome: Sent, now_ms: i64, random: f64) {
        let count = count.min(self.spans.len());
        self.in_flight = 0;
        match outcome {
            Sent::Accepted => {
                self.spans.drain(..count);
                self.failures = 0;
                self.not_before_ms = 0;
            }
            Sent::Failed {
                status: Some(status),
                ..
            } if !is_retryable_status(status) => {
                self.spans.drain(..count);
                self.dropped = self.dropped.saturating_add(count as u64);
                self.failures = 0;
                self.not_before_ms = 0;
            }
            Sent::Failed { wait_ms, .. } => {
                // A wait past the cap is waited at the cap: spans are never given up.
                let wait = BACKOFF
                    .delay_ms(self.failures, random, wait_ms.filter(|w| *w <= 60_000))
                    .unwrap_or(BACKOFF.max_delay_ms);
                self.failures = self.failures.saturating_add(1);
                self.not_before_ms = now_ms.saturating_add(i64::try_from(wait).unwrap_or(0));
            }
        }
    }

    /// Try again at once (the page came back online).
    pub fn wake(&mut self) {
        self.not_before_ms = 0;
    }
}

/// Where spans go: a collector's OTLP/HTTP traces URL, and the headers it wants (an
/// API key, a tenant).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Read)]
pub struct Collector {
    pub url: String,
    #[serde(default)]
    pub headers: Vec<(String, String)>,
}

impl Collector {
    /// A collector at `endpoint` (its traces URL, or its base: `/v1/traces` is added
    /// as OTLP's exporters do) with `headers`; refused, saying why, when the address is
    /// not `https://` (plain `http://` only to this machine) or a header is unusable.
    pub fn new(endpoint: &str, headers: Vec<(String, String)>) -> Result<Self, String> {
        let endpoint = endpoint.trim();
        let lower = endpoint.to_ascii_lowercase();
        if !(lower.starts_with("https://") || lower.starts_with("http://")) {
            return Err(format!("`{endpoint}` is not an http(s):// address"));
        }
        if !crate::base::http::secure_or_loopback(endpoint) {
            return Err(format!(
                "`{endpoint}` would send spans in the clear: use https:// (http:// only to this machine)"
            ));
        }
        let url = match endpoint.trim_end_matches('/') {
            base if base.ends_with("/v1/traces") => base.to_owned(),
            base => format!("{base}/v1/traces"),
        };
        for (name, _) in &headers {
            let token = !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
            if !token {
                return Err(format!("`{name}` is not a header name"));
            }
        }
        Ok(Self { url, headers })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trace::{Kind, Status};

    fn spans(n: usize, from: usize) -> Vec<Span> {
        (from..from + n)
            .map(|i| Span {
                trace_id: "a".repeat(32),
                span_id: format!("{:016x}", i + 1),
                parent_span_id: None,
                name: format!("span {i}"),
                kind: Kind::Internal,
                start_ms: 0,
                end_ms: Some(1),
                attributes: Vec::new(),
                events: Vec::new(),
                status: Status::Unset,
            })
            .collect()
    }

    fn names(batch: Option<&[Span]>) -> Vec<String> {
        batch
            .unwrap_or_default()
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }

    #[test]
    fn a_collector_gets_its_traces_path_and_plain_http_only_on_this_machine() {
        let local = Collector::new("http://127.0.0.1:4318", Vec::new()).unwrap();
        assert_eq!(local.url, "http://127.0.0.1:4318/v1/traces");
        let full = Collector::new("https://otel.example/v1/traces/", Vec::new()).unwrap();
        assert_eq!(full.url, "https://otel.example/v1/traces");
        assert!(Collector::new("http://otel.example", Vec::new()).is_err());
        assert!(Collector::new("otel.example", Vec::new()).is_err());
        let header = vec![("bad name".to_owned(), "x".to_owned())];
        assert!(Collector::new("https://otel.example", header).is_err());
    }

    #[test]
    fn spans_go_in_batches_oldest_first_and_leave_once_accepted() {
        let mut outbox = Outbox::default();
        outbox.push(spans(BATCH + 5, 0));
        let first = names(outbox.batch(0));
        assert_eq!(first.len(), BATCH);
        assert_eq!(first.first().map(String::as_str), Some("span 0"));
        outbox.sent(BATCH, Sent::Accepted, 0, 0.5);
        assert_eq!(names(outbox.batch(0)).len(), 5);
        assert_eq!(
            names(outbox.batch(0)).first().map(String::as_str),
            Some(&*format!("span {BATCH}"))
        );
        outbox.sent(5, Sent::Accepted, 0, 0.5);
        assert!(outbox.batch(0).is_none() && outbox.is_empty());
    }

    #[test]
    fn a_collector_down_or_offline_keeps_the_batch_and_waits_longer_each_time() {
        let mut outbox = Outbox::default();
        outbox.push(spans(3, 0));
        let mut now = 1_000_000;
        let mut waits = Vec::new();
        for status in [
            Some(503),
            None,
            Some(429),
            Some(502),
            Some(500),
            None,
            None,
            None,
        ] {
            let count = outbox.batch(now).map_or(0, <[Span]>::len);
            assert_eq!(count, 3, "the same batch is tried again");
            outbox.sent(
                count,
                Sent::Failed {
                    status,
                    wait_ms: None,
                },
                now,
                0.999,
            );
            let wait = outbox.not_before_ms() - now;
            assert!(
                outbox.batch(now).is_none(),
                "nothing is sent before the wait"
            );
            waits.push(wait);
            now += wait;
        }
        assert_eq!(outbox.len(), 3, "nothing was dropped");
        assert!(waits.windows(2).all(|w| w[0] <= w[1]), "{waits:?}");
        assert_eq!(waits.first(), Some(&999));
        assert_eq!(waits.last(), Some(&59_940), "capped at a minute");
        outbox.sent(3, Sent::Accepted, now, 0.5);
        assert!(outbox.is_empty());
        outbox.push(spans(1, 9));
        assert_eq!(names(outbox.batch(now)).len(), 1, "no wait after a success");
    }

    #[test]
    fn a_servers_retry_after_is_honoured_and_waking_tries_at_once() {
        let mut outbox = Outbox::default();
        outbox.push(spans(2, 0));
        let failed = Sent::Failed {
            status: Some(503),
            wait_ms: Some(7_000),
        };
        outbox.sent(2, failed, 100, 0.0);
        assert_eq!(outbox.not_before_ms(), 7_100);
        outbox.wake();
        assert_eq!(names(outbox.batch(100)).len(), 2);
    }

    #[test]
    fn a_batch_refused_for_good_is_dropped_and_counted() {
        let mut outbox = Outbox::default();
        outbox.push(spans(4, 0));
        let refused = Sent::Failed {
            status: Some(400),
            wait_ms: None,
        };
        outbox.sent(4, refused, 0, 0.5);
        assert!(outbox.is_empty());
        assert_eq!(outbox.dropped(), 4);
    }

    #[test]
    fn past_the_bound_the_oldest_spans_go_and_the_outbox_survives_a_reload() {
        let mut outbox = Outbox::default();
        outbox.push(spans(MAX_KEPT, 0));
        outbox.push(spans(10, MAX_KEPT));
        assert_eq!(outbox.len(), MAX_KEPT);
        assert_eq!(outbox.dropped(), 10);
        assert_eq!(
            names(outbox.batch(0)).first().map(String::as_str),
            Some("span 10")
        );
        outbox.sent(
            1,
            Sent::Failed {
                status: None,
                wait_ms: None,
            },
            0,
            0.5,
        );
        let saved = serde_json::to_string(&outbox).unwrap();
        let reloaded: Outbox = crate::base::json::from_text(&saved).unwrap();
        assert_eq!(reloaded, outbox);
    }

    #[test]
    fn a_batch_in_flight_is_never_pushed_out_so_its_answer_is_about_the_spans_it_carried() {
        let mut outbox = Outbox::default();
        outbox.push(spans(MAX_KEPT, 0));
        let in_flight = names(outbox.batch(0));
        assert_eq!(in_flight.len(), BATCH);
        // A busy page: spans end while the collector has not answered yet.
        outbox.push(spans(10, MAX_KEPT));
        assert_eq!(outbox.len(), MAX_KEPT);
        assert_eq!(outbox.dropped(), 10, "the oldest past the batch went");
        let busy = Sent::Failed {
            status: Some(503),
            wait_ms: None,
        };
        outbox.sent(BATCH, busy, 0, 0.0);
        assert_eq!(
            names(outbox.batch(i64::MAX)),
            in_flight,
            "the batch tried again is the one the collector could not take"
        );
        outbox.sent(BATCH, Sent::Accepted, 0, 0.5);
        assert_eq!(
            names(outbox.batch(0)).first().map(String::as_str),
            Some(&*format!("span {}", BATCH + 10)),
            "then the oldest kept"
        );
    }
}
