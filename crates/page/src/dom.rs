//! `dom`: the walk of a live document into a [`Snapshot`] — visible text by block, and
//! every interactive element with a number that stays with the element — and acts on a
//! numbered element, firing the events page scripts listen for.
//!
//! This module owns the walker ([`PageDomAdapter`]): the numbers it gives elements, the
//! walk it reuses until `watch` sees the page change, and the frames a person cannot
//! see. The walk itself is [`walk`]; what one element holds now (its value, state,
//! options, how it is drawn) is [`state`], read afresh on every snapshot.

pub(crate) mod state;
mod walk;

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;

use js_sys::{Reflect, WeakMap};
use wasm_bindgen::{JsCast, JsValue};
use web_sys::{Element, Node, Window};

use crate::realm;
use crate::watch::PageWatch;
use crate::{Act, Control, Snapshot, hidden, squash};

use state::{appearance, disabled, state};

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
        }
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
                control.value = value;
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

/// The addresses of this document's frames a person cannot see: transparent, a pixel
/// wide, off-screen, or inside hidden content (the browser's own `checkVisibility`,
/// which also reads ancestors' opacity). Each frame has a reader of its own in the
/// extension, which cannot tell from inside whether its frame is shown; its parent
/// says so, and what such a frame holds is not read.
pub fn hidden_frames() -> Vec<String> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let Some(frames) = window
        .document()
        .and_then(|d| d.query_selector_all("iframe, frame").ok())
    else {
        return Vec::new();
    };
    list(&frames)
        .into_iter()
        .filter_map(realm::into_element)
        .filter(|frame| !shown(&window, frame))
        .filter_map(|frame| {
            let address = Reflect::get(&frame, &"src".into()).ok()?.as_string()?;
            Some(if address.is_empty() || frame.has_attribute("srcdoc") {
                "about:srcdoc".to_owned()
            } else {
                address
            })
        })
        .collect()
}

/// Whether a person could see `element`: its own box and the browser's judgement of
/// its ancestors (`display`, `visibility`, `opacity`).
fn shown(window: &Window, element: &Element) -> bool {
    if hidden(&appearance(window, element)).is_some() {
        return false;
    }
    let check = Reflect::get(element, &"checkVisibility".into()).ok();
    let Some(check) = check.filter(JsValue::is_function) else {
        return true;
    };
    let options = js_sys::Object::new();
    for option in ["opacityProperty", "visibilityProperty"] {
        let _ = Reflect::set(&options, &option.into(), &true.into());
    }
    check
        .unchecked_into::<js_sys::Function>()
        .call1(element, &options)
        .ok()
        .and_then(|v| v.as_bool())
        .unwrap_or(true)
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
fn list(nodes: &web_sys::NodeList) -> Vec<Node> {
    (0..nodes.length()).filter_map(|i| nodes.item(i)).collect()
}
