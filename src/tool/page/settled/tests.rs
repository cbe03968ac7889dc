//! The tests of `settled`, kept apart from its code.

use super::super::index::tests::control;
use super::super::{Block, Region};
use super::*;

/// A page with a time field (`value`, focused), a calendar's field and its buttons,
/// a plan list and a box.
fn page(value: &str) -> Snapshot {
    let mut time = control(1, "textbox", "Start time");
    time.value = Some(value.into());
    time.focused = true;
    let mut date = control(2, "textbox", "Start date");
    date.value = Some(String::new());
    let mut plan = control(5, "combobox", "Plan");
    plan.options = vec!["Free".into(), "Pro".into()];
    plan.value = Some("Free".into());
    let mut terms = control(6, "checkbox", "I accept the terms");
    terms.checked = Some(false);
    let mut hidden = control(7, "button", "Next month");
    hidden.visible = false;
    Snapshot {
        controls: vec![
            time,
            date,
            control(3, "button", "Open calendar"),
            control(4, "button", "Clear date"),
            plan,
            terms,
            hidden,
        ],
        ..Snapshot::default()
    }
}

fn with(mut page: Snapshot, id: u32, change: impl FnOnce(&mut Control)) -> Snapshot {
    if let Some(control) = page.controls.iter_mut().find(|c| c.id == id) {
        change(control);
    }
    page
}

#[test]
fn a_value_rewritten_once_the_page_settled_did_not_take_and_the_error_says_what_it_shows() {
    let after = page("12:00");
    let why = judge(&Act::Fill("14:30".into()), &after, 1).unwrap_err();
    assert!(
        why.starts_with(
            "the field shows \"12:00\" after the page settled, not \"14:30\": the value did \
             not take"
        ),
        "{why}"
    );
    assert!(why.contains("work the widget's own controls"), "{why}");
    let emptied = judge(&Act::Fill("31/02/2025".into()), &page(""), 1).unwrap_err();
    assert!(
        emptied.starts_with("the field is empty after the page settled, not \"31/02/2025\""),
        "{emptied}"
    );
}

#[test]
fn a_value_the_field_shows_took_and_its_own_format_is_noted_not_refused() {
    let took = |asked: &str, shown: &str| judge(&Act::Fill(asked.into()), &page(shown), 1);
    assert_eq!(took("14:30", "14:30"), Ok(None));
    // Whitespace as a reader sees it: a textarea's line ends, an editor's spaces.
    assert_eq!(took("two\r\nlines", "two\nlines"), Ok(None));
    assert_eq!(took("a b", "a\u{a0}b"), Ok(None));
    assert_eq!(took("", ""), Ok(None));
    // A long editor's text is read cut short.
    assert_eq!(took("a long text", "a long…"), Ok(None));
    let formatted = took("5550100", "555-0100").unwrap().unwrap();
    assert_eq!(
        formatted,
        "the field shows \"555-0100\" after the page settled (the same, in the page's own form)"
    );
    assert!(took("5550100", "555-0199").is_err());
}

#[test]
fn numbers_are_held_as_numbers_not_as_their_digits() {
    let took = |asked: &str, shown: &str| judge(&Act::Fill(asked.into()), &page(shown), 1);
    // The same number in the page's own form took.
    assert!(matches!(took("100", "100.00"), Ok(Some(_))));
    assert!(matches!(took("007", "7"), Ok(Some(_))));
    assert!(matches!(took("-0", "0"), Ok(Some(_))));
    // The same digits are not the same number: a point or a sign lost did not take.
    for (asked, shown) in [("1.5", "15"), ("-5", "5"), ("10.00", "1000"), ("2", "20")] {
        assert!(took(asked, shown).is_err(), "{asked} shown as {shown}");
    }
    // Not plain numbers, so held by their letters and digits.
    assert!(matches!(took("1000", "1,000"), Ok(Some(_))));
}

