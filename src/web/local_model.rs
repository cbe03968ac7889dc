//! The local model's Web Worker, seen from the page: started once per weights file
//! and shared by every agent that names it (the 100 MB of weights and the KV cache are
//! loaded once), its messages routed to the request they answer, its loading progress
//! told to whoever listens. The worker's own script is `js/local-worker.js`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::pin::Pin;
use std::rc::{Rc, Weak};
use std::task::{Context, Poll};

use futures::Stream;
use futures::channel::mpsc::{UnboundedReceiver, UnboundedSender, unbounded};
use futures::stream::LocalBoxStream;
use js_sys::{Object, Reflect};
use serde_json::Value;
use wasm_bindgen::JsValue;
use wasm_bindgen::closure::Closure;
use web_sys::{MessageEvent, WorkerOptions, WorkerType};

use crate::llm::LlmError;
use crate::llm::local::{LocalBackend, LocalSettings, ModelWorker, Reply, reply_of};

/// The worker's script in the full build, beside the page.
const DEFAULT_WORKER: &str = "local/worker.js";

/// Where the weights are in getting ready.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadStatus {
    /// Bytes read so far of `total` (0 when the server did not say), from the
    /// browser's cache or the network.
    Loading {
        loaded: u64,
        total: u64,
        cached: bool,
    },
    /// Loaded; `cached` when nothing was downloaded. `backend` is where the model
    /// runs (WebGPU or the CPU, never auto), on `threads` threads (the CPU's cores
    /// where the page is cross-origin isolated, else 1), `adapter` the GPU's name on
    /// WebGPU, and `note` why auto runs on the CPU.
    Ready {
        cached: bool,
        context: u64,
        backend: LocalBackend,
        threads: u64,
        adapter: Option<String>,
        note: Option<String>,
    },
    Failed(String),
    /// Stopped on request while loading ([`cancel`]): the worker is gone with what it
    /// had read; the next use of these settings starts over.
    Cancelled,
}

type Listener = Box<dyn Fn(&LoadStatus)>;

struct Inner {
    worker: web_sys::Worker,
    routes: RefCell<HashMap<u64, UnboundedSender<Reply>>>,
    next_id: Cell<u64>,
    status: RefCell<LoadStatus>,
    listeners: RefCell<Vec<Listener>>,
    _on_message: Closure<dyn FnMut(MessageEvent)>,
}

/// The page's handle on one worker.
#[derive(Clone)]
pub struct BrowserWorker {
    inner: Rc<Inner>,
}

thread_local! {
    static WORKERS: RefCell<HashMap<String, BrowserWorker>> = RefCell::new(HashMap::new());
    static PICKED: RefCell<Option<web_sys::File>> = const { RefCell::new(None) };
}

/// Keeps the weights file the person picked, for settings whose `url` is `file:` and
/// its name.
pub fn remember_file(file: web_sys::File) {
    PICKED.with(|p| *p.borrow_mut() = Some(file));
}

/// The worker for these weights: the running one, or a new one that starts loading
/// them. `file` is the person's pick, for settings whose `url` names it.
pub fn worker_for(
    settings: &LocalSettings,
    file: Option<&web_sys::File>,
) -> Result<BrowserWorker, String> {
    if let Some(worker) = running(settings) {
        return Ok(worker);
    }
    let picked = PICKED
        .with(|p| p.borrow().clone())
        .filter(|f| settings.url.strip_prefix("file:") == Some(f.name().as_str()));
    let file = file.or(picked.as_ref());
    if settings.url.starts_with("file:") && file.is_none() {
        return Err(format!(
            "the local model's file “{}” must be picked again after a reload (Settings)",
            settings.url.trim_start_matches("file:")
        ));
    }
    let worker = BrowserWorker::start(settings, file)?;
    WORKERS.with(|w| w.borrow_mut().insert(key(settings), worker.clone()));
    Ok(worker)
}

/// The worker already started for these weights, if any (loading, ready or failed).
pub fn running(settings: &LocalSettings) -> Option<BrowserWorker> {
    WORKERS.with(|w| w.borrow().get(&key(settings)).cloned())
}

