//! The host's tools through the API: `registerTool` (a function, or a target to post
//! `function_call` messages to), `unregisterTool`, and `receive` for results that
//! arrive some other way.

use js_sys::Function;
use serde_json::Value;
use wasm_bindgen::prelude::*;

use super::js::{error, field, to_json};
use super::{FamiliarAgent, handler};
use crate::app::Target;
use crate::app::spec;

/// A target channel tools post to: one object (a window at one origin, a port) and
/// one listener, however many tools it answers.
pub(super) struct Posted {
    object: JsValue,
    origin: Option<String>,
    target: Target,
    tools: Vec<String>,
    /// Dropping it stops the listening.
    _listening: handler::Listening,
}

/// `registerTool`'s error for one field of the tool.
fn problem(field: &str, message: &str) -> JsValue {
    error(&format!(
        "registerTool has problems:\n  tool.{field}: {message}"
    ))
}

/// The origin a tool's target is posted to: a window needs one, normalised (`"*"`
/// only when given by name); nothing else takes one.
fn origin_of(tool: &JsValue, target: &JsValue) -> Result<Option<String>, JsValue> {
    let given = field(tool, "origin").as_string();
    if !handler::is_window(target) {
        return match given {
            Some(_) => Err(problem(
                "origin",
                "only an iframe's window is posted to at an origin; a port answers only \
                 whoever holds its other end",
            )),
            None => Ok(None),
        };
    }
    let Some(given) = given else {
        return Err(problem(
            "origin",
            "an iframe's window needs the origin it is at, e.g. \"https://game.example\" \
             (\"*\" accepts any, and posts to whatever the frame navigates to); a sandboxed \
             frame answers through a MessagePort",
        ));
    };
    crate::app::normalize_origin(&given)
        .map(Some)
        .map_err(|e| problem("origin", &e.to_string()))
}

/// `registerTool`'s `batch`: whether a target takes its calls in batches.
fn batch_of(tool: &JsValue) -> Result<bool, JsValue> {
    let batch = field(tool, "batch");
    if batch.is_undefined() || batch.is_null() {
        return Ok(false);
    }
    batch
        .as_bool()
        .ok_or_else(|| problem("batch", "expected true or false"))
}

fn is_disconnect(message: &Value) -> bool {
    message.get("type").and_then(Value::as_str) == Some("disconnect")
}

