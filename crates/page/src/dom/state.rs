//! `state`: what one element holds and how it is drawn, read afresh on every
//! snapshot (a page script may change them without any event): its value, checked
//! state and options, whether it is disabled, and its computed appearance.

use js_sys::Reflect;
use web_sys::{
    Element, HtmlInputElement, HtmlOptionElement, HtmlSelectElement, HtmlTextAreaElement, Window,
};

use super::{by_id, call, list};
use crate::realm::{self, tagged};
use crate::visibility::{Position, Rect, Rgba, clip_path, clip_rect, clip_shapes, filter_opacity};
use crate::{Appearance, clip, mask, position, squash};

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

/// Elements that paint a picture of their own (their content, or behind it).
const PICTURES: [&str; 9] = [
    "img", "picture", "video", "canvas", "svg", "iframe", "frame", "object", "embed",
];

/// How `element` is drawn, its box in page coordinates: its viewport rectangle moved
/// by `origin` (the page's scroll, or where a frame's document sits on the page).
pub(crate) fn appearance(window: &Window, element: &Element, origin: (f64, f64)) -> Appearance {
    let style = window.get_computed_style(element).ok().flatten();
    let prop = |name: &str| {
        style
            .as_ref()
            .and_then(|s| s.get_property_value(name).ok())
            .unwrap_or_default()
    };
    let rect = element.get_bounding_client_rect();
    let (mut left, mut top) = (rect.left() + origin.0, rect.top() + origin.1);
    let (mut width, mut height) = (rect.width(), rect.height());
    let display = prop("display");
    let tag = element.local_name();
    // A frame shows its document in a viewport of its own, which it clips and
    // scrolls: that viewport, inside its border, is what it shows of it.
    let frame = matches!(tag.as_str(), "iframe" | "frame" | "object" | "embed");
    if frame && !transformed_box(&rect, element) {
        left += f64::from(element.client_left());
        top += f64::from(element.client_top());
        width = f64::from(element.client_width());
        height = f64::from(element.client_height());
    }
    let overflow = [prop("overflow-x"), prop("overflow-y")];
    let clips = frame || overflow.iter().any(|o| o != "visible");
    let scrolls = frame || overflow.iter().any(|o| o == "auto" || o == "scroll");
    // The body's overflow is the viewport's, not its own (CSS Overflow 3, 3.3).
    let body = matches!(tag.as_str(), "body" | "html");
    let filter = prop("filter");
    let transformed = ["transform", "perspective"]
        .iter()
        .any(|p| !matches!(prop(p).as_str(), "none" | ""));
    let contains = transformed
        || !matches!(filter.as_str(), "none" | "")
        || prop("contain").contains("paint")
        || prop("will-change").contains("transform");
    let path = prop("clip-path");
    let shape = clip_path(&path, width, height)
        .or_else(|| clip_reference(element, &path, width, height))
        .or_else(|| clip_rect(&prop("clip"), width, height))
        .map(|s| s.moved(left, top));
    // The fill colour is the text colour unless set apart (it is what is drawn).
    let ink = Rgba::parse(&prop("-webkit-text-fill-color")).or_else(|| Rgba::parse(&prop("color")));
    let stroke = prop("-webkit-text-stroke-width")
        .trim_end_matches("px")
        .parse::<f64>()
        .is_ok_and(|w| w > 0.0);
    let picture = !matches!(prop("background-image").as_str(), "none" | "");
    let clipped_to_text =
        prop("-webkit-background-clip") == "text" || prop("background-clip") == "text";
    Appearance {
        display_none: display == "none" || element.has_attribute("hidden"),
        visibility_hidden: matches!(prop("visibility").as_str(), "hidden" | "collapse"),
        aria_hidden: element.get_attribute("aria-hidden").as_deref() == Some("true"),
        opacity: prop("opacity").parse::<f64>().unwrap_or(1.0) * filter_opacity(&filter),
        left,
        top,
        width,
        height,
        clips: clips && !body,
        scrolls: scrolls && !body,
        scrolled: (
            f64::from(element.scroll_left()),
            f64::from(element.scroll_top()),
        ),
        boxless: display == "contents",
        position: match prop("position").as_str() {
            "absolute" => Position::Absolute,
            "fixed" => Position::Fixed,
            "relative" | "sticky" => Position::Relative,
            _ => Position::Static,
        },
        contains,
        shape,
        ink,
        outlined: stroke
            || !matches!(prop("text-shadow").as_str(), "none" | "")
            || (picture && clipped_to_text),
        background: Rgba::parse(&prop("background-color")),
        pictured: picture || PICTURES.contains(&tag.as_str()),
        pointer: prop("cursor") == "pointer",
    }
}

