//! `frame`: the extension's reader in one frame of a tab (feature `frame`). The
//! extension's content script loads this build when its side panel first asks, and
//! answers the panel's requests with it: the frame's [`Snapshot`] as JSON, which of
//! its own frames a person can see, where it is among its parent's frames and whether
//! it is hidden as seen from inside, and an [`Act`] (JSON) done to one of its numbered
//! elements. The agent, its model and its conversation stay in the panel; nothing here
//! is reachable from the page's scripts.
//!
//! [`Snapshot`]: crate::Snapshot
//! [`Act`]: crate::Act

use serde::Serialize;
use wasm_bindgen::prelude::*;

use crate::{Act, Inside, PageDomAdapter, frame_hidden, place_among_frames};

/// One frame's document, read and acted on.
#[wasm_bindgen]
pub struct Frame {
    dom: PageDomAdapter,
}

#[wasm_bindgen]
impl Frame {
    /// Starts watching this frame's document (its own frames are read by theirs);
    /// `opener` opens closed shadow roots (`chrome.dom.openOrClosedShadowRoot`).
    #[wasm_bindgen(constructor)]
    pub fn new(opener: Option<js_sys::Function>) -> Frame {
        let dom = PageDomAdapter::new(false);
        Frame {
            dom: match opener {
                Some(opener) => dom.opening_closed_roots(opener),
                None => dom,
            },
        }
    }

    /// The frame as it is now, as JSON.
    pub fn snapshot(&self) -> Result<String, String> {
        let snapshot = self.dom.snapshot()?;
        serde_json::to_string(&snapshot).map_err(|e| e.to_string())
    }

    /// As JSON, which of this window's frames a person can see as of the last
    /// snapshot, by position (`window[i]`), and how many it has:
    /// `{"shown": [0, 2], "count": 3}`. The panel reads a frame only when its parent
    /// lists it here.
    #[wasm_bindgen(js_name = shownFrames)]
    pub fn shown_frames(&self) -> String {
        let (shown, count) = self.dom.shown_frames();
        json(&Frames { shown, count })
    }

    /// As JSON, where this frame is among its parent's (`{"index": 1, "count": 3}`,
    /// index `null` when its parent does not list it) and whether it is hidden as
    /// seen from inside: its own viewport, and IntersectionObserver v2's
    /// `isIntersecting` and `isVisible` for its document (`undefined` where the
    /// browser has no such observer).
    pub fn place(&self, intersecting: Option<bool>, visible: Option<bool>) -> String {
        let window = web_sys::window();
        let size = |f: fn(&web_sys::Window) -> Result<JsValue, JsValue>| {
            window
                .as_ref()
                .and_then(|w| f(w).ok()?.as_f64())
                .unwrap_or(0.0)
        };
        let inside = Inside {
            width: size(web_sys::Window::inner_width),
            height: size(web_sys::Window::inner_height),
            intersecting,
            visible,
        };
        let (index, count) = place_among_frames().map_or((None, 0), |(i, n)| (Some(i), n));
        json(&Place {
            index,
            count,
            hidden: frame_hidden(&inside).is_some(),
        })
    }

    /// Does `act` (JSON: `{"act": "fill", "value": "…"}`) to element `element`.
    pub fn perform(&self, element: u32, act: &str) -> Result<(), String> {
        let act: Act =
            serde_json::from_str(act).map_err(|e| format!("not an action ({e}): {act}"))?;
        self.dom.perform(element, &act)
    }
}

/// Which of a window's frames a person can see, by position, of how many.
#[derive(Serialize)]
struct Frames {
    shown: Vec<u32>,
    count: u32,
}

/// Where a frame is among its parent's, and whether it is hidden as seen from inside.
#[derive(Serialize)]
struct Place {
    index: Option<u32>,
    count: u32,
    hidden: bool,
}

fn json(value: &impl Serialize) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
