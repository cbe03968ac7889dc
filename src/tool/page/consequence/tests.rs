//! The tests of `consequence`, kept apart from its code.

use super::super::index::tests::control;
use super::*;

fn in_form(mut control: Control, form: u32) -> Control {
    control.form = Some(form);
    control
}

fn form(id: u32, name: &str, method: &str, action: &str) -> Form {
    Form {
        id,
        name: name.into(),
        action: action.into(),
        method: method.into(),
        visible: true,
    }
}

fn page(controls: Vec<Control>, forms: Vec<Form>) -> Snapshot {
    Snapshot {
        location: "https://shop.example/cart".into(),
        controls,
        forms,
        ..Snapshot::default()
    }
}

/// Whether a click on a lone control of `role` named `name` always asks.
fn click_asks(role: &str, name: &str) -> bool {
    always_asks(&page(vec![control(1, role, name)], vec![]), 1, &Act::Click).is_some()
}

#[test]
fn buttons_that_buy_pay_delete_send_or_sign_out_always_ask() {
    for name in [
        "Place order",
        "Buy now",
        "Pay $20.00",
        "Checkout",
        "Proceed to check out",
        "Confirm payment",
        "Delete",
        "Delete item 3",
        "Remove from cart",
        "Discard draft",
        "Send",
        "Send feedback",
        "Post",
        "Post comment",
        "Publish",
        "Submit",
        "Sign out",
        "Log out",
        "Unsubscribe",
        "Order now",
        "Order",
        "SEND",
    ] {
        assert!(click_asks("button", name), "{name} should always ask");
    }
}

#[test]
fn the_same_words_in_other_languages_always_ask() {
    for name in [
        "Senden",
        "Jetzt kaufen",
        "Löschen",
        "Zahlungspflichtig bestellen",
        "Abmelden",
        "Envoyer",
        "Supprimer",
        "Acheter",
        "Se déconnecter",
        "Valider",
        "Enviar",
        "Eliminar",
        "Comprar",
        "Cerrar sesión",
        "Invia",
        "Verwijderen",
    ] {
        assert!(click_asks("button", name), "{name} should always ask");
    }
}

#[test]
fn harmless_buttons_and_words_inside_other_words_do_not_ask() {
    for name in [
        "Next",
        "Back",
        "Add to list",
        "Show more",
        "Sort order",
        "Order by date",
        "Order history",
        "Blog post",
        "Posts",
        "Sender",
        "Display",
        "Payment methods",
        "Removed items",
        "Buying guide",
        "Deleted messages",
        "Resend code later",
        "Open menu",
        "",
    ] {
        assert!(!click_asks("button", name), "{name} should not always ask");
    }
}

#[test]
fn a_link_asks_when_it_deletes_buys_or_signs_out_but_not_when_it_leads_to_a_form() {
    assert!(click_asks("link", "Log out"));
    assert!(click_asks("link", "Delete this post"));
    assert!(click_asks("link", "Checkout"));
    assert!(!click_asks("link", "Send feedback"));
    assert!(!click_asks("link", "Submit a request"));
    assert!(!click_asks("link", "Register"));
    assert!(!click_asks("link", "Pricing"));
    let mut link = control(1, "link", "My account");
    link.href = Some("https://shop.example/account/logout?next=/".into());
    let snapshot = page(vec![link.clone()], vec![]);
    assert_eq!(
        always_asks(&snapshot, 1, &Act::Click).as_deref(),
        Some("its address says \"logout\"")
    );
    link.href = Some("https://shop.example/account?from=logout".into());
    assert_eq!(always_asks(&page(vec![link], vec![]), 1, &Act::Click), None);
}

#[test]
fn fields_named_like_a_sending_word_are_filled_checked_and_clicked_freely() {
    let sender = control(1, "textbox", "Sender");
    let send_copy = control(2, "checkbox", "Send me a copy");
    let delete = control(3, "textbox", "Delete reason");
    let snapshot = page(vec![sender, send_copy, delete], vec![]);
    assert_eq!(always_asks(&snapshot, 1, &Act::Fill("Ann".into())), None);
    assert_eq!(always_asks(&snapshot, 1, &Act::Click), None);
    assert_eq!(always_asks(&snapshot, 2, &Act::Check(true)), None);
    assert_eq!(always_asks(&snapshot, 2, &Act::Click), None);
    assert_eq!(always_asks(&snapshot, 3, &Act::Click), None);
}

