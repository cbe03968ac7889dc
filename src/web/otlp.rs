//! The OTLP/HTTP exporter: spans a session's runs end go into an [`Outbox`] (kept in
//! `localStorage`, so a reload loses none), and one spawned task sends them to the
//! collector over [`Http`] as JSON export requests, a batch at a time, waiting as the
//! outbox says after a failure. Nothing here is awaited by a run: pushing spans is a
//! copy into memory, and saving and sending happen in tasks of their own.
//!
//! The task lives as long as its owner: when the last [`Exporter`] handle goes (the
//! agent destroyed, the demo's session rebuilt) it stops at its next step, and a new
//! exporter on the same storage key takes the old one's outbox and stops it, so one
//! key has one sender.

use std::cell::{Cell, RefCell};
use std::rc::{Rc, Weak};

use crate::app::Storage;
use crate::base::clock::Clock;
use crate::base::http::{Http, HttpRequest};
use crate::base::retry::server_wait_ms;
use crate::trace::{Collector, Outbox, Resource, Sent, Span, export_request};

/// Sends spans to one collector.
#[derive(Clone)]
pub struct Exporter {
    inner: Rc<Inner>,
    /// Dropped with the last handle: the sending task then stops.
    _owner: Rc<Owner>,
}

/// Stops its exporter's tasks when dropped.
struct Owner(Weak<Inner>);

impl Drop for Owner {
    fn drop(&mut self) {
        // What waits is kept for the next page (unless a newer exporter took it).
        if let Some(inner) = self.0.upgrade()
            && inner.live.replace(false)
        {
            inner.save();
        }
    }
}

thread_local! {
    /// The live exporter of each storage key.
    static LIVE: RefCell<Vec<(String, Weak<Inner>)>> = const { RefCell::new(Vec::new()) };
}

struct Inner {
    collector: Collector,
    resource: Resource,
    outbox: RefCell<Outbox>,
    /// Where the outbox is kept.
    key: String,
    storage: Rc<dyn Storage>,
    http: Rc<dyn Http>,
    clock: Rc<dyn Clock>,
    random: Rc<dyn Fn() -> f64>,
    sending: Cell<bool>,
    saving: Cell<bool>,
    /// Cleared when its owner lets go, or a newer exporter takes its key.
    live: Cell<bool>,
}

impl Exporter {
    /// An exporter to `collector`, its outbox kept under `key` (what a reload left
    /// there is sent first; what an older exporter on `key` still held is taken over,
    /// and that one stopped).
    pub fn new(
        collector: Collector,
        resource: Resource,
        key: String,
        storage: Rc<dyn Storage>,
        http: Rc<dyn Http>,
        clock: Rc<dyn Clock>,
        random: Rc<dyn Fn() -> f64>,
    ) -> Self {
        let outbox = storage
            .load(&key)
            .and_then(|text| crate::base::json::from_text::<Outbox>(&text).ok())
            .map(|mut outbox| {
                outbox.wake();
                outbox
            })
            .unwrap_or_default();
        let outbox = match take_key(&key) {
            Some(mut held) => {
                held.wake();
                held
            }
            None => outbox,
        };
        let inner = Rc::new(Inner {
            collector,
            resource,
            outbox: RefCell::new(outbox),
            key,
            storage,
            http,
            clock,
            random,
            sending: Cell::new(false),
            saving: Cell::new(false),
            live: Cell::new(true),
        });
        LIVE.with(|live| {
            let mut live = live.borrow_mut();
            live.retain(|(_, held)| held.strong_count() > 0);
            live.push((inner.key.clone(), Rc::downgrade(&inner)));
        });
        let exporter = Self {
            _owner: Rc::new(Owner(Rc::downgrade(&inner))),
            inner,
        };
        exporter.kick();
        exporter
    }

    /// Queues `spans`; they are saved and sent in tasks of their own.
    pub fn push(&self, spans: &[Span]) {
        if !self.inner.live.get() {
            return;
        }
        self.inner.outbox.borrow_mut().push(spans.to_vec());
        self.save_soon();
        self.kick();
    }

    /// How many spans wait for the collector.
    pub fn waiting(&self) -> usize {
        self.inner.outbox.borrow().len()
    }

    /// Saves the outbox once the current work is done (many pushes, one write).
    fn save_soon(&self) {
        if self.inner.saving.replace(true) {
            return;
        }
        let inner = Rc::clone(&self.inner);
        wasm_bindgen_futures::spawn_local(async move {
            inner.saving.set(false);
            if inner.live.get() {
                inner.save();
            }
        });
    }

    /// Starts the sending task unless it runs already.
    fn kick(&self) {
        if !self.inner.live.get() || self.inner.sending.replace(true) {
            return;
        }
        let inner = Rc::clone(&self.inner);
        wasm_bindgen_futures::spawn_local(async move {
            inner.send_all().await;
            inner.sending.set(false);
        });
    }
}

/// Stops the live exporter on `key`, if any, and takes the spans it held.
fn take_key(key: &str) -> Option<Outbox> {
    let held = LIVE.with(|live| {
        let mut live = live.borrow_mut();
        let at = live.iter().position(|(k, _)| k == key)?;
        let (_, held) = live.swap_remove(at);
        held.upgrade()
    })?;
    held.live.set(false);
    Some(std::mem::take(&mut *held.outbox.borrow_mut()))
}

impl Inner {
    fn save(&self) {
        let text = serde_json::to_string(&*self.outbox.borrow());
        if let Ok(text) = text
            && let Err(error) = self.storage.save(&self.key, &text)
        {
            let text =
                format!("familiar: the spans waiting for the collector were not kept: {error}");
            web_sys::console::warn_1(&text.into());
        }
    }

    /// Sends batch after batch until the outbox is empty or its owner let go, waiting
    /// between failures.
    async fn send_all(&self) {
        while self.live.get() {
            let now = self.clock.now().epoch_ms;
            let batch = self.outbox.borrow_mut().batch(now).map(<[Span]>::to_vec);
            let Some(batch) = batch else {
                let wait = self.outbox.borrow().not_before_ms().saturating_sub(now);
                if self.outbox.borrow().is_empty() {
                    return;
                }
                self.clock
                    .sleep(u64::try_from(wait).unwrap_or(0).max(1))
                    .await;
                continue;
            };
            let sent = self.send(&batch).await;
            if !self.live.get() {
                // Taken over: the batch is the newer exporter's to send (again).
                return;
            }
            let now = self.clock.now().epoch_ms;
            self.outbox
                .borrow_mut()
                .sent(batch.len(), sent, now, (self.random)());
            self.save();
        }
    }

    async fn send(&self, batch: &[Span]) -> Sent {
        let mut headers = vec![("Content-Type".to_owned(), "application/json".to_owned())];
        headers.extend(self.collector.headers.iter().cloned());
        let request = HttpRequest {
            method: "POST",
            url: self.collector.url.clone(),
            headers,
            body: Some(export_request(batch, &self.resource).to_string()),
        };
        match self.http.send(request).await {
            Ok(response) if (200..300).contains(&response.status) => Sent::Accepted,
            Ok(response) => Sent::Failed {
                status: Some(response.status),
                wait_ms: server_wait_ms(
                    response.header("retry-after-ms"),
                    response.header("retry-after"),
                    self.clock.now().epoch_ms,
                ),
            },
            Err(_) => Sent::Failed {
                status: None,
                wait_ms: None,
            },
        }
    }
}
