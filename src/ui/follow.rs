//! Keeping a growing conversation in view, as chat panes do: while the reader is at the
//! bottom, whatever is added (a turn, a streamed word, a tool card) scrolls into view;
//! once they scroll up to read, it stops until they come back down or jump to the end.
//!
//! What scrolls is the list's nearest scrollable ancestor, or the page itself. The
//! list's growth is observed (`ResizeObserver`), not polled.

use std::cell::Cell;
use std::rc::Rc;

use wasm_bindgen::JsCast;
use wasm_bindgen::closure::Closure;
use web_sys::{Element, EventTarget, HtmlElement, ResizeObserver};

/// How close to the end (in CSS pixels) still counts as "at the bottom".
const SLACK_PX: i32 = 48;

/// Follows the bottom of one list until dropped.
pub struct Follow {
    inner: Rc<Inner>,
    observer: Option<ResizeObserver>,
    on_resize: Option<Closure<dyn FnMut()>>,
    on_scroll: Option<Closure<dyn FnMut()>>,
}

struct Inner {
    /// `None`: the page scrolls.
    scroller: Option<Element>,
    following: Cell<bool>,
    /// Where the last scroll event left the view, to tell a reader's scroll up from
    /// content growing under a view that has not caught up yet.
    last_top: Cell<i32>,
    /// Told whether the reader is following, when that changes.
    changed: Box<dyn Fn(bool)>,
}

impl Follow {
    /// Starts following `list`; `changed` hears `false` when the reader scrolls away
    /// from the bottom and `true` when they are back.
    pub fn new(list: &HtmlElement, changed: impl Fn(bool) + 'static) -> Self {
        let inner = Rc::new(Inner {
            scroller: scrollable_ancestor(list),
            following: Cell::new(true),
            last_top: Cell::new(0),
            changed: Box::new(changed),
        });
        let mut follow = Self {
            inner,
            observer: None,
            on_resize: None,
            on_scroll: None,
        };
        follow.observe(list);
        follow
    }

    /// Scrolls to the end and follows again (a "jump to latest", or a message sent).
    pub fn jump(&self) {
        self.inner.set_following(true);
        self.inner.to_bottom();
    }

    /// Moves the view down by `dy` CSS pixels: what the reader was looking at stays
    /// where it was when content is added above it.
    pub fn scroll_by(&self, dy: f64) {
        if let Some(element) = self.inner.scrolling_element() {
            let top = f64::from(element.scroll_top()) + dy;
            element.set_scroll_top(top.round() as i32);
            self.inner.last_top.set(element.scroll_top());
        }
    }

    fn observe(&mut self, list: &HtmlElement) {
        let inner = Rc::clone(&self.inner);
        let on_resize = Closure::<dyn FnMut()>::new(move || {
            if inner.following.get() {
                inner.to_bottom();
            }
        });
        if let Ok(observer) = ResizeObserver::new(on_resize.as_ref().unchecked_ref()) {
            observer.observe(list);
            self.observer = Some(observer);
        }
        let inner = Rc::clone(&self.inner);
        let on_scroll = Closure::<dyn FnMut()>::new(move || inner.scrolled());
        if let Some(target) = self.scroll_target() {
            let _ = target
                .add_event_listener_with_callback("scroll", on_scroll.as_ref().unchecked_ref());
        }
        self.on_resize = Some(on_resize);
        self.on_scroll = Some(on_scroll);
    }

    fn scroll_target(&self) -> Option<EventTarget> {
        match &self.inner.scroller {
            Some(element) => Some(element.clone().into()),
            None => web_sys::window().map(Into::into),
        }
    }
}

impl Drop for Follow {
    fn drop(&mut self) {
        if let Some(observer) = self.observer.take() {
            observer.disconnect();
        }
        if let (Some(target), Some(on_scroll)) = (self.scroll_target(), &self.on_scroll) {
            let _ = target
                .remove_event_listener_with_callback("scroll", on_scroll.as_ref().unchecked_ref());
        }
    }
}

impl Inner {
    fn set_following(&self, following: bool) {
        if self.following.replace(following) != following {
            (self.changed)(following);
        }
    }

    /// A scroll: back at the bottom follows again; moving up stops following. Content
    /// that grew before our own scroll to the end caught up is neither.
    fn scrolled(&self) {
        let top = self
            .scrolling_element()
            .map_or(0, |element| element.scroll_top());
        if self.at_bottom() {
            self.set_following(true);
        } else if top < self.last_top.get() {
            self.set_following(false);
        }
        self.last_top.set(top);
    }

    fn at_bottom(&self) -> bool {
        let Some(element) = self.scrolling_element() else {
            return true;
        };
        let below = element.scroll_height() - element.scroll_top() - element.client_height();
        below <= SLACK_PX
    }

    fn to_bottom(&self) {
        if let Some(element) = self.scrolling_element() {
            element.set_scroll_top(element.scroll_height());
        }
    }

    fn scrolling_element(&self) -> Option<Element> {
        self.scroller.clone().or_else(|| {
            web_sys::window()
                .and_then(|w| w.document())
                .and_then(|d| d.scrolling_element())
        })
    }
}

/// The nearest ancestor that scrolls its content (`overflow-y: auto | scroll`), if any.
fn scrollable_ancestor(element: &HtmlElement) -> Option<Element> {
    let window = web_sys::window()?;
    let mut next = element.parent_element();
    while let Some(candidate) = next {
        let overflow = window
            .get_computed_style(&candidate)
            .ok()
            .flatten()
            .and_then(|style| style.get_property_value("overflow-y").ok())
            .unwrap_or_default();
        if matches!(overflow.as_str(), "auto" | "scroll") {
            return Some(candidate);
        }
        next = candidate.parent_element();
    }
    None
}
