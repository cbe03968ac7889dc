//! The session controller: what a conversation needs, with no browser in it, shared by
//! the Leptos views and the JS API. It routes a message through the delegate (or
//! takes a game event as it is), builds and drives a run per trigger, pauses for
//! approvals (decided in code or by a person; "always" holds for one conversation and
//! one agent, "for this task" for the rest of one turn's page actions on one site, a
//! standing permission for the harmless page actions on a site; none covers a call
//! that always asks), plays a character's workflows around the model, keeps conversations
//! through the [`Storage`] seam, and tells its listeners every [`Update`], each tagged
//! with the conversation and turn it belongs to. Runs of one conversation go one at
//! a time, in the order they were asked for; nothing asked for is dropped. A run is
//! saved before every step, so one cut off by a reload can be resumed.
//!
//! Front ends spawn the futures it returns; it spawns nothing itself.

mod address;
mod budget;
mod config;
mod environment;
mod grants;
mod host;
#[cfg(feature = "world")]
mod identity;
mod keyed_storage;
mod keys;
#[cfg(feature = "workflows")]
mod loaded_characters;
pub mod model_servers;
mod orders;
mod origin;
#[cfg(feature = "workflows")]
mod play;
mod queue;
mod resume;
mod schedule;
pub mod settings;
pub mod spec;
mod state;
mod storage;
#[cfg(feature = "supervisor")]
mod supervise;
#[cfg(not(feature = "supervisor"))]
#[path = "unsupervised.rs"]
mod supervise;
#[cfg(feature = "telemetry")]
mod telemetry;
mod turn;
mod update;
#[cfg(feature = "webmcp")]
mod visitor;

use std::cell::RefCell;
use std::rc::Rc;

use futures::future::LocalBoxFuture;

pub use budget::{Budgets, Spending, Spent, budgets_from, day_of, prices_from};
pub use config::{Config, DEFAULT_CONTEXT_BUDGET, DEFAULT_KEEP_TURNS, Options};
#[cfg(feature = "workflows")]
pub use config::{Play, character_prompt};
pub use host::{Channel, Handler, HostTool, HostToolError, HostTools, Ignored, Target};
#[cfg(feature = "world")]
pub use identity::{Participant, register_memory};
#[cfg(feature = "workflows")]
pub use loaded_characters::{LoadedCharacter, loaded_characters, remember_character};
pub use origin::{OriginError, normalize_origin};
#[cfg(feature = "workflows")]
pub use play::load_character;
pub use schedule::{MAX_SCHEDULES, MIN_EVERY_MS, Missed, Schedule, due};
pub use state::{Deleted, KEEP_STEPS_OF};
pub use storage::{
    ConversationEntry, Keys, Loaded, SessionState, Storage, VolatileStorage, load_conversation,
    load_index, load_kept,
};
#[cfg(feature = "telemetry")]
pub use telemetry::{ConversationTrace, KEEP_SPANS, Telemetry};
pub use update::{ApprovalKey, Decision, Notice, PendingApproval, Update};
#[cfg(feature = "webmcp")]
pub use visitor::{VISITOR, Visited};

use crate::compose::delegate::Delegate;
use crate::run::interaction::{Conversation, Interaction};
use crate::run::orders::StandingOrders;
use crate::run::{Observation, Outcome};
use state::State;

/// Decides approvals in code: gets the pending call, answers with a decision.
pub type Approver = Rc<dyn Fn(&PendingApproval) -> LocalBoxFuture<'static, Decision>>;

/// What the host perceives as each turn starts (seed 004's environment), given the
/// turn's observation: text that joins the turn's prompt, and the actor's current
/// state (a game's stats read at the moment a trigger fires).
pub type Environment = Rc<dyn Fn(&Observation) -> LocalBoxFuture<'static, Perceived>>;

/// What an [`Environment`] perceived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Perceived {
    pub text: String,
    /// Other parties wrote the text (it is quoted as data, the run untrusted).
    pub others: bool,
    /// Fields for the actor's state, over what the trigger gave.
    pub actor: serde_json::Map<String, serde_json::Value>,
}

/// A listener's handle, to remove it with [`Session::off`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct ListenerId(u64);

