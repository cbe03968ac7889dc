//! Sharing the main thread with the page's frames: runs work in slices and, once a
//! slice is spent, wait for the next frame to be drawn before they go on.
//!
//! A run that never waits on the network (the rules model, a synchronous host tool)
//! would otherwise chain through microtasks and keep the thread until every run is
//! done; a game would freeze for as long. Queueing tasks (`setTimeout(0)`,
//! `scheduler.yield()`) is not enough: Chromium runs queued tasks before it renders
//! for up to 100 ms. So the work waits for `requestAnimationFrame`, then resumes in a
//! task after the paint, and has until [`BUSY_MS`] after that frame. Every waiter
//! shares one frame request; one that wakes to a spent slice waits for the next. A
//! hidden page draws no frames: there a slice ends with a task instead.
//!
//! Used by [`BrowserClock::yield_now`](super::BrowserClock); the driver awaits it
//! between steps.

use std::cell::{Cell, RefCell};

use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

/// How long after a frame runs may keep the main thread, in ms: a frame is due every
/// 16.7 ms at 60 fps, and the page needs the rest for its own work and the paint.
const BUSY_MS: f64 = 10.0;

/// How long to wait for a frame that may never come (the page was hidden meanwhile).
const FRAME_TIMEOUT_MS: i32 = 100;

thread_local! {
    /// When the last frame was drawn (`Date.now()`), as our frame requests saw it.
    static LAST_FRAME: Cell<f64> = const { Cell::new(f64::NEG_INFINITY) };
    /// The frame request every waiter shares: its number, its promise and resolver.
    static PENDING: RefCell<Option<(u64, Promise, Function)>> = const { RefCell::new(None) };
    static REQUESTS: Cell<u64> = const { Cell::new(0) };
}

/// Whether runs have used up the slice since the last frame.
pub fn slice_spent() -> bool {
    js_sys::Date::now() - LAST_FRAME.get() >= BUSY_MS
}

/// Waits until the page has drawn a frame and the slice after it is not spent.
pub async fn yield_to_page() {
    while slice_spent() {
        // A rejection (none is expected) only means we go on a task later.
        let _ = JsFuture::from(next_frame()).await;
    }
}

/// The shared promise of the next frame, requesting one if none is pending.
fn next_frame() -> Promise {
    if let Some(promise) = PENDING.with_borrow(|p| p.as_ref().map(|(_, p, _)| p.clone())) {
        return promise;
    }
    let number = REQUESTS.get() + 1;
    REQUESTS.set(number);
    let mut resolver = None;
    let promise = Promise::new(&mut |resolve, _| resolver = Some(resolve));
    let Some(resolve) = resolver else {
        return Promise::resolve(&JsValue::UNDEFINED);
    };
    PENDING.set(Some((number, promise.clone(), resolve)));
    let global = js_sys::global();
    let visible = web_sys::window()
        .and_then(|w| w.document())
        .is_some_and(|d| !d.hidden());
    let framed = visible
        && call(
            &global,
            "requestAnimationFrame",
            &[&once(move || drawn(number))],
        );
    if !framed {
        after_task(move || drawn(number));
        return promise;
    }
    call(
        &global,
        "setTimeout",
        &[
            &once(move || drawn(number)),
            &JsValue::from(FRAME_TIMEOUT_MS),
        ],
    );
    promise
}

/// Frame request `number` was answered (a frame, or its timeout): a new slice begins,
/// and its waiters resume in a task after the paint.
fn drawn(number: u64) {
    let Some(resolve) = PENDING.with_borrow_mut(|pending| match pending.take() {
        Some((n, _, resolve)) if n == number => Some(resolve),
        other => {
            *pending = other;
            None
        }
    }) else {
        return;
    };
    LAST_FRAME.set(js_sys::Date::now());
    after_task(move || {
        let _ = resolve.call0(&JsValue::UNDEFINED);
    });
}

/// Runs `f` in a task of its own, soon: a `MessageChannel` message, which is neither
/// clamped nor throttled as a chain of `setTimeout(0)` would be.
fn after_task(f: impl FnOnce() + 'static) {
    let global = js_sys::global();
    let callback = once(f);
    let channel = Reflect::get(&global, &JsValue::from_str("MessageChannel"))
        .ok()
        .and_then(|c| c.dyn_into::<Function>().ok())
        .and_then(|c| Reflect::construct(&c, &js_sys::Array::new()).ok());
    let posted = channel.is_some_and(|channel| {
        let port = |name| Reflect::get(&channel, &JsValue::from_str(name)).unwrap_or_default();
        let (receiving, sending) = (port("port1"), port("port2"));
        Reflect::set(&receiving, &JsValue::from_str("onmessage"), &callback).is_ok()
            && call(&sending, "postMessage", &[&JsValue::NULL])
    });
    if !posted && !call(&global, "setTimeout", &[&callback, &JsValue::from(0)]) {
        // No event loop to defer to: go on now rather than never.
        if let Some(f) = callback.dyn_ref::<Function>() {
            let _ = f.call0(&JsValue::UNDEFINED);
        }
    }
}

/// A JS function that calls `f` once (later calls do nothing).
fn once(f: impl FnOnce() + 'static) -> JsValue {
    let mut f = Some(f);
    Closure::<dyn FnMut()>::new(move || {
        if let Some(f) = f.take() {
            f();
        }
    })
    .into_js_value()
}

/// Calls `target[method](...args)`; whether it could.
fn call(target: &JsValue, method: &str, args: &[&JsValue]) -> bool {
    let Some(function) = Reflect::get(target, &JsValue::from_str(method))
        .ok()
        .and_then(|f| f.dyn_into::<Function>().ok())
    else {
        return false;
    };
    let args: js_sys::Array = args.iter().copied().collect();
    function.apply(target, &args).is_ok()
}
