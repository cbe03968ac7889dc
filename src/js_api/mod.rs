//! The JavaScript API: `createAgent(config)` and the agent it resolves to, a thin skin
//! over the session controller (`app`). Everything a host page can do here the demo
//! UI does through the same controller calls; the TypeScript declarations in
//! `familiar.d.ts` describe it.

mod build;
mod handler;
mod js;
mod model;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::{JsFuture, future_to_promise};

use crate::app::spec::{self, AgentSpec};
use crate::app::{
    ApprovalKey, Channel, Decision, Notice, PendingApproval, Session, SessionState, Target, Update,
};
use crate::run::event::Event;
pub use handler::function_handler;
use js::{console_error, error, field, message_of, to_js, to_json};

/// The declarations of what the API takes and gives, appended to the generated
/// `.d.ts` so the parameters below can name them.
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = include_str!("api.d.ts");

/// Creates an agent from `config`; rejects with one `Error` listing every problem.
#[wasm_bindgen(js_name = createAgent)]
pub async fn create_agent(
    #[wasm_bindgen(unchecked_param_type = "AgentConfig | void")] config: JsValue,
) -> Result<FamiliarAgent, JsValue> {
    let (config, model) = model::take_page_model(config);
    let value = to_json(&config).map_err(|e| error(&format!("createAgent's config: {e}")))?;
    let spec = AgentSpec::from_value(&value).map_err(|problems| {
        error(&spec::describe(
            "createAgent's config has problems",
            &problems,
        ))
    })?;
    let session = build::session(spec, model).await.map_err(|e| error(&e))?;
    let agent = FamiliarAgent::new(session);
    // A page load: a character's orders that timed out while the page was closed
    // expire now, not at the next message.
    #[cfg(feature = "workflows")]
    if let Err(e) = agent.session.expire_stale().await {
        console_error(&e.to_string());
    }
    Ok(agent)
}

/// A JavaScript listener for one update name (or `*`).
struct Listener {
    id: u32,
    name: String,
    callback: Function,
}

/// An agent in the page.
#[wasm_bindgen]
pub struct FamiliarAgent {
    session: Session,
    channel: Rc<Channel>,
    listeners: Rc<RefCell<Vec<Listener>>>,
    next_listener: Cell<u32>,
    /// The targets channel tools post to, each with its listener.
    posted: RefCell<Vec<Posted>>,
    #[cfg(feature = "ui")]
    widget: RefCell<Option<crate::ui::Mounted>>,
}

/// A target channel tools post to: one object (a window at one origin, a port) and
/// one listener, however many tools it answers.
struct Posted {
    object: JsValue,
    origin: Option<String>,
    target: Target,
    tools: Vec<String>,
    /// Dropping it stops the listening.
    _listening: handler::Listening,
}

/// The names `on` accepts besides run events.
const UPDATE_NAMES: [&str; 12] = [
    "turn_began",
    "supervisor",
    "turn_resumed",
    "character_prepared",
    "transaction_recorded",
    "transaction_expired",
    "save_failed",
    "corrupt_data",
    "conflict",
    "host_message_ignored",
    "interrupted",
    "*",
];

impl FamiliarAgent {
    fn new(session: Session) -> Self {
        let listeners: Rc<RefCell<Vec<Listener>>> = Rc::new(RefCell::new(Vec::new()));
        let dispatch = Rc::clone(&listeners);
        session.on(move |update| {
            let name = update.name();
            let callbacks: Vec<Function> = dispatch
                .borrow()
                .iter()
                .filter(|l| l.name == name || l.name == "*")
                .map(|l| l.callback.clone())
                .collect();
            if callbacks.is_empty() {
                return;
            }
            let payload = to_js(&payload(update));
            for callback in callbacks {
                if let Err(e) = callback.call1(&JsValue::NULL, &payload) {
                    console_error(&format!("a `{name}` listener threw: {}", message_of(&e)));
                }
            }
        });
        for notice in session.restore() {
            console_error(&format!("{notice:?}"));
        }
        let channel = session.channel();
        Self {
            session,
            channel,
            listeners,
            next_listener: Cell::new(1),
            posted: RefCell::new(Vec::new()),
            #[cfg(feature = "ui")]
            widget: RefCell::new(None),
        }
    }
}