/// Why a request to the session was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppError {
    #[error("the message is empty")]
    Empty,
    #[error("the input is {len} characters; the limit is {limit}")]
    TooLong { len: usize, limit: usize },
    #[error("an event needs a kind (e.g. \"battle\") and an event name (e.g. \"battle.started\")")]
    UnnamedEvent,
    #[error("no call `{0}` is waiting for approval")]
    NotPending(String),
    #[error(
        "{count} calls `{call}` are waiting for approval, in {where_}; name one by its \
         conversation and turn"
    )]
    AmbiguousCall {
        call: String,
        count: usize,
        where_: String,
    },
    #[error("there is no conversation `{0}`")]
    NoConversation(String),
    #[error("cannot {0} while a run is in flight; abort it first")]
    Busy(&'static str),
    #[error("the open conversation has no turn {0}")]
    NoTurn(u64),
    #[error("conversation `{0}` has no interrupted run")]
    NotInterrupted(String),
    #[error("the message no longer waits in conversation `{0}`'s queue")]
    NotQueued(String),
    #[error("the interrupted run cannot be resumed: {0}")]
    CannotResume(String),
    #[error("the saved state cannot be read: {0}")]
    BadState(String),
    #[error("the session was destroyed")]
    Destroyed,
    #[error("the character's transactions are unavailable: {0}")]
    Transactions(String),
    #[error("the schedule was refused: {0}")]
    BadSchedule(String),
}

/// The most characters one input may have.
pub const MAX_INPUT_CHARS: usize = 100_000;

type Listener = Rc<dyn Fn(&Update)>;

struct Inner {
    config: Config,
    /// Prices, budgets and what was spent (`budget`).
    metering: RefCell<budget::Metering>,
    host: HostTools,
    state: RefCell<State>,
    listeners: RefCell<Vec<(ListenerId, Listener)>>,
    approver: RefCell<Option<Approver>>,
    environments: RefCell<environment::Environments>,
    schedules: RefCell<schedule::Schedules>,
    /// Standing orders an owner gave at run time, by agent name, over the agent's own.
    orders: RefCell<Vec<(String, Option<StandingOrders>)>>,
    /// Its runs' tracing, when the host asked for it.
    #[cfg(feature = "telemetry")]
    tracing: RefCell<Option<telemetry::Tracing>>,
}

/// A session; cheap to clone (clones share it).
#[derive(Clone)]
pub struct Session {
    inner: Rc<Inner>,
}

impl Session {
    /// A session with a new, empty conversation open; [`Session::restore`] reads the
    /// saved ones.
    pub fn new(config: Config, agents: Delegate) -> Self {
        let now = config.clock.now().epoch_ms;
        let state = State::new(agents, now);
        Self {
            inner: Rc::new(Inner {
                config,
                metering: RefCell::default(),
                host: HostTools::new(),
                state: RefCell::new(state),
                listeners: RefCell::new(Vec::new()),
                approver: RefCell::new(None),
                environments: RefCell::default(),
                schedules: RefCell::new(schedule::Schedules::default()),
                orders: RefCell::new(Vec::new()),
                #[cfg(feature = "telemetry")]
                tracing: RefCell::new(None),
            }),
        }
    }

    /// Reads the saved conversations and opens the one open last; what could not be
    /// read is kept aside and reported (the list of characters a person loaded too),
    /// and so is every run a reload cut off (see [`Session::resume`]), to the listeners
    /// and returned.
    pub fn restore(&self) -> Vec<Notice> {
        let disk = self.disk();
        let mut notices = self.inner.state.borrow_mut().restore(&disk);
        #[cfg(feature = "workflows")]
        notices.extend(loaded_characters(disk.storage, &disk.keys.characters()).1);
        notices.extend(self.restore_schedules());
        notices.extend(self.interrupted());
        for notice in &notices {
            self.tell(&Update::Notice(notice.clone()));
        }
        notices
    }

    /// Calls `listener` with every later update.
    pub fn on(&self, listener: impl Fn(&Update) + 'static) -> ListenerId {
        let mut listeners = self.inner.listeners.borrow_mut();
        let id = ListenerId(listeners.last().map_or(1, |(id, _)| id.0 + 1));
        listeners.push((id, Rc::new(listener)));
        id
    }

    /// Removes a listener; whether it was there.
    pub fn off(&self, id: ListenerId) -> bool {
        let mut listeners = self.inner.listeners.borrow_mut();
        let before = listeners.len();
        listeners.retain(|(l, _)| *l != id);
        listeners.len() != before
    }

    /// Decides approvals with `approver` from now on (`None`: a person decides, with
    /// [`Session::approve`] and [`Session::deny`]).
    pub fn set_approver(&self, approver: Option<Approver>) {
        *self.inner.approver.borrow_mut() = approver;
    }

    /// Perceives with `environment` as each turn starts, from now on (`None`: nothing
    /// is perceived beyond the trigger).
    pub fn set_environment(&self, environment: Option<Environment>) {
        self.inner.environments.borrow_mut().session = environment;
    }

