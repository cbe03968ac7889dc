//! `settled`: an action on a field judged by what the field shows once the page has
//! settled (its `blur` and `change` handlers, its widget's own events), not by the
//! value set the moment before. This module decides whether the focus leaves a
//! filled field first, as a person moving on takes it ([`leaves`]), holds what the
//! field shows then to what was asked ([`judge`]), and names the controls beside a
//! read-only field, where its widget is worked ([`read_only`]). The waiting is the
//! browser's ([`PageDom::settle`]); what changed on the page besides is `act`'s.
//!
//! [`PageDom::settle`]: super::PageDom::settle

use super::index::line;
use super::{Act, Control, Snapshot, clip, squash};
use familiar_page::READ_ONLY;

/// How many controls on each side of a read-only field are named.
const BESIDE: usize = 3;

/// Whether, after `act` on `element` (`before` and `after` it, the page settled),
/// the focus leaves the field as a person moving on takes it, so the handlers a
/// widget runs on blur (a time or date field that rewrites or refuses what was
/// typed) run before the field is read: after a fill of a field that still holds the
/// focus and showed nothing new. What a typing opened (suggestions, a calendar, text
/// under the field) is the next step's, and a blur would close it; a combobox's or
/// a search box's typing is for the list it shows. (The browser keeps the focus, too,
/// in a field its page ties to a popup.)
pub fn leaves(before: &Snapshot, after: &Snapshot, element: u32, act: &Act) -> bool {
    let Some(field) = after.controls.iter().find(|c| c.id == element) else {
        return false;
    };
    let shown = |page: &Snapshot, id: u32| page.controls.iter().any(|c| c.id == id && c.visible);
    let showed = after
        .controls
        .iter()
        .any(|c| c.visible && !shown(before, c.id));
    let wrote = after
        .blocks
        .iter()
        .any(|a| !before.blocks.iter().any(|b| b.text == a.text));
    let for_a_list = matches!(field.role.as_str(), "combobox" | "searchbox");
    matches!(act, Act::Fill(_)) && field.focused && !for_a_list && !showed && !wrote
}

/// What `act` left element `element` showing on `after`, the page read once it
/// settled, held to what was asked: `Ok(None)` when it shows that (or there is
/// nothing to hold it to: a click, a key, a field gone or masked, a list drawn by
/// the page whose choice shows elsewhere); `Ok(Some(note))` when it shows it in the
/// page's own form (`"555 0100"` for `"5550100"`); `Err(why)` when it does not: the
/// value did not take, and the model is told what the field shows instead.
pub fn judge(act: &Act, after: &Snapshot, element: u32) -> Result<Option<String>, String> {
    let Some(control) = after.controls.iter().find(|c| c.id == element) else {
        return Ok(None);
    };
    match act {
        Act::Fill(asked) if !control.sensitive => filled(asked, control.value.as_deref()),
        // A native list names its chosen option; an ARIA list's shows where it draws it.
        Act::Select(asked) if !control.options.is_empty() => {
            chosen(asked, control.value.as_deref())
        }
        Act::Check(wanted) => checked(*wanted, control),
        _ => Ok(None),
    }
}

/// A fill held to what the field shows.
fn filled(asked: &str, shown: Option<&str>) -> Result<Option<String>, String> {
    let Some(shown) = shown else {
        return Ok(None);
    };
    let (asked_plain, shown_plain) = (plain(asked), plain(shown));
    // A long editor's text is read cut short.
    let cut = shown_plain
        .strip_suffix('…')
        .is_some_and(|start| asked_plain.starts_with(start));
    if asked_plain == shown_plain || cut {
        return Ok(None);
    }
    // Numbers are held as numbers ("100" shows as "100.00"; "1.5" is not "15"), other
    // values by their letters and digits ("5550100" shows as "555-0100").
    let same = match (number(asked), number(shown)) {
        (Some(asked), Some(shown)) => asked == shown,
        _ => !letters(asked).is_empty() && letters(asked) == letters(shown),
    };
    if same {
        return Ok(Some(format!(
            "the field shows {} after the page settled (the same, in the page's own form)",
            quote(shown)
        )));
    }
    Err(format!(
        "{}, not {}: the value did not take (the page or its widget rewrote or refused \
         it). If that is the same value in the field's own format, it took; otherwise \
         type it as the field expects, or work the widget's own controls: click the \
         field to open its calendar or list and pick there, or press arrow keys on it",
        shows("field", shown),
        quote(asked)
    ))
}

