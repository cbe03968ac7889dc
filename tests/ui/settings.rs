//! The settings panel: Escape closes it and gives focus back to its button, and a bad
//! proxy URL, a service key or a bad step cap are refused with clear messages on their
//! own fields.

use super::*;

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
    // A project that answers (the capture server's REST stand-in): Save asks it first.
    let project = format!("{}{}", capture::origins().0, capture::tag("settings"));
    fill(&root, ".supabase-url", &project);
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
    // Save asks the project first (store::project::check): "Saved." once it answers.
    for _ in 0..100 {
        if text_of(&root, ".settings-saved") == "Saved." {
            break;
        }
        TimeoutFuture::new(50).await;
    }
    assert_eq!(count(&root, ".field-error"), 0);
    assert_eq!(applied.get_untracked(), 1);
    assert_eq!(text_of(&root, ".settings-saved"), "Saved.");
}