impl FamiliarAgent {
    /// Decides the call `which` names: an [`ApprovalKey`]-shaped object, or the
    /// model's call id when only one waiting call has it.
    fn decide(&self, which: &JsValue, decision: Decision) -> Result<(), JsValue> {
        let key = match which.as_string() {
            Some(call_id) => self.session.waiting_call(&call_id),
            None => Ok(approval_key(which)?),
        };
        key.and_then(|key| self.session.decide(&key, decision))
            .map_err(|e| error(&e.to_string()))
    }
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

/// `{conversation, turn, callId}` or a `pending()` entry (`call.id`) as a key.
fn approval_key(which: &JsValue) -> Result<ApprovalKey, JsValue> {
    let conversation = field(which, "conversation").as_string();
    let turn = field(which, "turn").as_f64();
    let call = field(which, "callId")
        .as_string()
        .or_else(|| field(&field(which, "call"), "id").as_string());
    match (conversation, turn, call) {
        (Some(conversation), Some(turn), Some(call)) if turn >= 0.0 && turn.fract() == 0.0 => {
            Ok(ApprovalKey {
                conversation,
                turn: turn as u64,
                call,
            })
        }
        _ => Err(error(
            "name the call to decide as a pending() entry, {conversation, turn, callId}, or \
             its call id",
        )),
    }
}

/// An update as listeners get it: `{event, conversation, turn, …}`, where `event` is
/// the update's name and the rest its fields.
fn payload(update: &Update) -> Value {
    let mut value = match update {
        Update::Event { event, .. } => serde_json::to_value(event).unwrap_or_default(),
        Update::Notice(notice) => serde_json::to_value(notice).unwrap_or_default(),
        other => serde_json::to_value(other).unwrap_or_default(),
    };
    if let Some(object) = value.as_object_mut() {
        object.remove("update");
        object.remove("notice");
        object.insert("event".into(), json!(update.name()));
        if let Some((conversation, turn)) = update.turn() {
            object.insert("conversation".into(), json!(conversation));
            object.insert("turn".into(), json!(turn));
        }
    }
    value
}

#[wasm_bindgen]
impl FamiliarAgent {
    /// Gives the agent a tool the page runs: `{name, description, parameters, kind,
    /// approval, timeoutMs, handler}`, where `handler` is a function or a target to
    /// post `function_call` messages to (with `origin` for an iframe's window).
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
        let (handler, posted) = if let Some(function) = handler_value.dyn_ref::<Function>() {
            if field(&tool, "origin").is_string() {
                return Err(problem(
                    "origin",
                    "only an iframe's window is posted to at an origin; a function is called",
                ));
            }
            (handler::function_handler(function.clone()), None)
        } else if handler::is_target(&handler_value) {
            let origin = origin_of(&tool, &handler_value)?;
            let known = self.posted.borrow().iter().find_map(|p| {
                (js_sys::Object::is(&p.object, &handler_value) && p.origin == origin)
                    .then_some(p.target)
            });
            let (target, new) = match known {
                Some(target) => (target, None),
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
        self.session
            .host_tools()
            .register(host_tool, handler)
            .map_err(|e| error(&e.to_string()))?;
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
        self.session.host_tools().unregister(name)
    }

    /// Takes a `function_result` message that arrived some other way (a socket).
    /// `from`: the tool's handler it answers for, whose calls alone it may answer;
    /// without it, any waiting call whose (unguessable) request id it names.
    /// Whether a call was waiting for it; if not, `host_message_ignored` says why.
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
        match self.channel.receive(from, &message) {
            Ok(()) => true,
            Err(ignored) => {
                self.session.host_message_ignored(&ignored);
                false
            }
        }
    }

    /// Sends a chat message; resolves to the outcome `{type, text | reason | error}`.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn send(&self, text: String) -> Promise {
        let session = self.session.clone();
        future_to_promise(async move {
            match session.send(&text).await {
                Ok(outcome) => Ok(to_js(&outcome)),
                Err(e) => Err(error(&e.to_string())),
            }
        })
    }