/// One worker per weights, window, hash, backend and threads.
fn key(settings: &LocalSettings) -> String {
    format!(
        "{}#{}#{}#{}#{}",
        settings.url,
        settings.context(),
        settings.sha256.as_deref().unwrap_or_default(),
        settings.backend.word(),
        settings.threads.unwrap_or(0)
    )
}

/// Stops loading these settings' weights, when they are loading: the worker is ended
/// with what it had downloaded (a download is kept only once whole and checked), a
/// request waiting on the model fails saying so, and the status says
/// [`LoadStatus::Cancelled`]. The next use of the settings starts again. `false` when
/// nothing was loading.
pub fn cancel(settings: &LocalSettings) -> bool {
    let key = key(settings);
    let Some(worker) = WORKERS.with(|w| w.borrow().get(&key).cloned()) else {
        return false;
    };
    if !matches!(worker.status(), LoadStatus::Loading { .. }) {
        return false;
    }
    WORKERS.with(|w| w.borrow_mut().remove(&key));
    let inner = &worker.inner;
    inner.worker.terminate();
    let waiting: Vec<_> = inner.routes.borrow_mut().drain().collect();
    for (_, route) in waiting {
        let _ = route.unbounded_send(Reply::Failed(LlmError::Unreachable(
            "loading the local model was cancelled".into(),
        )));
    }
    inner.announce(LoadStatus::Cancelled);
    true
}

impl BrowserWorker {
    fn start(settings: &LocalSettings, file: Option<&web_sys::File>) -> Result<Self, String> {
        let options = WorkerOptions::new();
        options.set_type(WorkerType::Module);
        let script = settings.worker.as_deref().unwrap_or(DEFAULT_WORKER);
        let worker = web_sys::Worker::new_with_options(script, &options).map_err(|e| {
            format!(
                "the local model's worker ({script}) could not start: {}",
                words(&e)
            )
        })?;
        let inner = Rc::new_cyclic(|weak: &Weak<Inner>| {
            let weak = weak.clone();
            let on_message = Closure::<dyn FnMut(MessageEvent)>::new(move |event: MessageEvent| {
                if let Some(inner) = weak.upgrade() {
                    inner.receive(&event.data());
                }
            });
            worker.set_onmessage(Some(wasm_bindgen::JsCast::unchecked_ref(
                on_message.as_ref(),
            )));
            Inner {
                worker,
                routes: RefCell::new(HashMap::new()),
                next_id: Cell::new(1),
                status: RefCell::new(LoadStatus::Loading {
                    loaded: 0,
                    total: 0,
                    cached: false,
                }),
                listeners: RefCell::new(Vec::new()),
                _on_message: on_message,
            }
        });
        let load = Object::new();
        set(&load, "type", &"load".into());
        // The worker resolves addresses against its own script; the settings' are
        // the page's.
        set(&load, "url", &page_address(&settings.url).into());
        set(&load, "context", &settings.context().into());
        set(&load, "backend", &settings.backend.word().into());
        if let Some(threads) = settings.threads {
            set(&load, "threads", &threads.into());
        }
        if let Some(hash) = &settings.sha256 {
            set(&load, "sha256", &hash.into());
        }
        if let Some(file) = file {
            set(&load, "file", file);
        }
        inner.worker.post_message(&load).map_err(|e| {
            format!(
                "the local model's worker refused the weights: {}",
                words(&e)
            )
        })?;
        Ok(Self { inner })
    }

    /// Where loading is now.
    pub fn status(&self) -> LoadStatus {
        self.inner.status.borrow().clone()
    }

    /// Calls `listener` with the status now and at every change.
    pub fn on_status(&self, listener: impl Fn(&LoadStatus) + 'static) {
        listener(&self.status());
        self.inner.listeners.borrow_mut().push(Box::new(listener));
    }
}

impl Inner {
    /// The status now, to every listener.
    fn announce(&self, status: LoadStatus) {
        *self.status.borrow_mut() = status.clone();
        // Listeners may look at the status; they are called with none borrowed.
        let listeners = std::mem::take(&mut *self.listeners.borrow_mut());
        for listener in &listeners {
            listener(&status);
        }
        let mut kept = self.listeners.borrow_mut();
        let added = std::mem::replace(&mut *kept, listeners);
        kept.extend(added);
    }

