//! The Leptos interface, mounted in headless Chromium and driven like a user would.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use familiar::llm::message::ToolCall;
use familiar::run::interaction::Step;
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
    open_steps(&root).await;
    assert!(
        text_of(&root, ".steps-summary").contains("1 failed"),
        "the summary line says so while closed"
    );
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

#[wasm_bindgen_test]
async fn closed_steps_are_built_only_when_opened() {
    let steps = vec![Step::Error {
        message: "the review was not JSON".into(),
    }];
    let root = mount(move || view! { <StepList steps=steps /> });
    leptos::task::tick().await;
    assert_eq!(
        text_of(&root, ".steps-summary"),
        "1 steps · 1 failed · working"
    );
    assert_eq!(count(&root, ".step"), 0, "nothing is built while closed");
    click(&root, ".steps-summary");
    until("the steps to be built", || count(&root, ".step") == 1).await;
    assert_eq!(count(&root, ".step-error"), 1);
}

#[wasm_bindgen_test]
async fn streaming_text_grows_in_place_as_it_arrives() {
    use familiar::llm::Delta;
    use familiar::run::Purpose;
    use familiar::run::event::Event;
    use familiar::run::interaction::Interaction;
    use familiar::ui::Turn;
    let interaction = RwSignal::new(Interaction::new(1, "tell me a story"));
    let root = mount(move || view! { <Turn interaction=interaction /> });
    interaction.update(|i| i.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 })));
    leptos::task::tick().await;
    assert_eq!(text_of(&root, ".waiting"), "…", "working, no answer yet");
    assert_eq!(count(&root, ".markdown"), 0);
    let mut seen = Vec::new();
    for piece in ["Once ", "upon ", "a **time**."] {
        interaction.update(|i| i.apply(&Event::Delta(Delta::Text { text: piece.into() })));
        leptos::task::tick().await;
        seen.push(text_of(&root, ".markdown"));
    }
    assert_eq!(seen, ["Once", "Once upon", "Once upon a time."]);
    assert_eq!(
        text_of(&root, ".markdown strong"),
        "time",
        "markdown renders as it streams"
    );
    assert_eq!(count(&root, ".turn[data-status=planning]"), 1);
}

#[wasm_bindgen_test]
async fn a_reflection_shows_its_verdict_and_critique() {
    use familiar::run::{Review, Verdict};
    let steps = vec![Step::Reflection {
        review: Review {
            verdict: Verdict::Revise,
            feedback: "Say the time in 24-hour form.".into(),
        },
    }];
    let root = mount(move || view! { <StepList steps=steps /> });
    open_steps(&root).await;
    assert_eq!(text_of(&root, ".step-reflection .step-verdict"), "revise");
    assert_eq!(
        text_of(&root, ".step-reflection .step-text"),
        "Say the time in 24-hour form."
    );
    assert!(text_of(&root, ".steps-summary").starts_with("1 steps"));
}

