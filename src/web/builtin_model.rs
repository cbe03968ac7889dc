//! `model: {builtin}`: the browser's Prompt API (`LanguageModel`) behind
//! [`PromptApi`], read through `Reflect` (no `web-sys` bindings: the API is new and
//! its names moved). What it translates, and why, is `llm::builtin`'s.
//!
//! Per prompt: `LanguageModel.create({initialPrompts})`; the window from
//! `contextWindow` (`inputQuota` before Chromium 138 and in extensions), the tokens
//! taken from `contextUsage` (`inputUsage`) plus `measureContextUsage(input, options)`
//! (`measureInputUsage`); then `promptStreaming(input, {responseConstraint,
//! omitResponseConstraintInput})` read chunk by chunk (each chunk a delta, as the
//! API's explainer and Chromium since 137 give them). The session is destroyed, and
//! its reader cancelled, when the stream is dropped or ends.

use futures::StreamExt;
use futures::stream::LocalBoxStream;
use js_sys::{Function, JSON, Object, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;

use crate::llm::LlmError;
use crate::llm::builtin::{Availability, Piece, Prompt, PromptApi, Shape, Turn};

/// `globalThis.LanguageModel`, when this browser has the Prompt API.
fn language_model() -> Option<JsValue> {
    let api = Reflect::get(&js_sys::global(), &"LanguageModel".into()).ok()?;
    api.is_function().then_some(api)
}

/// What `LanguageModel.availability()` answers here; [`Availability::Absent`] without
/// the API, unavailable when asking fails.
pub async fn availability() -> Availability {
    let Some(api) = language_model() else {
        return Availability::Absent;
    };
    let Ok(asked) = call(&api, "availability", &[]) else {
        return Availability::Unavailable;
    };
    match JsFuture::from(Promise::resolve(&asked)).await {
        Ok(word) => Availability::from_word(&word.as_string().unwrap_or_default()),
        Err(_) => Availability::Unavailable,
    }
}

/// The Prompt API of this window.
pub struct BrowserPromptApi;

/// An open session and, once prompted, its reply's reader; closed when dropped.
struct Session {
    session: JsValue,
    reader: Option<JsValue>,
}

impl Drop for Session {
    fn drop(&mut self) {
        if let Some(reader) = &self.reader {
            // A reader of a stream that has ended cancels nothing; its promise is
            // not waited for.
            let _ = call(reader, "cancel", &[]);
        }
        let _ = call(&self.session, "destroy", &[]);
    }
}

/// Where one prompt is.
enum State {
    Open(Prompt),
    Measured {
        session: Session,
        input: JsValue,
        options: JsValue,
    },
    Reading(Session),
    Done,
}

impl PromptApi for BrowserPromptApi {
    fn prompt(&self, prompt: Prompt) -> LocalBoxStream<'static, Piece> {
        futures::stream::unfold(State::Open(prompt), |state| async move {
            match state {
                State::Open(prompt) => Some(match open(prompt).await {
                    Ok((room, session, input, options)) => (
                        room,
                        State::Measured {
                            session,
                            input,
                            options,
                        },
                    ),
                    Err(error) => (Piece::Failed(error), State::Done),
                }),
                State::Measured {
                    mut session,
                    input,
                    options,
                } => match start(&session.session, &input, &options) {
                    Ok(reader) => {
                        session.reader = Some(reader);
                        read_next(session).await
                    }
                    Err(error) => Some((Piece::Failed(error), State::Done)),
                },
                State::Reading(session) => read_next(session).await,
                State::Done => None,
            }
        })
        .boxed_local()
    }
}

