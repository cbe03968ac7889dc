//! What a person can operate that no role announces: a focusable `span` (a slider's
//! handle, a card), an element drawn for the pointer (a custom dropdown's items, an
//! autocomplete's suggestions as plain list items), and the items of a popup a field
//! owns (`aria-controls`, `aria-owns`) or shows beside itself while it has the focus.
//!
//! This module owns the decisions, from what the walk read of an element: the role
//! such an element is listed with ([`inferred_role`]), whether a box is a focused
//! field's popup ([`beside`]), where a slider's handle sits along its track
//! ([`position`]), and how many such elements one walk lists ([`MAX_INFERRED`]). The
//! walk (`dom::walk`) reads the attributes, the computed cursor and the boxes.

use crate::visibility::Rect;

/// How many elements with no role one walk lists at most: a page of ten thousand
/// clickable rows still leaves the listing its real controls.
pub const MAX_INFERRED: usize = 300;

/// Tags that are never the control themselves, whatever their cursor or `tabindex`:
/// the page's regions and lists, and a label (its field is listed). What they hold may
/// be (a list drawn for the pointer passes it on to its items).
const REGIONS: [&str; 20] = [
    "html", "body", "main", "nav", "header", "footer", "aside", "form", "fieldset", "dialog", "ul",
    "ol", "dl", "menu", "table", "thead", "tbody", "tfoot", "pre", "label",
];

/// Roles an element may have and still be listed by its cues: none of them says it is
/// operable, and none is a region or a container of controls.
const PLAIN_ROLES: [&str; 12] = [
    "generic",
    "presentation",
    "none",
    "group",
    "listitem",
    "cell",
    "gridcell",
    "row",
    "columnheader",
    "rowheader",
    "img",
    "figure",
];

/// What the walk read of an element no interactive role lists.
#[derive(Debug, Clone, Copy, Default)]
pub struct Cues<'a> {
    /// Its tag, lower case.
    pub tag: &'a str,
    /// Its `role` attribute.
    pub role: Option<&'a str>,
    /// Its `tabindex` attribute.
    pub tabindex: Option<&'a str>,
    /// Its computed `cursor` is `pointer` and its parent's is not: the pointer is
    /// drawn from here down.
    pub pointer: bool,
    /// Its `class` attribute, and its parent's.
    pub class: &'a str,
    pub parent_class: &'a str,
    /// It is an item of a popup that a field owns or shows beside itself.
    pub popup_item: bool,
}

/// The role an element with no interactive role is listed with, from its cues; `None`
/// when nothing says a person operates it. A handle in a slider's track (by its and
/// its track's classes: `ui-slider-handle`, `slider-thumb`) is a `slider`; a popup's
/// item an `option` of its field; an element drawn for the pointer `clickable`; one
/// that takes the keyboard focus (`tabindex` 0 or more) `focusable`.
pub fn inferred_role(cues: &Cues) -> Option<&'static str> {
    if REGIONS.contains(&cues.tag) {
        return None;
    }
    let plain = cues
        .role
        .and_then(|r| r.split_whitespace().next())
        .is_none_or(|r| PLAIN_ROLES.iter().any(|p| p.eq_ignore_ascii_case(r)));
    if !plain {
        return None;
    }
    // HTML's rules for parsing integers: spaces, a sign, then digits (what follows
    // them is ignored); a negative index only a script can focus.
    let focusable = cues.tabindex.is_some_and(|t| {
        let t = t.trim_start();
        let t = t.strip_prefix('+').unwrap_or(t);
        t.starts_with(|c: char| c.is_ascii_digit())
    });
    if (focusable || cues.pointer) && handle(cues.class, cues.parent_class) {
        return Some("slider");
    }
    if cues.popup_item {
        Some("option")
    } else if cues.pointer {
        Some("clickable")
    } else if focusable {
        Some("focusable")
    } else {
        None
    }
}

