//! `current_time`: the user's local date and time, read from the [`Clock`] seam.

use std::rc::Rc;

use serde::Serialize;

use crate::base::clock::Clock;
use crate::tool::{Author, CallContext, NoArgs, Tool, ToolKind};

/// Tells the model the user's current local date and time.
pub struct CurrentTime {
    clock: Rc<dyn Clock>,
}

impl CurrentTime {
    pub fn new(clock: Rc<dyn Clock>) -> Self {
        Self { clock }
    }
}

/// The reading, in forms a model or an answer template can use directly.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TimeReading {
    /// RFC 3339 with the local offset.
    pub iso: String,
    /// `YYYY-MM-DD`.
    pub date: String,
    /// `HH:MM`, 24-hour.
    pub time: String,
    pub weekday: &'static str,
    /// `+HH:MM`.
    pub utc_offset: String,
}

impl Tool for CurrentTime {
    const NAME: &'static str = "current_time";
    const KIND: ToolKind = ToolKind::Data;
    /// The clock's reading: no one else's words.
    const AUTHOR: Option<Author> = Some(Author::Own);
    type Args = NoArgs;
    type Output = TimeReading;
    type Error = std::convert::Infallible;

    fn description(&self) -> String {
        "The user's current local date, time, weekday and UTC offset.".into()
    }

    fn parameters() -> serde_json::Value {
        NoArgs::parameters()
    }

    async fn call(&self, _: NoArgs, _: CallContext) -> Result<TimeReading, Self::Error> {
        let now = self.clock.now();
        let local = now.local();
        Ok(TimeReading {
            iso: now.rfc3339(),
            date: format!("{:04}-{:02}-{:02}", local.year, local.month, local.day),
            time: format!("{:02}:{:02}", local.hour, local.minute),
            weekday: local.weekday_name(),
            utc_offset: now.offset_text(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::clock::{FixedClock, Instant};

    #[test]
    fn reads_the_clock_in_local_time() {
        let clock = FixedClock(Instant {
            epoch_ms: 1_795_320_964_000,
            utc_offset_minutes: 60,
        });
        let reading = futures::executor::block_on(
            CurrentTime::new(Rc::new(clock)).call(NoArgs {}, CallContext::default()),
        );
        assert_eq!(
            reading,
            Ok(TimeReading {
                iso: "2026-11-22T05:16:04+01:00".into(),
                date: "2026-11-22".into(),
                time: "05:16".into(),
                weekday: "Sunday",
                utc_offset: "+01:00".into(),
            })
        );
    }
}
