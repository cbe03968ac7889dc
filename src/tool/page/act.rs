//! The page actions' rules: what an element must be for an action to run on it (a
//! sensitive field is the person's to type into), the action in plain words, and
//! what changed on the page after it ran, or that nothing did.

use super::index::line;
use super::{Act, Control, Form, Snapshot, clip};
use familiar_page::{KEYS, key, sensitive};

/// What `act` on element `id` of `snapshot` will do, in plain words, once [`check`]
/// (or, for [`Act::Submit`], the form's own checks) found it possible. `id` may
/// name a form, or a field of one, for a submit.
pub fn prepare(snapshot: &Snapshot, id: u32, act: &Act) -> Result<String, String> {
    if *act != Act::Submit {
        return check(snapshot, id, act).map(|control| describe(act, control));
    }
    let form = match snapshot.forms.iter().find(|f| f.id == id) {
        Some(form) => form,
        None => {
            let control = check(snapshot, id, act)?;
            let form = control
                .form
                .and_then(|f| snapshot.forms.iter().find(|g| g.id == f));
            form.ok_or_else(|| {
                format!(
                    "element [{id}] ({} \"{}\") is not in a form: click its button instead",
                    control.role,
                    clip(&control.name, 60)
                )
            })?
        }
    };
    if !form.visible {
        return Err(format!(
            "form [{}] is hidden: a person could not submit it, so neither may you",
            form.id
        ));
    }
    Ok(format!("Submit {}", form_words(form)))
}

/// `the form "order" [7] (post → /order)`.
fn form_words(form: &Form) -> String {
    let name = if form.name.is_empty() {
        String::new()
    } else {
        format!("\"{}\" ", clip(&form.name, 60))
    };
    format!(
        "the form {name}[{}] ({} → {})",
        form.id,
        form.method,
        clip(&form.action, 120)
    )
}

/// Refuses typing into `control` when it is sensitive: the person types a password,
/// a card's details or a one-time code themselves.
fn personal(control: &Control, what: &str, act: &Act) -> Result<(), String> {
    if !control.sensitive {
        return Ok(());
    }
    let kind = sensitive(None, None, &control.name).map_or(
        "a password, a payment card's details or a one-time code",
        |k| k.what(),
    );
    let after = match act {
        Act::Press(_) => "; to send its form once they have, use submit",
        _ => "",
    };
    Err(format!(
        "{what} is a sensitive field ({kind}): the person types it themselves{after}"
    ))
}

/// Finds element `id` in `snapshot` and checks that `act` can be done to it: it is
/// still there, visible, enabled (scrolling to or highlighting a disabled element is
/// fine) and of a kind the action fits. The error says what to do instead.
pub fn check<'a>(snapshot: &'a Snapshot, id: u32, act: &Act) -> Result<&'a Control, String> {
    let Some(control) = snapshot.controls.iter().find(|c| c.id == id) else {
        return Err(format!(
            "element [{id}] is not on the page (any more): read page_elements again for \
             the current numbers"
        ));
    };
    let what = format!(
        "element [{id}] ({} \"{}\")",
        control.role,
        clip(&control.name, 60)
    );
    if !control.visible {
        return Err(format!(
            "{what} is hidden: a person could not use it, so neither may you"
        ));
    }
    let harmless = matches!(act, Act::ScrollTo | Act::Highlight);
    if control.disabled && !harmless {
        return Err(format!("{what} is disabled"));
    }
    if matches!(act, Act::Fill(_) | Act::Press(_)) {
        personal(control, &what, act)?;
    }
    let role = control.role.as_str();
    let aria_list = matches!(role, "combobox" | "listbox") && control.options.is_empty();
    match act {
        Act::Press(name) if key(name).is_none() => {
            let named: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            Err(format!(
                "\"{}\" is not a key: press one of {}, or a single character",
                clip(name, 20),
                named.join(", ")
            ))
        }
        Act::Fill(_) if !matches!(role, "textbox" | "searchbox" | "spinbutton" | "combobox") => {
            Err(format!("{what} is not a text field: it cannot be filled"))
        }
        Act::Fill(_) if role == "combobox" && !control.options.is_empty() => {
            Err(format!("{what} is a list: use select_option"))
        }
        // An ARIA list's options are read when it is opened.
        Act::Select(_) if aria_list => Ok(control),
        Act::Select(option) => select(control, &what, option).map(|_| control),
        Act::Check(_) if !matches!(role, "checkbox" | "radio" | "switch") => {
            Err(format!("{what} is not a checkbox or radio button"))
        }
        Act::Check(false) if role == "radio" => Err(format!(
            "{what} is a radio button: choose another option of its group instead"
        )),
        _ => Ok(control),
    }
}

