//! A sign-in belongs to its project, in the browser: the demo's login (kept in the
//! page) never reaches another project's URL — not when the settings name another
//! project, not after saving another backend, which signs out — and a widget in
//! someone else's page keeps no refresh token in that page's `localStorage`. The
//! projects are the capture server's two loopback origins (`scripts/test.sh`). And a
//! sibling: a saved proxy token does not follow a changed proxy address unasked.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

#[path = "common/capture.rs"]
mod capture;

use familiar::app::settings::{Backend, Settings};
use familiar::demo::{self, AUTH_KEY};
use familiar::store::auth::AuthError;
use familiar::store::{Row, Rpc, Select, StoreError};
use familiar::ui::App;
use gloo_timers::future::TimeoutFuture;
use serde_json::Value;
use wasm_bindgen::JsCast;
use wasm_bindgen_test::*;
use web_sys::HtmlElement;

wasm_bindgen_test_configure!(run_in_browser);

const KEY: &str = "sb_publishable_capture";

fn document() -> web_sys::Document {
    web_sys::window().unwrap().document().unwrap()
}

fn local_storage() -> web_sys::Storage {
    web_sys::window().unwrap().local_storage().unwrap().unwrap()
}

/// Every `localStorage` entry as `key = value`.
fn everything_kept() -> Vec<String> {
    let storage = local_storage();
    (0..storage.length().unwrap())
        .filter_map(|i| storage.key(i).unwrap())
        .map(|key| format!("{key} = {}", storage.get_item(&key).unwrap().unwrap()))
        .collect()
}

fn supabase(url: &str) -> Backend {
    Backend::Supabase {
        url: url.into(),
        anon_key: KEY.into(),
    }
}

/// Waits (up to 5 s) until the capture server has seen what `ready` looks for.
async fn until_seen(what: &str, ready: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    for _ in 0..100 {
        let seen = capture::seen().await;
        if ready(&seen) {
            return seen;
        }
        TimeoutFuture::new(50).await;
    }
    panic!("timed out waiting for {what}");
}

#[wasm_bindgen_test]
async fn a_login_is_never_sent_to_another_project() {
    local_storage().clear().unwrap();
    let (home, other) = capture::origins();
    let tag = capture::tag("l1");
    let (home_url, other_url) = (format!("{home}{tag}"), format!("{other}{tag}"));
    // Signed in to the first project; its token expires within the minute, so the
    // next use would refresh it.
    let login = demo::account(&home_url, KEY)
        .sign_in_anonymously()
        .await
        .unwrap();
    let secrets = [login.access_token.as_str(), login.refresh_token.as_str()];
    // The settings now name another project.
    let backend = supabase(&other_url);
    assert_eq!(
        demo::identity_for(&backend).user,
        "",
        "no one is signed in there"
    );
    let world = demo::world_for(&backend).unwrap();
    world.select(&Select::from("memories")).await.unwrap();
    let call = Rpc {
        function: "do_work".into(),
        args: Row::new(),
    };
    let refused = world.rpc(&call).await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::PermissionDenied(_)),
        "{refused:?}"
    );
    assert_eq!(
        demo::account(&other_url, KEY).access_token().await,
        Err(AuthError::SignedOut)
    );
    let seen = capture::seen().await;
    assert_eq!(
        capture::at(&seen, other, &tag),
        [format!("GET {other}{tag}/rest/v1/memories?select=*")],
        "the other project was read as anon, and nothing else"
    );
    assert_eq!(
        capture::carrying(&seen, other, &secrets),
        Vec::<String>::new()
    );
}

#[wasm_bindgen_test]
async fn saving_another_backend_signs_out_and_no_token_reaches_it() {
    local_storage().clear().unwrap();
    let (home, other) = capture::origins();
    let tag = capture::tag("l2");
    let (home_url, other_url) = (format!("{home}{tag}"), format!("{other}{tag}"));
    let settings = Settings {
        backend: supabase(&home_url),
        ..Settings::default()
    };
    local_storage()
        .set_item(
            "familiar.settings",
            &serde_json::to_string(&settings).unwrap(),
        )
        .unwrap();
    let login = demo::account(&home_url, KEY)
        .sign_in_anonymously()
        .await
        .unwrap();
    let secrets = [login.access_token.as_str(), login.refresh_token.as_str()];
    let root: HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&root).unwrap();
    let mounted = leptos::mount::mount_to(root.clone(), App);
    leptos::task::tick().await;
    click(&root, ".show-settings");
    leptos::task::tick().await;
    assert_eq!(text_of(&root, ".account-status"), "Signed in anonymously.");

    fill(&root, ".supabase-url", &other_url);
    click(&root, ".settings-save");
    // Save asks the new project first (store::project::check): "Saved." once it answers.
    for _ in 0..100 {
        if text_of(&root, ".settings-saved") == "Saved." {
            break;
        }
        TimeoutFuture::new(50).await;
    }
    assert_eq!(text_of(&root, ".settings-saved"), "Saved.");
    let kept = everything_kept();
    assert!(
        !kept.iter().any(|e| secrets.iter().any(|s| e.contains(s))),
        "signed out at once: {kept:?}"
    );
    assert!(
        text_of(&root, ".account-status").starts_with("Not signed in"),
        "{}",
        text_of(&root, ".account-status")
    );
    // The old project is told, at its own URL, with its own token.
    let seen = until_seen("the sign-out at the old project", |seen| {
        !capture::at(seen, home, &format!("{tag}/auth/v1/logout")).is_empty()
    })
    .await;
    let logout = seen
        .iter()
        .find(|r| r["path"] == format!("{tag}/auth/v1/logout").as_str())
        .unwrap();
    assert_eq!(
        logout["headers"]["authorization"],
        format!("Bearer {}", login.access_token)
    );
    // The rebuilt chat reads the new project's world, as anon.
    let seen = until_seen("the new project's world read", |seen| {
        !capture::at(seen, other, &tag).is_empty()
    })
    .await;
    assert_eq!(
        capture::carrying(&seen, other, &secrets),
        Vec::<String>::new()
    );
    drop(mounted);
    root.remove();
}