    /// The host's tools: every agent of the session is offered them.
    pub fn host_tools(&self) -> &HostTools {
        &self.inner.host
    }

    /// A channel for host tools answered over messages, its request ids keyed by a
    /// secret drawn from the session's `random` and kept in its storage (so a run
    /// resumed after a reload sends a repeated call under the same id).
    pub fn channel(&self) -> Rc<Channel> {
        let config = &self.inner.config;
        let key = format!("{}.channel", config.namespace);
        // An unreadable secret is kept aside and said: a new one changes the request
        // ids a resumed run repeats its calls under.
        let kept = match storage::load_kept::<(u64, u64)>(&*config.storage, &key) {
            Loaded::Found(secret) => Some(secret),
            Loaded::Missing => None,
            Loaded::Corrupt { kept_as, error } => {
                self.tell(&Update::Notice(Notice::Corrupt {
                    key: key.clone(),
                    kept_as,
                    error,
                }));
                None
            }
        };
        let secret = kept.unwrap_or_else(|| {
            let word = || {
                let high = (config.random)().clamp(0.0, 1.0) * f64::from(u32::MAX);
                let low = (config.random)().clamp(0.0, 1.0) * f64::from(u32::MAX);
                ((high as u64) << 32) | (low as u64)
            };
            let secret = (word(), word());
            if let Ok(text) = serde_json::to_string(&secret)
                && let Err(error) = config.storage.save(&key, &text)
            {
                self.tell(&Update::Notice(Notice::SaveFailed { key, error }));
            }
            secret
        });
        Channel::new(secret)
    }

    /// Reports a message from the host that no call was waiting for.
    pub fn host_message_ignored(&self, ignored: &Ignored) {
        self.tell(&Update::Notice(Notice::HostMessageIgnored {
            reason: ignored.to_string(),
        }));
    }

    /// Sends a chat message; resolves to the run's outcome once it ends (after any
    /// approvals). While another run of the conversation is going, it waits its turn.
    pub async fn send(&self, text: &str) -> Result<Outcome, AppError> {
        let text = checked_input(text)?;
        self.take_turn(turn::Input::Chat(text)).await
    }

    /// Runs the agent on a game event (or a schedule): the universal loop, with the
    /// event's boundaries on which actions it may take. A trigger that says not when it
    /// happened is stamped now.
    pub async fn trigger(&self, mut observation: Observation) -> Result<Outcome, AppError> {
        if observation.trigger.kind.trim().is_empty() || observation.trigger.event.trim().is_empty()
        {
            return Err(AppError::UnnamedEvent);
        }
        checked_input(&observation.subject.content)?;
        if observation.trigger.timestamp.is_none() {
            observation.trigger.timestamp = Some(self.inner.config.clock.now().rfc3339());
        }
        self.take_turn(turn::Input::Observation(Box::new(observation)))
            .await
    }

