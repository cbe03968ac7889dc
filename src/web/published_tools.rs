//! `webmcp: true`: tools offered to the browser's own agents through WebMCP's
//! `document.modelContext.registerTool` (the shapes `tool::page::declared` records for
//! Chromium 156 with `--enable-features=WebMCP`, on a secure page). A tool is
//! registered with an `AbortSignal`, which is the only way WebMCP gives to take one
//! back (it has no `unregisterTool`): dropping a [`PublishedTool`] aborts it, and the
//! tool leaves `getTools()`. What a call may do is not decided here: `execute` hands
//! it to whoever published the tool.

use futures::future::LocalBoxFuture;
use js_sys::{Function, JSON, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::{JsFuture, future_to_promise};

/// Runs one call of a published tool: its input as JSON, its answer as text or why
/// not.
pub type Execute = Box<dyn Fn(Value) -> LocalBoxFuture<'static, Result<String, String>>>;

/// A tool in this page's model context, until dropped.
pub struct PublishedTool {
    controller: web_sys::AbortController,
    _execute: Closure<dyn FnMut(JsValue, JsValue) -> Promise>,
}

impl Drop for PublishedTool {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// This window's `document.modelContext`, when the browser has WebMCP and the page is
/// secure.
pub fn model_context() -> Option<JsValue> {
    let document = web_sys::window()?.document()?;
    let context = Reflect::get(&document, &"modelContext".into()).ok()?;
    let register = Reflect::get(&context, &"registerTool".into()).ok()?;
    register.is_function().then_some(context)
}

/// Registers `name` in `context`; the browser's refusal (a duplicate name, a name it
/// does not take) comes back as its message.
pub async fn publish(
    context: &JsValue,
    name: &str,
    description: &str,
    schema: &Value,
    read_only: bool,
    execute: Execute,
) -> Result<PublishedTool, String> {
    let execute = Closure::<dyn FnMut(JsValue, JsValue) -> Promise>::new(
        move |input: JsValue, _client: JsValue| {
            let input = JSON::stringify(&input)
                .ok()
                .and_then(|t| t.as_string())
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
            let run = execute(input);
            future_to_promise(async move {
                run.await
                    .map(|answer| JsValue::from_str(&answer))
                    .map_err(|why| js_sys::Error::new(&why).into())
            })
        },
    );
    let tool = Object::new();
    let set = |key: &str, value: &JsValue| {
        let _ = Reflect::set(&tool, &key.into(), value);
    };
    set("name", &name.into());
    set("description", &description.into());
    if let Ok(schema) = JSON::parse(&schema.to_string()) {
        set("inputSchema", &schema);
    }
    let annotations = Object::new();
    let _ = Reflect::set(&annotations, &"readOnlyHint".into(), &read_only.into());
    set("annotations", &annotations);
    set("execute", execute.as_ref());
    let controller = web_sys::AbortController::new().map_err(|e| message(&e))?;
    let options = Object::new();
    let _ = Reflect::set(&options, &"signal".into(), &controller.signal());
    let register: Function = Reflect::get(context, &"registerTool".into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or("the page's model context has no registerTool()")?;
    let registered = register
        .call2(context, &tool, &options)
        .map_err(|e| message(&e))?;
    JsFuture::from(Promise::resolve(&registered))
        .await
        .map_err(|e| message(&e))?;
    Ok(PublishedTool {
        controller,
        _execute: execute,
    })
}

fn message(error: &JsValue) -> String {
    match error.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.message()),
        None => error.as_string().unwrap_or_else(|| "WebMCP refused".into()),
    }
}
