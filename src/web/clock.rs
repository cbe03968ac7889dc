//! [`Clock`] from the browser's `Date`, `setTimeout`, and the page's frames.

use futures::future::LocalBoxFuture;

use crate::base::clock::{Clock, Instant};

/// The page's clock and time zone.
#[derive(Debug, Clone, Copy, Default)]
pub struct BrowserClock;

impl Clock for BrowserClock {
    fn now(&self) -> Instant {
        let date = js_sys::Date::new_0();
        Instant {
            epoch_ms: date.get_time() as i64,
            // getTimezoneOffset is UTC minus local; ours is local minus UTC.
            utc_offset_minutes: -(date.get_timezone_offset() as i32),
        }
    }

    fn sleep(&self, ms: u64) -> LocalBoxFuture<'static, ()> {
        // setTimeout reads its delay as a signed 32-bit number: longer ones fire at once.
        let ms = u32::try_from(ms.min(i32::MAX as u64)).unwrap_or(i32::MAX as u32);
        Box::pin(gloo_timers::future::TimeoutFuture::new(ms))
    }

    fn yield_now(&self) -> LocalBoxFuture<'static, ()> {
        if !super::frame::slice_spent() {
            return Box::pin(std::future::ready(()));
        }
        Box::pin(super::frame::yield_to_page())
    }
}
