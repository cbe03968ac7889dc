//! `watch`: notices when the page under the page tools changes, so the last walk
//! of it (its text, element index and forms) is reused only while nothing has: a
//! `MutationObserver` on the whole document, the events a person's input and the
//! layout raise (`input`, `change`, `resize`, `load`, ends of transitions), and
//! navigation within the page (`popstate`, `hashchange`, `history.pushState` and
//! `replaceState`). Changes inside the agent's own widget are not the page's. It also
//! waits, after an action, for the page to stop changing ([`settle`]).

use std::cell::Cell;
use std::rc::Rc;

use gloo_timers::future::TimeoutFuture;

use js_sys::{Array, Function, Reflect};
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, MutationObserver, MutationObserverInit, MutationRecord, Node};

/// What the page tools know of the page's changes.
pub struct PageWatch {
    /// Whether the page changed since the last [`PageWatch::take_changed`].
    changed: Rc<Cell<bool>>,
    /// How many changes were seen, ever.
    version: Rc<Cell<u64>>,
    observer: Option<MutationObserver>,
}

impl PageWatch {
    /// Starts watching this window's document. Without one (or when the browser
    /// refuses a listener), every read counts as changed: the page is walked anew.
    pub fn start() -> Self {
        let changed = Rc::new(Cell::new(true));
        let version = Rc::new(Cell::new(0));
        let mark = {
            let (changed, version) = (Rc::clone(&changed), Rc::clone(&version));
            move || {
                changed.set(true);
                version.set(version.get() + 1);
            }
        };
        let observer = observe(mark.clone());
        listen(&mark);
        wrap_history(&mark);
        Self {
            changed,
            version,
            observer,
        }
    }

    /// Whether the page changed since this was last asked (or it cannot tell);
    /// mutations not yet delivered count.
    pub fn take_changed(&self) -> bool {
        let Some(observer) = &self.observer else {
            return true;
        };
        if records_are_the_pages(&observer.take_records()) {
            self.changed.set(true);
            self.version.set(self.version.get() + 1);
        }
        self.changed.replace(false)
    }

    /// Watches a shadow root or a same-origin frame's document the walk read: their
    /// changes do not reach the document's observer.
    pub fn observe(&self, root: &Node) {
        if let Some(observer) = &self.observer {
            let _ = observer.observe_with_options(root, &options());
        }
    }

    /// How many changes have been seen.
    pub fn version(&self) -> u64 {
        self.version.get()
    }
}

impl Drop for PageWatch {
    fn drop(&mut self) {
        if let Some(observer) = &self.observer {
            observer.disconnect();
        }
    }
}

/// How often [`settle`] looks whether the page changed, in milliseconds: long enough
/// for a timeout or a promise an action's handlers schedule, and a few frames.
const SETTLE_STEP: u32 = 50;

/// The longest [`settle`] waits, in milliseconds: a page that never stops changing
/// (a clock, a carousel) is read as it is then.
const SETTLE_MOST: u32 = 500;

/// Waits for the page to react to an action before it is read again: one
/// [`SETTLE_STEP`], then on while the page keeps changing (a framework's render, a
/// widget's own events, a popup animating shut), until a step passes with no change
/// or [`SETTLE_MOST`] has passed.
pub async fn settle() {
    let changes = Rc::new(Cell::new(0u32));
    let counted = Rc::clone(&changes);
    let callback = Closure::<dyn Fn(Array)>::new(move |records: Array| {
        if records_are_the_pages(&records) {
            counted.set(counted.get() + 1);
        }
    });
    let observer = MutationObserver::new(callback.as_ref().unchecked_ref()).ok();
    let root = web_sys::window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element());
    if let (Some(observer), Some(root)) = (&observer, root) {
        let _ = observer.observe_with_options(&root, &options());
    }
    let mut waited = 0;
    loop {
        TimeoutFuture::new(SETTLE_STEP).await;
        waited += SETTLE_STEP;
        let pending = observer.as_ref().map(MutationObserver::take_records);
        let changed = changes.replace(0) > 0 || pending.is_some_and(|r| records_are_the_pages(&r));
        if !changed || waited >= SETTLE_MOST {
            break;
        }
    }
    if let Some(observer) = observer {
        observer.disconnect();
    }
    // The callback lives until the observer is disconnected.
    drop(callback);
}