#[test]
fn a_list_of_several_choices_took_a_choice_it_shows_among_them() {
    let several = with(page(""), 5, |c| c.value = Some("Free, Pro".into()));
    assert_eq!(judge(&Act::Select("pro".into()), &several, 5), Ok(None));
    assert!(judge(&Act::Select("Team".into()), &several, 5).is_err());
}

#[test]
fn nothing_is_judged_where_there_is_nothing_to_hold_the_field_to() {
    let after = page("12:00");
    // Gone, masked, a click or a key, an ARIA list that draws its choice elsewhere.
    assert_eq!(judge(&Act::Fill("14:30".into()), &after, 99), Ok(None));
    let masked = with(after.clone(), 1, |c| c.sensitive = true);
    assert_eq!(judge(&Act::Fill("14:30".into()), &masked, 1), Ok(None));
    assert_eq!(judge(&Act::Click, &after, 1), Ok(None));
    assert_eq!(judge(&Act::Press("ArrowUp".into()), &after, 1), Ok(None));
    let aria = with(after, 5, |c| {
        c.options.clear();
        c.value = None;
    });
    assert_eq!(judge(&Act::Select("Pro".into()), &aria, 5), Ok(None));
}

#[test]
fn a_choice_or_a_check_the_page_undid_did_not_take() {
    let after = page("");
    assert_eq!(judge(&Act::Select("free".into()), &after, 5), Ok(None));
    let why = judge(&Act::Select("Pro".into()), &after, 5).unwrap_err();
    assert!(
        why.starts_with("the list shows \"Free\" after the page settled, not \"Pro\""),
        "{why}"
    );
    let why = judge(&Act::Check(true), &after, 6).unwrap_err();
    assert!(
        why.starts_with("the checkbox is still unchecked after the page settled"),
        "{why}"
    );
    assert_eq!(judge(&Act::Check(false), &after, 6), Ok(None));
    let ticked = with(after, 6, |c| c.checked = Some(true));
    assert_eq!(judge(&Act::Check(true), &ticked, 6), Ok(None));
}

#[test]
fn the_focus_leaves_a_filled_field_only_when_its_typing_opened_nothing() {
    let (before, after) = (page(""), page("14:30"));
    let fill = Act::Fill("14:30".into());
    assert!(leaves(&before, &after, 1, &fill));
    // Only a fill, of a field there and focused still.
    assert!(!leaves(&before, &after, 1, &Act::Press("a".into())));
    assert!(!leaves(&before, &after, 99, &fill));
    let unfocused = with(after.clone(), 1, |c| c.focused = false);
    assert!(!leaves(&before, &unfocused, 1, &fill));
    // A list of suggestions appeared: the next step picks from it.
    let listed = with(after.clone(), 7, |c| c.visible = true);
    assert!(!leaves(&before, &listed, 1, &fill));
    // Text appeared under the field (suggestions the page gives no role).
    let mut written = after.clone();
    written.blocks.push(Block {
        heading: None,
        text: "Lisbon".into(),
        region: Region::Main,
        frame: None,
    });
    assert!(!leaves(&before, &written, 1, &fill));
    // A combobox's or a search box's typing is for its list.
    for role in ["combobox", "searchbox"] {
        let listing = with(after.clone(), 1, |c| c.role = role.into());
        assert!(!leaves(&before, &listing, 1, &fill), "{role}");
    }
}

#[test]
fn a_read_only_field_refused_names_the_controls_beside_it() {
    let refused = format!("{READ_ONLY}: work it through its widget");
    let said = read_only(refused.clone(), &page(""), 2);
    assert!(
        said.starts_with(&format!(
            "[2] textbox \"Start date\" value=\"\": {refused}; beside it: "
        )),
        "{said}"
    );
    for near in [
        "[3] button \"Open calendar\"",
        "[4] button \"Clear date\"",
        "[1] textbox",
    ] {
        assert!(said.contains(near), "{near} in {said}");
    }
    // The hidden button is not one a person could use.
    assert!(!said.contains("Next month"), "{said}");
    // Another refusal passes as it is.
    assert_eq!(
        read_only("the element is not a text field".into(), &page(""), 2),
        "the element is not a text field"
    );
}