#[wasm_bindgen]
impl FamiliarAgent {
    /// Gives the agent a tool the page runs: `{name, description, parameters, kind,
    /// approval, timeoutMs, author, handler}`, where `handler` is a function or a
    /// target to post `function_call` messages to (with `origin` for an iframe's
    /// window). A target's answers are another party's (`author: "others"`) unless the
    /// tool says `author: "own"`.
    #[wasm_bindgen(js_name = registerTool)]
    pub fn register_tool(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ToolConfig")] tool: JsValue,
    ) -> Result<(), JsValue> {
        // The handler is not JSON (a function, or a window that cannot be written).
        let described =
            js_sys::Object::assign(&js_sys::Object::new(), &tool.clone().unchecked_into());
        let _ = js_sys::Reflect::delete_property(&described, &"handler".into());
        let described = to_json(&described).map_err(|e| error(&format!("registerTool: {e}")))?;
        let host_tool = spec::tool_from_value(&described)
            .map_err(|problems| error(&spec::describe("registerTool has problems", &problems)))?;
        let handler_value = field(&tool, "handler");
        let name = host_tool.spec.name.clone();
        // A function is the host page's own code; a target is another party (a frame,
        // a port's other end), whose answers are its words unless `author` says `own`.
        let answered = !handler_value.is_function();
        let (handler, posted) = if let Some(function) = handler_value.dyn_ref::<Function>() {
            if field(&tool, "origin").is_string() {
                return Err(problem(
                    "origin",
                    "only an iframe's window is posted to at an origin; a function is called",
                ));
            }
            if field(&tool, "batch").is_truthy() {
                return Err(problem(
                    "batch",
                    "only a target posted to takes calls in batches; a function is called \
                     once a call",
                ));
            }
            (handler::function_handler(function.clone()), None)
        } else if handler::is_target(&handler_value) {
            let origin = origin_of(&tool, &handler_value)?;
            let known = self.posted.borrow().iter().find_map(|p| {
                (js_sys::Object::is(&p.object, &handler_value) && p.origin == origin)
                    .then_some(p.target)
            });
            let batch = batch_of(&tool)?;
            let (target, new) = match known {
                Some(target) => {
                    let others = self
                        .posted
                        .borrow()
                        .iter()
                        .any(|p| p.target == target && p.tools.iter().any(|t| *t != name));
                    if others && self.channel.is_batched(target) != batch {
                        return Err(problem(
                            "batch",
                            "every tool of one target takes its calls the same way: give \
                             them all the same `batch`",
                        ));
                    }
                    (target, None)
                }
                None => {
                    let target = self.channel.target();
                    let listening = handler::listen(
                        &self.channel,
                        &self.session,
                        target,
                        handler_value.clone(),
                        origin.clone(),
                    );
                    let posted = Posted {
                        object: handler_value.clone(),
                        origin: origin.clone(),
                        target,
                        tools: Vec::new(),
                        _listening: listening,
                    };
                    (target, Some(posted))
                }
            };
            self.channel.batch(target, batch);
            let handler =
                handler::channel_handler(&self.channel, &name, target, handler_value, origin);
            (handler, Some((target, new)))
        } else {
            return Err(problem(
                "handler",
                &format!(
                    "expected a function or something to postMessage to (an iframe's window, \
                     a MessagePort, an extension port) for `{name}`"
                ),
            ));
        };
        let host_tools = self.session.host_tools();
        let registered = if answered {
            host_tools.register_answered(host_tool, handler)
        } else {
            host_tools.register(host_tool, handler)
        };
        registered.map_err(|e| error(&e.to_string()))?;
        self.published(&name);
        let mut posted_now = self.posted.borrow_mut();
        for posted in posted_now.iter_mut() {
            posted.tools.retain(|tool| *tool != name);
        }
        if let Some((target, new)) = posted {
            posted_now.extend(new);
            if let Some(posted) = posted_now.iter_mut().find(|p| p.target == target) {
                posted.tools.push(name);
            }
        }
        posted_now.retain(|p| !p.tools.is_empty());
        Ok(())
    }

    /// Removes a tool; whether it was there.
    #[wasm_bindgen(js_name = unregisterTool)]
    pub fn unregister_tool(&self, name: &str) -> bool {
        let mut posted = self.posted.borrow_mut();
        for p in posted.iter_mut() {
            p.tools.retain(|tool| tool != name);
        }
        posted.retain(|p| !p.tools.is_empty());
        drop(posted);
        self.unpublished(name);
        self.session.host_tools().unregister(name)
    }

    /// Takes a `function_result` message that arrived some other way (a socket), a
    /// `function_results` batch, or `disconnect` (the calls waiting fail at once).
    /// `from`: the tool's handler it answers for, whose calls alone it may answer;
    /// without it, any waiting call whose (unguessable) request id it names (and, for
    /// `disconnect`, every waiting call). Whether it was taken (a result by a call
    /// waiting for it); what was not, `host_message_ignored` says why.
    pub fn receive(
        &self,
        #[wasm_bindgen(unchecked_param_type = "FunctionResultMessage")] message: JsValue,
        #[wasm_bindgen(unchecked_param_type = "MessageTarget | void")] from: JsValue,
    ) -> bool {
        let Ok(message) = to_json(&message) else {
            return false;
        };
        let from = if from.is_undefined() || from.is_null() {
            None
        } else {
            let known = self
                .posted
                .borrow()
                .iter()
                .find_map(|p| js_sys::Object::is(&p.object, &from).then_some(p.target));
            let Some(target) = known else {
                let id = message.get("request_id").and_then(Value::as_str);
                let ignored = crate::app::Ignored::Unknown(id.unwrap_or_default().to_owned());
                self.session.host_message_ignored(&ignored);
                return false;
            };
            Some(target)
        };
        let (settled, ignored) = self.channel.deliver(from, &message);
        for ignored in &ignored {
            self.session.host_message_ignored(ignored);
        }
        settled > 0 || (ignored.is_empty() && is_disconnect(&message))
    }
}