#[test]
fn turning_a_switch_or_box_named_like_a_consequential_action_on_or_off_asks() {
    let snapshot = page(
        vec![
            control(1, "switch", "Delete my data"),
            control(2, "checkbox", "Auto-renew"),
            control(3, "checkbox", "Delete after 30 days"),
            control(4, "radio", "Buy the yearly plan"),
            control(5, "checkbox", "Remember me"),
        ],
        vec![],
    );
    for id in 1..=4 {
        for act in [
            Act::Check(true),
            Act::Check(false),
            Act::Click,
            Act::Press(" ".into()),
        ] {
            assert!(
                always_asks(&snapshot, id, &act).is_some(),
                "[{id}] {act:?} should always ask"
            );
        }
    }
    assert_eq!(
        always_asks(&snapshot, 2, &Act::Check(true)).as_deref(),
        Some("its name says \"renew\"")
    );
    assert_eq!(always_asks(&snapshot, 5, &Act::Check(true)), None);
    assert_eq!(always_asks(&snapshot, 5, &Act::Click), None);
    assert!(always_asks(&snapshot, 9, &Act::Check(true)).is_some());
}

#[test]
fn a_button_of_a_form_that_posts_submits_it_and_asks_whatever_its_name() {
    let snapshot = page(
        vec![in_form(control(1, "button", "Continue"), 9)],
        vec![form(9, "Shipping", "post", "/checkout/shipping")],
    );
    assert_eq!(
        always_asks(&snapshot, 1, &Act::Click).as_deref(),
        Some("it submits the form \"Shipping\"")
    );
}

#[test]
fn a_button_of_a_form_sent_by_get_submits_it_and_asks_as_submit_and_enter_do() {
    let snapshot = page(
        vec![
            in_form(control(1, "button", "Next"), 9),
            in_form(control(2, "textbox", "Email"), 9),
            in_form(control(3, "searchbox", "Search"), 8),
            in_form(control(4, "button", "Go"), 8),
        ],
        vec![
            form(9, "Sign-up step 1", "get", "this page"),
            form(8, "", "get", "/results"),
        ],
    );
    let submits = Some("it submits the form \"Sign-up step 1\"");
    assert_eq!(always_asks(&snapshot, 1, &Act::Click).as_deref(), submits);
    assert_eq!(always_asks(&snapshot, 9, &Act::Submit).as_deref(), submits);
    let enter = Act::Press("Enter".into());
    assert_eq!(always_asks(&snapshot, 2, &enter).as_deref(), submits);
    // A search's button, its Enter and its submit look something up.
    assert_eq!(always_asks(&snapshot, 4, &Act::Click), None);
    assert_eq!(always_asks(&snapshot, 3, &enter), None);
    assert_eq!(always_asks(&snapshot, 8, &Act::Submit), None);
}

#[test]
fn submitting_a_form_asks_unless_it_only_searches() {
    let snapshot = page(
        vec![
            in_form(control(1, "textbox", "Email"), 9),
            in_form(control(2, "searchbox", "Search products"), 8),
            in_form(control(3, "textbox", "Terms"), 7),
        ],
        vec![
            form(9, "Newsletter", "post", "/subscribe"),
            form(8, "", "get", "/search"),
            form(7, "Site search", "post", "/search"),
        ],
    );
    assert!(always_asks(&snapshot, 9, &Act::Submit).is_some());
    assert!(always_asks(&snapshot, 1, &Act::Submit).is_some());
    assert_eq!(always_asks(&snapshot, 8, &Act::Submit), None);
    assert_eq!(always_asks(&snapshot, 2, &Act::Submit), None);
    // A search that posts changes something on the server as far as anyone can tell.
    assert!(always_asks(&snapshot, 7, &Act::Submit).is_some());
}

