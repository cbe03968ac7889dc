//! The page tools against real pages in headless Chromium: fixture pages built in the
//! test (a form, a long article, an article with instructions hidden in it, a page that
//! changes after load, apps that listen for keys, a React-like value tracker, an
//! editor, menus and lists that are not native controls, sensitive fields), read and
//! acted on through the tool registry as an agent would.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::rc::Rc;

use familiar::llm::message::ToolCall;
use familiar::tool::page::{self, PageDom};
use familiar::tool::{CallContext, ToolError, ToolRegistry};
use familiar::web::WindowPage;
use serde_json::{Value, json};
use wasm_bindgen_test::*;

#[path = "page/forms.rs"]
mod forms;
#[path = "page/hidden.rs"]
mod hidden;
#[path = "page/keys.rs"]
mod keys;
#[path = "page/pointer.rs"]
mod pointer;
#[path = "page/reading.rs"]
mod reading;
#[path = "page/sensitive.rs"]
mod sensitive;
#[path = "page/widgets.rs"]
mod widgets;

wasm_bindgen_test_configure!(run_in_browser);

/// Puts `html` on the page as its only content: whatever else the test runner shows
/// is marked as ours, so the tools leave it out.
fn fixture(html: &str) -> ToolRegistry {
    let document = web_sys::window().unwrap().document().unwrap();
    let body = document.body().unwrap();
    if let Some(old) = document.get_element_by_id("fixture") {
        old.remove();
    }
    let children = body.children();
    for i in 0..children.length() {
        children
            .item(i)
            .unwrap()
            .set_attribute("data-familiar", "")
            .unwrap();
    }
    let fixture = document.create_element("div").unwrap();
    fixture.set_id("fixture");
    fixture.set_inner_html(html);
    body.append_child(&fixture).unwrap();
    let mut tools = ToolRegistry::new();
    page::register(
        &mut tools,
        Rc::new(WindowPage::default()) as Rc<dyn PageDom>,
    );
    tools
}

async fn call(tools: &ToolRegistry, name: &str, args: Value) -> Result<Value, ToolError> {
    let call = ToolCall {
        id: "t".into(),
        name: name.into(),
        arguments: args.to_string().into(),
    };
    tools.call(&call, CallContext::default()).await
}

async fn ok(tools: &ToolRegistry, name: &str, args: Value) -> Value {
    call(tools, name, args).await.unwrap()
}

fn eval(source: &str) -> wasm_bindgen::JsValue {
    js_sys::eval(source).unwrap()
}

async fn sleep(ms: u32) {
    gloo_timers::future::TimeoutFuture::new(ms).await;
}

/// The number page_elements gives the element named `name`.
fn number(listing: &Value, name: &str) -> u64 {
    let lines = listing["elements"].as_array().unwrap();
    let line = lines
        .iter()
        .filter_map(Value::as_str)
        .find(|l| l.contains(&format!("\"{name}\"")))
        .unwrap_or_else(|| panic!("no element named {name} in {lines:?}"));
    let digits: String = line
        .trim_start_matches('*')
        .trim_start_matches('[')
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().unwrap()
}

fn js(source: &str) -> wasm_bindgen::JsValue {
    js_sys::eval(&format!("({source})")).unwrap()
}

fn field(value: &wasm_bindgen::JsValue, path: &str) -> String {
    path.split('.')
        .fold(value.clone(), |v, key| {
            js_sys::Reflect::get(&v, &key.into()).unwrap()
        })
        .as_string()
        .unwrap_or_default()
}

async fn sent(agent: &familiar::js_api::FamiliarAgent, text: &str) -> wasm_bindgen::JsValue {
    wasm_bindgen_futures::JsFuture::from(agent.send(text.into()))
        .await
        .unwrap()
}

/// The text of `window[name]`, as JSON.
fn json_of(name: &str) -> String {
    js_sys::JSON::stringify(&eval(&format!("window.{name}")))
        .unwrap()
        .as_string()
        .unwrap()
}
