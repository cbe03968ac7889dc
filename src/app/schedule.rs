//! Schedules: triggers the session fires on its own, every so often (seed 000's market
//! check, a game master's hourly round). A schedule belongs to the session, not to a
//! view: it is kept in the session's storage (it survives a reload), fires through
//! [`Session::trigger`] like any event, never overlaps a run of its own, and says what
//! it does with the periods it missed while the page was hidden or closed (skip them,
//! or catch up once). [`Session::run_schedules`] is the one future that fires them;
//! a front end spawns it once.

use std::collections::BTreeSet;

use futures::StreamExt;
use futures::channel::oneshot;
use futures::future::{Either, LocalBoxFuture, select};
use futures::stream::FuturesUnordered;
use serde::{Deserialize, Serialize};

use super::keys::{Loaded, keep_aside};
use super::update::{Notice, Update};
use super::{AppError, Session, checked_input};
use crate::base::json::Read;
use crate::run::Observation;

/// The shortest period a schedule may have.
pub const MIN_EVERY_MS: u64 = 1_000;
/// The most schedules a session keeps.
pub const MAX_SCHEDULES: usize = 64;

/// What a schedule does with the periods it missed (the page was hidden and its
/// timers held back, or closed).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Missed {
    /// Lets them go: the next firing is the next period on time.
    #[default]
    Skip,
    /// Fires once for all of them, then goes on on time.
    CatchUp,
}

/// A trigger fired every `every_ms`.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Schedule {
    pub id: String,
    pub every_ms: u64,
    /// Fired as it is, stamped with the time it fires.
    pub trigger: Observation,
    #[serde(default)]
    pub missed: Missed,
    /// When it is due next, in milliseconds since the epoch.
    pub next_ms: i64,
}

/// Whether a schedule due at `next_ms` fires when looked at `now`, and when it is due
/// next. On time (less than a period late) it fires; later than that, it missed
/// periods, and fires once or not at all as `missed` says. The next time is always the
/// first period boundary after `now`, so it never fires twice for one lateness.
pub fn due(next_ms: i64, every_ms: u64, missed: Missed, now: i64) -> (bool, i64) {
    if now < next_ms {
        return (false, next_ms);
    }
    let every = i64::try_from(every_ms.max(1)).unwrap_or(i64::MAX);
    let periods = (now - next_ms) / every;
    let fire = periods == 0 || missed == Missed::CatchUp;
    let next = next_ms.saturating_add(every.saturating_mul(periods + 1));
    (fire, next)
}

/// The session's schedules, and how to wake the future that fires them.
#[derive(Default)]
pub(super) struct Schedules {
    list: Vec<Schedule>,
    wake: Option<oneshot::Sender<()>>,
}

impl Schedules {
    /// Wakes the future that fires them, to look at them again.
    pub(super) fn wake(&mut self) {
        if let Some(wake) = self.wake.take() {
            let _ = wake.send(());
        }
    }
}

impl Session {
    /// Fires `trigger` every `every_ms` (at least [`MIN_EVERY_MS`]), first one period
    /// from now; `id` names it (a schedule of the same id is replaced; none: one is
    /// made). Kept in the session's storage; fired by [`Session::run_schedules`].
    pub fn schedule(
        &self,
        id: Option<&str>,
        every_ms: u64,
        mut trigger: Observation,
        missed: Missed,
    ) -> Result<String, AppError> {
        if trigger.trigger.kind.trim().is_empty() || trigger.trigger.event.trim().is_empty() {
            return Err(AppError::UnnamedEvent);
        }
        checked_input(&trigger.subject.content)?;
        if every_ms < MIN_EVERY_MS {
            return Err(AppError::BadSchedule(format!(
                "every {every_ms} ms is too often; the shortest period is {MIN_EVERY_MS} ms"
            )));
        }
        // Each firing is stamped when it happens.
        trigger.trigger.timestamp = None;
        let now = self.inner.config.clock.now().epoch_ms;
        let mut schedules = self.inner.schedules.borrow_mut();
        let id = match id.map(str::trim) {
            Some(id) if !id.is_empty() => id.to_owned(),
            Some(_) => return Err(AppError::BadSchedule("the id is empty".into())),
            None => {
                let number = self.inner.state.borrow_mut().next_run();
                format!("schedule-{now}-{number}")
            }
        };
        schedules.list.retain(|s| s.id != id);
        if schedules.list.len() >= MAX_SCHEDULES {
            return Err(AppError::BadSchedule(format!(
                "a session keeps at most {MAX_SCHEDULES} schedules; unschedule one first"
            )));
        }
        let every = i64::try_from(every_ms).unwrap_or(i64::MAX);
        schedules.list.push(Schedule {
            id: id.clone(),
            every_ms,
            trigger,
            missed,
            next_ms: now.saturating_add(every),
        });
        schedules.wake();
        drop(schedules);
        self.save_schedules();
        Ok(id)
    }

    /// Stops the schedule `id`; whether there was one. A run it started goes on.
    pub fn unschedule(&self, id: &str) -> bool {
        let mut schedules = self.inner.schedules.borrow_mut();
        let before = schedules.list.len();
        schedules.list.retain(|s| s.id != id);
        let removed = schedules.list.len() != before;
        schedules.wake();
        drop(schedules);
        if removed {
            self.save_schedules();
        }
        removed
    }