/// Remembers a fact, then asks to forget it: the run stops at the approval card.
async fn forgetting_waits_for_approval() -> HtmlElement {
    let root = fresh_app();
    press(&root, "Remember that the ale is cold", false);
    until("the memory", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    press(&root, "Forget about the ale", false);
    until("the approval card", || count(&root, ".approval") == 1).await;
    assert!(text_of(&root, ".approval").contains("forget"));
    assert!(text_of(&root, ".approval-args").contains("ale"));
    assert_eq!(
        count(&root, ".turn[data-status=completed]"),
        1,
        "the run waits"
    );
    root
}

#[wasm_bindgen_test]
async fn escape_closes_the_settings_and_gives_focus_back_to_their_button() {
    let root = fresh_app();
    click(&root, ".show-settings");
    leptos::task::tick().await;
    let form = root.query_selector("form.settings").unwrap().unwrap();
    // The panel opens at its heading, focus on it (issue 43); the page may settle first.
    let heading = root.query_selector("#settings-heading").unwrap().unwrap();
    until("the heading takes focus", || {
        document().active_element() == Some(heading.clone())
    })
    .await;
    assert!(
        form.has_attribute("novalidate"),
        "our messages, not the browser's"
    );
    let init = KeyboardEventInit::new();
    init.set_key("Escape");
    init.set_bubbles(true);
    let event = KeyboardEvent::new_with_keyboard_event_init_dict("keydown", &init).unwrap();
    form.dispatch_event(&event).unwrap();
    leptos::task::tick().await;
    assert_eq!(count(&root, "form.settings"), 0);
    let button = root.query_selector(".show-settings").unwrap().unwrap();
    assert_eq!(document().active_element(), Some(button));
}

#[wasm_bindgen_test]
async fn an_unfinished_answer_offers_no_copy_or_retry_and_focus_goes_to_the_approval() {
    let root = forgetting_waits_for_approval().await;
    assert_eq!(count(&root, ".turn:nth-child(1) .answer-actions"), 1);
    assert_eq!(count(&root, ".turn:nth-child(2) .answer-actions"), 0);
    let focused = document().active_element().unwrap();
    assert!(
        focused.class_list().contains("approval"),
        "focus is on the card"
    );
    click(&root, ".approval .approve");
    let textarea = root.query_selector("textarea").unwrap().unwrap();
    assert_eq!(
        document().active_element(),
        Some(textarea),
        "then back to the composer"
    );
}

#[wasm_bindgen_test]
async fn a_stopped_answer_keeps_what_streamed_and_says_it_was_stopped() {
    use familiar::llm::Delta;
    use familiar::run::event::Event;
    use familiar::run::interaction::Interaction;
    use familiar::run::{Outcome, Purpose};
    use familiar::ui::Turn;
    let interaction = RwSignal::new(Interaction::new(1, "tell me a story"));
    let root = mount(move || view! { <Turn interaction=interaction /> });
    interaction.update(|i| {
        i.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 }));
        i.apply(&Event::Delta(Delta::Text {
            text: "Once upon a time, a dragon".into(),
        }));
        i.apply(&Event::Done(Outcome::Aborted {
            reason: "stopped before it finished".into(),
        }));
    });
    leptos::task::tick().await;
    assert_eq!(text_of(&root, ".markdown"), "Once upon a time, a dragon");
    assert_eq!(text_of(&root, ".answer-stopped"), "Stopped.");
    let answer = root.query_selector(".message-assistant").unwrap().unwrap();
    assert!(
        !answer.class_list().contains("message-failed"),
        "a Stop is the person's decision, not a failure"
    );
}

#[wasm_bindgen_test]
async fn stopped_before_a_word_the_answer_is_empty_and_the_note_says_it_was_stopped() {
    use familiar::run::event::Event;
    use familiar::run::interaction::Interaction;
    use familiar::run::{Outcome, Purpose};
    use familiar::ui::Turn;
    let interaction = RwSignal::new(Interaction::new(1, "tell me a story"));
    let root = mount(move || view! { <Turn interaction=interaction /> });
    interaction.update(|i| {
        i.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 }));
        i.apply(&Event::Done(Outcome::Aborted {
            reason: "stopped before it finished".into(),
        }));
    });
    leptos::task::tick().await;
    assert_eq!(
        text_of(&root, ".markdown"),
        "",
        "no reason shown as the answer"
    );
    assert_eq!(text_of(&root, ".answer-stopped"), "Stopped.");
}

