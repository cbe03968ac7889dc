//! `state`: what one element holds and how it is drawn, read afresh on every
//! snapshot (a page script may change them without any event): its value, checked
//! state and options, whether it is disabled, and its computed appearance.

use web_sys::{
    Element, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement, Window,
};

use crate::realm::{self, tagged};
use crate::{Appearance, clip, mask, squash};

/// Longest text of a `contenteditable` editor kept as its value.
const EDITABLE_LIMIT: usize = 2_000;

pub(super) fn disabled(element: &Element) -> bool {
    element.matches(":disabled").unwrap_or(false)
        || element.get_attribute("aria-disabled").as_deref() == Some("true")
}

/// A checkbox or radio button.
pub(crate) fn toggle(element: &Element) -> bool {
    element
        .matches("input[type=checkbox], input[type=radio]")
        .unwrap_or(false)
}

pub(crate) fn appearance(window: &Window, element: &Element) -> Appearance {
    let style = window.get_computed_style(element).ok().flatten();
    let prop = |name: &str| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(name).ok())
            .unwrap_or_default()
    };
    let rect = element.get_bounding_client_rect();
    let font = prop("font-size")
        .trim_end_matches("px")
        .parse::<f64>()
        .unwrap_or(16.0);
    Appearance {
        display_none: prop("display") == "none" || element.has_attribute("hidden"),
        visibility_hidden: matches!(prop("visibility").as_str(), "hidden" | "collapse"),
        aria_hidden: element.get_attribute("aria-hidden").as_deref() == Some("true"),
        transparent: prop("opacity").parse::<f64>().is_ok_and(|o| o <= 0.0),
        left: rect.left() + window.scroll_x().unwrap_or(0.0),
        top: rect.top() + window.scroll_y().unwrap_or(0.0),
        width: rect.width(),
        height: rect.height(),
        clips: prop("overflow-x") != "visible" || prop("overflow-y") != "visible" || font < 1.0,
        boxless: prop("display") == "contents",
    }
}

/// Value, checked state and options of a control. A sensitive field's value is
/// never read out: only how long it is.
pub(super) fn state(
    element: &Element,
    kind: Option<&str>,
    sensitive: bool,
) -> (Option<String>, Option<bool>, Vec<String>) {
    let text = |value: String| {
        let value = if sensitive { mask(&value) } else { value };
        (Some(value), None, Vec::new())
    };
    if let Some(input) = tagged::<HtmlInputElement>(element, "input") {
        return match kind.map(str::to_ascii_lowercase).as_deref() {
            Some("checkbox" | "radio") => (None, Some(input.checked()), Vec::new()),
            Some("submit" | "button" | "reset" | "image") => (None, None, Vec::new()),
            _ => text(input.value()),
        };
    }
    if let Some(area) = tagged::<HtmlTextAreaElement>(element, "textarea") {
        return text(area.value());
    }
    if element
        .get_attribute("contenteditable")
        .is_some_and(|v| v != "false")
    {
        let content = element.text_content().unwrap_or_default();
        return text(clip(&squash(&content), EDITABLE_LIMIT));
    }
    if let Some(select) = tagged::<HtmlSelectElement>(element, "select") {
        let options = options(select);
        let chosen = usize::try_from(select.selected_index()).ok();
        let value = chosen.and_then(|i| options.get(i).map(|(text, _)| text.clone()));
        return (
            value,
            None,
            options.into_iter().map(|(text, _)| text).collect(),
        );
    }
    let checked = element.get_attribute("aria-checked").map(|v| v == "true");
    (None, checked, Vec::new())
}

pub(crate) fn options(select: &HtmlSelectElement) -> Vec<(String, HtmlOptionElement)> {
    let Ok(list) = select.query_selector_all("option") else {
        return Vec::new();
    };
    (0..list.length())
        .filter_map(|i| {
            let option = realm::into_element(list.item(i)?)?;
            tagged::<HtmlOptionElement>(&option, "option").cloned()
        })
        .map(|o| (squash(&o.text()), o))
        .collect()
}
