//! [`TabsLock`]: the guild game's [`Exclusive`] section across the page's tabs, by the
//! Web Locks API (`navigator.locks.request`). The page's own store keeps one snapshot
//! in `localStorage` for every tab, so a section holds the lock, reads the snapshot
//! again, works and saves, and only then lets another tab in. Where the API is
//! missing, the work runs as is (a single tab loses nothing), said in the console.
//!
//! The snapshot also goes from section to section through Cache Storage, written
//! before the lock is let go: `localStorage` reaches another tab's process only
//! eventually (Chromium keeps a copy in each renderer and sends changes on apart from
//! the lock's grant), so a tab that had just taken the lock could read the guild as it
//! was before the last tick, and apply that tick a second time. A cache write is done
//! in the browser's own process once its promise resolves.

use std::cell::RefCell;
use std::rc::Rc;

use futures::channel::oneshot;
use futures::future::LocalBoxFuture;
use js_sys::{Function, Promise, Reflect};
use wasm_bindgen::JsCast;
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::JsFuture;
use web_sys::{Cache, Response};

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
            if let Some(store) = &self.store {
                let read = match handed(&self.name).await {
                    Some(snapshot) => store.adopt(&snapshot),
                    None => store.reload(),
                };
                if let Err(error) = read {
                    warn(&format!("the saved guild could not be read again: {error}"));
                }
            }
            work.await;
            if let Some(snapshot) = self.store.as_ref().and_then(|s| s.snapshot()) {
                hand_over(&self.name, &snapshot).await;
            }
            drop(held);
        })
    }
}

/// The Cache Storage cache the sections hand the snapshot over in.
const HANDOVER: &str = "familiar-tabs";

/// The snapshot the last section of lock `name` handed over, if any (none where the
/// page may not use Cache Storage: then `localStorage` is all there is).
async fn handed(name: &str) -> Option<String> {
    let cache = handover().await?;
    let found = JsFuture::from(cache.match_with_str(&key(name)))
        .await
        .ok()?;
    let response: Response = found.dyn_into().ok()?;
    JsFuture::from(response.text().ok()?)
        .await
        .ok()?
        .as_string()
}

/// Hands `snapshot` over to the next section of lock `name`.
async fn hand_over(name: &str, snapshot: &str) {
    let Some(cache) = handover().await else {
        return;
    };
    let put = Response::new_with_opt_str(Some(snapshot))
        .map(|response| cache.put_with_str(&key(name), &response));
    if let Err(error) = match put {
        Ok(promise) => JsFuture::from(promise).await.map(drop),
        Err(error) => Err(error),
    } {
        warn(&format!(
            "the guild could not be handed to the other tabs: {error:?}"
        ));
    }
}

async fn handover() -> Option<Cache> {
    let caches = web_sys::window()?.caches().ok()?;
    JsFuture::from(caches.open(HANDOVER))
        .await
        .ok()?
        .dyn_into()
        .ok()
}

/// The snapshot's address in the cache, beside the page.
fn key(name: &str) -> String {
    format!("familiar-tabs/{name}")
}