    /// The schedules, in the order they were made.
    pub fn schedules(&self) -> Vec<Schedule> {
        self.inner.schedules.borrow().list.clone()
    }

    /// Fires the schedules as they fall due, until the session is destroyed: the one
    /// future a front end spawns for them. A schedule whose last run is still going
    /// skips its turn (it never overlaps itself), and so does one whose agent's
    /// conversation has a run in flight.
    pub fn run_schedules(&self) -> LocalBoxFuture<'static, ()> {
        let session = self.clone();
        Box::pin(async move {
            let mut runs = FuturesUnordered::new();
            let mut in_flight: BTreeSet<String> = BTreeSet::new();
            loop {
                if session.inner.state.borrow().destroyed {
                    return;
                }
                let now = session.inner.config.clock.now().epoch_ms;
                for (id, trigger) in session.fall_due(now, &in_flight) {
                    in_flight.insert(id.clone());
                    let session = session.clone();
                    runs.push(async move {
                        // An error (a destroyed session, an event it refuses) is the
                        // run's to report; the schedule goes on.
                        let _ = session.trigger(trigger).await;
                        id
                    });
                }
                let (wake, woken) = oneshot::channel();
                let next = {
                    let mut schedules = session.inner.schedules.borrow_mut();
                    schedules.wake = Some(wake);
                    schedules.list.iter().map(|s| s.next_ms).min()
                };
                let clock = &session.inner.config.clock;
                let timer = match next {
                    Some(next) => clock.sleep(u64::try_from(next - now).unwrap_or(0)),
                    None => Box::pin(futures::future::pending()),
                };
                let waiting = select(timer, woken);
                if runs.is_empty() {
                    waiting.await;
                    continue;
                }
                match select(runs.next(), waiting).await {
                    Either::Left((Some(id), _)) => {
                        in_flight.remove(&id);
                    }
                    Either::Left((None, _)) | Either::Right(_) => {}
                }
            }
        })
    }

    /// The schedules due at `now` that fire (moving each to its next time, saved), each
    /// with the trigger to fire.
    fn fall_due(&self, now: i64, in_flight: &BTreeSet<String>) -> Vec<(String, Observation)> {
        let mut fired = Vec::new();
        let mut moved = false;
        {
            let mut schedules = self.inner.schedules.borrow_mut();
            let state = self.inner.state.borrow();
            for schedule in &mut schedules.list {
                let (fire, next) = due(schedule.next_ms, schedule.every_ms, schedule.missed, now);
                moved |= next != schedule.next_ms;
                schedule.next_ms = next;
                let agent = schedule.trigger.actor.name.trim();
                let busy = in_flight.contains(&schedule.id)
                    || (!agent.is_empty()
                        && state
                            .running
                            .iter()
                            .any(|r| r.conversation == super::address::own_conversation(agent)));
                if fire && !busy {
                    fired.push((schedule.id.clone(), schedule.trigger.clone()));
                }
            }
        }
        if moved {
            self.save_schedules();
        }
        fired
    }

    /// Reads the saved schedules; unreadable ones are kept aside and said.
    pub(super) fn restore_schedules(&self) -> Vec<Notice> {
        let config = &self.inner.config;
        let key = format!("{}.schedules", config.namespace);
        let Some(text) = config.storage.load(&key) else {
            return Vec::new();
        };
        let loaded = match crate::base::json::from_text::<Vec<Schedule>>(&text) {
            Ok(list) => Loaded::Found(list),
            Err(error) => keep_aside(&*config.storage, &key, &text, error.to_string()),
        };
        match loaded {
            Loaded::Found(list) => {
                let mut schedules = self.inner.schedules.borrow_mut();
                schedules.list = list;
                schedules.wake();
                Vec::new()
            }
            Loaded::Missing => Vec::new(),
            Loaded::Corrupt { kept_as, error } => vec![Notice::Corrupt {
                key,
                kept_as,
                error,
            }],
        }
    }

    fn save_schedules(&self) {
        let config = &self.inner.config;
        let key = format!("{}.schedules", config.namespace);
        let saved = serde_json::to_string(&self.inner.schedules.borrow().list)
            .map_err(|e| e.to_string())
            .and_then(|text| config.storage.save(&key, &text));
        if let Err(error) = saved {
            self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn on_time_it_fires_and_moves_one_period_on() {
        assert_eq!(due(10_000, 2_000, Missed::Skip, 9_999), (false, 10_000));
        assert_eq!(due(10_000, 2_000, Missed::Skip, 10_000), (true, 12_000));
        assert_eq!(due(10_000, 2_000, Missed::Skip, 11_999), (true, 12_000));
    }

    #[test]
    fn periods_missed_are_skipped_or_caught_up_once() {
        // Hidden for 7 s of a 2 s schedule: three periods missed.
        assert_eq!(due(10_000, 2_000, Missed::Skip, 17_000), (false, 18_000));
        assert_eq!(due(10_000, 2_000, Missed::CatchUp, 17_000), (true, 18_000));
        // Either way the next firing is on time, once.
        assert_eq!(due(18_000, 2_000, Missed::CatchUp, 18_000), (true, 20_000));
    }
}