/// Whether the pointer drawn over a `tag` element is passed on to what it holds, each
/// item its own control (a list, a table, a region), rather than drawn for the element
/// itself.
pub fn passes_pointer_on(tag: &str) -> bool {
    REGIONS.contains(&tag)
}

/// Whether classes name a slider's handle: a handle, thumb or knob word in its own
/// class, and a slider or range word in its own or its track's.
fn handle(class: &str, track: &str) -> bool {
    let has = |class: &str, wanted: &[&str]| {
        class
            .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
            .any(|w| wanted.iter().any(|x| x.eq_ignore_ascii_case(w)))
    };
    let slider = ["slider", "range"];
    has(class, &["handle", "thumb", "knob"]) && (has(class, &slider) || has(track, &slider))
}

/// Whether a box drawn at `popup` is the popup of a field at `field` (page
/// coordinates): just below or just above it, overlapping it across, and at least half
/// as wide (a suggestion list, not an icon or a note beside it).
pub fn beside(field: Rect, popup: Rect) -> bool {
    const GAP: f64 = 48.0;
    const OVERLAP: f64 = 4.0;
    let width = |r: Rect| r.right - r.left;
    let across = popup.left < field.right && popup.right > field.left;
    let below = popup.top >= field.bottom - OVERLAP && popup.top <= field.bottom + GAP;
    let above = popup.bottom <= field.top + OVERLAP && popup.bottom >= field.top - GAP;
    across && (below || above) && width(popup) >= width(field) / 2.0 && popup.bottom > popup.top
}