    /// Edits turn `turn` of the open conversation and regenerates from there: that turn
    /// and every later one are dropped (saved so at once: a reload shows the edited
    /// conversation) and `text` is asked in their place. Refused while a run is in
    /// flight or waits, for a turn the conversation does not have, or for input
    /// [`Session::send`] refuses; the future runs the new turn.
    pub fn edit(
        &self,
        turn: u64,
        text: &str,
    ) -> Result<LocalBoxFuture<'static, Result<Outcome, AppError>>, AppError> {
        let text = checked_input(text)?;
        if self.busy() {
            return Err(AppError::Busy("edit a message"));
        }
        let open = self.conversation_id();
        let notices = self
            .inner
            .state
            .borrow_mut()
            .cut(&open, turn, &self.disk())?;
        self.after_write(notices);
        let session = self.clone();
        Ok(Box::pin(async move {
            session.take_turn(turn::Input::Chat(text)).await
        }))
    }

    /// The calls waiting for a decision, oldest first.
    pub fn pending(&self) -> Vec<PendingApproval> {
        self.inner.state.borrow().pending()
    }

    /// Approves the waiting call with the model's id `call_id` (`always`: and this
    /// tool for this agent in this conversation from now on). Refused when calls of
    /// several turns share that id: then [`Session::decide`] names one.
    pub fn approve(&self, call_id: &str, always: bool) -> Result<(), AppError> {
        let decision = if always {
            Decision::ApproveAlways
        } else {
            Decision::Approve
        };
        self.decide(&self.waiting_call(call_id)?, decision)
    }

    /// The (agent, tool) pairs approved "always" in the open conversation.
    pub fn always_allowed(&self) -> Vec<(String, String)> {
        let state = self.inner.state.borrow();
        state
            .always
            .iter()
            .filter(|(conversation, ..)| *conversation == state.open)
            .map(|(_, agent, tool)| (agent.clone(), tool.clone()))
            .collect()
    }

    /// Lets the harmless page actions (scroll, highlight) run without asking on
    /// `site` (`https://shop.example`), or asks again (`allowed: false`): a standing
    /// permission the host keeps and gives back to each new session.
    pub fn allow_harmless(&self, site: &str, allowed: bool) {
        let site = site.trim().trim_end_matches('/').to_lowercase();
        let mut state = self.inner.state.borrow_mut();
        if !allowed {
            state.harmless_sites.remove(&site);
        } else if !site.is_empty() {
            state.harmless_sites.insert(site);
        }
    }

    /// The sites whose harmless page actions run without asking.
    pub fn harmless_sites(&self) -> Vec<String> {
        let state = self.inner.state.borrow();
        state.harmless_sites.iter().cloned().collect()
    }

    /// Takes an "always" back: `agent`'s `tool` asks again in the open conversation.
    pub fn ask_again(&self, agent: &str, tool: &str) {
        let mut state = self.inner.state.borrow_mut();
        let key = (state.open.clone(), agent.to_owned(), tool.to_owned());
        state.always.remove(&key);
    }

    /// Denies the waiting call with the model's id `call_id`; the model hears
    /// `reason` and replans. Refused when calls of several turns share that id.
    pub fn deny(&self, call_id: &str, reason: &str) -> Result<(), AppError> {
        let reason = if reason.trim().is_empty() {
            "the user said no".to_owned()
        } else {
            reason.to_owned()
        };
        self.decide(&self.waiting_call(call_id)?, Decision::Deny { reason })
    }

    /// Decides the waiting call `which` names (see [`PendingApproval::key`]); no other
    /// call is touched, whatever its id.
    pub fn decide(&self, which: &ApprovalKey, decision: Decision) -> Result<(), AppError> {
        let reply = self.inner.state.borrow_mut().take_waiting(which);
        let reply = reply.ok_or_else(|| AppError::NotPending(which.to_string()))?;
        // The run may have been stopped meanwhile; then there is nobody to tell.
        let _ = reply.send(decision);
        Ok(())
    }

    /// The one waiting call whose model-given id is `call_id`; refused when none
    /// or several wait with it.
    pub fn waiting_call(&self, call_id: &str) -> Result<ApprovalKey, AppError> {
        let mut keys = self.inner.state.borrow().waiting_with(call_id);
        match keys.len() {
            0 => Err(AppError::NotPending(call_id.to_owned())),
            1 => keys
                .pop()
                .ok_or_else(|| AppError::NotPending(call_id.to_owned())),
            count => Err(AppError::AmbiguousCall {
                call: call_id.to_owned(),
                count,
                where_: keys
                    .iter()
                    .map(|k| format!("conversation `{}` turn {}", k.conversation, k.turn))
                    .collect::<Vec<_>>()
                    .join(", "),
            }),
        }
    }

    /// Stops every run in flight or waiting for approval; each ends `Aborted` and
    /// keeps what it did.
    pub fn abort(&self) {
        self.inner.state.borrow_mut().stop_all();
    }

    /// Whether a run is in flight or waiting.
    pub fn busy(&self) -> bool {
        self.inner.state.borrow().busy()
    }

    /// Whether a run of the conversation `id` is in flight or waiting.
    pub fn running_in(&self, id: &str) -> bool {
        let state = self.inner.state.borrow();
        state.running.iter().any(|r| r.conversation == id)
    }

    /// The open conversation's id.
    pub fn conversation_id(&self) -> String {
        self.inner.state.borrow().open.clone()
    }

    /// A copy of the open conversation.
    pub fn conversation(&self) -> Conversation {
        self.inner.state.borrow().open_conversation().clone()
    }

    /// A copy of the conversation `id` (a resident's is `agent:<name>`), open or not;
    /// `None` when there is none (or it cannot be read).
    pub fn conversation_of(&self, id: &str) -> Option<Conversation> {
        let state = self.inner.state.borrow();
        if let Some(conversation) = state.conversations.get(id) {
            return Some(conversation.clone());
        }
        let disk = self.disk();
        match load_conversation(disk.storage, &disk.keys.conversation(id)) {
            storage::Loaded::Found(conversation) => Some(conversation),
            _ => None,
        }
    }

    /// The id of `agent`'s own conversation (its memory, when it keeps one of its own).
    pub fn own_conversation(agent: &str) -> String {
        address::own_conversation(agent)
    }

    /// A copy of one turn of a conversation.
    pub fn interaction(&self, conversation: &str, turn: u64) -> Option<Interaction> {
        let state = self.inner.state.borrow();
        let conversation = state.conversations.get(conversation)?;
        conversation
            .interactions
            .iter()
            .find(|i| i.id == turn)
            .cloned()
    }

    /// The saved conversations, most recent first.
    pub fn conversations(&self) -> Vec<ConversationEntry> {
        self.inner.state.borrow().index.clone()
    }

    /// The routes as seed 004 lists commands, `{value, label}`, the way back to the
    /// main agent last ([`Delegate::commands`]).
    pub fn commands(&self) -> Vec<crate::compose::delegate::Command> {
        self.inner.state.borrow().delegate.commands()
    }

    /// Opens a saved conversation. Runs of other conversations go on and keep writing
    /// into their own.
    pub fn open(&self, id: &str) -> Result<(), AppError> {
        let notices = self.inner.state.borrow_mut().open(id, &self.disk())?;
        self.after_write(notices);
        Ok(())
    }

    /// Opens a new, empty conversation; the current one stays in the list.
    pub fn new_conversation(&self) -> String {
        let (id, notices) = self.inner.state.borrow_mut().open_new(&self.disk());
        self.after_write(notices);
        id
    }

    /// Deletes a saved conversation (stopping its runs); the open one is replaced by
    /// a new one.
    /// What was deleted comes back, for [`Self::undelete`] (`None` when it could not
    /// be read: there is nothing to give back).
    pub fn delete(&self, id: &str) -> Option<Deleted> {
        let (deleted, notices) = self.inner.state.borrow_mut().delete(id, &self.disk());
        #[cfg(feature = "telemetry")]
        self.forget_trace(id);
        self.after_write(notices);
        deleted
    }

    /// Takes a deletion back: the conversation is saved again, in its old place in the
    /// list (it is not opened).
    pub fn undelete(&self, deleted: Deleted) {
        let notices = self
            .inner
            .state
            .borrow_mut()
            .undelete(deleted, &self.disk());
        self.after_write(notices);
    }

    /// Everything the session keeps, as one serializable value.
    pub fn save_state(&self) -> SessionState {
        self.inner.state.borrow().snapshot(&self.disk())
    }

    /// Replaces everything the session keeps with `saved` (and saves it); refused
    /// while a run is in flight.
    pub fn load_state(&self, saved: SessionState) -> Result<(), AppError> {
        let notices = self.inner.state.borrow_mut().load(saved, &self.disk())?;
        self.after_write(notices);
        Ok(())
    }

    /// Stops every run and forgets every listener, the approver and its tracing (so an
    /// exporter's sending task ends); later calls are refused.
    pub fn destroy(&self) {
        self.abort();
        self.inner.state.borrow_mut().destroyed = true;
        self.inner.schedules.borrow_mut().wake();
        self.inner.listeners.borrow_mut().clear();
        *self.inner.approver.borrow_mut() = None;
        // Its exporter's sending task ends with the sink that owns it.
        #[cfg(feature = "telemetry")]
        self.inner.tracing.borrow_mut().take();
    }

    /// Where and when the session writes, now.
    fn disk(&self) -> state::Disk<'_> {
        let config = &self.inner.config;
        state::Disk {
            storage: &*config.storage,
            keys: Keys::new(&config.namespace),
            now_ms: config.clock.now().epoch_ms,
        }
    }

    /// Tells every listener, holding no borrow (a listener may call the session).
    fn tell(&self, update: &Update) {
        let listeners: Vec<Listener> = self
            .inner
            .listeners
            .borrow()
            .iter()
            .map(|(_, l)| Rc::clone(l))
            .collect();
        for listener in listeners {
            listener(update);
        }
    }

    fn after_write(&self, notices: Vec<Notice>) {
        for notice in notices {
            self.tell(&Update::Notice(notice));
        }
    }
}

/// The input trimmed, or why it cannot be taken.
fn checked_input(text: &str) -> Result<String, AppError> {
    let text = text.trim();
    if text.is_empty() {
        return Err(AppError::Empty);
    }
    let len = text.chars().count();
    if len > MAX_INPUT_CHARS {
        return Err(AppError::TooLong {
            len,
            limit: MAX_INPUT_CHARS,
        });
    }
    Ok(text.to_owned())
}
