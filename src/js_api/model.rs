//! A model the page answers: `model: {respond(request)}` in `createAgent`. The page's
//! function gets each request as plain JSON (`system`, `messages`, `tools`,
//! `responseFormat`) and returns, or resolves to, the answer: text, or
//! `{text, toolCalls: [{name, arguments}]}`. It is how a host brings its own offline
//! planner (the copilot example's) or any model the crate does not speak to; what it
//! answers goes through the same checks as any model's (arguments validated by the
//! registry, JSON contracts re-asked).

use std::rc::Rc;

use futures::future::LocalBoxFuture;
use js_sys::{Function, Promise};
use serde_json::Value;
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use super::js::{field, message_of, to_js, to_json};
use crate::llm::message::{Message, ToolCall};
use crate::llm::{ChatRequest, ChatResponse, DeltaSink, Llm, LlmError, replay_as_deltas};
use crate::llm::{ResponseFormat, ToolSpec};

/// Takes `model: {respond}` out of `createAgent`'s config: a function is not JSON, so
/// the rest of the config (without `model`) is read as usual and the function becomes
/// the agent's model.
pub fn take_page_model(config: JsValue) -> (JsValue, Option<Rc<dyn Llm>>) {
    let respond = field(&field(&config, "model"), "respond");
    match respond.dyn_into::<Function>() {
        Ok(respond) => {
            let rest = js_sys::Object::assign(&js_sys::Object::new(), &config.unchecked_into());
            let _ = js_sys::Reflect::delete_property(&rest, &"model".into());
            let model: Rc<dyn Llm> = Rc::new(PageModel::new(respond));
            (rest.into(), Some(model))
        }
        Err(_) => (config, None),
    }
}

/// `model.fetch`: the host's own `fetch`, which sends the model's requests instead of
/// the page's (it adds a key the engine never holds). JSON leaves functions out, so
/// the config reader sees it only when it is not one, and says so.
pub fn host_fetch(config: &JsValue) -> Option<Function> {
    field(&field(config, "model"), "fetch")
        .dyn_into::<Function>()
        .ok()
}

/// `model: {builtin: true | {onStatus}, fallback}`: the browser's own model where
/// `LanguageModel.availability()` says it is available, else `fallback` (any other
/// model config; the rules model when none is given).
pub struct BuiltinAsk {
    /// The fallback's kind, as the status names it.
    #[cfg(feature = "builtin")]
    fallback: &'static str,
    #[cfg(feature = "builtin")]
    on_status: Option<Function>,
}

/// Takes `model.builtin` out of `createAgent`'s config: the rest of the config is
/// read with `model.fallback` as its model, and the browser is asked
/// ([`builtin_model`]) once the config is read.
pub fn take_builtin(config: JsValue) -> Result<(JsValue, Option<BuiltinAsk>), String> {
    let model = field(&config, "model");
    let builtin = field(&model, "builtin");
    if builtin.is_undefined() || builtin.is_null() || builtin.as_bool() == Some(false) {
        return Ok((config, None));
    }
    #[cfg(not(feature = "builtin"))]
    return Err("config.model.builtin needs the browser's model, which this build leaves out: use the full build (dist/, `trunk build --release`) or one with the `builtin` feature".into());
    #[cfg(feature = "builtin")]
    builtin_ask(config, &model, &builtin)
}

/// [`take_builtin`] of a config that asks for the browser's model.
#[cfg(feature = "builtin")]
fn builtin_ask(
    config: JsValue,
    model: &JsValue,
    builtin: &JsValue,
) -> Result<(JsValue, Option<BuiltinAsk>), String> {
    if builtin.as_bool() != Some(true) && !builtin.is_object() {
        return Err("config.model.builtin must be true or {onStatus}".into());
    }
    let known = ["builtin", "fallback"];
    if let Some(other) = js_sys::Object::keys(model.unchecked_ref::<js_sys::Object>())
        .iter()
        .filter_map(|k| k.as_string())
        .find(|k| !known.contains(&k.as_str()))
    {
        return Err(format!(
            "config.model.{other}: a builtin model takes only `builtin` and `fallback` (the model that runs where the browser has none)"
        ));
    }
    let on_status = match field(builtin, "onStatus") {
        none if none.is_undefined() => None,
        listener => Some(
            listener
                .dyn_into::<Function>()
                .map_err(|_| "config.model.builtin.onStatus must be a function".to_owned())?,
        ),
    };
    let fallback = field(model, "fallback");
    let rest = js_sys::Object::assign(&js_sys::Object::new(), &config.unchecked_into());
    if fallback.is_undefined() {
        let _ = js_sys::Reflect::delete_property(&rest, &"model".into());
    } else {
        let _ = js_sys::Reflect::set(&rest, &"model".into(), &fallback);
    }
    let ask = BuiltinAsk {
        fallback: fallback_kind(&fallback),
        on_status,
    };
    Ok((rest.into(), Some(ask)))
}

/// The kind of model a config names, as the status says it.
#[cfg(feature = "builtin")]
fn fallback_kind(model: &JsValue) -> &'static str {
    let has = |name: &str| !field(model, name).is_undefined();
    if has("respond") {
        "respond"
    } else if has("local") {
        "local"
    } else if has("url") {
        "proxy"
    } else {
        "rules"
    }
}

