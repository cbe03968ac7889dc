//! The Leptos interface, mounted in headless Chromium and driven like a user would.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use familiar::ui::App;
use gloo_timers::future::TimeoutFuture;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::{HtmlElement, HtmlTextAreaElement, KeyboardEvent, KeyboardEventInit};

#[path = "ui/approvals.rs"]
mod approvals;
#[path = "common/capture.rs"]
mod capture;
#[path = "ui/completions.rs"]
mod completions;
#[path = "ui/markdown.rs"]
mod markdown;
#[path = "ui/settings.rs"]
mod settings;
#[path = "ui/steps.rs"]
mod steps;
#[path = "ui/streaming.rs"]
mod streaming;

wasm_bindgen_test_configure!(run_in_browser);

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

/// Forgets everything the app saved, so each test starts from a fresh page.
fn forget_saved_state() {
    let storage = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    storage.clear().unwrap();
}

/// Mounts the app on a fresh page state.
fn fresh_app() -> HtmlElement {
    forget_saved_state();
    mount(App)
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

/// The text of every element `selector` matches, in document order.
fn texts_of(root: &HtmlElement, selector: &str) -> Vec<String> {
    let all = root.query_selector_all(selector).unwrap();
    (0..all.length())
        .map(|i| all.item(i).unwrap().text_content().unwrap_or_default())
        .collect()
}

/// The answers shown so far, oldest first.
fn answers(root: &HtmlElement) -> Vec<String> {
    texts_of(root, ".message-assistant .markdown")
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
    let root = fresh_app();
    press(&root, "What time is it?", false);
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;

    assert_eq!(text_of(&root, ".message-user p"), "What time is it?");
    let answer = text_of(&root, ".message-assistant .markdown");
    let year = js_sys::Date::new_0().get_full_year().to_string();
    assert!(
        answer.starts_with("It's ") && answer.contains(&year),
        "{answer}"
    );
    open_steps(&root).await;
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
async fn a_message_sent_before_the_first_frame_builds_the_world_itself() {
    // The world is read after the first frame; this message comes sooner.
    let root = fresh_app();
    press(&root, "Remember that the ale is cold", false);
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;

    assert_eq!(answers(&root), ["I'll remember: the ale is cold."]);
    open_steps(&root).await;
    assert_eq!(text_of(&root, ".step-tool .tool-name"), "remember");
    // Newest first, over the seeded world's own memory.
    until("the inspector to read the world", || {
        newest_memory(&root).as_deref() == Some("the ale is cold")
    })
    .await;
}

/// The first memory the inspector lists: the newest in the world.
fn newest_memory(root: &HtmlElement) -> Option<String> {
    texts_of(root, ".inspector-world li").into_iter().next()
}

#[wasm_bindgen_test]
async fn left_alone_the_page_reads_the_world_after_its_first_frame() {
    let first = fresh_app();
    press(&first, "Remember that the gate is locked", false);
    until("the first page's answer", || answers(&first).len() == 1).await;

    // A second page over the same saved world, mounted and not touched.
    let second = mount(App);
    assert!(
        texts_of(&second, ".inspector-world li").is_empty(),
        "nothing is listed before the world is read"
    );
    until("the inspector to show the saved memory", || {
        newest_memory(&second).as_deref() == Some("the gate is locked")
    })
    .await;
}

#[wasm_bindgen_test]
async fn asking_for_the_page_title_reads_the_document() {
    document().set_title("Tavern of the Ninth Moon");
    let root = fresh_app();
    press(&root, "What is this page called?", false);
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    assert_eq!(
        text_of(&root, ".message-assistant .markdown"),
        "This page is “Tavern of the Ninth Moon”."
    );
    open_steps(&root).await;
    assert_eq!(text_of(&root, ".step-tool .tool-name"), "page_title");
}

#[wasm_bindgen_test]
async fn a_second_question_adds_a_second_turn() {
    let root = fresh_app();
    press(&root, "hello", false);
    until("the first answer", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    assert!(text_of(&root, ".message-assistant .markdown").contains("What time is it?"));
    open_steps(&root).await;
    assert_eq!(count(&root, ".step-tool"), 0, "no rule, no tool");
    press(&root, "and the date?", false);
    until("the second answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
}

#[wasm_bindgen_test]
async fn shift_enter_and_blank_messages_do_not_send() {
    let root = fresh_app();
    press(&root, "a first line", true);
    press(&root, "   ", false);
    TimeoutFuture::new(50).await;
    assert_eq!(count(&root, ".turn"), 0);
}

fn click(root: &HtmlElement, selector: &str) {
    let element: HtmlElement = root
        .query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .unchecked_into();
    element.click();
}

/// Opens every steps timeline under `root`, as a click on its summary does, and waits
/// for the lists, which are built on first opening.
async fn open_steps(root: &HtmlElement) {
    let timelines = root.query_selector_all("details.steps").unwrap();
    for i in 0..timelines.length() {
        let details: web_sys::HtmlDetailsElement = timelines.get(i).unwrap().unchecked_into();
        details.set_open(true);
    }
    let opened = timelines.length();
    until("the steps to be built", || {
        count(root, ".steps .step-list") == opened
    })
    .await;
}

fn key(root: &HtmlElement, name: &str) {
    let textarea = root.query_selector("textarea").unwrap().unwrap();
    let init = KeyboardEventInit::new();
    init.set_key(name);
    init.set_bubbles(true);
    init.set_cancelable(true);
    let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    textarea.dispatch_event(&event).unwrap();
}