/// A native list's choice held to the option it shows chosen.
fn chosen(asked: &str, shown: Option<&str>) -> Result<Option<String>, String> {
    // A list of several choices shows them joined by ", ": the one asked among them.
    let wanted = plain(asked).to_lowercase();
    let same = shown.is_some_and(|s| {
        let shown = plain(s).to_lowercase();
        shown == wanted || shown.split(", ").any(|one| one == wanted)
    });
    if same {
        return Ok(None);
    }
    Err(format!(
        "{}, not {}: the choice did not take (the page changed it back, or refused it)",
        shows("list", shown.unwrap_or_default()),
        quote(asked)
    ))
}

/// A check held to the state the box shows.
fn checked(wanted: bool, control: &Control) -> Result<Option<String>, String> {
    match control.checked {
        Some(now) if now != wanted => {
            let state = if now { "checked" } else { "unchecked" };
            Err(format!(
                "the {} is still {state} after the page settled: it did not take (the page \
                 undid it, or draws a box of its own: click what a person sees instead)",
                control.role
            ))
        }
        _ => Ok(None),
    }
}

/// `problem` (a fill's refusal) said of `element` of `snapshot`, with the controls
/// beside it named when it is read-only: its widget is worked through them.
pub fn read_only(problem: String, snapshot: &Snapshot, element: u32) -> String {
    if !problem.starts_with(READ_ONLY) {
        return problem;
    }
    let shown: Vec<&Control> = snapshot
        .controls
        .iter()
        .filter(|c| c.visible && (c.id == element || !c.disabled))
        .collect();
    let Some(at) = shown.iter().position(|c| c.id == element) else {
        return problem;
    };
    let field = shown.get(at).map(|c| line(c, false)).unwrap_or_default();
    let near: Vec<String> = shown
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != at && i.abs_diff(at) <= BESIDE)
        .map(|(_, c)| line(c, false))
        .collect();
    if near.is_empty() {
        return format!("{field}: {problem}");
    }
    format!("{field}: {problem}; beside it: {}", near.join("; "))
}

/// `the field shows "12:00" after the page settled`, or that it is empty.
fn shows(what: &str, shown: &str) -> String {
    if plain(shown).is_empty() {
        format!("the {what} is empty after the page settled")
    } else {
        format!("the {what} shows {} after the page settled", quote(shown))
    }
}

/// Text as a reader compares it: runs of whitespace (no-break spaces too) as one.
fn plain(text: &str) -> String {
    squash(&text.replace('\u{a0}', " "))
}

/// Without its ASCII punctuation and spaces, lower-cased: a value and its formatting
/// alike. (ASCII only: the Unicode tables cost the page build 157 B gzip.)
fn letters(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_ascii_alphanumeric() || !c.is_ascii())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// A decimal number written plainly (`-0012.50`), as its sign, integer digits and
/// fraction digits without the zeros that say nothing (`(true, "12", "5")`); `None`
/// for anything else (`"555-0100"`, `"1,000"`, `"1e3"`).
fn number(text: &str) -> Option<(bool, &str, &str)> {
    let text = text.trim();
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.len() + fraction.len() == 0 || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let (whole, fraction) = (
        whole.trim_start_matches('0'),
        fraction.trim_end_matches('0'),
    );
    // Zero has no sign.
    Some((
        negative && !(whole.is_empty() && fraction.is_empty()),
        whole,
        fraction,
    ))
}

/// `text` in JSON's double quotes, cut to a readable length.
fn quote(text: &str) -> String {
    serde_json::Value::from(clip(text, 120)).to_string()
}

#[cfg(test)]
mod tests;