    fn receive(&self, data: &JsValue) {
        let Some(message) = js_sys::JSON::stringify(data)
            .ok()
            .and_then(|s| s.as_string())
            .and_then(|s| serde_json::from_str::<Value>(&s).ok())
        else {
            return;
        };
        let number = |key: &str| message.get(key).and_then(Value::as_u64).unwrap_or(0);
        let cached = message
            .get("cached")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let status = match message.get("type").and_then(Value::as_str) {
            Some("progress") => Some(LoadStatus::Loading {
                loaded: number("loaded"),
                total: number("total"),
                cached,
            }),
            Some("loaded") => {
                let text = |key: &str| message.get(key).and_then(Value::as_str).map(str::to_owned);
                Some(LoadStatus::Ready {
                    cached,
                    context: message
                        .pointer("/info/context")
                        .and_then(Value::as_u64)
                        .unwrap_or(0),
                    backend: text("backend")
                        .and_then(|b| LocalBackend::from_word(&b))
                        .unwrap_or(LocalBackend::Cpu),
                    threads: number("threads").max(1),
                    adapter: text("adapter"),
                    note: text("note"),
                })
            }
            Some("load_error") => Some(LoadStatus::Failed(
                message
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the weights could not be loaded")
                    .to_owned(),
            )),
            _ => None,
        };
        if let Some(status) = status {
            return self.announce(status);
        }
        let Some(id) = message.get("id").and_then(Value::as_u64) else {
            return;
        };
        let Some(reply) = reply_of(&message) else {
            return;
        };
        let last = matches!(reply, Reply::Done(_) | Reply::Failed(_));
        let route = if last {
            self.routes.borrow_mut().remove(&id)
        } else {
            self.routes.borrow().get(&id).cloned()
        };
        if let Some(route) = route {
            let _ = route.unbounded_send(reply);
        }
    }
}

impl ModelWorker for BrowserWorker {
    fn chat(&self, request: Value) -> LocalBoxStream<'static, Reply> {
        let id = self.inner.next_id.get();
        self.inner.next_id.set(id + 1);
        let (sender, receiver) = unbounded();
        let message = serde_json::json!({"type": "chat", "id": id, "request": request});
        let posted = js_sys::JSON::parse(&message.to_string())
            .map_err(|e| words(&e))
            .and_then(|m| self.inner.worker.post_message(&m).map_err(|e| words(&e)));
        if let Err(error) = posted {
            let failed = Reply::Failed(LlmError::Unreachable(format!(
                "the local model's worker could not be asked: {error}"
            )));
            return Box::pin(futures::stream::iter([failed]));
        }
        self.inner.routes.borrow_mut().insert(id, sender);
        Box::pin(Replies {
            id,
            receiver,
            inner: Rc::downgrade(&self.inner),
            ended: false,
        })
    }
}

/// One request's replies; dropped before its end, it tells the worker to stop.
struct Replies {
    id: u64,
    receiver: UnboundedReceiver<Reply>,
    inner: Weak<Inner>,
    ended: bool,
}

impl Stream for Replies {
    type Item = Reply;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Reply>> {
        let polled = Pin::new(&mut self.receiver).poll_next(cx);
        if let Poll::Ready(Some(Reply::Done(_) | Reply::Failed(_)) | None) = &polled {
            self.ended = true;
        }
        polled
    }
}

impl Drop for Replies {
    fn drop(&mut self) {
        if self.ended {
            return;
        }
        if let Some(inner) = self.inner.upgrade() {
            inner.routes.borrow_mut().remove(&self.id);
            let abort = Object::new();
            set(&abort, "type", &"abort".into());
            set(&abort, "id", &JsValue::from_f64(self.id as f64));
            let _ = inner.worker.post_message(&abort);
        }
    }
}

/// `url` resolved against the page's address.
pub fn page_address(url: &str) -> String {
    let base = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.base_uri().ok().flatten());
    base.and_then(|base| web_sys::Url::new_with_base(url, &base).ok())
        .map(|u| u.href())
        .unwrap_or_else(|| url.to_owned())
}

fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &key.into(), value);
}

fn words(error: &JsValue) -> String {
    error
        .as_string()
        .or_else(|| {
            Reflect::get(error, &"message".into())
                .ok()
                .and_then(|m| m.as_string())
        })
        .unwrap_or_else(|| "unknown error".into())
}
