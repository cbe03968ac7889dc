//! `dom`: the walk of a live document into a [`Snapshot`] — visible text by block, and
//! every interactive element with a number that stays with the element — and acts on a
//! numbered element, firing the events page scripts listen for.
//!
//! This module owns the walker ([`PageDomAdapter`]): the numbers it gives elements, the
//! walk it reuses until `watch` sees the page change, and which of this window's
//! frames a person can see, and where this window is among its parent's frames (the
//! extension reads a frame only when its parent sees it). The walk itself is
//! [`walk`]; what one element holds now (its value, state, options, how it is drawn)
//! is [`state`], read afresh on every snapshot; what the screen shows over and under
//! a run of text is [`cover`].

mod cover;
pub(crate) mod state;
mod walk;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use js_sys::{Function, Object, Reflect, WeakMap};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Node, ShadowRoot, Window};

use crate::watch::PageWatch;
use crate::{Act, Control, Snapshot, squash};

use state::{disabled, slider_value, state};

/// The document of this window, read and acted on for the page tools. Numbers are
/// kept in a `WeakMap` on the elements themselves, so an element keeps its number
/// while it lives, and a removed one lets go of it.
pub struct PageDomAdapter {
    numbers: WeakMap,
    /// The elements of the last snapshot, by number: what actions reach.
    elements: RefCell<BTreeMap<u32, Element>>,
    next: Cell<u32>,
    watch: PageWatch,
    /// The last walk, reused while the page has not changed.
    last: RefCell<Option<Snapshot>>,
    /// Whether same-origin frames are read as part of this page (the one-tag build);
    /// the extension reads each frame with a walker of its own.
    into_frames: bool,
    /// The windows of the frames the last walk found a person can see.
    frames: RefCell<Vec<JsValue>>,
    /// Opens an element's closed shadow root (the extension's
    /// `chrome.dom.openOrClosedShadowRoot`), where the adapter may.
    opener: Option<Function>,
}

impl PageDomAdapter {
    /// A walker of this window's document; `into_frames`: read same-origin frames'
    /// documents in place, as part of the page.
    pub fn new(into_frames: bool) -> Self {
        Self {
            numbers: WeakMap::new(),
            elements: RefCell::new(BTreeMap::new()),
            next: Cell::new(1),
            watch: PageWatch::start(),
            last: RefCell::new(None),
            into_frames,
            frames: RefCell::new(Vec::new()),
            opener: None,
        }
    }

    /// This walker, reading closed shadow roots too with `opener` (a function of an
    /// element that returns its shadow root, open or closed, or null).
    pub fn opening_closed_roots(self, opener: Function) -> Self {
        Self {
            opener: Some(opener),
            ..self
        }
    }

    /// The positions, among this window's frames (`window[i]`), of those a person can
    /// see as of the last snapshot; and how many frames the window has. A frame the
    /// walk did not reach (inside a hidden element, an `<embed>`) is not among them.
    pub fn shown_frames(&self) -> (Vec<u32>, u32) {
        let Some(window) = web_sys::window() else {
            return (Vec::new(), 0);
        };
        let count = window.length();
        let shown = self.frames.borrow();
        let at = |i: u32| Reflect::get(&window, &JsValue::from(i)).ok();
        let positions = (0..count)
            .filter(|&i| at(i).is_some_and(|view| shown.iter().any(|s| Object::is(s, &view))))
            .collect();
        (positions, count)
    }

    fn closed_root(&self, element: &Element) -> Option<ShadowRoot> {
        let root = self.opener.as_ref()?.call1(&JsValue::NULL, element).ok()?;
        root.is_object().then(|| root.unchecked_into())
    }

    /// Reads the page as it is now: the last walk with its fields read again while
    /// nothing changed, a new walk otherwise.
    pub fn snapshot(&self) -> Result<Snapshot, String> {
        let window = web_sys::window().ok_or("there is no browser window")?;
        let changed = self.watch.take_changed();
        let mut snapshot = match self.last.borrow_mut().take() {
            Some(last) if !changed && self.all_connected() => self.refresh(last),
            _ => self.walk(&window)?,
        };
        snapshot.selection = selection(&window);
        snapshot.location = location(&window);
        snapshot.version = self.watch.version();
        self.mark_focus(&window, &mut snapshot.controls);
        *self.last.borrow_mut() = Some(snapshot.clone());
        Ok(snapshot)
    }

