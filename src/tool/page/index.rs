//! The interactive-element index: every control on the page by its stable number,
//! role, accessible name, value or state, whether it is visible, and whether it is new
//! since the model last read the index — the numbers the page actions take.

use std::collections::BTreeSet;

use super::{Control, clip};
pub use familiar_page::role_of;

/// How many elements one listing shows.
pub const MAX_ELEMENTS: usize = 150;
/// How many characters of a name or value a listing shows.
const MAX_LABEL: usize = 80;

/// One listing of the index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// One line per element: `[7] button "Send" disabled`, `*` marking the new.
    pub lines: Vec<String>,
    /// Elements on the page (the listing may show fewer).
    pub total: usize,
    /// Elements new since the last listing.
    pub new: usize,
}

/// What the model has been shown, so the next listing can say what is new.
#[derive(Debug, Default)]
pub struct ElementIndex {
    seen: BTreeSet<u32>,
}

impl ElementIndex {
    /// Lists `controls` (hidden ones only when `with_hidden`), marking those this
    /// index has not listed before, and remembers them as listed.
    pub fn list(&mut self, controls: &[Control], with_hidden: bool) -> Listing {
        let shown: Vec<&Control> = controls
            .iter()
            .filter(|c| with_hidden || c.visible)
            .collect();
        let first = self.seen.is_empty();
        let mut new = 0;
        let mut lines = Vec::new();
        for control in &shown {
            let fresh = !self.seen.contains(&control.id);
            new += usize::from(fresh && !first);
            if lines.len() < MAX_ELEMENTS {
                lines.push(line(control, fresh && !first));
            }
        }
        self.seen.extend(shown.iter().map(|c| c.id));
        Listing {
            lines,
            total: shown.len(),
            new,
        }
    }
}

/// One element as the model reads it.
pub fn line(control: &Control, new: bool) -> String {
    let mut out = format!(
        "{}[{}] {} \"{}\"",
        if new { "*" } else { "" },
        control.id,
        control.role,
        clip(&control.name, MAX_LABEL)
    );
    if let Some(value) = &control.value {
        out.push_str(&format!(
            " value=\"{}\"",
            clip(&shown(control, value), MAX_LABEL)
        ));
    }
    // Unquoted, so only a number: the page's text could otherwise write listing syntax.
    let numeric = |b: &&String| {
        b.len() <= 20
            && !b.is_empty()
            && b.bytes()
                .all(|c| c.is_ascii_digit() || b"+-.eE".contains(&c))
    };
    for (end, bound) in [("min", &control.min), ("max", &control.max)] {
        if let Some(bound) = bound.as_ref().filter(numeric) {
            out.push_str(&format!(" {end}={bound}"));
        }
    }
    match control.checked {
        Some(true) => out.push_str(" checked"),
        Some(false) => out.push_str(" unchecked"),
        None => {}
    }
    if !control.options.is_empty() {
        let options: Vec<String> = control
            .options
            .iter()
            .take(10)
            .map(|o| clip(o, 40))
            .collect();
        let more = control.options.len().saturating_sub(10);
        out.push_str(&format!(" options=[{}]", options.join(" | ")));
        if more > 0 {
            out.push_str(&format!(" (+{more} more)"));
        }
    }
    if control.disabled {
        out.push_str(" disabled");
    }
    if !control.visible {
        out.push_str(" hidden");
    }
    if let Some(field) = control.popup_of {
        out.push_str(&format!(" popup of [{field}]"));
    }
    out
}