#[test]
fn enter_in_a_field_of_a_form_asks_but_enter_in_an_apps_own_field_does_not() {
    let snapshot = page(
        vec![
            in_form(control(1, "textbox", "Card holder"), 9),
            control(2, "textbox", "What needs to be done?"),
            control(3, "textbox", "Write a message"),
            in_form(control(4, "searchbox", "Search"), 8),
        ],
        vec![form(9, "Payment", "post", "/pay"), form(8, "", "get", "/")],
    );
    let enter = Act::Press("Enter".into());
    assert!(always_asks(&snapshot, 1, &enter).is_some());
    assert_eq!(always_asks(&snapshot, 2, &enter), None);
    assert!(always_asks(&snapshot, 3, &enter).is_some());
    assert_eq!(always_asks(&snapshot, 4, &enter), None);
    assert_eq!(always_asks(&snapshot, 1, &Act::Press("Tab".into())), None);
    assert_eq!(always_asks(&snapshot, 1, &Act::Press("a".into())), None);
}

#[test]
fn enter_or_space_on_a_button_is_its_click_and_delete_on_an_item_asks() {
    let snapshot = page(
        vec![
            control(1, "button", "Place order"),
            control(2, "button", "Next"),
            control(3, "option", "Inbox item"),
            control(4, "textbox", "Note"),
        ],
        vec![],
    );
    assert!(always_asks(&snapshot, 1, &Act::Press("Enter".into())).is_some());
    assert!(always_asks(&snapshot, 1, &Act::Press("Space".into())).is_some());
    assert_eq!(always_asks(&snapshot, 2, &Act::Press("Enter".into())), None);
    assert!(always_asks(&snapshot, 3, &Act::Press("Delete".into())).is_some());
    assert_eq!(
        always_asks(&snapshot, 4, &Act::Press("Backspace".into())),
        None
    );
}

#[test]
fn every_name_of_enter_or_space_on_place_order_asks_and_control_characters_press_nothing() {
    let snapshot = page(vec![control(1, "button", "Place order")], vec![]);
    for name in [
        " ", "Space", "space", "Enter", "enter", " Enter ", "\r", "\n", "\t",
    ] {
        let press = Act::Press(name.into());
        assert!(
            always_asks(&snapshot, 1, &press).is_some(),
            "{name:?} on Place order should always ask"
        );
    }
    assert_eq!(
        always_asks(&snapshot, 1, &Act::Press("\r".into())).as_deref(),
        Some("\"\\r\" is not a key it knows")
    );
    assert_eq!(
        always_asks(&snapshot, 1, &Act::Press(" ".into())).as_deref(),
        Some("its name says \"place order\"")
    );
    assert_eq!(always_asks(&snapshot, 1, &Act::Press("Tab".into())), None);
}

#[test]
fn a_character_whose_key_code_is_deletes_asks_on_an_item_as_delete_does() {
    let snapshot = page(vec![control(3, "option", "Inbox item")], vec![]);
    // "." is sent with keyCode 46, which apps read as Delete.
    assert!(always_asks(&snapshot, 3, &Act::Press(".".into())).is_some());
    assert_eq!(always_asks(&snapshot, 3, &Act::Press("j".into())), None);
}

#[test]
fn showing_moving_to_or_typing_never_asks_and_choosing_a_delete_option_does() {
    let snapshot = page(vec![control(1, "button", "Delete account")], vec![]);
    for act in [Act::ScrollTo, Act::Highlight, Act::Hover] {
        assert_eq!(always_asks(&snapshot, 1, &act), None);
    }
    let list = page(vec![control(2, "combobox", "Bulk action")], vec![]);
    assert!(always_asks(&list, 2, &Act::Select("Delete selected".into())).is_some());
    assert_eq!(always_asks(&list, 2, &Act::Select("Archive".into())), None);
}

#[test]
fn any_action_inside_another_sites_frame_asks_even_one_a_grant_would_cover() {
    let mut ad = control(1, "button", "Next");
    ad.frame = Some("https://ads.example".into());
    let mut field = in_form(control(2, "searchbox", "Search"), 8);
    field.frame = Some("https://ads.example".into());
    let snapshot = page(
        vec![ad, field, control(3, "button", "Next")],
        vec![form(8, "", "get", "/search")],
    );
    let reason = Some("it is inside a frame of https://ads.example, another site");
    for act in [
        Act::Click,
        Act::Hover,
        Act::ScrollTo,
        Act::Press("Tab".into()),
    ] {
        assert_eq!(
            always_asks(&snapshot, 1, &act).as_deref(),
            reason,
            "{act:?}"
        );
    }
    assert_eq!(
        always_asks(&snapshot, 2, &Act::Fill("shoes".into())).as_deref(),
        reason
    );
    assert_eq!(always_asks(&snapshot, 8, &Act::Submit).as_deref(), reason);
    assert_eq!(
        always_asks(&snapshot, 3, &Act::Click),
        None,
        "the page's own"
    );
}

