//! A host tool's handler, from what `registerTool` was given: a JavaScript function
//! (`async (args, { requestId }) => result`), or a message target (an iframe's
//! window at an origin, a `MessagePort`, an extension port) answered over seed 003's
//! `function_call` / `function_result` messages, each result taken only from the
//! target its call was posted to (or its calls in batches, `function_calls` /
//! `function_results`); a target that says `disconnect` fails the calls waiting on it
//! at once.

use std::rc::Rc;

use js_sys::{Function, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::js::{field, message_of, to_js, to_json};
use crate::app::{Channel, Handler, Session, Target};

/// A function's handler: whatever it throws, rejects with or returns that is not JSON
/// becomes an error the model reads.
pub fn function_handler(function: Function) -> Handler {
    Rc::new(move |request_id: &str, arguments: Value| {
        let context = Object::new();
        let _ = Reflect::set(&context, &"requestId".into(), &request_id.into());
        let returned = function.call2(&JsValue::NULL, &to_js(&arguments), &context);
        Box::pin(async move {
            let returned =
                returned.map_err(|e| format!("the handler threw: {}", message_of(&e)))?;
            let settled = JsFuture::from(Promise::resolve(&returned))
                .await
                .map_err(|e| format!("the handler rejected: {}", message_of(&e)))?;
            to_json(&settled).map_err(|e| format!("the handler's result is not JSON: {e}"))
        })
    })
}

/// Whether `value` can be posted to.
pub fn is_target(value: &JsValue) -> bool {
    field(value, "postMessage").is_function()
}

/// Whether `target` is a window (an iframe's): a window of another frame is not an
/// `instanceof Window` here, but every window is its own `window`, and even a
/// cross-origin one lets that be read.
pub fn is_window(target: &JsValue) -> bool {
    js_sys::Object::is(&field(target, "window"), target)
}

/// Posts `function`'s calls to `target` (`origin`: the normalised origin a window is
/// posted to, `*` only when asked for by name); the channel takes results only from
/// [`listen`]ing to the same `to`.
pub fn channel_handler(
    channel: &Rc<Channel>,
    function: &str,
    to: Target,
    target: JsValue,
    origin: Option<String>,
) -> Handler {
    let is_window = is_window(&target);
    let send: Rc<dyn Fn(Value)> = Rc::new(move |message| {
        let post = field(&target, "postMessage");
        let Ok(post) = post.dyn_into::<Function>() else {
            return;
        };
        let message = to_js(&message);
        let posted = match (is_window, &origin) {
            (true, Some(origin)) => post.call2(&target, &message, &JsValue::from_str(origin)),
            // A window with no origin is refused at registration; never post to `*`
            // unasked.
            (true, None) => return,
            (false, _) => post.call1(&target, &message),
        };
        if let Err(error) = posted {
            super::js::console_error(&format!(
                "could not post a function_call: {}",
                message_of(&error)
            ));
        }
    });
    channel.handler(function, to, send)
}

/// A target's listeners, removed when dropped.
pub struct Listening {
    /// Held only to be dropped with the target.
    _parts: Vec<Listener>,
}

/// One listener, removed when dropped.
struct Listener {
    on: JsValue,
    how: How,
    callback: Closure<dyn Fn(JsValue)>,
}

enum How {
    /// `addEventListener(event)`.
    Events(&'static str),
    /// An extension port's `onMessage`: `addListener`.
    Listener,
}

impl Listener {
    fn new(on: JsValue, how: How, callback: Closure<dyn Fn(JsValue)>) -> Self {
        // A target that cannot be listened to is one whose answers never come: its
        // calls time out, as any unanswered call does.
        let _ = match how {
            How::Events(event) => field(&on, "addEventListener")
                .dyn_into::<Function>()
                .and_then(|add| add.call2(&on, &event.into(), callback.as_ref())),
            How::Listener => field(&on, "addListener")
                .dyn_into::<Function>()
                .and_then(|add| add.call1(&on, callback.as_ref())),
        };
        Self { on, how, callback }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        let callback = self.callback.as_ref();
        let _ = match self.how {
            How::Events(event) => Reflect::get(&self.on, &"removeEventListener".into())
                .and_then(|f| f.dyn_into::<Function>())
                .and_then(|f| f.call2(&self.on, &event.into(), callback)),
            How::Listener => Reflect::get(&self.on, &"removeListener".into())
                .and_then(|f| f.dyn_into::<Function>())
                .and_then(|f| f.call1(&self.on, callback)),
        };
    }
}

/// Listens for results from `target` (as `from`, at `origin` for a window) and feeds
/// them to `channel`; what it ignores is reported through `session`. Dropping the
/// returned value stops listening.
///
/// A port's own closing (an extension port's `onDisconnect`, a `MessagePort`'s
/// `close`) is not listened to yet: calling [`Channel::close`] from an `onDisconnect`
/// listener hung the page in a browser test (issue 58, not understood), so a host
/// that goes away says `{type: "disconnect"}` first.
pub fn listen(
    channel: &Rc<Channel>,
    session: &Session,
    from: Target,
    target: JsValue,
    origin: Option<String>,
) -> Listening {
    let deliver = {
        let channel = Rc::clone(channel);
        let session = session.clone();
        move |data: JsValue| {
            let Ok(message) = to_json(&data) else {
                return;
            };
            // Other traffic on the same port is not ours to judge.
            let ours = ["function_result", "function_results", "disconnect"];
            if !ours.contains(&message.get("type").and_then(Value::as_str).unwrap_or("")) {
                return;
            }
            for ignored in channel.deliver(Some(from), &message).1 {
                session.host_message_ignored(&ignored);
            }
        }
    };
    if is_window(&target) {
        // An iframe answers through this window's `message` events: only those whose
        // source is that window, at the origin it was registered with (`event.origin`
        // is serialized as `normalize_origin` writes it).
        let source = target.clone();
        let callback = Closure::<dyn Fn(JsValue)>::new(move |event: JsValue| {
            let from_target = js_sys::Object::is(&field(&event, "source"), &source);
            let origin_ok = origin.as_deref().is_some_and(|o| {
                o == "*" || field(&event, "origin").as_string().as_deref() == Some(o)
            });
            if from_target && origin_ok {
                deliver(field(&event, "data"));
            }
        });
        let window: JsValue = web_sys::window().map_or(JsValue::UNDEFINED, Into::into);
        let parts = vec![Listener::new(window, How::Events("message"), callback)];
        return Listening { _parts: parts };
    }
    let on_message = field(&target, "onMessage");
    if field(&on_message, "addListener").is_function() {
        let callback = Closure::<dyn Fn(JsValue)>::new(deliver);
        let parts = vec![Listener::new(on_message, How::Listener, callback)];
        return Listening { _parts: parts };
    }
    let callback =
        Closure::<dyn Fn(JsValue)>::new(move |event: JsValue| deliver(field(&event, "data")));
    let messages = Listener::new(target.clone(), How::Events("message"), callback);
    // A MessagePort delivers nothing until started.
    if let Ok(start) = field(&target, "start").dyn_into::<Function>() {
        let _ = start.call0(&target);
    }
    Listening {
        _parts: vec![messages],
    }
}