/// Opens the session and measures the prompt: the room, the session, the input and
/// the prompt's options.
async fn open(prompt: Prompt) -> Result<(Piece, Session, JsValue, JsValue), LlmError> {
    let api = language_model()
        .ok_or_else(|| LlmError::Unreachable("this browser has no Prompt API".into()))?;
    let created = Object::new();
    set(&created, "initialPrompts", &turns(&prompt.history)?);
    let session = call(&api, "create", &[created.into()]).map_err(failed)?;
    let session = Session {
        session: JsFuture::from(Promise::resolve(&session))
            .await
            .map_err(failed)?,
        reader: None,
    };
    let input = turns(&prompt.input)?;
    let options = Object::new();
    if let Some(constraint) = &prompt.constraint {
        set(
            &options,
            "responseConstraint",
            &json(&constraint.to_string())?,
        );
        // The tools and the reply's form are said in the system turn already.
        if prompt.shape == Shape::Choice {
            set(&options, "omitResponseConstraintInput", &JsValue::TRUE);
        }
    }
    let options: JsValue = options.into();
    let s = &session.session;
    let window = number(s, "contextWindow").or_else(|| number(s, "inputQuota"));
    let used = number(s, "contextUsage")
        .or_else(|| number(s, "inputUsage"))
        .unwrap_or(0);
    let measure = ["measureContextUsage", "measureInputUsage"]
        .into_iter()
        .find(|name| method(s, name).is_some());
    let measured = match measure {
        Some(name) => {
            let asked = call(s, name, &[input.clone(), options.clone()]).map_err(failed)?;
            let tokens = JsFuture::from(Promise::resolve(&asked))
                .await
                .map_err(failed)?;
            whole(tokens.as_f64())
        }
        None => 0,
    };
    let room = Piece::Room {
        window: window.unwrap_or(u64::MAX),
        needed: used.saturating_add(measured),
    };
    Ok((room, session, input, options))
}

/// Prompts the session: the reply stream's reader.
fn start(session: &JsValue, input: &JsValue, options: &JsValue) -> Result<JsValue, LlmError> {
    let stream = call(
        session,
        "promptStreaming",
        &[input.clone(), options.clone()],
    )
    .map_err(failed)?;
    call(&stream, "getReader", &[]).map_err(failed)
}

/// The reply's next chunk; `None` at its end.
async fn read_next(session: Session) -> Option<(Piece, State)> {
    let reader = session.reader.clone()?;
    let read = match call(&reader, "read", &[]) {
        Ok(read) => JsFuture::from(Promise::resolve(&read)).await,
        Err(error) => Err(error),
    };
    match read {
        Err(error) => Some((Piece::Failed(failed(error)), State::Done)),
        Ok(result) => {
            if Reflect::get(&result, &"done".into()).is_ok_and(|d| d.is_truthy()) {
                return None;
            }
            let chunk = Reflect::get(&result, &"value".into())
                .ok()
                .and_then(|v| v.as_string())
                .unwrap_or_default();
            Some((Piece::Chunk(chunk), State::Reading(session)))
        }
    }
}

/// Turns as the API's message objects.
fn turns(turns: &[Turn]) -> Result<JsValue, LlmError> {
    let text = serde_json::to_string(turns).map_err(|e| LlmError::Malformed(e.to_string()))?;
    json(&text)
}

fn json(text: &str) -> Result<JsValue, LlmError> {
    JSON::parse(text).map_err(failed)
}

fn set(object: &Object, key: &str, value: &JsValue) {
    let _ = Reflect::set(object, &key.into(), value);
}

fn method(target: &JsValue, name: &str) -> Option<Function> {
    Reflect::get(target, &name.into()).ok()?.dyn_into().ok()
}

fn call(target: &JsValue, name: &str, args: &[JsValue]) -> Result<JsValue, JsValue> {
    let function = method(target, name)
        .ok_or_else(|| JsValue::from_str(&format!("the Prompt API has no {name}()")))?;
    function.apply(target, &args.iter().collect())
}

/// A count the session gives, in whole tokens (an infinite window is no limit).
fn number(target: &JsValue, name: &str) -> Option<u64> {
    let value = Reflect::get(target, &name.into()).ok()?.as_f64()?;
    Some(whole(Some(value)))
}

fn whole(value: Option<f64>) -> u64 {
    match value {
        Some(v) if v.is_finite() && v > 0.0 => v as u64,
        Some(v) if v > 0.0 => u64::MAX,
        _ => 0,
    }
}

/// A rejection as the model's error: the API's `QuotaExceededError` as a prompt too
/// long (the run trims and asks again), `AbortError` as aborted.
fn failed(error: JsValue) -> LlmError {
    let name = Reflect::get(&error, &"name".into())
        .ok()
        .and_then(|n| n.as_string())
        .unwrap_or_default();
    let message = match error.dyn_ref::<js_sys::Error>() {
        Some(error) => String::from(error.message()),
        None => error.as_string().unwrap_or_default(),
    };
    match name.as_str() {
        "QuotaExceededError" => LlmError::Provider(format!(
            "the browser's model: prompt is too long for its context window ({message})"
        )),
        "AbortError" => LlmError::Aborted,
        "" => LlmError::Provider(format!("the browser's model failed: {message}")),
        _ => LlmError::Provider(format!("the browser's model failed: {name}: {message}")),
    }
}