/// The option of `control` that `wanted` names, by its text, case-insensitively.
fn select<'a>(control: &'a Control, what: &str, wanted: &str) -> Result<&'a str, String> {
    if control.options.is_empty() {
        return Err(format!("{what} is not a list of options"));
    }
    let wanted = wanted.trim().to_lowercase();
    let found = control
        .options
        .iter()
        .find(|o| o.trim().to_lowercase() == wanted);
    found.map(String::as_str).ok_or_else(|| {
        let options: Vec<String> = control
            .options
            .iter()
            .take(20)
            .map(|o| clip(o, 40))
            .collect();
        format!(
            "{what} has no option \"{}\"; its options: {}",
            clip(&wanted, 60),
            options.join(" | ")
        )
    })
}

/// What `act` will do to `control`, in plain words.
pub fn describe(act: &Act, control: &Control) -> String {
    // Another site's frame is named: the person approves an act on that site.
    let frame = control
        .frame
        .as_deref()
        .map(|origin| format!(" inside a frame of {}", clip(origin, 80)))
        .unwrap_or_default();
    let target = format!(
        "the {} \"{}\" [{}]{frame}",
        control.role,
        clip(&control.name, 60),
        control.id
    );
    match act {
        Act::Click => format!("Click {target}"),
        // The whole text, quoted as JSON: an approval shows every character that will
        // be typed, and quotes inside it cannot pass for the rest of the sentence.
        Act::Fill(text) => format!("Type {} into {target}", quoted(text)),
        Act::Select(option) => format!("Choose \"{}\" in {target}", clip(option, 60)),
        Act::Check(true) => format!("Check {target}"),
        Act::Check(false) => format!("Uncheck {target}"),
        Act::ScrollTo => format!("Scroll the page to {target}"),
        Act::Highlight => format!("Highlight {target}"),
        Act::Press(name) => {
            let said = key(name).map_or_else(|| name.clone(), |k| k.key);
            let said = if said == " " { "Space".into() } else { said };
            format!("Press {} on {target}", quoted_key(&said))
        }
        Act::Submit => format!("Submit the form of {target}"),
        Act::DoubleClick => format!("Double-click {target}"),
        Act::Hover => format!("Move the pointer over {target}"),
        Act::Leave => format!("Move the focus out of {target}"),
    }
}

/// A named key as it is (`Enter`), a character quoted (`"a"`).
fn quoted_key(key: &str) -> String {
    if key.chars().count() == 1 {
        quoted(key)
    } else {
        key.to_owned()
    }
}

/// `text` in JSON's double quotes, escapes and all.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// How many appeared or new things a report names one by one.
const NAMED: usize = 5;

