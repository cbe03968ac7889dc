//! The tests of `act`, kept apart from its code.

use super::super::index::tests::control;
use super::super::{Block, Form, Region};
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
            frame: None,
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
        frame: None,
    });
    after.title = "Done".into();
    let report = changes(&before, &after, 1);
    assert_eq!(
        report,
        [
            "element now: [1] textbox \"Email\" value=\"a@b.c\"",
            "the page title is now \"Done\"",
            "1 element(s) appeared: *[8] button \"Confirm\"",
            "1 element(s) disappeared: [2] link \"Help\"",
            "new text on the page: \"Thanks!\"",
        ]
    );
    assert_eq!(
        changes(&before, &before, 1),
        ["nothing changed on the page"]
    );
    let mut clicked_away = form();
    clicked_away.controls.remove(0);
    assert_eq!(
        changes(&before, &clicked_away, 1),
        ["element [1] is gone from the page"]
    );
}

fn login() -> Snapshot {
    let mut user = control(1, "textbox", "Email");
    user.form = Some(9);
    let mut password = control(2, "textbox", "Password");
    (password.sensitive, password.form) = (true, Some(9));
    let mut code = control(3, "textbox", "Code");
    code.sensitive = true;
    let mut card = control(4, "textbox", "Card number");
    card.sensitive = true;
    let mut size = control(5, "combobox", "Size");
    size.options = Vec::new();
    Snapshot {
        controls: vec![
            user,
            password,
            code,
            card,
            size,
            control(6, "button", "Help"),
        ],
        forms: vec![Form {
            id: 9,
            name: "login".into(),
            action: "/session".into(),
            method: "post".into(),
            visible: true,
        }],
        location: "https://example.com/login".into(),
        ..Snapshot::default()
    }
}

#[test]
fn a_sensitive_field_is_never_typed_into_and_the_error_says_the_person_types_it() {
    let page = login();
    let refused = check(&page, 2, &Act::Fill("hunter2".into())).unwrap_err();
    assert_eq!(
        refused,
        "element [2] (textbox \"Password\") is a sensitive field (a password): the \
         person types it themselves"
    );
    let pressed = check(&page, 2, &Act::Press("Enter".into())).unwrap_err();
    assert!(
        pressed.contains("a sensitive field (a password)") && pressed.contains("use submit"),
        "{pressed}"
    );
    assert!(
        check(&page, 4, &Act::Fill("4111 1111 1111 1111".into()))
            .unwrap_err()
            .contains("(a payment card's details)")
    );
    // Its name says nothing: the kind is said in general.
    assert!(
        check(&page, 3, &Act::Press("1".into()))
            .unwrap_err()
            .contains("(a password, a payment card's details or a one-time code)")
    );
    // Looking at it, clicking into it and submitting its form are the person's to allow.
    assert!(check(&page, 2, &Act::Click).is_ok());
    assert!(check(&page, 2, &Act::Highlight).is_ok());
    assert_eq!(
        prepare(&page, 2, &Act::Submit).unwrap(),
        "Submit the form \"login\" [9] (post → /session)"
    );
}

#[test]
fn a_key_is_pressed_by_its_name_or_character_and_an_unknown_one_is_refused() {
    let page = login();
    assert_eq!(
        prepare(&page, 1, &Act::Press("enter".into())).unwrap(),
        "Press Enter on the textbox \"Email\" [1]"
    );
    assert_eq!(
        prepare(&page, 6, &Act::Press("Space".into())).unwrap(),
        "Press Space on the button \"Help\" [6]"
    );
    assert_eq!(
        prepare(&page, 1, &Act::Press("a".into())).unwrap(),
        "Press \"a\" on the textbox \"Email\" [1]"
    );
    let unknown = check(&page, 1, &Act::Press("Ctrl+Alt+Del".into())).unwrap_err();
    assert!(
        unknown.starts_with("\"Ctrl+Alt+Del\" is not a key: press one of Enter, Escape, Tab")
            && unknown.ends_with("or a single character"),
        "{unknown}"
    );
    assert_eq!(
        prepare(&page, 6, &Act::DoubleClick).unwrap(),
        "Double-click the button \"Help\" [6]"
    );
    assert_eq!(
        prepare(&page, 6, &Act::Hover).unwrap(),
        "Move the pointer over the button \"Help\" [6]"
    );
}

#[test]
fn a_submit_names_the_form_a_field_or_the_form_number_leads_to() {
    let mut page = login();
    assert_eq!(
        prepare(&page, 9, &Act::Submit).unwrap(),
        "Submit the form \"login\" [9] (post → /session)"
    );
    assert!(
        prepare(&page, 6, &Act::Submit)
            .unwrap_err()
            .contains("is not in a form")
    );
    assert!(
        prepare(&page, 77, &Act::Submit)
            .unwrap_err()
            .contains("not on the page")
    );
    page.forms[0].visible = false;
    assert!(
        prepare(&page, 1, &Act::Submit)
            .unwrap_err()
            .contains("form [9] is hidden")
    );
}

#[test]
fn an_aria_list_takes_select_option_before_its_options_are_shown() {
    let page = login();
    assert_eq!(
        prepare(&page, 5, &Act::Select("Large".into())).unwrap(),
        "Choose \"Large\" in the combobox \"Size\" [5]"
    );
    // A native list still names its options.
    assert!(check(&form(), 3, &Act::Select("Huge".into())).is_err());
}

#[test]
fn the_report_names_a_navigation_the_focus_other_values_and_text_gone() {
    let before = form();
    let mut after = form();
    after.location = "https://example.com/next".into();
    after.blocks.clear();
    let moved = changes(&before, &after, 2);
    assert_eq!(
        moved,
        ["the page moved to https://example.com/next"],
        "a navigation does not list everything the old page had"
    );
    let mut after = form();
    after.controls[1].focused = true;
    after.controls[2].value = Some("Large".into());
    after.blocks[0].text = "Your order: 2 items".into();
    assert_eq!(
        changes(&before, &after, 1),
        [
            "the focus moved to [2] link \"Help\"",
            "1 other element(s) now: [3] combobox \"Size\" value=\"Large\" options=[Small | Large]",
            "new text on the page: \"Your order: 2 items\"",
            "text gone from the page: \"Your order\"",
        ]
    );
    // The acted-on field taking the focus is no news.
    let mut focused = form();
    focused.controls[0].focused = true;
    assert_eq!(
        changes(&before, &focused, 1),
        ["nothing changed on the page"]
    );
    let mut unseen = form();
    unseen.controls[5].name = "Delete everything".into();
    assert_eq!(
        changes(&before, &unseen, 1),
        ["nothing changed on the page that a person would see"]
    );
}
