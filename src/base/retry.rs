//! When to retry a failed request, and how long to wait first.
//!
//! Exponential backoff with full jitter, capped; a server's `Retry-After` /
//! `retry-after-ms` is honoured when it is within the cap, and ends the retries when
//! it is beyond it. Which failures are
//! retryable is decided here too, so every client retries alike. Sleeping and
//! randomness belong to the caller.

/// Limits for retrying one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The backoff before the first retry, before jitter.
    pub base_delay_ms: u64,
    /// No wait is ever longer than this.
    pub max_delay_ms: u64,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay_ms: 500,
            max_delay_ms: 20_000,
        }
    }
}

/// HTTP statuses worth another try: timeouts, conflicts, rate limits, server errors.
pub fn is_retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429) || (500..=599).contains(&status)
}

impl RetryPolicy {
    /// The wait before retry number `retry` (0-based), or `None` when retries are
    /// spent. `random` is uniform in `[0, 1)`; `server_wait_ms` is what the server
    /// asked for, used when it fits under the cap.
    pub fn delay_ms(&self, retry: u32, random: f64, server_wait_ms: Option<u64>) -> Option<u64> {
        if retry >= self.max_retries {
            return None;
        }
        match server_wait_ms {
            Some(wait) if wait <= self.max_delay_ms => return Some(wait),
            // The server asked for longer than anyone waits at a chat: asking sooner
            // than it said would only be refused again, so the error stands now.
            Some(_) => return None,
            None => {}
        }
        let ceiling = self
            .base_delay_ms
            .saturating_mul(1u64.checked_shl(retry).unwrap_or(u64::MAX))
            .min(self.max_delay_ms);
        let random = if random.is_finite() {
            random.clamp(0.0, 1.0)
        } else {
            0.0
        };
        Some((ceiling as f64 * random) as u64)
    }
}

/// The wait a response asks for, from `retry-after-ms` (milliseconds) or
/// `Retry-After` (seconds, or an HTTP date compared with `now_epoch_ms`).
pub fn server_wait_ms(
    retry_after_ms: Option<&str>,
    retry_after: Option<&str>,
    now_epoch_ms: i64,
) -> Option<u64> {
    if let Some(ms) = retry_after_ms.and_then(|v| v.trim().parse::<f64>().ok()) {
        return (ms.is_finite() && ms >= 0.0).then_some(ms as u64);
    }
    let value = retry_after?.trim();
    if let Ok(seconds) = value.parse::<f64>() {
        return (seconds.is_finite() && seconds >= 0.0).then_some((seconds * 1000.0) as u64);
    }
    let at = http_date_epoch_ms(value)?;
    Some(u64::try_from(at.saturating_sub(now_epoch_ms)).unwrap_or(0))
}

/// Parses an IMF-fixdate (`Wed, 21 Oct 2015 07:28:00 GMT`).
fn http_date_epoch_ms(text: &str) -> Option<i64> {
    let mut parts = text.split_whitespace().skip(1);
    let day: u32 = parts.next()?.parse().ok()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| Some(*m) == parts.clone().next())? as u32
        + 1;
    parts.next();
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<i64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    // Within what a date can mean, so the arithmetic below cannot overflow.
    let sane = (1..=31).contains(&day)
        && (1970..=9999).contains(&year)
        && (0..24).contains(&h)
        && (0..60).contains(&m)
        && (0..=60).contains(&s);
    if parts.next()? != "GMT" || !sane {
        return None;
    }
    let days = crate::base::clock::days_from_civil(year, month, day);
    Some(((days * 24 + h) * 60 + m) * 60_000 + s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_after_dates_past_any_calendar_are_ignored_not_overflowed() {
        for value in [
            "Wed, 21 Oct 99999999999999 07:28:00 GMT",
            "Wed, 21 Oct 2015 99999999999:28:00 GMT",
            "Wed, 21 Oct -5 07:28:00 GMT",
        ] {
            assert_eq!(server_wait_ms(None, Some(value), 0), None, "{value}");
        }
        assert_eq!(
            server_wait_ms(None, Some("Wed, 21 Oct 2015 07:28:00 GMT"), i64::MIN),
            Some(i64::MAX as u64)
        );
    }

    #[test]
    fn retryable_statuses_are_timeouts_conflicts_rate_limits_and_server_errors() {
        for status in [408, 409, 429, 500, 502, 503, 504] {
            assert!(is_retryable_status(status), "{status}");
        }
        for status in [200, 400, 401, 403, 404, 422] {
            assert!(!is_retryable_status(status), "{status}");
        }
    }

    #[test]
    fn backoff_doubles_under_full_jitter_and_stops_at_the_cap() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay_ms(0, 0.999_999, None), Some(499));
        assert_eq!(policy.delay_ms(1, 0.5, None), Some(500));
        assert_eq!(policy.delay_ms(2, 0.0, None), Some(0));
        let huge = RetryPolicy {
            max_retries: 100,
            ..policy
        };
        assert_eq!(
            huge.delay_ms(80, 0.5, None),
            Some(10_000),
            "capped, no overflow"
        );
        assert_eq!(policy.delay_ms(3, 0.5, None), None, "retries spent");
    }

    #[test]
    fn the_server_wait_is_honoured_within_the_cap_and_ends_retries_beyond_it() {
        let policy = RetryPolicy::default();
        assert_eq!(policy.delay_ms(0, 0.1, Some(3_000)), Some(3_000));
        assert_eq!(
            policy.delay_ms(0, 0.5, Some(600_000)),
            None,
            "over the cap: no retry sooner than the server said"
        );
    }

    #[test]
    fn wait_headers_are_read_in_all_their_forms() {
        let now = 1_445_412_470_000; // 2015-10-21T07:27:50Z
        assert_eq!(server_wait_ms(Some("1500"), Some("9"), now), Some(1_500));
        assert_eq!(server_wait_ms(None, Some("2"), now), Some(2_000));
        assert_eq!(
            server_wait_ms(None, Some("Wed, 21 Oct 2015 07:28:00 GMT"), now),
            Some(10_000)
        );
        assert_eq!(
            server_wait_ms(None, Some("Wed, 21 Oct 2015 07:27:00 GMT"), now),
            Some(0)
        );
        assert_eq!(server_wait_ms(None, Some("soon"), now), None);
        assert_eq!(server_wait_ms(Some("-5"), None, now), None);
        assert_eq!(server_wait_ms(None, None, now), None);
    }
}