/// The part of a `width` × `height` box that a computed `clip-path: url("#id")`
/// leaves: the bounds of what the `<clipPath>` of that id in the element's tree draws.
/// `None`, no clip, when the reference names no `<clipPath>` there (CSS Masking: the
/// property is then as if unset), or another document's.
fn clip_reference(element: &Element, value: &str, width: f64, height: f64) -> Option<Rect> {
    let id = value.strip_prefix("url(\"#")?.strip_suffix("\")")?;
    let clip = by_id(element, id).filter(|c| c.local_name() == "clipPath")?;
    let boxes = list(&clip.child_nodes()).into_iter().filter_map(|shape| {
        let b = call(&shape, "getBBox")?;
        let n = |k: &str| Reflect::get(&b, &k.into()).ok()?.as_f64();
        Some(Rect::sized(n("x")?, n("y")?, n("width")?, n("height")?))
    });
    let fractions = clip.get_attribute("clipPathUnits").as_deref() == Some("objectBoundingBox");
    Some(clip_shapes(boxes, fractions, width, height))
}

/// Whether a box is drawn at another size than its layout's (a transform scales it):
/// its client size is then not what shows.
fn transformed_box(rect: &web_sys::DomRect, element: &Element) -> bool {
    let layout = f64::from(element.client_width() + 2 * element.client_left());
    (rect.width() - layout).abs() > 1.0
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
        // A list that holds several choices shows them all, in order, joined by ", ".
        let value = if select.multiple() {
            let chosen: Vec<&str> = options
                .iter()
                .filter(|(_, o)| o.selected())
                .map(|(text, _)| text.as_str())
                .collect();
            (!chosen.is_empty()).then(|| chosen.join(", "))
        } else {
            let chosen = usize::try_from(select.selected_index()).ok();
            chosen.and_then(|i| options.get(i).map(|(text, _)| text.clone()))
        };
        return (
            value,
            None,
            options.into_iter().map(|(text, _)| text).collect(),
        );
    }
    let checked = element.get_attribute("aria-checked").map(|v| v == "true");
    let value = element
        .get_attribute("aria-valuetext")
        .or_else(|| element.get_attribute("aria-valuenow"));
    (value, checked, Vec::new())
}

/// A slider's or number field's least and greatest value, where the page sets them:
/// an `<input>`'s `min` and `max`, an ARIA one's `aria-valuemin` and `aria-valuemax`.
pub(super) fn bounds(element: &Element, role: &str) -> (Option<String>, Option<String>) {
    if !matches!(role, "slider" | "spinbutton") {
        return (None, None);
    }
    let aria = if element.local_name() == "input" {
        ""
    } else {
        "aria-value"
    };
    let attr = |end: &str| element.get_attribute(&format!("{aria}{end}"));
    (attr("min"), attr("max"))
}

/// A slider's value, and where a handle that says none sits along its track (its
/// parent): `"40%"`.
pub(super) fn slider_value(element: &Element, said: Option<String>) -> Option<String> {
    said.or_else(|| {
        let rect = |e: &Element| {
            let r = e.get_bounding_client_rect();
            Rect::sized(r.left(), r.top(), r.width(), r.height())
        };
        position(rect(element), rect(&element.parent_element()?))
    })
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