#[wasm_bindgen_test]
async fn a_bad_proxy_url_marks_that_field_alone_and_says_so_without_backticks() {
    use familiar::app::settings::Settings;
    use familiar::ui::SettingsPanel;
    let root = mount(move || {
        view! {
            <SettingsPanel current=Signal::derive(Settings::default) on_save=move |s: Settings| s.problems() />
        }
    });
    leptos::task::tick().await;
    click(&root, ".use-proxy");
    fill(&root, ".proxy-url", "");
    fill(&root, ".proxy-model", "gpt-4o-mini");
    click(&root, ".settings-save");
    leptos::task::tick().await;
    let marked: Vec<String> = ["proxy-url", "proxy-model", "proxy-window", "proxy-header"]
        .iter()
        .filter(|c| {
            root.query_selector(&format!(".{c}"))
                .unwrap()
                .unwrap()
                .get_attribute("aria-invalid")
                .as_deref()
                == Some("true")
        })
        .map(|c| (*c).to_owned())
        .collect();
    assert_eq!(marked, ["proxy-url"]);
    let texts = texts_of(&root, ".field-error");
    assert_eq!(texts.len(), 1, "{texts:?}");
    assert!(!texts[0].contains('`'), "{texts:?}");
    assert!(texts[0].contains("got nothing"), "{texts:?}");
    assert_eq!(text_of(&root, ".settings h2"), "Settings");
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
async fn always_leaves_a_visible_trace_that_can_be_taken_back() {
    let root = forgetting_waits_for_approval().await;
    click(&root, ".approval .approve-always");
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    assert!(text_of(&root, ".always-allowed").contains("forget"));
    click(&root, ".always-allowed .ask-again");
    leptos::task::tick().await;
    assert_eq!(count(&root, ".always-allowed"), 0);
    // Taken back, `forget` asks again.
    press(&root, "Remember that the ale is cold", false);
    until("the second memory", || {
        count(&root, ".turn[data-status=completed]") == 3
    })
    .await;
    press(&root, "Forget about the ale", false);
    until("the approval card, again", || {
        count(&root, ".approval") == 1
    })
    .await;
    assert_eq!(
        count(&root, ".turn[data-status=completed]"),
        3,
        "the run waits for the person"
    );
}

#[wasm_bindgen_test]
async fn an_approved_action_runs_and_the_answer_follows() {
    let root = forgetting_waits_for_approval().await;
    click(&root, ".approval .approve");
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    assert_eq!(count(&root, ".approval"), 0);
    let shown = answers(&root);
    let last = shown.last().unwrap();
    assert!(last.starts_with("Forgotten (1)"), "{last}");
}

#[wasm_bindgen_test]
async fn a_denied_action_is_not_run_and_the_answer_says_so() {
    let root = forgetting_waits_for_approval().await;
    click(&root, ".approval .deny");
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    let shown = answers(&root);
    let last = shown.last().unwrap();
    assert!(last.contains("you declined forget"), "{last}");
    assert!(
        !root
            .query_selector(".turn:nth-child(2) .message-assistant")
            .unwrap()
            .unwrap()
            .class_list()
            .contains("message-failed"),
        "a person's no is not a failure"
    );
    let summary = text_of(&root, ".turn:nth-child(2) .steps-summary");
    assert!(!summary.contains("failed"), "{summary}");
    click(&root, ".turn:nth-child(2) .steps-summary");
    until("the steps", || {
        count(&root, ".turn:nth-child(2) .step-approval") == 1
    })
    .await;
    assert_eq!(
        text_of(&root, ".turn:nth-child(2) .step-approval .step-label"),
        "Declined"
    );
    assert_eq!(count(&root, ".turn:nth-child(2) .step-tool"), 0);
    press(&root, "What do you remember?", false);
    until("the recall", || {
        count(&root, ".turn[data-status=completed]") == 3
    })
    .await;
    let recall = &answers(&root)[2];
    assert!(
        recall.contains("the ale is cold"),
        "nothing was forgotten: {recall}"
    );
}

fn fill(root: &HtmlElement, selector: &str, value: &str) {
    let input: web_sys::HtmlInputElement = root
        .query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .unchecked_into();
    input.set_value(value);
    let event = web_sys::Event::new("input").unwrap();
    input.dispatch_event(&event).unwrap();
}

#[wasm_bindgen_test]
async fn settings_refuse_a_service_key_and_a_bad_step_cap_with_clear_messages() {
    use familiar::app::settings::Settings;
    use familiar::ui::SettingsPanel;
    let applied = RwSignal::new(0);
    let root = mount(move || {
        view! {
            <SettingsPanel
                current=Signal::derive(Settings::default)
                on_save=move |s: Settings| {
                    let problems = s.problems();
                    if problems.is_empty() {
                        applied.update(|n| *n += 1);
                    }
                    problems
                }
            />
        }
    });
    leptos::task::tick().await;
    click(&root, ".use-supabase");
    fill(&root, ".supabase-url", "https://abc.supabase.co");
    // A legacy service-role JWT: {"role":"service_role"}.
    fill(
        &root,
        ".anon-key",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.sig",
    );
    fill(&root, ".step-cap", "0");
    click(&root, ".settings-save");
    leptos::task::tick().await;
    let texts = texts_of(&root, ".field-error");
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(texts[0].contains("step cap must be 1 to 50"), "{texts:?}");
    assert!(texts[1].contains("service key"), "{texts:?}");
    assert_eq!(applied.get_untracked(), 0);
    let cap = root.query_selector(".step-cap").unwrap().unwrap();
    assert_eq!(cap.get_attribute("aria-invalid").as_deref(), Some("true"));
    assert_eq!(
        cap.get_attribute("aria-describedby").as_deref(),
        Some("error-max_iterations hint-cap"),
        "the error, then the range, read with the field"
    );
    assert_eq!(
        text_of(&root, "#hint-cap"),
        "1 to 50 steps a run",
        "the range shows before any error"
    );
    // Fixing a field clears its error at once, before any Save.
    fill(&root, ".step-cap", "8");
    leptos::task::tick().await;
    assert_eq!(texts_of(&root, ".field-error").len(), 1);
    assert_eq!(cap.get_attribute("aria-invalid").as_deref(), Some("false"));
    // An anon key and a sane cap are accepted.
    fill(
        &root,
        ".anon-key",
        "eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoiYW5vbiJ9.sig",
    );
    fill(&root, ".step-cap", "8");
    click(&root, ".settings-save");
    leptos::task::tick().await;
    assert_eq!(count(&root, ".field-error"), 0);
    assert_eq!(applied.get_untracked(), 1);
    assert_eq!(text_of(&root, ".settings-saved"), "Saved.");
}

/// Hostile model text: none of it may become an element or attribute outside the
/// renderer's own set.
const XSS: &[&str] = &[
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<svg onload=alert(1)><circle/></svg>",
    "<iframe src=\"https://evil.example\"></iframe>",
    "<!-- a comment --><b>bold?</b>",
    "<a href=\"javascript:alert(1)\">click</a>",
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click]( javascript:alert(1) )",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    "[click](vbscript:msgbox(1))",
    "[x](https://ok.example\" onclick=\"alert(1))",
    "![pic](javascript:alert(1))",
    "![pic\" onerror=\"alert(1)](https://img.example/p.png)",
    "[<img src=x onerror=alert(1)>](https://ok.example)",
    "**<script>alert(1)</script>**",
    "```html\n<script>alert(1)</script>\n```",
    "> <style>body{display:none}</style>",
    "- <form action=https://evil.example><input name=x></form>",
    "`<b>code</b>`",
    "<<script>script>alert(1)<</script>/script>",
    "&lt;script&gt;alert(1)&lt;/script&gt;",
    "[a](https://ok.example)[b](mailto:ada@example.com)",
    "<div onclick=alert(1)>\n\nblock html\n\n</div>",
    "| <b>a</b> | [x](javascript:alert(1)) |\n|---|---|\n| <i>1</i> | ![i](https://x.example/i.png) |",
    "- [x] <u>done</u>\n- [ ] [y](data:text/html,x)",
    "[ref]\n\n[ref]: javascript:alert(1)",
];

