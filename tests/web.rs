//! The browser implementations of the seams, against the real browser; `fetch`
//! against the capture server's two loopback origins (`scripts/test.sh` starts it).
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "common/capture.rs"]
mod capture;

use familiar::base::clock::Clock;
use familiar::base::http::{Http, HttpError, HttpRequest};
use familiar::tool::{NoArgs, Tool};
use familiar::web::{BrowserClock, Fetch, PageTitle};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

#[wasm_bindgen_test]
fn the_browser_clock_reads_now_and_the_local_offset() {
    let date = js_sys::Date::new_0();
    let now = BrowserClock.now();
    assert!((now.epoch_ms - date.get_time() as i64).abs() < 1000);
    assert_eq!(now.utc_offset_minutes, -(date.get_timezone_offset() as i32));
}

#[wasm_bindgen_test]
async fn page_title_reads_the_title_and_address() {
    web_sys::window()
        .unwrap()
        .document()
        .unwrap()
        .set_title("Inn");
    let info = PageTitle
        .call(NoArgs {}, familiar::tool::CallContext::default())
        .await
        .unwrap();
    assert_eq!(info.title, "Inn");
    assert!(info.url.starts_with("http://127.0.0.1"), "{}", info.url);
    // Query and fragment (where login tokens live) never reach the model.
    let page = js_sys::eval("location.pathname")
        .unwrap()
        .as_string()
        .unwrap();
    js_sys::eval(
        "history.replaceState(null, '', location.pathname + '?token=secret#access_token=x')",
    )
    .unwrap();
    let info = PageTitle
        .call(NoArgs {}, familiar::tool::CallContext::default())
        .await
        .unwrap();
    js_sys::eval(&format!("history.replaceState(null, '', '{page}')")).unwrap();
    assert!(info.url.ends_with(&page), "{}", info.url);
    assert!(
        !info.url.contains("secret") && !info.url.contains("access_token"),
        "{}",
        info.url
    );
}

#[wasm_bindgen_test]
async fn a_request_with_our_headers_never_follows_a_redirect_to_another_origin() {
    let (home, other) = capture::origins();
    let tag = capture::tag("redirected");
    let secret = |what: &str| format!("{what}{}", tag.replace('/', "-"));
    let secrets = [
        secret("key"),
        secret("token"),
        secret("jwt"),
        secret("refresh"),
    ];
    let request = HttpRequest {
        method: "POST",
        url: format!("{home}/redirect?to={other}{tag}"),
        headers: vec![
            ("apikey".into(), secrets[0].clone()),
            ("x-proxy-token".into(), secrets[1].clone()),
            ("authorization".into(), format!("Bearer {}", secrets[2])),
            ("content-type".into(), "application/json".into()),
        ],
        body: Some(format!(r#"{{"refresh_token": "{}"}}"#, secrets[3])),
    };
    let result = Fetch.send(request).await;
    assert!(
        matches!(result, Err(HttpError::Network(_))),
        "a redirect is a network error, got status {:?}",
        result.map(|r| r.status)
    );
    let seen = capture::seen().await;
    assert_eq!(
        capture::at(&seen, home, &format!("/redirect?to={other}{tag}")).len(),
        1,
        "the request reached its own server"
    );
    assert_eq!(capture::at(&seen, other, &tag), Vec::<String>::new());
    let secrets: Vec<&str> = secrets.iter().map(String::as_str).collect();
    assert_eq!(
        capture::carrying(&seen, other, &secrets),
        Vec::<String>::new()
    );
}

#[wasm_bindgen_test]
async fn a_bare_get_still_follows_a_redirect() {
    // A character file by URL carries nothing of ours, and may have moved.
    let (home, other) = capture::origins();
    let tag = capture::tag("moved");
    let request = HttpRequest {
        method: "GET",
        url: format!("{home}/redirect?to={other}{tag}"),
        headers: Vec::new(),
        body: None,
    };
    assert_eq!(Fetch.send(request).await.unwrap().status, 200);
    let seen = capture::seen().await;
    assert_eq!(
        capture::at(&seen, other, &tag),
        [format!("GET {other}{tag}")]
    );
}
