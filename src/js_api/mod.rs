//! The JavaScript API: `createAgent(config)` and the agent it resolves to, a thin skin
//! over the session controller (`app`). Everything a host page can do here the demo
//! UI does through the same controller calls; the TypeScript declarations in
//! `familiar.d.ts` describe it.

mod approvals;
mod build;
mod environment;
mod handler;
mod js;
mod model;
#[cfg(feature = "page")]
mod remote_page;
mod telemetry;
mod tools;
mod usage;
mod webmcp;

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use js_sys::{Function, Promise};
use serde_json::{Value, json};
use wasm_bindgen::prelude::*;
use wasm_bindgen_futures::future_to_promise;

use crate::app::spec::{self, AgentSpec};
use crate::app::{Channel, Notice, Session, SessionState, Update};
use crate::run::event::Event;
pub use handler::function_handler;
use js::{console_error, error, message_of, to_js, to_json};
use tools::Posted;

/// The declarations of what the API takes and gives, appended to the generated
/// `.d.ts` so the parameters below can name them: `createAgent`'s config, then the
/// parts for tools, runs (events, outcomes, updates), approvals and saved state.
#[wasm_bindgen(typescript_custom_section)]
const TYPES: &str = concat!(
    include_str!("api.d.ts"),
    "\n",
    include_str!("api/tools.d.ts"),
    "\n",
    include_str!("api/runs.d.ts"),
    "\n",
    include_str!("api/approvals.d.ts"),
    "\n",
    include_str!("api/state.d.ts"),
);

/// Creates an agent from `config`; rejects with one `Error` listing every problem.
#[wasm_bindgen(js_name = createAgent)]
pub async fn create_agent(
    #[wasm_bindgen(unchecked_param_type = "AgentConfig | void")] config: JsValue,
) -> Result<FamiliarAgent, JsValue> {
    let (config, builtin) = model::take_builtin(config).map_err(|e| error(&e))?;
    let (config, model) = model::take_page_model(config);
    let (config, publish) = webmcp::take_webmcp(config).map_err(|e| error(&e))?;
    let (config, environment, own_environments) = environment::take_environment(config);
    let (config, traced) = telemetry::take_telemetry(config).map_err(|e| error(&e))?;
    #[cfg(feature = "page")]
    let (config, page) = remote_page::take_remote_page(config).map_err(|e| error(&e))?;
    #[cfg(not(feature = "page"))]
    let page = None;
    let progress = model::local_progress(&config);
    let fetch = model::host_fetch(&config);
    let mut value = to_json(&config).map_err(|e| error(&format!("createAgent's config: {e}")))?;
    let metering = usage::take_metering(&mut value).map_err(|e| error(&e))?;
    let spec = AgentSpec::from_value(&value).map_err(|problems| {
        error(&spec::describe(
            "createAgent's config has problems",
            &problems,
        ))
    })?;
    // The browser's own model, where it is available, runs instead of the fallback.
    let model = match builtin {
        Some(ask) => model::builtin_model(ask).await.or(model),
        None => model,
    };
    #[cfg(feature = "telemetry")]
    let traced = traced.map(|given| {
        (
            given,
            spec.namespace.clone(),
            spec.persist,
            spec.model.clone(),
        )
    });
    #[cfg(not(feature = "telemetry"))]
    let _ = traced;
    let session = build::session(spec, model, page, progress, fetch)
        .await
        .map_err(|e| error(&e))?;
    #[cfg(feature = "telemetry")]
    if let Some((given, namespace, persist, model)) = traced {
        telemetry::install(&session, given, &namespace, persist, &model);
    }
    metering.install(&session);
    session.set_environment(environment);
    for (agent, environment) in own_environments {
        session.set_agent_environment(&agent, Some(environment));
    }
    let agent = FamiliarAgent::new(session);
    #[cfg(feature = "webmcp")]
    if publish {
        *agent.webmcp.borrow_mut() = webmcp::Publisher::new(agent.session.clone());
    }
    #[cfg(not(feature = "webmcp"))]
    let _ = publish;
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
    /// The host's tools offered to the browser's agents (`webmcp: true`).
    webmcp: RefCell<Option<webmcp::Publisher>>,
}

/// The names `on` accepts besides run events.
const UPDATE_NAMES: [&str; 14] = [
    "turn_began",
    "usage",
    "supervisor",
    "turn_resumed",
    "opened",
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
        // Fires the schedules until `destroy`.
        wasm_bindgen_futures::spawn_local(session.run_schedules());
        let channel = session.channel();
        Self {
            session,
            channel,
            listeners,
            next_listener: Cell::new(1),
            posted: RefCell::new(Vec::new()),
            #[cfg(feature = "ui")]
            widget: RefCell::new(None),
            webmcp: RefCell::new(None),
        }
    }
}