    /// Runs the agent on a game event `{kind, event, actor, subject, allowedActions}`;
    /// resolves to the outcome.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn trigger(
        &self,
        #[wasm_bindgen(unchecked_param_type = "GameEvent")] event: JsValue,
    ) -> Promise {
        let session = self.session.clone();
        let observation = to_json(&event)
            .map_err(|e| format!("trigger: {e}"))
            .and_then(|v| {
                spec::observation_from_value(&v)
                    .map_err(|problems| spec::describe("trigger's event has problems", &problems))
            });
        future_to_promise(async move {
            let observation = observation.map_err(|e| error(&e))?;
            match session.trigger(observation).await {
                Ok(outcome) => Ok(to_js(&outcome)),
                Err(e) => Err(error(&e.to_string())),
            }
        })
    }

    /// Calls `callback` with every update named `name` (a run event such as `done`,
    /// `delta`, `tool_started`, `approval_needed`; or `turn_began`, `save_failed`…;
    /// `*` for all). Returns an id for `off`.
    pub fn on(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ListenerName")] name: &str,
        #[wasm_bindgen(unchecked_param_type = "UpdateListener")] callback: Function,
    ) -> Result<u32, JsValue> {
        if !Event::NAMES.contains(&name) && !UPDATE_NAMES.contains(&name) {
            let mut known: Vec<&str> = Event::NAMES.to_vec();
            known.extend(UPDATE_NAMES);
            return Err(error(&format!(
                "there is no update named `{name}`; known: {}",
                known.join(", ")
            )));
        }
        let id = self.next_listener.get();
        self.next_listener.set(id + 1);
        self.listeners.borrow_mut().push(Listener {
            id,
            name: name.to_owned(),
            callback,
        });
        Ok(id)
    }

    /// Removes listeners: `off(id)`, or `off(name, callback)`. How many were removed.
    pub fn off(
        &self,
        #[wasm_bindgen(unchecked_param_type = "number | ListenerName")] name_or_id: JsValue,
        #[wasm_bindgen(unchecked_param_type = "UpdateListener | void")] callback: Option<Function>,
    ) -> u32 {
        let mut listeners = self.listeners.borrow_mut();
        let before = listeners.len();
        if let Some(id) = name_or_id.as_f64() {
            listeners.retain(|l| f64::from(l.id) != id);
        } else if let Some(name) = name_or_id.as_string() {
            listeners.retain(|l| {
                l.name != name
                    || callback
                        .as_ref()
                        .is_some_and(|c| !js_sys::Object::is(c, &l.callback))
            });
        }
        u32::try_from(before - listeners.len()).unwrap_or(0)
    }

    /// Decides approvals in code: `callback(pending)` returns (or resolves to) `true`,
    /// `false`, `"always"` or `{approve, always, reason}`; `null` hands them back to
    /// `approve` / `deny`. A callback that throws denies.
    #[wasm_bindgen(js_name = onApproval)]
    pub fn on_approval(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ApprovalHandler | null | void")] callback: Option<
            Function,
        >,
    ) {
        let approver = callback.map(|callback| -> crate::app::Approver {
            Rc::new(move |pending: &PendingApproval| {
                let returned = callback.call1(&JsValue::NULL, &to_js(pending));
                Box::pin(async move {
                    let settled = match returned {
                        Ok(value) => JsFuture::from(Promise::resolve(&value)).await,
                        Err(e) => Err(e),
                    };
                    match settled {
                        Ok(answer) => decision(&answer),
                        Err(e) => Decision::Deny {
                            reason: format!("the approval handler failed: {}", message_of(&e)),
                        },
                    }
                })
            })
        });
        self.session.set_approver(approver);
    }

    /// Approves a waiting call (`always`: this tool, for this agent, in this
    /// conversation, from now on). `which` is a `pending()` entry (or
    /// `{conversation, turn, callId}`); the model's call id alone is taken while no
    /// other waiting call shares it.
    pub fn approve(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ApprovalKey | string")] which: JsValue,
        always: Option<bool>,
    ) -> Result<(), JsValue> {
        let decision = if always.unwrap_or(false) {
            Decision::ApproveAlways
        } else {
            Decision::Approve
        };
        self.decide(&which, decision)
    }

    /// Denies a waiting call (named as for `approve`); the model hears `reason`.
    pub fn deny(
        &self,
        #[wasm_bindgen(unchecked_param_type = "ApprovalKey | string")] which: JsValue,
        reason: Option<String>,
    ) -> Result<(), JsValue> {
        let reason = reason
            .filter(|r| !r.trim().is_empty())
            .unwrap_or_else(|| "the user said no".into());
        self.decide(&which, Decision::Deny { reason })
    }

    /// The calls waiting for a decision.
    #[wasm_bindgen(unchecked_return_type = "PendingApproval[]")]
    pub fn pending(&self) -> JsValue {
        to_js(&self.session.pending())
    }

    /// The played character's pending transactions with the player (one per
    /// workflow type, newest first), once the stale ones have expired; `[]` with no
    /// character.
    #[wasm_bindgen(unchecked_return_type = "Promise<Transaction[]>")]
    pub fn transactions(&self) -> Promise {
        let session = self.session.clone();
        future_to_promise(async move {
            #[cfg(not(feature = "workflows"))]
            let pending: Result<Vec<()>, crate::app::AppError> = {
                let _ = session; // A build without characters has no transactions.
                Ok(Vec::new())
            };
            #[cfg(feature = "workflows")]
            let pending = session.transactions().await;
            match pending {
                Ok(pending) => Ok(to_js(&pending)),
                Err(e) => Err(error(&e.to_string())),
            }
        })
    }

    /// Stops every run in flight or waiting; each resolves `aborted`.
    pub fn abort(&self) {
        self.session.abort();
    }

    /// The runs a reload cut off, `{conversation, turn, agent, refused}` each
    /// (`refused`: why it cannot be resumed, or null).
    #[wasm_bindgen(unchecked_return_type = "Interrupted[]")]
    pub fn interrupted(&self) -> JsValue {
        let notices = self.session.interrupted().into_iter();
        let runs: Vec<Value> = notices
            .filter(|n| matches!(n, Notice::Interrupted { .. }))
            .map(|n| payload(&Update::Notice(n)))
            .collect();
        to_js(&runs)
    }

    /// Drives the run a reload cut off in `conversation` (the open one by default)
    /// on to its end, in its own turn; resolves to the outcome. Actions it applied
    /// before the reload are not applied again.
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn resume(&self, conversation: Option<String>) -> Promise {
        let session = self.session.clone();
        let conversation = conversation.unwrap_or_else(|| session.conversation_id());
        future_to_promise(async move {
            match session.resume(&conversation).await {
                Ok(outcome) => Ok(to_js(&outcome)),
                Err(e) => Err(error(&e.to_string())),
            }
        })
    }

    /// Forgets the run a reload cut off in `conversation` (the open one by default).
    #[wasm_bindgen(js_name = discardInterrupted)]
    pub fn discard_interrupted(&self, conversation: Option<String>) -> Result<(), JsValue> {
        let conversation = conversation.unwrap_or_else(|| self.session.conversation_id());
        self.session
            .discard_interrupted(&conversation)
            .map_err(|e| error(&e.to_string()))
    }

    /// The open conversation, with every turn and its steps.
    #[wasm_bindgen(unchecked_return_type = "ConversationView")]
    pub fn conversation(&self) -> JsValue {
        let conversation = self.session.conversation();
        to_js(&json!({
            "id": self.session.conversation_id(),
            "interactions": conversation.interactions,
            "let_go": conversation.let_go,
        }))
    }

    /// Everything the agent keeps, as a plain object to store anywhere.
    #[wasm_bindgen(js_name = saveState)]
    #[wasm_bindgen(unchecked_return_type = "SavedState")]
    pub fn save_state(&self) -> JsValue {
        to_js(&self.session.save_state())
    }

    /// Replaces what the agent keeps with a `saveState()` value.
    #[wasm_bindgen(js_name = loadState)]
    pub fn load_state(
        &self,
        #[wasm_bindgen(unchecked_param_type = "SavedState")] state: JsValue,
    ) -> Result<(), JsValue> {
        let value = to_json(&state).map_err(|e| error(&format!("loadState: {e}")))?;
        let state: SessionState = serde_json::from_value(value)
            .map_err(|e| error(&format!("loadState: not a saveState() value ({e})")))?;
        self.session
            .load_state(state)
            .map_err(|e| error(&e.to_string()))
    }

    /// Shows the agent as a chat widget inside `element` (its conversation,
    /// approvals and composer), replacing one mounted before.
    pub fn mount(&self, element: web_sys::HtmlElement) -> Result<(), JsValue> {
        #[cfg(feature = "ui")]
        {
            self.widget.borrow_mut().take();
            let mounted = crate::ui::mount_widget(element, self.session.clone());
            *self.widget.borrow_mut() = Some(mounted);
            Ok(())
        }
        #[cfg(not(feature = "ui"))]
        {
            let _ = element;
            Err(error(
                "this is the headless build of Familiar: it has no widget to mount",
            ))
        }
    }

    /// Takes the widget out of the page; the agent goes on.
    pub fn unmount(&self) {
        #[cfg(feature = "ui")]
        self.widget.borrow_mut().take();
    }

    /// Stops everything and lets go of listeners, tools and the widget.
    pub fn destroy(&self) {
        self.unmount();
        self.session.destroy();
        self.listeners.borrow_mut().clear();
        self.posted.borrow_mut().clear();
    }
}

/// A host's approval answer as a decision; anything unclear denies.
fn decision(answer: &JsValue) -> Decision {
    if answer.as_bool() == Some(true) {
        return Decision::Approve;
    }
    if answer.as_string().as_deref() == Some("always") {
        return Decision::ApproveAlways;
    }
    if answer.is_object() {
        let approve = field(answer, "approve").as_bool() == Some(true);
        let always = field(answer, "always").as_bool() == Some(true);
        let reason = field(answer, "reason").as_string();
        return match (approve, always) {
            (true, true) => Decision::ApproveAlways,
            (true, false) => Decision::Approve,
            (false, _) => Decision::Deny {
                reason: reason.unwrap_or_else(|| "the host denied it".into()),
            },
        };
    }
    Decision::Deny {
        reason: if answer.as_bool() == Some(false) {
            "the host denied it".into()
        } else {
            format!(
                "the approval handler answered {}, not true, false or \"always\"",
                to_json(answer).map(|v| v.to_string()).unwrap_or_default()
            )
        },
    }
}
