//! `cover`: what the screen shows at a run of text, by the browser's own hit test
//! (`elementsFromPoint`): whether an opaque element lies over it, and what is really
//! behind it when its ancestors' colours say it is faint (an image placed under white
//! text is no ancestor of it). The browser can only tell for what is in the viewport;
//! elsewhere [`around`] looks at what the text's ancestors hold near it: a picture
//! under it, or a positioned opaque box drawn after it and over it.

use js_sys::Object;
use wasm_bindgen::JsCast;
use web_sys::{Document, Element, ShadowRoot, Window};

use super::state::appearance;
use crate::visibility::{Position, Rect, Rgba, covers};

/// What lies over and under a point of the screen.
pub(super) struct Screen {
    /// An opaque element is drawn over the text.
    pub covered: bool,
    /// The colour behind the text, if the point showed it: `Some(None)` for a
    /// picture, `None` when the hit test did not reach the text's element.
    pub backdrop: Option<Option<Rgba>>,
}

/// The screen at the middle of `rect` (page coordinates; the document's viewport sits
/// at `origin`), where `parent`'s text is drawn; `None` out of the viewport.
pub(super) fn at(
    window: &Window,
    parent: &Element,
    rect: Rect,
    origin: (f64, f64),
) -> Option<Screen> {
    let document: Document = parent.owner_document()?;
    let view = document.default_view()?;
    let (width, height) = (
        view.inner_width().ok()?.as_f64()?,
        view.inner_height().ok()?.as_f64()?,
    );
    let x = (rect.left + rect.right) / 2.0 - origin.0;
    let y = (rect.top + rect.bottom) / 2.0 - origin.1;
    if !(0.0..width).contains(&x) || !(0.0..height).contains(&y) {
        return around(window, parent, rect.moved(-origin.0, -origin.1));
    }
    // The document's hit test stops at a shadow root's host (it retargets), so text
    // in a shadow tree is asked of its own root, which lists that tree's elements
    // first, then the hosts and the document's below them.
    let stack = match parent.get_root_node().dyn_into::<ShadowRoot>() {
        Ok(root) => root.elements_from_point(x as f32, y as f32),
        Err(_) => document.elements_from_point(x as f32, y as f32),
    };
    let mut reached = false;
    for item in stack.iter() {
        // Elements all; a frame's are not this window's `Element` to `instanceof`.
        if !item.is_object() {
            continue;
        }
        let element: &Element = item.unchecked_ref();
        if Object::is(element, parent) {
            reached = true;
            continue;
        }
        if !reached {
            if parent.contains(Some(element)) || super::walk::ours(element) {
                continue;
            }
            let style = window.get_computed_style(element).ok().flatten();
            let sticky = style
                .and_then(|s| s.get_property_value("position").ok())
                .is_some_and(|p| p == "sticky");
            if covers(&appearance(window, element, (0.0, 0.0)), sticky) {
                return Some(Screen {
                    covered: true,
                    backdrop: None,
                });
            }
            continue;
        }
        let below = appearance(window, element, (0.0, 0.0));
        if below.pictured {
            return Some(Screen {
                covered: false,
                backdrop: Some(None),
            });
        }
        if let Some(colour) = below.background.filter(|c| c.a > 0.0) {
            let colour = colour.faded(below.opacity).over(Rgba::WHITE);
            return Some(Screen {
                covered: false,
                backdrop: Some(Some(colour)),
            });
        }
    }
    reached.then_some(Screen {
        covered: false,
        backdrop: Some(Some(Rgba::WHITE)),
    })
}

/// How many ancestors of a run of text [`around`] looks into.
const AROUND: usize = 8;

/// The same as [`at`] without the browser's hit test, for text out of the viewport
/// (`rect` in viewport coordinates): what `parent`'s ancestors hold over the text's
/// middle. A picture anywhere in them there leaves its colour unknown; a positioned
/// opaque box drawn after the text's branch covers it.
fn around(window: &Window, parent: &Element, rect: Rect) -> Option<Screen> {
    let (x, y) = (
        (rect.left + rect.right) / 2.0,
        (rect.top + rect.bottom) / 2.0,
    );
    let over = |e: &Element| {
        let r = e.get_bounding_client_rect();
        (r.left()..r.right()).contains(&x) && (r.top()..r.bottom()).contains(&y)
    };
    let mut branch = parent.clone();
    for _ in 0..AROUND {
        let ancestor = branch.parent_element()?;
        let pictures = ancestor
            .query_selector_all("img, picture, video, canvas, svg")
            .ok()?;
        let pictured = (0..pictures.length())
            .filter_map(|i| pictures.item(i))
            .any(|p| over(p.unchecked_ref()));
        let mut later = branch.next_element_sibling();
        while let Some(sibling) = later {
            let a = appearance(window, &sibling, (0.0, 0.0));
            if a.position != Position::Static && covers(&a, false) && over(&sibling) {
                return Some(Screen {
                    covered: true,
                    backdrop: None,
                });
            }
            later = sibling.next_element_sibling();
        }
        if pictured {
            return Some(Screen {
                covered: false,
                backdrop: Some(None),
            });
        }
        branch = ancestor;
    }
    None
}