/// What changed between `before` and `after` an action on element `id`, in plain
/// lines: the element's new state, a navigation, the title, where the focus went,
/// other fields' new values, elements that appeared or disappeared, text that came
/// or went; one line saying nothing changed on the page when nothing did.
pub fn changes(before: &Snapshot, after: &Snapshot, id: u32) -> Vec<String> {
    let mut out = Vec::new();
    let find = |page: &'_ Snapshot, id: u32| page.controls.iter().find(|c| c.id == id).cloned();
    match (find(before, id), find(after, id)) {
        (Some(old), Some(new)) if !same(&old, &new) => {
            out.push(format!("element now: {}", line(&new, false)))
        }
        (Some(_), None) => out.push(format!("element [{id}] is gone from the page")),
        _ => {}
    }
    let moved = before.location != after.location;
    if moved {
        out.push(format!("the page moved to {}", clip(&after.location, 200)));
    }
    if before.title != after.title {
        out.push(format!(
            "the page title is now \"{}\"",
            clip(&after.title, 120)
        ));
    }
    let focused = |page: &Snapshot| page.controls.iter().find(|c| c.focused).map(|c| c.id);
    if let Some(now) = after.controls.iter().find(|c| c.focused)
        && now.id != id
        && focused(before) != Some(now.id)
    {
        out.push(format!("the focus moved to {}", line(now, false)));
    }
    let shown = |page: &Snapshot, id: u32| page.controls.iter().any(|c| c.id == id && c.visible);
    let others: Vec<String> = after
        .controls
        .iter()
        .filter(|c| c.visible && c.id != id)
        .filter(|c| {
            before
                .controls
                .iter()
                .any(|b| b.id == c.id && b.visible && !same(b, c))
        })
        .map(|c| line(c, false))
        .collect();
    named(&mut out, "other element(s) now", &others);
    let appeared: Vec<String> = after
        .controls
        .iter()
        .filter(|c| c.visible && !shown(before, c.id))
        .map(|c| line(c, true))
        .collect();
    named(&mut out, "element(s) appeared", &appeared);
    if !moved {
        let gone: Vec<String> = before
            .controls
            .iter()
            .filter(|b| b.visible && b.id != id && !shown(after, b.id))
            .map(|b| line(b, false))
            .collect();
        named(&mut out, "element(s) disappeared", &gone);
    }
    let new_text = texts(after, before);
    if !new_text.is_empty() {
        out.push(format!("new text on the page: {}", new_text.join("; ")));
    }
    let old_text = texts(before, after);
    if !moved && !old_text.is_empty() {
        out.push(format!("text gone from the page: {}", old_text.join("; ")));
    }
    if out.is_empty() {
        // The count of changes, and the focus (its moves are told above), aside.
        let unversioned = |page: &Snapshot| {
            let mut page = Snapshot {
                version: 0,
                ..page.clone()
            };
            page.controls.iter_mut().for_each(|c| c.focused = false);
            page
        };
        out.push(if unversioned(before) == unversioned(after) {
            "nothing changed on the page".into()
        } else {
            "nothing changed on the page that a person would see".into()
        });
    }
    out
}

/// Whether two reads of a control show the same (the focus aside: it is told apart).
fn same(a: &Control, b: &Control) -> bool {
    Control {
        focused: b.focused,
        ..a.clone()
    } == *b
}

/// `N what: a; b; …`, the first [`NAMED`] of `lines` named, when there are any.
fn named(out: &mut Vec<String>, what: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let shown: Vec<&str> = lines.iter().take(NAMED).map(String::as_str).collect();
    let more = lines.len().saturating_sub(NAMED);
    let more = if more > 0 {
        format!(" (and {more} more)")
    } else {
        String::new()
    };
    out.push(format!(
        "{} {what}: {}{more}",
        lines.len(),
        shown.join("; ")
    ));
}

/// The first [`NAMED`] blocks of text of `page` that `other` does not have, quoted.
fn texts(page: &Snapshot, other: &Snapshot) -> Vec<String> {
    page.blocks
        .iter()
        .filter(|a| !other.blocks.iter().any(|b| b.text == a.text))
        .take(NAMED)
        .map(|a| format!("\"{}\"", clip(&a.text, 120)))
        .collect()
}

#[cfg(test)]
mod tests;