/// Whether any of `records` touched the page rather than the agent's own widget.
fn records_are_the_pages(records: &Array) -> bool {
    records.iter().any(|record| {
        let Ok(record) = record.dyn_into::<MutationRecord>() else {
            return true;
        };
        !record.target().as_ref().is_some_and(ours)
    })
}

/// Whether `node` is inside the agent's widget (`#familiar`, `[data-familiar]`).
fn ours(node: &Node) -> bool {
    let element = match node.dyn_ref::<Element>() {
        Some(element) => Some(element.clone()),
        None => node.parent_element(),
    };
    element
        .and_then(|e| e.closest("#familiar, [data-familiar]").ok().flatten())
        .is_some()
}

fn observe(mark: impl Fn() + 'static) -> Option<MutationObserver> {
    let document = web_sys::window()?.document()?;
    let root = document.document_element()?;
    let callback = Closure::<dyn Fn(Array)>::new(move |records: Array| {
        if records_are_the_pages(&records) {
            mark();
        }
    });
    let observer = MutationObserver::new(callback.as_ref().unchecked_ref()).ok()?;
    // The observer lives as long as the page; so does its callback.
    callback.forget();
    observer.observe_with_options(&root, &options()).ok()?;
    Some(observer)
}

/// Every kind of change, in the whole subtree.
fn options() -> MutationObserverInit {
    let init = MutationObserverInit::new();
    init.set_subtree(true);
    init.set_child_list(true);
    init.set_attributes(true);
    init.set_character_data(true);
    init
}

/// Events after which the page may read differently though no node changed.
fn listen(mark: &(impl Fn() + Clone + 'static)) {
    let Some(window) = web_sys::window() else {
        return;
    };
    let on = |target: &web_sys::EventTarget, kind: &str, capture: bool| {
        let mark = mark.clone();
        let callback = Closure::<dyn Fn()>::new(mark);
        let added = target.add_event_listener_with_callback_and_bool(
            kind,
            callback.as_ref().unchecked_ref(),
            capture,
        );
        if added.is_ok() {
            callback.forget();
        }
    };
    for kind in ["popstate", "hashchange", "resize"] {
        on(&window, kind, false);
    }
    if let Some(document) = window.document() {
        for kind in ["input", "change", "load", "transitionend", "animationend"] {
            on(&document, kind, true);
        }
    }
}

/// Wraps `history.pushState` and `replaceState`: a single-page app navigates by them
/// without an event.
fn wrap_history(mark: &(impl Fn() + Clone + 'static)) {
    let Some(history) = web_sys::window().and_then(|w| Reflect::get(&w, &"history".into()).ok())
    else {
        return;
    };
    for name in ["pushState", "replaceState"] {
        let Some(original) = Reflect::get(&history, &name.into())
            .ok()
            .and_then(|f| f.dyn_into::<Function>().ok())
        else {
            continue;
        };
        let mark = mark.clone();
        let target = history.clone();
        let wrapper = Closure::<dyn Fn(JsValue, JsValue, JsValue) -> Result<JsValue, JsValue>>::new(
            move |state: JsValue, unused: JsValue, url: JsValue| {
                let args = Array::of3(&state, &unused, &url);
                if url.is_undefined() {
                    args.pop();
                }
                let result = original.apply(&target, &args);
                mark();
                result
            },
        );
        if Reflect::set(&history, &name.into(), wrapper.as_ref()).is_ok() {
            // The page may call it for as long as it lives.
            wrapper.forget();
        }
    }
}