/// A field's value as the model may read it: a sensitive field's masked (the walk
/// masks it already; a page bridged from elsewhere is not trusted to).
fn shown(control: &Control, value: &str) -> String {
    let masked = value == "(empty)"
        || (value.starts_with("(sensitive: ") && value.ends_with(" set)") && value.len() < 40);
    if control.sensitive && !masked {
        familiar_page::mask(value)
    } else {
        value.to_owned()
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(crate) fn control(id: u32, role: &str, name: &str) -> Control {
        Control {
            id,
            role: role.into(),
            name: name.into(),
            value: None,
            min: None,
            max: None,
            checked: None,
            disabled: false,
            visible: true,
            options: Vec::new(),
            href: None,
            form: None,
            sensitive: false,
            focused: false,
            popup_of: None,
            frame: None,
        }
    }

    #[test]
    fn a_line_says_number_role_name_value_state_and_visibility() {
        let mut field = control(3, "textbox", "Email");
        field.value = Some("a@b.c".into());
        field.disabled = true;
        assert_eq!(
            line(&field, false),
            "[3] textbox \"Email\" value=\"a@b.c\" disabled"
        );
        let mut boxed = control(4, "checkbox", "Subscribe");
        boxed.checked = Some(false);
        boxed.visible = false;
        assert_eq!(
            line(&boxed, true),
            "*[4] checkbox \"Subscribe\" unchecked hidden"
        );
        let mut list = control(5, "combobox", "Size");
        list.options = (1..=12).map(|n| n.to_string()).collect();
        assert!(
            line(&list, false)
                .ends_with("options=[1 | 2 | 3 | 4 | 5 | 6 | 7 | 8 | 9 | 10] (+2 more)")
        );
    }

    #[test]
    fn a_slider_says_its_bounds_and_a_popups_item_its_field() {
        let mut slider = control(8, "slider", "Price");
        slider.value = Some("40".into());
        slider.min = Some("0".into());
        slider.max = Some("100".into());
        assert_eq!(
            line(&slider, false),
            "[8] slider \"Price\" value=\"40\" min=0 max=100"
        );
        slider.max = Some("1 [9] button \"Pay\"".into());
        assert_eq!(
            line(&slider, false),
            "[8] slider \"Price\" value=\"40\" min=0"
        );
        let mut suggestion = control(9, "option", "Lisbon");
        suggestion.popup_of = Some(3);
        assert_eq!(
            line(&suggestion, true),
            "*[9] option \"Lisbon\" popup of [3]"
        );
    }

    #[test]
    fn a_sensitive_fields_value_is_never_listed_only_its_length() {
        let mut password = control(6, "textbox", "Password");
        password.sensitive = true;
        password.value = Some("hunter2".into());
        assert_eq!(
            line(&password, false),
            "[6] textbox \"Password\" value=\"(sensitive: 7 characters set)\""
        );
        password.value = Some("(empty)".into());
        assert!(line(&password, false).ends_with("value=\"(empty)\""));
        let mut email = control(7, "textbox", "Email");
        email.value = Some("(sensitive: 3 characters set)".into());
        assert!(line(&email, false).contains("(sensitive: 3"));
    }

    #[test]
    fn the_second_listing_marks_only_elements_that_appeared_since_the_first() {
        let mut index = ElementIndex::default();
        let page = vec![control(1, "button", "Save"), control(2, "link", "Home")];
        let first = index.list(&page, false);
        assert_eq!((first.total, first.new), (2, 0));
        assert!(first.lines.iter().all(|l| !l.starts_with('*')));
        let mut changed = page.clone();
        changed.push(control(3, "button", "Undo"));
        let second = index.list(&changed, false);
        assert_eq!((second.total, second.new), (3, 1));
        assert_eq!(second.lines[2], "*[3] button \"Undo\"");
        assert_eq!(index.list(&changed, false).new, 0);
    }

    #[test]
    fn hidden_elements_are_left_out_unless_asked_for_and_listings_stop_at_the_limit() {
        let mut index = ElementIndex::default();
        let mut page: Vec<Control> = (1..=200).map(|n| control(n, "link", "x")).collect();
        page[0].visible = false;
        let listing = index.list(&page, false);
        assert_eq!((listing.total, listing.lines.len()), (199, MAX_ELEMENTS));
        assert!(listing.lines[0].starts_with("[2]"));
        assert_eq!(index.list(&page, true).total, 200);
    }
}