fn allowed(tag: &str, attribute: &str) -> bool {
    matches!(
        (tag, attribute),
        (_, "class")
            | ("a", "href" | "target" | "rel")
            | ("ol", "start")
            | ("button", "type")
            | ("img", "src" | "alt" | "loading" | "referrerpolicy")
            | ("pre" | "div", "tabindex" | "role" | "aria-label")
            | ("span", "role" | "aria-label")
            | ("th", "scope")
    )
}

const TAGS: &[&str] = &[
    "div",
    "p",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "code",
    "blockquote",
    "ol",
    "ul",
    "li",
    "hr",
    "br",
    "strong",
    "em",
    "del",
    "a",
    "span",
    "button",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
];

#[wasm_bindgen_test]
async fn hostile_markdown_yields_only_the_renderers_own_elements_and_attributes() {
    use familiar::ui::Markdown;
    let scripts = || document().query_selector_all("script").unwrap().length();
    let scripts_before = scripts();
    for source in XSS {
        let root = mount(move || view! { <Markdown text=source.to_string() /> });
        leptos::task::tick().await;
        let all = root.query_selector_all("*").unwrap();
        for i in 0..all.length() {
            let element: web_sys::Element = all.item(i).unwrap().unchecked_into();
            let tag = element.tag_name().to_lowercase();
            assert!(TAGS.contains(&tag.as_str()), "{source:?} made <{tag}>");
            let names = element.get_attribute_names();
            for n in 0..names.length() {
                let name = names.get(n).as_string().unwrap();
                assert!(allowed(&tag, &name), "{source:?} made <{tag} {name}>");
            }
            if tag == "a" {
                let href = element.get_attribute("href").unwrap().to_lowercase();
                assert!(
                    href.starts_with("https://")
                        || href.starts_with("http://")
                        || href.starts_with("mailto:"),
                    "{source:?} made a link to {href}"
                );
                assert_eq!(
                    element.get_attribute("rel").as_deref(),
                    Some("noopener noreferrer")
                );
            }
        }
        root.remove();
    }
    assert_eq!(scripts(), scripts_before, "no script element was added");
}

