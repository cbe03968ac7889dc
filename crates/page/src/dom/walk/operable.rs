//! `operable`: the walk's part in listing what a person operates that has no role
//! (a focusable `span`, an element drawn for the pointer, a popup's items) and in
//! tying a popup to its field: the popups fields name (`aria-controls`, `aria-owns`)
//! and the one shown beside the focused field. The decisions are
//! [`crate::operable`]'s; this reads the page for them.

use web_sys::{Document, Element, Node};

use super::super::state::{bounds, disabled, slider_value, state};
use super::super::{by_id, list};
use super::{Place, Walk, ours};
use crate::name::accname;
use crate::realm;
use crate::visibility::{Position, Rect};
use crate::{Appearance, Control, Cues, MAX_INFERRED, beside, inferred_role, role_of};

/// A popup of a field, as the walk met it.
pub(super) struct Popup {
    /// The number of its field.
    owner: u32,
    /// The element whose children are its items (under any wrappers of one child).
    items: Element,
    /// Whether it holds list items: then they are its items, wherever they sit.
    lists: bool,
}

/// How an element was listed.
#[derive(Clone, Copy)]
pub(super) enum Listed {
    Role(&'static str),
    /// By its cues alone, at this place among the controls.
    Inferred(usize),
}

impl Listed {
    /// Whether what it holds is part of it, never a control of its own found by its
    /// cues (a button's icon drawn for the pointer); a list's items are their own.
    pub(super) fn encloses(self) -> bool {
        !matches!(self, Listed::Role("listbox" | "combobox"))
    }
}

/// Where an element sits, for listing it by its cues.
#[derive(Clone, Copy)]
pub(super) struct Near {
    /// Its parent's place.
    pub outer: Place,
    /// The pointer is drawn from it down (its parent draws none).
    pub pointer: bool,
    /// It is an item of the popup it is in.
    pub item: bool,
}

/// The popups the document's fields name with `aria-controls` or `aria-owns`, each
/// with its field.
pub(super) fn owned_popups(document: &Document) -> Vec<(Element, Element)> {
    let Ok(named) = document.query_selector_all("[aria-controls], [aria-owns]") else {
        return Vec::new();
    };
    let mut owned = Vec::new();
    for field in list(&named).into_iter().filter_map(realm::into_element) {
        if !typed(&field) {
            continue;
        }
        let ids = ["aria-controls", "aria-owns"].map(|a| field.get_attribute(a));
        for id in ids.iter().flatten().flat_map(|ids| ids.split_whitespace()) {
            if let Some(popup) = by_id(&field, id) {
                owned.push((popup, field.clone()));
            }
        }
    }
    owned
}

/// The field with the keyboard focus (inside shadow roots too), with its box in page
/// coordinates; `None` when the focus is elsewhere, or in the agent's own widget.
pub(super) fn focused_field(document: &Document, origin: (f64, f64)) -> Option<(Element, Rect)> {
    let mut active = document.active_element()?;
    loop {
        if ours(&active) {
            return None;
        }
        match active.shadow_root().and_then(|root| root.active_element()) {
            Some(inner) => active = inner,
            None => break,
        }
    }
    if !typed(&active) {
        return None;
    }
    let r = active.get_bounding_client_rect();
    let rect = Rect::sized(
        r.left() + origin.0,
        r.top() + origin.1,
        r.width(),
        r.height(),
    );
    Some((active, rect))
}

/// The most elements one item of a popup holds: a suggestion is a line of text, at most
/// with an icon, a highlight or a second line. A child of the popup holding more is a
/// part of it (a calendar's grid of days, a group of options), and what it holds is
/// listed instead: read as one item, a calendar's days were one `option` whose number
/// no day answered to.
const MOST_IN_ITEM: u32 = 24;

/// Whether `element` holds more elements than one popup item does ([`MOST_IN_ITEM`]);
/// an icon's drawing counts once, not by its shapes (five stars of a rating are five).
fn holds_many(element: &Element) -> bool {
    element
        .query_selector_all("*:not(svg *)")
        .is_ok_and(|all| all.length() > MOST_IN_ITEM)
}

/// A field a person types into, which may own a popup of suggestions.
fn typed(field: &Element) -> bool {
    let tag = field.local_name();
    let attr = |name: &str| field.get_attribute(name);
    let editable = attr("contenteditable").is_some_and(|v| v != "false");
    let role = role_of(&tag, attr("type").as_deref(), attr("role").as_deref());
    editable || (tag != "select" && matches!(role, Some("textbox" | "searchbox" | "combobox")))
}

impl Walk<'_> {
    /// The popup `element` is, drawn as `drawn`: one a field names, or one shown beside
    /// the focused field; its place among the walk's popups.
    pub(super) fn popup_at(&mut self, element: &Element, drawn: &Appearance) -> Option<usize> {
        let named = self.owned.iter().find(|(popup, _)| popup == element);
        let owner = match named {
            Some((_, field)) => field.clone(),
            None => {
                let (field, at) = self.focused.as_ref()?;
                let positioned = matches!(drawn.position, Position::Absolute | Position::Fixed);
                let rect = Rect::sized(drawn.left, drawn.top, drawn.width, drawn.height);
                let node: &Node = field;
                if !positioned || !beside(*at, rect) || element.contains(Some(node)) {
                    return None;
                }
                field.clone()
            }
        };
        let mut items = element.clone();
        while items.child_element_count() == 1 {
            match items.first_element_child() {
                Some(only) => items = only,
                None => break,
            }
        }
        let lists = element.query_selector("li").ok().flatten().is_some();
        self.popups.push(Popup {
            owner: self.adapter.number(&owner),
            items,
            lists,
        });
        Some(self.popups.len() - 1)
    }

