//! `frame`: the extension's reader in one frame of a tab (feature `frame`). The
//! extension's content script loads this build when its side panel first asks, and
//! answers the panel's requests with it: the frame's [`Snapshot`] as JSON, and an
//! [`Act`] (JSON) done to one of its numbered elements. The agent, its model and its
//! conversation stay in the panel; nothing here is reachable from the page's scripts.
//!
//! [`Snapshot`]: crate::Snapshot
//! [`Act`]: crate::Act

use wasm_bindgen::prelude::*;

use crate::{Act, PageDomAdapter};

/// One frame's document, read and acted on.
#[wasm_bindgen]
pub struct Frame {
    dom: PageDomAdapter,
}

#[wasm_bindgen]
impl Frame {
    /// Starts watching this frame's document (its own frames are read by theirs).
    #[wasm_bindgen(constructor)]
    #[allow(clippy::new_without_default)]
    pub fn new() -> Frame {
        Frame {
            dom: PageDomAdapter::new(false),
        }
    }

    /// The frame as it is now, as JSON.
    pub fn snapshot(&self) -> Result<String, String> {
        let snapshot = self.dom.snapshot()?;
        serde_json::to_string(&snapshot).map_err(|e| e.to_string())
    }

    /// The addresses of this frame's own frames a person cannot see (their readers
    /// cannot tell): the panel leaves what they hold out.
    #[wasm_bindgen(js_name = hiddenFrames)]
    pub fn hidden_frames(&self) -> Vec<String> {
        crate::hidden_frames()
    }

    /// Does `act` (JSON: `{"act": "fill", "value": "…"}`) to element `element`.
    pub fn perform(&self, element: u32, act: &str) -> Result<(), String> {
        let act: Act =
            serde_json::from_str(act).map_err(|e| format!("not an action ({e}): {act}"))?;
        self.dom.perform(element, &act)
    }
}
