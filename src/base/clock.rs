//! The `Clock` seam: what time it is, where on Earth the user's clock is set, and
//! waiting.
//!
//! The browser implementation lives in `web`; tests use [`FixedClock`] or
//! [`ManualClock`]. Calendar arithmetic is here and pure, so a timestamp renders the
//! same everywhere.

use crate::base::json::Read;
use std::cell::{Cell, RefCell};
use std::rc::Rc;

use futures::future::LocalBoxFuture;
use serde::Serialize;

/// A moment, with the offset of the user's local time from UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Read)]
pub struct Instant {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    pub epoch_ms: i64,
    /// Local time minus UTC, in minutes (e.g. +60 for Central European winter time).
    pub utc_offset_minutes: i32,
}

/// A source of the current time, and timers.
pub trait Clock {
    fn now(&self) -> Instant;

    /// Completes after `ms` milliseconds. Dropping it cancels the timer.
    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()>;

    /// Lets the host's event loop run (draw a frame, handle input) before the caller
    /// goes on, when the caller has kept it busy for a while. The driver awaits it
    /// between steps, so runs that never wait on the network still leave room for the
    /// page. Where there is no such loop (native code, tests) it completes at once.
    fn yield_now(&self) -> LocalBoxFuture<'static, ()> {
        Box::pin(Now)
    }
}

/// A future that is ready at once. It holds nothing, so boxing it allocates nothing:
/// a step that yields where there is no event loop costs no allocation.
struct Now;

impl std::future::Future for Now {
    type Output = ();

    fn poll(self: std::pin::Pin<&mut Self>, _: &mut std::task::Context<'_>) -> std::task::Poll<()> {
        std::task::Poll::Ready(())
    }
}

/// `work`'s output, or `None` if `ms` milliseconds pass first (dropping `work`, which
/// cancels it). Work that is ready at once wins over a timer that is.
pub async fn within<T>(
    clock: &dyn Clock,
    ms: u64,
    work: impl std::future::Future<Output = T>,
) -> Option<T> {
    let work = std::pin::pin!(work);
    match futures::future::select(work, clock.sleep(ms)).await {
        futures::future::Either::Left((value, _)) => Some(value),
        futures::future::Either::Right(((), _)) => None,
    }
}

/// A clock that always answers the same instant; its sleeps end at once.
#[derive(Debug, Clone, Copy)]
pub struct FixedClock(pub Instant);

impl Clock for FixedClock {
    fn now(&self) -> Instant {
        self.0
    }

    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

/// A clock whose time stands still and whose timers never fire: in a test, what a
/// host, a page or a stream answers is never raced by a timeout.
#[derive(Debug, Clone, Copy)]
pub struct FrozenClock(pub Instant);

impl FrozenClock {
    /// Stands still at `epoch_ms` (UTC).
    pub const fn at(epoch_ms: i64) -> Self {
        Self(Instant {
            epoch_ms,
            utc_offset_minutes: 0,
        })
    }
}

impl Clock for FrozenClock {
    fn now(&self) -> Instant {
        self.0
    }

    fn sleep(&self, _ms: u64) -> LocalBoxFuture<'static, ()> {
        Box::pin(futures::future::pending())
    }
}

/// A virtual clock for tests: a sleep ends as soon as it is awaited, moving time
/// forward, and is recorded then (a timer raced and never polled leaves no trace).
#[derive(Debug, Default, Clone)]
pub struct ManualClock {
    state: Rc<ManualState>,
}

#[derive(Debug, Default)]
struct ManualState {
    now_ms: Cell<i64>,
    slept: RefCell<Vec<u64>>,
}

impl ManualClock {
    pub fn starting_at(epoch_ms: i64) -> Self {
        let clock = Self::default();
        clock.state.now_ms.set(epoch_ms);
        clock
    }

