//! [`TabsLock`]: the guild game's [`Exclusive`] section across the page's tabs, by the
//! Web Locks API (`navigator.locks.request`). The page's own store keeps one snapshot
//! in `localStorage` for every tab, so a section holds the lock, reads the snapshot
//! again, works and saves, and only then lets another tab in. Where the API is
//! missing, the work runs as is (a single tab loses nothing), said in the console.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;

use crate::guild::Exclusive;
use crate::store::LocalStore;

/// A named lock shared by the page's tabs; with `store`, the section reloads it first.
pub struct TabsLock {
    name: String,
    store: Option<Rc<LocalStore>>,
}

impl TabsLock {
    /// The lock `name`, reloading `store` at the start of each section.
    pub fn new(name: &str, store: Option<Rc<LocalStore>>) -> Self {
        Self {
            name: name.to_owned(),
            store,
        }
    }
}

/// A held lock: released (its promise resolved) when dropped.
struct Held(Function);

impl Drop for Held {
    fn drop(&mut self) {
        let _ = self.0.call0(&JsValue::NULL);
    }
}

fn warn(text: &str) {
    web_sys::console::warn_1(&format!("familiar: {text}").into());
}

/// Waits for the lock `name`; `None` when the browser has no Web Locks API.
async fn acquire(name: &str) -> Option<Held> {
    let navigator = web_sys::window()?.navigator();
    let locks = Reflect::get(&navigator, &"locks".into())
        .ok()
        .filter(|l| !l.is_undefined() && !l.is_null())?;
    let request: Function = Reflect::get(&locks, &"request".into())
        .ok()?
        .dyn_into()
        .ok()?;
    let (granted, held) = oneshot::channel::<Function>();
    let granted = RefCell::new(Some(granted));
    // Called once the lock is ours: it hands back a promise that keeps the lock until
    // resolved, and the resolver goes to the waiting section.
    let callback = Closure::once_into_js(move |_lock: JsValue| -> Promise {
        let mut resolver = None;
        let promise = Promise::new(&mut |resolve, _| resolver = Some(resolve));
        if let (Some(granted), Some(resolve)) = (granted.borrow_mut().take(), resolver) {
            let _ = granted.send(resolve);
        }
        promise
    });
    if let Err(error) = request.call2(&locks, &name.into(), &callback) {
        warn(&format!("the tabs' lock could not be requested: {error:?}"));
        return None;
    }
    held.await.ok().map(Held)
}

impl Exclusive for TabsLock {
    fn exclusive<'a>(&'a self, work: LocalBoxFuture<'a, ()>) -> LocalBoxFuture<'a, ()> {
        Box::pin(async move {
            let held = acquire(&self.name).await;
            if held.is_none() {
                warn("no Web Locks API: the guild is not guarded against other tabs");
            }
            if let Some(store) = &self.store
                && let Err(error) = store.reload()
            {
                warn(&format!("the saved guild could not be read again: {error}"));
            }
            work.await;
            drop(held);
        })
    }
}