/// An update as listeners get it: `{event, conversation, turn, …}`, where `event` is
/// the update's name and the rest its fields.
fn payload(update: &Update) -> Value {
    let mut value = match update {
        Update::Event { event, .. } => crate::base::json::to_value(event).unwrap_or_default(),
        Update::Notice(notice) => crate::base::json::to_value(notice).unwrap_or_default(),
        other => crate::base::json::to_value(other).unwrap_or_default(),
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

    /// Fires `trigger` (a game event, as `trigger` takes it) every `every` milliseconds
    /// (at least 1000), first one period from now; `id` names it (the same id replaces
    /// it), `missed` says what periods missed while the page was hidden or closed do
    /// (`"skip"`, the default, or `"catchUp"`: fire once). Kept with the agent's
    /// conversations, so it survives a reload; it never overlaps its own run. Returns
    /// its id.
    pub fn schedule(
        &self,
        #[wasm_bindgen(unchecked_param_type = "Schedule")] schedule: JsValue,
    ) -> Result<String, JsValue> {
        let spec = to_json(&schedule)
            .map_err(|e| format!("schedule: {e}"))
            .and_then(|v| environment::schedule_of(&v))
            .map_err(|e| error(&e))?;
        self.session
            .schedule(spec.id.as_deref(), spec.every_ms, spec.trigger, spec.missed)
            .map_err(|e| error(&e.to_string()))
    }

    /// What a person can type to reach each agent, as seed 004 lists commands:
    /// `[{value, label}]` — the `/command`s, the `@agent`s, and last `@` with this
    /// agent's name, the way back to it.
    #[wasm_bindgen(unchecked_return_type = "Command[]")]
    pub fn commands(&self) -> JsValue {
        to_js(&self.session.commands())
    }

    /// Stops the schedule `id`; whether there was one.
    pub fn unschedule(&self, id: String) -> bool {
        self.session.unschedule(&id)
    }

    /// The schedules: `[{id, every_ms, trigger, missed, next_ms}]`.
    #[wasm_bindgen(unchecked_return_type = "ScheduleInfo[]")]
    pub fn schedules(&self) -> JsValue {
        to_js(&self.session.schedules())
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
    /// before the reload are not applied again. A run a game event began (`trigger`)
    /// resumes only with that event given again: its actor and allowed actions are the
    /// live event's, never the saved run's (a saved state is not trusted to say them).
    #[wasm_bindgen(unchecked_return_type = "Promise<Outcome>")]
    pub fn resume(
        &self,
        conversation: Option<String>,
        #[wasm_bindgen(unchecked_param_type = "GameEvent | undefined")] trigger: JsValue,
    ) -> Promise {
        let session = self.session.clone();
        let conversation = conversation.unwrap_or_else(|| session.conversation_id());
        let trigger = (!trigger.is_undefined() && !trigger.is_null()).then(|| {
            to_json(&trigger)
                .map_err(|e| format!("resume's trigger: {e}"))
                .and_then(|v| {
                    spec::observation_from_value(&v).map_err(|problems| {
                        spec::describe("resume's trigger has problems", &problems)
                    })
                })
        });
        future_to_promise(async move {
            let resumed = match trigger {
                None => session.resume(&conversation).await,
                Some(trigger) => {
                    let trigger = trigger.map_err(|e| error(&e))?;
                    session.resume_with(&conversation, trigger).await
                }
            };
            match resumed {
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

    /// A conversation with every turn and its steps: the open one, or the one `id`
    /// names (a resident's own is `agent:<name>`); `null` when there is none.
    #[wasm_bindgen(unchecked_return_type = "ConversationView | null")]
    pub fn conversation(&self, id: Option<String>) -> JsValue {
        /// Written straight to text: through `json!`, each of its types would also
        /// compile a writer into a `Value`.
        #[derive(serde::Serialize)]
        struct View<'a> {
            id: String,
            interactions: &'a [crate::run::interaction::Interaction],
            let_go: u64,
            memory: &'a crate::run::ContextMemory,
        }
        let id = id.unwrap_or_else(|| self.session.conversation_id());
        let Some(conversation) = self.session.conversation_of(&id) else {
            return JsValue::NULL;
        };
        to_js(&View {
            id,
            interactions: &conversation.interactions,
            let_go: conversation.let_go,
            memory: &conversation.memory,
        })
    }

    /// Opens the conversation `id` (a resident's own is `agent:<name>`).
    pub fn open(&self, id: String) -> Result<(), JsValue> {
        self.session.open(&id).map_err(|e| error(&e.to_string()))
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
        let state: SessionState = crate::base::json::from_value(value)
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
        self.webmcp.borrow_mut().take();
        self.session.destroy();
        self.listeners.borrow_mut().clear();
        self.posted.borrow_mut().clear();
    }
}
