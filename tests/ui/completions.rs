//! The composer's completions: a combobox driven by the keyboard, and `/` and `@`
//! offering the delegate's routes and routing the message.

use super::*;

fn type_text(root: &HtmlElement, text: &str) -> HtmlTextAreaElement {
    let textarea: HtmlTextAreaElement = root
        .query_selector("textarea")
        .unwrap()
        .unwrap()
        .unchecked_into();
    textarea.set_value(text);
    textarea
        .dispatch_event(&web_sys::Event::new("input").unwrap())
        .unwrap();
    textarea
}

#[wasm_bindgen_test]
async fn the_completions_are_a_combobox_driven_by_the_keyboard() {
    let root = fresh_app();
    let textarea = type_text(&root, "/");
    leptos::task::tick().await;
    assert_eq!(
        textarea.get_attribute("aria-expanded").as_deref(),
        Some("true")
    );
    assert_eq!(
        count(&root, ".completions [role=option] button"),
        0,
        "no button in an option"
    );
    // Enter on a bare `/` sends nothing.
    key(&root, "Enter");
    leptos::task::tick().await;
    assert_eq!(count(&root, ".turn"), 0);
    key(&root, "ArrowDown");
    key(&root, "ArrowDown");
    leptos::task::tick().await;
    let offered = texts_of(&root, ".completion-insert");
    let second = root
        .query_selector("[role=option]:nth-child(2)")
        .unwrap()
        .unwrap();
    assert_eq!(
        second.get_attribute("aria-selected").as_deref(),
        Some("true")
    );
    assert_eq!(
        textarea.get_attribute("aria-activedescendant"),
        second.get_attribute("id")
    );
    key(&root, "Enter");
    leptos::task::tick().await;
    assert_eq!(
        textarea.value(),
        format!("{} ", offered[1]),
        "Enter takes the highlighted one"
    );
    assert_eq!(count(&root, ".turn"), 0, "and sends nothing yet");
    type_text(&root, "@");
    leptos::task::tick().await;
    assert!(count(&root, ".completions") == 1);
    key(&root, "Escape");
    leptos::task::tick().await;
    assert_eq!(count(&root, ".completions"), 0, "Escape closes the list");
    assert_eq!(
        textarea.get_attribute("aria-expanded").as_deref(),
        Some("false")
    );
}

#[wasm_bindgen_test]
async fn slash_and_at_offer_the_delegates_routes_and_route_the_message() {
    let root = fresh_app();
    let textarea: HtmlTextAreaElement = root
        .query_selector("textarea")
        .unwrap()
        .unwrap()
        .unchecked_into();
    textarea.set_value("/ti");
    textarea
        .dispatch_event(&web_sys::Event::new("input").unwrap())
        .unwrap();
    leptos::task::tick().await;
    let offered = texts_of(&root, ".completion-insert");
    assert_eq!(offered, ["/time", "/title"]);
    click(&root, ".completion");
    assert_eq!(textarea.value(), "/time ");
    press(&root, "/time", false);
    until("the clock's answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    assert!(text_of(&root, ".message-assistant .markdown").starts_with("It's "));
    press(&root, "@scribe", false);
    until("the switch", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    assert_eq!(answers(&root)[1], "You are now talking to @scribe.");
    // Plain text now goes to the scribe, which has no clock: no tool, its fallback.
    press(&root, "What time is it?", false);
    until("the scribe's answer", || {
        count(&root, ".turn[data-status=completed]") == 3
    })
    .await;
    open_steps(&root).await;
    assert_eq!(count(&root, ".turn:nth-child(3) .step-tool"), 0);
}
