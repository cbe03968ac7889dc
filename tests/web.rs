//! The browser implementations of the seams, against the real browser.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use familiar::base::clock::Clock;
use familiar::tool::{NoArgs, Tool};
use familiar::web::{BrowserClock, PageTitle};
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