#[wasm_bindgen_test]
async fn an_embedded_widget_keeps_no_refresh_token_in_local_storage() {
    local_storage().clear().unwrap();
    // A login an earlier version left in the host's storage.
    local_storage()
        .set_item(AUTH_KEY, r#"{"refresh_token": "refresh-left-behind"}"#)
        .unwrap();
    let host = Host::new();
    let (home, _) = capture::origins();
    let url = format!("{home}{}", capture::tag("l3"));
    let login = demo::account(&url, KEY)
        .sign_in_anonymously()
        .await
        .unwrap();
    let kept = everything_kept();
    assert!(
        !kept
            .iter()
            .any(|e| e.contains(&login.refresh_token) || e.contains("refresh-left-behind")),
        "{kept:?}"
    );
    assert!(
        !kept.iter().any(|e| e.contains(&login.access_token)),
        "{kept:?}"
    );
    // The page keeps it while it lives: the chat's rebuilds still act as the user.
    assert_eq!(demo::account(&url, KEY).login(), Some(login.clone()));
    assert_eq!(demo::identity_for(&supabase(&url)).user, login.user.id);
    drop(host);
}

#[wasm_bindgen_test]
async fn a_saved_proxy_token_does_not_follow_a_changed_address_unless_typed_again() {
    use familiar::app::settings::{ModelSource, Settings};
    use familiar::llm::openai::ModelSettings;
    use familiar::ui::SettingsPanel;
    use leptos::prelude::*;
    let mut model = ModelSettings::new("https://llm.example.com/v1", "m");
    model.extra_header = Some(("X-Proxy-Token".into(), "team-42".into()));
    let saved = Settings {
        model: ModelSource::Proxy(model),
        ..Settings::default()
    };
    let applied = RwSignal::new(Vec::<Settings>::new());
    let root: HtmlElement = document().create_element("div").unwrap().unchecked_into();
    document().body().unwrap().append_child(&root).unwrap();
    let current = saved.clone();
    let mounted = leptos::mount::mount_to(root.clone(), move || {
        view! {
            <SettingsPanel
                current=Signal::derive(move || current.clone())
                on_save=move |s: Settings| {
                    applied.update(|a| a.push(s));
                    Vec::new()
                }
            />
        }
    });
    leptos::task::tick().await;
    fill(&root, ".proxy-url", "https://elsewhere.example/v1");
    click(&root, ".settings-save");
    leptos::task::tick().await;
    assert!(applied.with_untracked(Vec::is_empty), "not saved");
    assert!(
        text_of(&root, "#error-model-header").contains("type it again"),
        "{}",
        text_of(&root, "#error-model-header")
    );
    // Typed again, it goes where the person now says.
    fill(&root, ".proxy-header", "X-Proxy-Token: team-42");
    click(&root, ".settings-save");
    leptos::task::tick().await;
    let sent = applied.with_untracked(|a| a.first().map(|s| s.model.clone()));
    let Some(ModelSource::Proxy(model)) = sent else {
        panic!("not saved: {sent:?}");
    };
    assert_eq!(model.base_url, "https://elsewhere.example/v1");
    assert_eq!(
        model.extra_header,
        Some(("X-Proxy-Token".into(), "team-42".into()))
    );
    drop(mounted);
    root.remove();
}

/// A `#familiar` element, as a page embedding the widget has, while it lives.
struct Host(web_sys::Element);

impl Host {
    fn new() -> Self {
        let host = document().create_element("div").unwrap();
        host.set_id("familiar");
        document().body().unwrap().append_child(&host).unwrap();
        assert!(familiar::web::in_host_page());
        Self(host)
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.0.remove();
    }
}

fn click(root: &HtmlElement, selector: &str) {
    let element: HtmlElement = root
        .query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .unchecked_into();
    element.click();
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

fn text_of(root: &HtmlElement, selector: &str) -> String {
    root.query_selector(selector)
        .unwrap()
        .unwrap_or_else(|| panic!("no {selector}"))
        .text_content()
        .unwrap_or_default()
}