    /// Does `act` to the element numbered `element` of the last snapshot.
    pub fn perform(&self, element: u32, act: &Act) -> Result<(), String> {
        crate::act::perform(&self.element(element)?, act)
    }

    fn number(&self, element: &Element) -> u32 {
        if let Some(n) = self.numbers.get(element).as_f64() {
            return n as u32;
        }
        let n = self.next.get();
        self.next.set(n + 1);
        self.numbers.set(element, &JsValue::from(n));
        n
    }

    /// Marks the control that has the keyboard focus (inside shadow roots too).
    fn mark_focus(&self, window: &Window, controls: &mut [Control]) {
        let mut active = window.document().and_then(|d| d.active_element());
        while let Some(inner) = active
            .as_ref()
            .and_then(Element::shadow_root)
            .and_then(|root| root.active_element())
        {
            active = Some(inner);
        }
        let elements = self.elements.borrow();
        for control in controls {
            control.focused = active.is_some() && elements.get(&control.id) == active.as_ref();
        }
    }

    fn all_connected(&self) -> bool {
        self.elements.borrow().values().all(|e| e.is_connected())
    }

    /// The last walk with each field's value, state and enabledness read again: a
    /// page script may set them without any event or mutation.
    fn refresh(&self, mut last: Snapshot) -> Snapshot {
        let elements = self.elements.borrow();
        for control in &mut last.controls {
            if let Some(element) = elements.get(&control.id) {
                let kind = element.get_attribute("type");
                let (value, checked, options) = state(element, kind.as_deref(), control.sensitive);
                control.value = if control.role == "slider" {
                    slider_value(element, value)
                } else {
                    value
                };
                control.checked = checked;
                control.options = options;
                control.disabled = disabled(element);
            }
        }
        last
    }

    fn element(&self, id: u32) -> Result<Element, String> {
        let element = self.elements.borrow().get(&id).cloned();
        element
            .filter(|e| e.is_connected())
            .ok_or_else(|| format!("element [{id}] is not on the page any more"))
    }
}

/// Where this window is among its parent's frames (`parent[i]`), with how many the
/// parent has: `None` for the top window, or when the parent does not list it (a frame
/// in a shadow tree). Read from inside, as a content script can even across origins.
pub fn place_among_frames() -> Option<(u32, u32)> {
    let window = web_sys::window()?;
    let parent = window.parent().ok()??;
    if Object::is(&parent, &window) {
        return None;
    }
    let count = parent.length();
    (0..count)
        .find(|&i| Reflect::get(&parent, &JsValue::from(i)).is_ok_and(|v| Object::is(&v, &window)))
        .map(|i| (i, count))
}

/// What the person has selected on the page, as the browser renders it.
fn selection(window: &Window) -> String {
    let selected = window.get_selection().ok().flatten();
    let text: String = selected.map(|s| s.to_string().into()).unwrap_or_default();
    squash(&text)
}

/// Origin and path, without the query or fragment (they may carry tokens).
fn location(window: &Window) -> String {
    let location = window.location();
    format!(
        "{}{}",
        location.origin().unwrap_or_default(),
        location.pathname().unwrap_or_default()
    )
}

/// Every node of a list, in order.
pub(crate) fn list(nodes: &web_sys::NodeList) -> Vec<Node> {
    (0..nodes.length()).filter_map(|i| nodes.item(i)).collect()
}

/// What `target.name()` returns, when `target` has such a method and it does not throw.
pub(crate) fn call(target: &JsValue, name: &str) -> Option<JsValue> {
    let method = Reflect::get(target, &name.into()).ok()?;
    method.dyn_into::<Function>().ok()?.call0(target).ok()
}

/// The element with `id` in `element`'s own tree: its shadow root's, or its
/// document's (ids, and the references `aria-labelledby` and `url(#…)` make, are
/// scoped to each).
pub(crate) fn by_id(element: &Element, id: &str) -> Option<Element> {
    let root = element.get_root_node();
    if root.node_type() == Node::DOCUMENT_FRAGMENT_NODE {
        return root
            .unchecked_ref::<web_sys::DocumentFragment>()
            .get_element_by_id(id);
    }
    element.owner_document()?.get_element_by_id(id)
}