/// The browser's own model when it is available now, `None` to run the fallback;
/// `onStatus` is told which runs and why either way.
#[cfg(feature = "builtin")]
pub async fn builtin_model(ask: BuiltinAsk) -> Option<Rc<dyn Llm>> {
    use crate::llm::builtin::{Availability, BuiltinModel, status};
    use crate::web::builtin_model::{BrowserPromptApi, availability};
    let availability = availability().await;
    let told = status(availability, ask.fallback);
    if let Some(listener) = ask.on_status
        && let Err(e) = listener.call1(&JsValue::NULL, &to_js(&told))
    {
        super::js::console_error(&format!("onStatus threw: {}", message_of(&e)));
    }
    (availability == Availability::Available)
        .then(|| Rc::new(BuiltinModel::new(BrowserPromptApi)) as Rc<dyn Llm>)
}

#[cfg(not(feature = "builtin"))]
pub async fn builtin_model(_ask: BuiltinAsk) -> Option<Rc<dyn Llm>> {
    None
}

/// The page's `respond` function as a model.
pub struct PageModel {
    respond: Function,
}

impl PageModel {
    pub fn new(respond: Function) -> Self {
        Self { respond }
    }
}

/// What `respond` is given, written straight to text (through `json!`, each of its
/// types would also compile a writer into a `Value`).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct Asked<'a> {
    system: &'a str,
    messages: &'a [Message],
    tools: &'a [ToolSpec],
    response_format: &'a Option<ResponseFormat>,
}

impl Llm for PageModel {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let asked = to_js(&Asked {
                system: &request.system,
                messages: &request.messages,
                tools: request.offered_tools(),
                response_format: &request.response_format,
            });
            let returned = self
                .respond
                .call1(&JsValue::NULL, &asked)
                .map_err(|e| LlmError::Provider(format!("respond threw: {}", message_of(&e))))?;
            let settled = JsFuture::from(Promise::resolve(&returned))
                .await
                .map_err(|e| LlmError::Provider(format!("respond rejected: {}", message_of(&e))))?;
            let answer = to_json(&settled).map_err(LlmError::Malformed)?;
            let response = response_of(&answer).map_err(LlmError::Malformed)?;
            replay_as_deltas(&response, sink);
            Ok(response)
        })
    }
}

/// `model.local.onProgress`: called with `{loaded, total, cached}` while the weights
/// load, then `{ready: true, cached, contextTokens, backend: "webgpu" | "cpu", adapter?,
/// note?}` or `{error}`.
#[cfg(feature = "local")]
pub fn local_progress(config: &JsValue) -> Option<super::build::LocalProgress> {
    use crate::web::local_model::LoadStatus;
    let listener = field(&field(&field(config, "model"), "local"), "onProgress")
        .dyn_into::<Function>()
        .ok()?;
    Some(Box::new(move |status: &LoadStatus| {
        let told = match status {
            LoadStatus::Loading {
                loaded,
                total,
                cached,
            } => {
                serde_json::json!({"loaded": loaded, "total": total, "cached": cached})
            }
            LoadStatus::Ready {
                cached,
                context,
                backend,
                threads,
                adapter,
                note,
            } => {
                let mut ready = serde_json::Map::new();
                ready.insert("ready".into(), true.into());
                ready.insert("cached".into(), (*cached).into());
                ready.insert("contextTokens".into(), (*context).into());
                ready.insert("backend".into(), backend.word().into());
                ready.insert("threads".into(), (*threads).into());
                for (key, value) in [("adapter", adapter), ("note", note)] {
                    if let Some(value) = value {
                        ready.insert(key.into(), value.as_str().into());
                    }
                }
                serde_json::Value::Object(ready)
            }
            LoadStatus::Failed(error) => serde_json::json!({"error": error}),
            LoadStatus::Cancelled => {
                serde_json::json!({"error": "loading the local model was cancelled"})
            }
        };
        if let Err(e) = listener.call1(&JsValue::NULL, &to_js(&told)) {
            super::js::console_error(&format!("onProgress threw: {}", message_of(&e)));
        }
    }))
}

#[cfg(not(feature = "local"))]
pub fn local_progress(_config: &JsValue) -> Option<super::build::LocalProgress> {
    None
}

/// The page's answer as a response, or what is wrong with it.
pub fn response_of(answer: &Value) -> Result<ChatResponse, String> {
    let (text, calls) = match answer {
        Value::String(text) => (text.clone(), Vec::new()),
        Value::Object(fields) => {
            let text = match fields.get("text") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(text)) => text.clone(),
                Some(_) => return Err("respond's `text` is not a string".into()),
            };
            let calls = match fields.get("toolCalls") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(calls)) => calls.clone(),
                Some(_) => return Err("respond's `toolCalls` is not an array".into()),
            };
            (text, calls)
        }
        _ => {
            return Err(
                "respond must return text or {text, toolCalls: [{name, arguments}]}".into(),
            );
        }
    };
    let tool_calls = (1..)
        .zip(&calls)
        .map(|(n, call)| {
            let name = call.get("name").and_then(Value::as_str);
            let name = name.ok_or(format!("respond's toolCalls[{}] has no name", n - 1))?;
            let arguments = match call.get("arguments") {
                None | Some(Value::Null) => "{}".to_owned(),
                Some(Value::String(text)) => text.clone(),
                Some(other) => other.to_string(),
            };
            let id = call.get("id").and_then(Value::as_str);
            Ok(ToolCall {
                id: id.map_or_else(|| format!("call_{n}"), str::to_owned).into(),
                name: name.into(),
                arguments: arguments.into(),
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(ChatResponse::from_calls(text, tool_calls))
}
