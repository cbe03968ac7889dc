//! The Leptos interface, mounted in headless Chromium and driven like a user would.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use familiar::interaction::Step;
use familiar::message::ToolCall;
use familiar::tool::ToolKind;
use familiar::ui::{App, StepList};
use gloo_timers::future::TimeoutFuture;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{HtmlElement, HtmlTextAreaElement, KeyboardEvent, KeyboardEventInit};

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// Mounts a view into a fresh element of its own.
fn mount<V: IntoView + 'static>(view: impl FnOnce() -> V + 'static) -> HtmlElement {
    let root: HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&root).unwrap();
    leptos::mount::mount_to(root.clone(), view).forget();
    root
}

fn text_of(root: &HtmlElement, selector: &str) -> String {
    root.query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .text_content()
        .unwrap_or_default()
}

fn count(root: &HtmlElement, selector: &str) -> u32 {
    root.query_selector_all(selector).unwrap().length()
}

fn press(root: &HtmlElement, text: &str, shift: bool) {
    let textarea: HtmlTextAreaElement = root
        .query_selector("textarea")
        .unwrap()
        .unwrap()
        .unchecked_into();
    textarea.set_value(text);
    let init = KeyboardEventInit::new();
    init.set_key("Enter");
    init.set_shift_key(shift);
    init.set_bubbles(true);
    init.set_cancelable(true);
    let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    textarea.dispatch_event(&event).unwrap();
}

/// Waits (up to 5 s) until `ready` holds.
async fn until(what: &str, ready: impl Fn() -> bool) {
    for _ in 0..500 {
        if ready() {
            return;
        }
        TimeoutFuture::new(10).await;
    }
    panic!("timed out waiting for {what}");
}

#[wasm_bindgen_test]
async fn asking_the_time_shows_the_answer_and_the_steps_that_led_to_it() {
    let root = mount(App);
    press(&root, "What time is it?", false);
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;

    assert_eq!(text_of(&root, ".message-user"), "What time is it?");
    let answer = text_of(&root, ".message-assistant");
    let year = js_sys::Date::new_0().get_full_year().to_string();
    assert!(
        answer.starts_with("It's ") && answer.contains(&year),
        "{answer}"
    );
    assert_eq!(count(&root, ".step-reason"), 2);
    assert_eq!(text_of(&root, ".step-tool .tool-name"), "current_time");
    assert_eq!(text_of(&root, ".step-tool .tool-kind"), "data");
    assert!(text_of(&root, ".step-tool .tool-result").contains("\"iso\""));
    assert_eq!(count(&root, ".step-answer"), 1);
    let textarea: HtmlTextAreaElement = root
        .query_selector("textarea")
        .unwrap()
        .unwrap()
        .unchecked_into();
    assert_eq!(textarea.value(), "", "the composer clears after sending");
}

#[wasm_bindgen_test]
async fn asking_for_the_page_title_reads_the_document() {
    document().set_title("Tavern of the Ninth Moon");
    let root = mount(App);
    press(&root, "What is this page called?", false);
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    assert_eq!(
        text_of(&root, ".message-assistant"),
        "This page is “Tavern of the Ninth Moon”."
    );
    assert_eq!(text_of(&root, ".step-tool .tool-name"), "page_title");
}

#[wasm_bindgen_test]
async fn a_second_question_adds_a_second_turn() {
    let root = mount(App);
    press(&root, "hello", false);
    until("the first answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    assert!(text_of(&root, ".message-assistant").contains("What time is it?"));
    assert_eq!(count(&root, ".step-tool"), 0, "no rule, no tool");
    press(&root, "and the date?", false);
    until("the second answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
}

#[wasm_bindgen_test]
async fn shift_enter_and_blank_messages_do_not_send() {
    let root = mount(App);
    press(&root, "a first line", true);
    press(&root, "   ", false);
    TimeoutFuture::new(50).await;
    assert_eq!(count(&root, ".turn"), 0);
}

#[wasm_bindgen_test]
async fn a_failed_tool_call_stands_out_with_its_error() {
    let step = Step::ToolCall {
        call: ToolCall {
            id: "call_1".into(),
            name: "page_title".into(),
            arguments: "{oops".into(),
        },
        kind: Some(ToolKind::Data),
        result: Some(Err(
            "invalid arguments for `page_title`: not valid JSON".into()
        )),
        duration_ms: Some(0),
    };
    let root = mount(move || view! { <StepList steps=vec![step] /> });
    leptos::task::tick().await;
    assert_eq!(count(&root, ".step-tool.step-failed[data-state=error]"), 1);
    assert_eq!(
        text_of(&root, ".tool-result"),
        "invalid arguments for `page_title`: not valid JSON"
    );
    assert_eq!(
        text_of(&root, ".tool-args"),
        "{oops",
        "bad JSON is shown as written"
    );
}