    /// Every sleep that ran, in milliseconds, in order.
    pub fn sleeps(&self) -> Vec<u64> {
        self.state.slept.borrow().clone()
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Instant {
        Instant {
            epoch_ms: self.state.now_ms.get(),
            utc_offset_minutes: 0,
        }
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        let state = Rc::clone(&self.state);
        Box::pin(async move {
            state.slept.borrow_mut().push(ms);
            let step = i64::try_from(ms).unwrap_or(i64::MAX);
            state.now_ms.set(state.now_ms.get().saturating_add(step));
        })
    }
}

/// A local calendar date and wall-clock time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    /// 0 = Monday … 6 = Sunday.
    pub weekday: u32,
}

const WEEKDAYS: [&str; 7] = [
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

impl Instant {
    /// The wall-clock reading at this instant in the user's time zone.
    pub fn local(&self) -> LocalTime {
        let local_ms = self.epoch_ms + i64::from(self.utc_offset_minutes) * 60_000;
        let seconds = local_ms.div_euclid(1000);
        let days = seconds.div_euclid(86_400);
        let of_day = seconds.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        LocalTime {
            year,
            month,
            day,
            hour: (of_day / 3600) as u32,
            minute: (of_day % 3600 / 60) as u32,
            second: (of_day % 60) as u32,
            // 1970-01-01 was a Thursday (index 3).
            weekday: (days + 3).rem_euclid(7) as u32,
        }
    }

    /// RFC 3339 in local time with its offset, e.g. `2026-11-22T09:05:00+01:00`.
    pub fn rfc3339(&self) -> String {
        let t = self.local();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{}",
            t.year,
            t.month,
            t.day,
            t.hour,
            t.minute,
            t.second,
            self.offset_text()
        )
    }

    /// The UTC offset as `+HH:MM` or `-HH:MM`.
    pub fn offset_text(&self) -> String {
        let sign = if self.utc_offset_minutes < 0 {
            '-'
        } else {
            '+'
        };
        let minutes = self.utc_offset_minutes.unsigned_abs();
        format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60)
    }
}

impl LocalTime {
    pub fn weekday_name(&self) -> &'static str {
        WEEKDAYS.get(self.weekday as usize).copied().unwrap_or("")
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day); Howard
/// Hinnant's `civil_from_days`.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A proleptic Gregorian date to days since 1970-01-01; Hinnant's `days_from_civil`.
pub(crate) fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = i64::from((month + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(epoch_ms: i64, utc_offset_minutes: i32) -> Instant {
        Instant {
            epoch_ms,
            utc_offset_minutes,
        }
    }

    #[test]
    fn days_and_dates_convert_both_ways() {
        for days in [-800_000, -1, 0, 59, 365, 19_782, 20_414, 2_000_000] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
    }

    #[test]
    fn the_epoch_is_a_thursday_at_midnight() {
        let t = at(0, 0).local();
        assert_eq!((t.year, t.month, t.day, t.hour), (1970, 1, 1, 0));
        assert_eq!(t.weekday_name(), "Thursday");
    }

    #[test]
    fn offsets_move_the_wall_clock_across_days() {
        // 2026-11-22T04:16:04Z
        let utc = at(1_795_320_964_000, 0);
        assert_eq!(utc.rfc3339(), "2026-11-22T04:16:04+00:00");
        assert_eq!(utc.local().weekday_name(), "Sunday");
        assert_eq!(
            at(utc.epoch_ms, -330).rfc3339(),
            "2026-11-21T22:46:04-05:30"
        );
    }

    #[test]
    fn leap_days_and_times_before_the_epoch_are_correct() {
        // 2024-02-29T12:00:00Z and 1969-12-31T23:59:59.500Z
        assert_eq!(
            at(1_709_208_000_000, 0).rfc3339(),
            "2024-02-29T12:00:00+00:00"
        );
        assert_eq!(at(-500, 0).rfc3339(), "1969-12-31T23:59:59+00:00");
    }
}