#[wasm_bindgen_test]
async fn markdown_builds_tables_task_lists_and_code_that_scrolls_by_keyboard() {
    use familiar::ui::Markdown;
    let source = "| a | b |\n|:-|-:|\n| 1 | **2** |\n\n- [x] done\n- [ ] to do\n\n```rust\nfn main() {}\n```\n\nsee https://example.com and [rel](/x)";
    let root = mount(move || view! { <Markdown text=source.to_string() /> });
    leptos::task::tick().await;
    assert_eq!(texts_of(&root, "th"), ["a", "b"]);
    assert_eq!(texts_of(&root, "td.align-right strong"), ["2"]);
    assert_eq!(count(&root, ".table-scroll[tabindex='0'][aria-label]"), 1);
    assert_eq!(texts_of(&root, "li.task .task-mark"), ["☑", "☐"]);
    let pre = root.query_selector("pre").unwrap().unwrap();
    assert_eq!(pre.get_attribute("tabindex").as_deref(), Some("0"));
    assert_eq!(
        pre.get_attribute("aria-label").as_deref(),
        Some("Code: rust")
    );
    assert_eq!(texts_of(&root, "a"), ["https://example.com"]);
    assert_eq!(
        texts_of(&root, ".link-refused"),
        ["rel"],
        "a relative link is its text"
    );
    root.remove();
}

#[wasm_bindgen_test]
async fn a_long_code_block_streams_to_its_last_byte() {
    use familiar::ui::Markdown;
    let text = RwSignal::new(String::from("```\n"));
    let root = mount(move || view! { <Markdown text=text /> });
    let line = "let value = compute(input, &mut state); // a long line of code\n";
    for _ in 0..400 {
        text.update(|t| t.push_str(line));
        leptos::task::tick().await;
    }
    let expected = line.repeat(400);
    until("the whole code block", || {
        text_of(&root, "pre code") == expected
    })
    .await;
    root.remove();
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
