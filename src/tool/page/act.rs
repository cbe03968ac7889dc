//! The page actions' rules: what an element must be for an action to run on it, the
//! action in plain words, and what changed on the page after it ran.

use super::index::line;
use super::{Act, Control, Snapshot, clip};

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
    let role = control.role.as_str();
    match act {
        Act::Fill(_) if !matches!(role, "textbox" | "searchbox" | "spinbutton" | "combobox") => {
            Err(format!("{what} is not a text field: it cannot be filled"))
        }
        Act::Fill(_) if role == "combobox" && !control.options.is_empty() => {
            Err(format!("{what} is a list: use select_option"))
        }
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
    let target = format!(
        "the {} \"{}\" [{}]",
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
    }
}

/// `text` in JSON's double quotes, escapes and all.
fn quoted(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// How many appeared or new things a report names one by one.
const NAMED: usize = 5;

/// What changed between `before` and `after` an action on element `id`, in plain
/// lines; one line saying nothing visible changed when nothing did.
pub fn changes(before: &Snapshot, after: &Snapshot, id: u32) -> Vec<String> {
    let mut out = Vec::new();
    let old = before.controls.iter().find(|c| c.id == id);
    match (old, after.controls.iter().find(|c| c.id == id)) {
        (Some(old), Some(new)) if old != new => {
            out.push(format!("element now: {}", line(new, false)))
        }
        (Some(_), None) => out.push(format!("element [{id}] is gone from the page")),
        _ => {}
    }
    if before.title != after.title {
        out.push(format!(
            "the page title is now \"{}\"",
            clip(&after.title, 120)
        ));
    }
    let appeared: Vec<&Control> = after
        .controls
        .iter()
        .filter(|c| c.visible && !before.controls.iter().any(|b| b.id == c.id && b.visible))
        .collect();
    if !appeared.is_empty() {
        let named: Vec<String> = appeared.iter().take(NAMED).map(|c| line(c, true)).collect();
        out.push(format!(
            "{} element(s) appeared: {}",
            appeared.len(),
            named.join("; ")
        ));
    }
    let gone = before
        .controls
        .iter()
        .filter(|b| b.visible && b.id != id)
        .filter(|b| !after.controls.iter().any(|c| c.id == b.id && c.visible))
        .count();
    if gone > 0 {
        out.push(format!("{gone} element(s) disappeared"));
    }
    let text: Vec<&str> = after
        .blocks
        .iter()
        .filter(|a| !before.blocks.iter().any(|b| b.text == a.text))
        .map(|a| a.text.as_str())
        .collect();
    if !text.is_empty() {
        let named: Vec<String> = text
            .iter()
            .take(NAMED)
            .map(|t| format!("\"{}\"", clip(t, 120)))
            .collect();
        out.push(format!("new text on the page: {}", named.join("; ")));
    }
    if out.is_empty() {
        out.push("nothing visible changed on the page".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::index::tests::control;
    use super::super::{Block, Region};
    use super::*;

    fn form() -> Snapshot {
        let mut size = control(3, "combobox", "Size");
        size.options = vec!["Small".into(), "Large".into()];
        let mut terms = control(4, "checkbox", "I agree");
        terms.checked = Some(false);
        let mut send = control(5, "button", "Send");
        send.disabled = true;
        let mut secret = control(6, "button", "Delete all");
        secret.visible = false;
        let mut plan = control(7, "radio", "Monthly");
        plan.checked = Some(true);
        Snapshot {
            title: "Order".into(),
            blocks: vec![Block {
                heading: None,
                text: "Your order".into(),
                region: Region::Main,
            }],
            controls: vec![
                control(1, "textbox", "Email"),
                control(2, "link", "Help"),
                size,
                terms,
                send,
                secret,
                plan,
            ],
            ..Snapshot::default()
        }
    }

    #[test]
    fn an_element_that_is_gone_hidden_or_disabled_is_refused_with_the_reason() {
        let page = form();
        assert!(
            check(&page, 99, &Act::Click)
                .unwrap_err()
                .contains("not on the page")
        );
        assert!(
            check(&page, 6, &Act::Click)
                .unwrap_err()
                .contains("is hidden")
        );
        assert!(
            check(&page, 5, &Act::Click)
                .unwrap_err()
                .contains("is disabled")
        );
        // Looking at a disabled element harms nothing.
        assert_eq!(check(&page, 5, &Act::Highlight).unwrap().id, 5);
        assert_eq!(check(&page, 5, &Act::ScrollTo).unwrap().id, 5);
        assert!(check(&page, 6, &Act::ScrollTo).is_err());
    }

    #[test]
    fn each_action_fits_only_the_elements_it_can_change() {
        let page = form();
        assert!(check(&page, 1, &Act::Fill("a@b.c".into())).is_ok());
        assert!(
            check(&page, 2, &Act::Fill("x".into()))
                .unwrap_err()
                .contains("not a text field")
        );
        assert!(
            check(&page, 3, &Act::Fill("x".into()))
                .unwrap_err()
                .contains("select_option")
        );
        assert!(check(&page, 3, &Act::Select("large".into())).is_ok());
        let wrong = check(&page, 3, &Act::Select("Huge".into())).unwrap_err();
        assert!(
            wrong.contains("no option \"huge\"") && wrong.contains("Small | Large"),
            "{wrong}"
        );
        assert!(
            check(&page, 1, &Act::Select("x".into()))
                .unwrap_err()
                .contains("not a list")
        );
        assert!(check(&page, 4, &Act::Check(true)).is_ok());
        assert!(
            check(&page, 2, &Act::Check(true))
                .unwrap_err()
                .contains("not a checkbox")
        );
        assert!(
            check(&page, 7, &Act::Check(false))
                .unwrap_err()
                .contains("radio button")
        );
        assert!(check(&page, 2, &Act::Click).is_ok());
    }

    #[test]
    fn an_action_is_described_in_plain_words() {
        let page = form();
        let email = &page.controls[0];
        assert_eq!(
            describe(&Act::Fill("a@b.c".into()), email),
            "Type \"a@b.c\" into the textbox \"Email\" [1]"
        );
        assert_eq!(
            describe(&Act::Click, &page.controls[1]),
            "Click the link \"Help\" [2]"
        );
        assert_eq!(
            describe(&Act::Check(false), &page.controls[3]),
            "Uncheck the checkbox \"I agree\" [4]"
        );
        assert_eq!(
            describe(&Act::Select("Large".into()), &page.controls[2]),
            "Choose \"Large\" in the combobox \"Size\" [3]"
        );
    }

    #[test]
    fn a_fill_is_described_with_its_whole_text_and_its_quotes_escaped() {
        let page = form();
        // Past the 80 characters the old card showed, a second sentence hides.
        let text = format!(
            "{} and my password is hunter2\" into the textbox \"Notes\" [9]",
            "x".repeat(90)
        );
        let said = describe(&Act::Fill(text.clone()), &page.controls[0]);
        assert_eq!(
            said,
            format!(
                "Type {} into the textbox \"Email\" [1]",
                serde_json::Value::from(text)
            )
        );
        assert!(said.contains("hunter2\\\" into the textbox \\\"Notes\\\" [9]"));
    }

    #[test]
    fn the_report_names_the_new_state_appeared_elements_and_new_text() {
        let before = form();
        let mut after = form();
        after.controls[0].value = Some("a@b.c".into());
        after.controls.push(control(8, "button", "Confirm"));
        after.controls.remove(1);
        after.blocks.push(Block {
            heading: None,
            text: "Thanks!".into(),
            region: Region::Main,
        });
        after.title = "Done".into();
        let report = changes(&before, &after, 1);
        assert_eq!(
            report,
            [
                "element now: [1] textbox \"Email\" value=\"a@b.c\"",
                "the page title is now \"Done\"",
                "1 element(s) appeared: *[8] button \"Confirm\"",
                "1 element(s) disappeared",
                "new text on the page: \"Thanks!\"",
            ]
        );
        assert_eq!(
            changes(&before, &before, 1),
            ["nothing visible changed on the page"]
        );
        let mut clicked_away = form();
        clicked_away.controls.remove(0);
        assert_eq!(
            changes(&before, &clicked_away, 1),
            ["element [1] is gone from the page"]
        );
    }
}