    /// Whether `element` is an item of popup `popup`.
    pub(super) fn item(&self, popup: usize, element: &Element, tag: &str) -> bool {
        let Some(popup) = self.popups.get(popup) else {
            return false;
        };
        if popup.lists {
            tag == "li"
        } else {
            element.parent_element().as_ref() == Some(&popup.items) && !holds_many(element)
        }
    }

    /// The number of the field whose popup `place` is in.
    pub(super) fn owner(&self, place: Place) -> Option<u32> {
        self.popups.get(place.popup?).map(|p| p.owner)
    }

    /// Lists `element`, which has no interactive role, when its cues say a person
    /// operates it ([`inferred_role`]): visible, in no listed control, within
    /// [`MAX_INFERRED`]. Its name is its content's; a slider's handle says its value,
    /// or where it sits, and takes its track's name when it has none.
    pub(super) fn infer(
        &mut self,
        element: &Element,
        tag: &str,
        role: Option<&str>,
        visible: bool,
        near: Near,
    ) -> Option<Listed> {
        let cued = near.pointer || near.item || element.has_attribute("tabindex");
        if !cued || near.outer.inside || !visible || self.inferred >= MAX_INFERRED {
            return None;
        }
        let class = |e: Option<&Element>| e.and_then(|e| e.get_attribute("class"));
        let parent = element.parent_element();
        let (own, track) = (class(Some(element)), class(parent.as_ref()));
        let tabindex = element.get_attribute("tabindex");
        let role = inferred_role(&Cues {
            tag,
            role,
            tabindex: tabindex.as_deref(),
            pointer: near.pointer,
            class: own.as_deref().unwrap_or_default(),
            parent_class: track.as_deref().unwrap_or_default(),
            popup_item: near.item,
        })?;
        self.inferred += 1;
        let id = self.adapter.number(element);
        let mut parts = accname::content_name(self.window, element);
        let (mut value, checked, _) = state(element, None, false);
        if role == "slider" {
            value = slider_value(element, value);
            if let Some(track) = parent.filter(|_| parts.iter().all(|p| p.text.trim().is_empty())) {
                parts = accname::name(self.window, &track);
            }
        }
        let (min, max) = bounds(element, role);
        self.names.push(parts);
        self.found.insert(id, element.clone());
        let at = self.controls.len();
        self.controls.push(Control {
            id,
            role: role.into(),
            name: String::new(),
            value,
            min,
            max,
            checked,
            disabled: disabled(element),
            visible,
            options: Vec::new(),
            href: None,
            form: None,
            sensitive: false,
            focused: false,
            popup_of: self.owner(near.outer),
            frame: None,
        });
        Some(Listed::Inferred(at))
    }

    /// The end of the element listed by its cues at `at`: dropped from the listing
    /// when it holds controls (a card with its own buttons, a scrolling region with
    /// links), which a person operates instead. Its number still reaches it, as any
    /// element's of this walk, though no listing names it.
    pub(super) fn end(&mut self, at: usize) {
        if self.controls.len() <= at + 1 || self.names.len() != self.controls.len() {
            return;
        }
        self.controls.remove(at);
        self.names.remove(at);
    }
}
