//! `page`: the tools this window's page declares with WebMCP (`document.modelContext`),
//! behind [`DeclaredTools`]; the shapes it relies on are written down in
//! `tool::page::declared`.

use futures::future::LocalBoxFuture;
use js_sys::{Array, Function, JSON, Object, Promise, Reflect};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::tool::page::DeclaredTools;

/// This window's `document.modelContext`.
pub struct WindowTools(JsValue);

impl WindowTools {
    /// The page's model context, when the browser has WebMCP and the page is secure.
    pub fn find() -> Option<Self> {
        let document = web_sys::window()?.document()?;
        let context = Reflect::get(&document, &"modelContext".into()).ok()?;
        (context.is_object() && method(&context, "getTools").is_ok()).then_some(Self(context))
    }

    /// `getTools()`'s entries, as the browser gives them.
    async fn tools(&self) -> Result<Array, String> {
        let listed = method(&self.0, "getTools")?.call0(&self.0).map_err(text)?;
        let listed = JsFuture::from(Promise::resolve(&listed))
            .await
            .map_err(text)?;
        listed
            .dyn_into()
            .map_err(|_| "the page's getTools() gave no list".to_owned())
    }
}

fn method(target: &JsValue, name: &str) -> Result<Function, String> {
    Reflect::get(target, &name.into())
        .ok()
        .and_then(|f| f.dyn_into().ok())
        .ok_or_else(|| format!("the page's model context has no {name}()"))
}

/// An error's message, or the value as text.
fn text(error: JsValue) -> String {
    match error.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.message()),
        None => error
            .as_string()
            .unwrap_or_else(|| "the page's tool failed".to_owned()),
    }
}

/// An entry without its `window` (which cannot become JSON), as JSON.
fn entry(tool: &JsValue) -> Option<Value> {
    let plain = Object::new();
    for key in [
        "name",
        "description",
        "inputSchema",
        "annotations",
        "origin",
    ] {
        let value = Reflect::get(tool, &key.into()).ok()?;
        if !value.is_undefined() {
            Reflect::set(&plain, &key.into(), &value).ok()?;
        }
    }
    serde_json::from_str(&String::from(JSON::stringify(&plain).ok()?)).ok()
}

impl DeclaredTools for WindowTools {
    fn list(&self) -> LocalBoxFuture<'_, Result<Vec<Value>, String>> {
        Box::pin(async move {
            Ok(self
                .tools()
                .await?
                .iter()
                .filter_map(|t| entry(&t))
                .collect())
        })
    }

    fn execute<'a>(
        &'a self,
        name: &'a str,
        input: &'a Value,
    ) -> LocalBoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let tool = self
                .tools()
                .await?
                .iter()
                .find(|t| {
                    Reflect::get(t, &"name".into())
                        .ok()
                        .and_then(|n| n.as_string())
                        .as_deref()
                        == Some(name)
                })
                .ok_or_else(|| format!("the page declares no tool `{name}` now"))?;
            let input = JSON::parse(&input.to_string()).map_err(text)?;
            let run = method(&self.0, "executeTool")?
                .call2(&self.0, &tool, &input)
                .map_err(text)?;
            let answer = JsFuture::from(Promise::resolve(&run)).await.map_err(text)?;
            Ok(match answer.as_string() {
                Some(answer) => answer,
                None if answer.is_undefined() => String::new(),
                None => JSON::stringify(&answer)
                    .map(String::from)
                    .unwrap_or_default(),
            })
        })
    }
}