/// Where a slider's handle at `handle` sits along its track at `track`, as a
/// percentage of the track (`"40%"`), across a wide track and up a tall one; `None`
/// for a track of no size.
pub fn position(handle: Rect, track: Rect) -> Option<String> {
    let (width, height) = (track.right - track.left, track.bottom - track.top);
    let fraction = if width >= height {
        ((handle.left + handle.right) / 2.0 - track.left) / width
    } else {
        (track.bottom - (handle.top + handle.bottom) / 2.0) / height
    };
    // A whole number, formatted as one: a float's formatting would cost the page
    // build kilobytes.
    let percent = (fraction.clamp(0.0, 1.0) * 100.0).round() as u32;
    (width.max(height) > 0.0 && fraction.is_finite()).then(|| format!("{percent}%"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cues(tag: &str) -> Cues<'_> {
        Cues {
            tag,
            ..Cues::default()
        }
    }

    #[test]
    fn a_focusable_span_is_listed_and_a_plain_one_is_not() {
        assert_eq!(inferred_role(&cues("span")), None);
        let card = Cues {
            tabindex: Some("0"),
            ..cues("div")
        };
        assert_eq!(inferred_role(&card), Some("focusable"));
        let programmatic = Cues {
            tabindex: Some("-1"),
            ..cues("div")
        };
        assert_eq!(
            inferred_role(&programmatic),
            None,
            "only a script focuses it"
        );
        let nonsense = Cues {
            tabindex: Some("soon"),
            ..cues("div")
        };
        assert_eq!(inferred_role(&nonsense), None);
        let spaced = Cues {
            tabindex: Some(" +2px"),
            ..cues("div")
        };
        assert_eq!(
            inferred_role(&spaced),
            Some("focusable"),
            "as HTML parses it"
        );
    }

    #[test]
    fn a_handle_in_a_slider_track_is_a_slider() {
        let jquery_ui = Cues {
            tabindex: Some("0"),
            class: "ui-slider-handle ui-corner-all ui-state-default",
            ..cues("span")
        };
        assert_eq!(inferred_role(&jquery_ui), Some("slider"));
        let thumb = Cues {
            pointer: true,
            class: "thumb",
            parent_class: "range-track",
            ..cues("div")
        };
        assert_eq!(inferred_role(&thumb), Some("slider"));
        let door_handle = Cues {
            tabindex: Some("0"),
            class: "door handle",
            ..cues("span")
        };
        assert_eq!(inferred_role(&door_handle), Some("focusable"));
        let inert = Cues {
            class: "ui-slider-handle",
            ..cues("span")
        };
        assert_eq!(
            inferred_role(&inert),
            None,
            "neither focusable nor pointed at"
        );
    }

    #[test]
    fn the_pointer_makes_an_element_clickable_and_a_popups_item_an_option() {
        let item = Cues {
            pointer: true,
            ..cues("li")
        };
        assert_eq!(inferred_role(&item), Some("clickable"));
        let suggestion = Cues {
            popup_item: true,
            ..cues("li")
        };
        assert_eq!(inferred_role(&suggestion), Some("option"));
        let pointed = Cues {
            pointer: true,
            popup_item: true,
            tabindex: Some("0"),
            ..cues("div")
        };
        assert_eq!(inferred_role(&pointed), Some("option"));
    }

    #[test]
    fn regions_and_elements_with_a_role_of_their_own_are_never_inferred() {
        for tag in ["ul", "table", "body", "form", "nav", "pre", "label"] {
            let region = Cues {
                pointer: true,
                tabindex: Some("0"),
                ..cues(tag)
            };
            assert_eq!(inferred_role(&region), None, "{tag}");
            assert!(passes_pointer_on(tag));
        }
        assert!(!passes_pointer_on("li"));
        let scroller = Cues {
            role: Some("region"),
            tabindex: Some("0"),
            ..cues("div")
        };
        assert_eq!(inferred_role(&scroller), None);
        let dialog = Cues {
            role: Some("dialog"),
            tabindex: Some("0"),
            ..cues("div")
        };
        assert_eq!(inferred_role(&dialog), None);
        let sortable = Cues {
            role: Some("columnheader"),
            tabindex: Some("0"),
            ..cues("th")
        };
        assert_eq!(inferred_role(&sortable), Some("focusable"));
        let wrapper = Cues {
            role: Some("presentation"),
            popup_item: true,
            ..cues("li")
        };
        assert_eq!(inferred_role(&wrapper), Some("option"));
    }

    #[test]
    fn a_popup_is_beside_its_field_below_or_above_and_about_as_wide() {
        let field = Rect::sized(100.0, 100.0, 200.0, 30.0);
        assert!(beside(field, Rect::sized(100.0, 130.0, 200.0, 90.0)));
        assert!(
            beside(field, Rect::sized(100.0, 134.0, 260.0, 90.0)),
            "a gap"
        );
        assert!(
            beside(field, Rect::sized(100.0, 10.0, 200.0, 90.0)),
            "above"
        );
        assert!(
            !beside(field, Rect::sized(280.0, 105.0, 16.0, 16.0)),
            "a clear button over the field"
        );
        assert!(
            !beside(field, Rect::sized(100.0, 132.0, 60.0, 16.0)),
            "a note under it"
        );
        assert!(
            !beside(field, Rect::sized(100.0, 400.0, 200.0, 90.0)),
            "far"
        );
        assert!(
            !beside(field, Rect::sized(320.0, 130.0, 200.0, 90.0)),
            "aside"
        );
        assert!(
            !beside(field, Rect::sized(100.0, 130.0, 200.0, 0.0)),
            "empty"
        );
    }

    #[test]
    fn a_handle_sits_along_its_track_as_a_percentage() {
        let track = Rect::sized(100.0, 50.0, 200.0, 10.0);
        let at = |center: f64| Rect::sized(center - 8.0, 46.0, 16.0, 18.0);
        assert_eq!(position(at(180.0), track).as_deref(), Some("40%"));
        assert_eq!(position(at(100.0), track).as_deref(), Some("0%"));
        assert_eq!(position(at(305.0), track).as_deref(), Some("100%"));
        let tall = Rect::sized(0.0, 0.0, 10.0, 100.0);
        let up = Rect::sized(0.0, 20.0, 10.0, 10.0);
        assert_eq!(position(up, tall).as_deref(), Some("75%"), "bottom is 0");
        assert_eq!(position(at(1.0), Rect::sized(0.0, 0.0, 0.0, 0.0)), None);
    }
}
