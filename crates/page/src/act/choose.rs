//! `choose`: choosing an option, of a `<select>` (the option selected, `input` and
//! `change` fired) or of an ARIA listbox (the option shown clicked).

use web_sys::{Element, HtmlSelectElement};

use super::event::fire;
use super::pointer::click;
use crate::dom::state::{appearance, options};
use crate::realm::{self, tagged};
use crate::{hidden, squash};

pub(super) fn choose(element: &Element, wanted: &str) -> Result<(), String> {
    let Some(select) = tagged::<HtmlSelectElement>(element, "select") else {
        return choose_shown(element, wanted);
    };
    let wanted = wanted.trim().to_lowercase();
    let (_, option) = options(select)
        .into_iter()
        .find(|(text, _)| text.to_lowercase() == wanted)
        .ok_or_else(|| format!("the list has no option \"{wanted}\""))?;
    option.set_selected(true);
    fire(element, "input")?;
    fire(element, "change")?;
    Ok(())
}

/// Chooses an option of an ARIA list (not a `<select>`) by clicking it: among the
/// options shown inside it, in the lists it controls or owns (`aria-controls`,
/// `aria-owns`), else in any list shown on the page. A closed list is opened first,
/// by a click, by the page tool, which then asks again.
fn choose_shown(element: &Element, wanted: &str) -> Result<(), String> {
    let shown = shown_options(element);
    let wanted = squash(wanted).to_lowercase();
    let found = shown.iter().find(|(text, _)| text.to_lowercase() == wanted);
    match found {
        Some((_, option)) => click(option),
        None if shown.is_empty() => Err(format!(
            "no option \"{wanted}\" is shown: the list shows no options"
        )),
        None => {
            let texts: Vec<&str> = shown.iter().take(20).map(|(t, _)| t.as_str()).collect();
            Err(format!(
                "no option \"{wanted}\" is shown; the options shown: {}",
                texts.join(" | ")
            ))
        }
    }
}

/// The visible `role=option` elements that belong to `list`, with their text.
fn shown_options(list: &Element) -> Vec<(String, Element)> {
    let Some(window) = web_sys::window() else {
        return Vec::new();
    };
    let document = list.owner_document();
    let referenced = ["aria-controls", "aria-owns"]
        .into_iter()
        .filter_map(|a| list.get_attribute(a))
        .flat_map(|ids| {
            ids.split_whitespace()
                .filter_map(|id| document.as_ref()?.get_element_by_id(id))
                .collect::<Vec<_>>()
        });
    let scopes: Vec<Element> = std::iter::once(list.clone()).chain(referenced).collect();
    let origin = (
        window.scroll_x().unwrap_or(0.0),
        window.scroll_y().unwrap_or(0.0),
    );
    let visible = |e: &Element| hidden(&appearance(&window, e, origin)).is_none();
    let collect = |scope: &Element| -> Vec<(String, Element)> {
        let mut found = Vec::new();
        if scope.get_attribute("role").as_deref() == Some("option") {
            found.push(scope.clone());
        }
        if let Ok(all) = scope.query_selector_all("[role=option]") {
            found.extend((0..all.length()).filter_map(|i| realm::into_element(all.item(i)?)));
        }
        found
            .into_iter()
            .filter(|o| visible(o))
            .map(|o| (option_text(&o), o))
            .collect()
    };
    let owned: Vec<(String, Element)> = scopes.iter().flat_map(collect).collect();
    if !owned.is_empty() {
        return owned;
    }
    let body = document.and_then(|d| d.body());
    body.map(|b| collect(&b)).unwrap_or_default()
}

fn option_text(option: &Element) -> String {
    let label = option
        .get_attribute("aria-label")
        .filter(|l| !l.trim().is_empty());
    squash(&label.unwrap_or_else(|| option.text_content().unwrap_or_default()))
}