#[test]
fn the_frame_the_extensions_panel_names_is_read_from_its_snapshot_and_judged() {
    let merged = serde_json::json!({
        "location": "https://shop.example/cart",
        "controls": [
            {"id": 1, "role": "button", "name": "Next", "value": null, "checked": null,
             "disabled": false, "visible": true, "options": [], "href": null,
             "form": null, "frame": "https://ads.example"},
            {"id": 2, "role": "button", "name": "Next", "value": null, "checked": null,
             "disabled": false, "visible": true, "options": [], "href": null,
             "form": null},
        ],
    });
    let snapshot: Snapshot = crate::base::json::from_value(merged).unwrap();
    assert_eq!(
        snapshot.controls[0].frame.as_deref(),
        Some("https://ads.example")
    );
    assert_eq!(snapshot.controls[1].frame, None);
    assert!(always_asks(&snapshot, 1, &Act::Click).is_some());
    assert_eq!(always_asks(&snapshot, 2, &Act::Click), None);
}

#[test]
fn an_element_not_on_the_page_as_read_asks() {
    let snapshot = page(vec![control(1, "button", "Next")], vec![]);
    assert!(always_asks(&snapshot, 7, &Act::Click).is_some());
    assert!(always_asks(&snapshot, 7, &Act::Submit).is_some());
}

#[test]
fn invisible_characters_do_not_hide_a_word() {
    assert!(click_asks("button", "De\u{200b}lete"));
    assert!(click_asks("button", "Pl\u{ad}ace order"));
}

#[test]
fn a_site_is_the_scheme_and_host_of_the_location() {
    assert_eq!(
        site("https://Shop.Example:8443/cart").as_deref(),
        Some("https://shop.example:8443")
    );
    assert_eq!(
        site("http://localhost/").as_deref(),
        Some("http://localhost")
    );
    assert_eq!(site("about:blank"), None);
    assert_eq!(site("file:///home/a.html"), None);
}

#[test]
fn a_standing_permission_may_cover_scrolling_and_highlighting_but_not_hover() {
    let dom: Rc<dyn PageDom> = Rc::new(Read(page(vec![control(1, "button", "Menu")], vec![])));
    let reach = |tool| judge(tool, Rc::clone(&dom))(&serde_json::json!({"element": 1}));
    assert!(reach("scroll_to").standing);
    assert!(reach("highlight").standing);
    let hover = reach("hover");
    assert_eq!((hover.standing, hover.always_asks), (false, None));
    assert_eq!(hover.site.as_deref(), Some("https://shop.example"));
}

/// A page that was read once and is never acted on.
struct Read(Snapshot);

impl PageDom for Read {
    fn snapshot(&self) -> futures::future::LocalBoxFuture<'_, Result<Snapshot, String>> {
        Box::pin(async { Ok(self.0.clone()) })
    }
    fn last(&self) -> Option<Snapshot> {
        Some(self.0.clone())
    }
    fn perform<'a>(
        &'a self,
        _: u32,
        _: &'a Act,
    ) -> futures::future::LocalBoxFuture<'a, Result<(), String>> {
        Box::pin(async { Err("a read page is not acted on".into()) })
    }
    fn settle(&self) -> futures::future::LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
}

#[test]
fn the_act_is_read_from_each_actions_arguments() {
    let args = serde_json::json!({"element": 4, "key": "Enter"});
    assert_eq!(
        act_of("press", &args),
        Some((4, Act::Press("Enter".into())))
    );
    let args = serde_json::json!({"element": 4, "checked": true});
    assert_eq!(act_of("check", &args), Some((4, Act::Check(true))));
    assert_eq!(act_of("click", &serde_json::json!({})), None);
    assert_eq!(act_of("launch", &serde_json::json!({"element": 1})), None);
}
