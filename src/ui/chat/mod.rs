//! The chat pane's state: the controller's (`app::Session`) state as signals — one per
//! turn, so a streaming answer re-renders only its own turn — and its actions for
//! the views to call. It decides nothing itself: routing, runs, approvals, characters
//! and saving are the controller's; this only mirrors its updates for the conversation
//! on screen, and keeps the demo's settings and inspector.

mod announce;
mod conversations;
mod earlier;
mod edit;
mod inspector;
mod notices;
mod resume;
mod transaction;
mod updates;

pub use earlier::SHOWN_TURNS;
pub use inspector::Inspector;
pub use resume::Interrupted;

use std::rc::Rc;

use leptos::prelude::*;
use leptos::task::spawn_local;

use crate::app::settings::Settings;
use crate::app::{self, ConversationEntry, Keys, Loaded};
use crate::demo;
use crate::llm::message::ToolCall;
use crate::run::event::Grant;
use crate::run::interaction::{Conversation, Interaction};
use crate::run::provenance::Traced;
use crate::store::Store;
use crate::web::{BrowserStorage, load_json, save_json};

const SETTINGS_KEY: &str = "familiar.settings";

/// One turn of the conversation and its live record.
#[derive(Clone, Copy)]
pub struct TurnHandle {
    pub id: u64,
    pub interaction: RwSignal<Interaction>,
}

/// A call waiting for a person.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The conversation, turn and call: what the decision names (two conversations'
    /// runs may wait on calls of the same id).
    pub key: app::ApprovalKey,
    pub call: ToolCall,
    /// What the tool says it does, in its own words.
    pub description: Option<String>,
    /// What the card may offer besides this call ("Allow for this task", …).
    pub grants: Vec<Grant>,
    /// Why no grant covers this call (it buys, deletes, sends…), when none does.
    pub always_asks: Option<String>,
    /// The values that carry its consequence, each with where it came from.
    pub values: Vec<Traced>,
}

impl From<app::PendingApproval> for Pending {
    fn from(pending: app::PendingApproval) -> Self {
        Self {
            key: pending.key(),
            call: pending.call,
            description: pending.description,
            grants: pending.grants,
            always_asks: pending.always_asks,
            values: pending.values,
        }
    }
}

/// Where the chat pane gets its controller.
enum Source {
    /// The demo: built from its settings on first use (reading the world is the
    /// slowest part of startup and nothing on the first screen needs it), rebuilt
    /// when they change.
    Demo,
    /// A host's agent (`mount`): given.
    Given,
}

struct Inner {
    /// The app's reactive owner: turn signals are created under it, not under the
    /// button that happened to start them (which may be gone a moment later).
    owner: Owner,
    source: Source,
    app: Option<app::Session>,
    world: Option<Rc<dyn Store>>,
    /// A controller was connected before (settings rebuild it).
    connected: bool,
}

/// The chat pane's state; cheap to copy into event handlers.
#[derive(Clone, Copy)]
pub struct Chat {
    inner: StoredValue<Inner, LocalStorage>,
    pub turns: RwSignal<Vec<TurnHandle>>,
    pub busy: RwSignal<bool>,
    pub pending: RwSignal<Option<Pending>>,
    pub inspector: RwSignal<Inspector>,
    pub settings: RwSignal<Settings>,
    pub conversation_id: RwSignal<String>,
    pub saved: RwSignal<Vec<ConversationEntry>>,
    /// What went wrong outside a run that the person should know (a save that
    /// failed, saved data that could not be read), newest last.
    pub notices: RwSignal<Vec<String>>,
    /// Runs a reload cut off, to resume or discard.
    pub interrupted: RwSignal<Vec<Interrupted>>,
    /// (agent, tool) a person allowed "always" in the open conversation.
    pub allowed: RwSignal<Vec<(String, String)>>,
    /// What a screen reader hears once: a finished answer, an approval asked for.
    pub announcement: RwSignal<String>,
    /// The conversation deleted last, until it is taken back or another goes.
    pub deleted: RwSignal<Option<app::Deleted>, LocalStorage>,
    /// Messages sent while an approval waits, oldest first: the controller queues
    /// them; they show at once and become turns as they begin.
    pub queued: RwSignal<Vec<String>>,
    /// How many of the oldest turns are not drawn: a long conversation opens on its
    /// newest [`SHOWN_TURNS`], the rest drawn on request ([`Chat::show_earlier`]).
    pub hidden: RwSignal<usize>,
    /// The turn whose message is being edited in the composer (`chat/edit.rs`).
    pub editing: RwSignal<Option<u64>>,
    /// The edit's Send was pressed once: the next one drops the later turns.
    pub confirming: RwSignal<bool>,
    /// The world's people by id, as the World view last read them: a resident's
    /// approval card names whom a message goes to (`world::told::request`).
    pub people: RwSignal<Vec<(i64, String)>>,
}

impl Chat {
    fn empty(source: Source, settings: Settings) -> Self {
        Self {
            inner: StoredValue::new_local(Inner {
                owner: Owner::current().unwrap_or_default(),
                source,
                app: None,
                world: None,
                connected: false,
            }),
            turns: RwSignal::new(Vec::new()),
            busy: RwSignal::new(false),
            pending: RwSignal::new(None),
            inspector: RwSignal::new(Inspector::default()),
            settings: RwSignal::new(settings),
            conversation_id: RwSignal::new(String::new()),
            saved: RwSignal::new(Vec::new()),
            notices: RwSignal::new(Vec::new()),
            interrupted: RwSignal::new(Vec::new()),
            allowed: RwSignal::new(Vec::new()),
            announcement: RwSignal::new(String::new()),
            deleted: RwSignal::new_local(None),
            queued: RwSignal::new(Vec::new()),
            hidden: RwSignal::new(0),
            editing: RwSignal::new(None),
            confirming: RwSignal::new(false),
            people: RwSignal::new(Vec::new()),
        }
    }

    /// The demo's chat: its settings, and the conversation open last, shown at once
    /// from storage; the controller is built after the first frame ([`Self::prepare`]).
    pub fn restore() -> Self {
        let (settings, unusable) = app::settings::load_settings(&BrowserStorage, SETTINGS_KEY);
        let chat = Self::empty(Source::Demo, settings);
        if let Some(notice) = unusable {
            chat.notice(&notice);
        }
        let keys = Keys::new(demo::NAMESPACE);
        if let Loaded::Found(index) = app::load_index(&BrowserStorage, &keys.index()) {
            chat.saved.set(index);
        }
        let current: Option<String> = load_json(&keys.current());
        if let Some(id) = current
            && let Loaded::Found(conversation) =
                app::load_conversation(&BrowserStorage, &keys.conversation(&id))
        {
            chat.conversation_id.set(id);
            chat.show(conversation);
        }
        chat
    }

    /// A chat showing a host's agent, and the listener to remove when it goes.
    pub fn attach(app: app::Session) -> (Self, app::ListenerId) {
        let chat = Self::empty(Source::Given, Settings::default());
        let listener = chat.connect(app, None, false);
        (chat, listener)
    }

    /// Builds the controller and fills the inspector once the first frame is out
    /// (the second animation frame), so the page is interactive and painted before the
    /// world is read. A message sent sooner builds it itself.
    pub fn prepare(&self) {
        let chat = *self;
        request_animation_frame(move || {
            request_animation_frame(move || {
                set_timeout(
                    move || {
                        chat.app();
                        chat.refresh_world();
                    },
                    std::time::Duration::ZERO,
                );
            });
        });
    }

    /// The controller, built first if needed; `None` once the chat is gone.
    fn app(&self) -> Option<app::Session> {
        if let Some(app) = self.inner.try_with_value(|inner| inner.app.clone())? {
            return Some(app);
        }
        let settings = self.settings.try_get_untracked()?;
        let (config, delegate, world) = demo::session(&settings);
        let app = app::Session::new(config, delegate);
        // Every run traced: the inspector downloads it, Settings' collector gets it.
        app.set_telemetry(Some(demo::telemetry(&settings)));
        // Settings' price for the proxy's model and the budgets (docs/usage-and-cost.md).
        app.set_prices(settings.prices());
        app.set_budgets(settings.budgets);
        if let Some(world) = &world {
            app.set_environment(Some(demo::world_environment(Rc::clone(world))));
        }
        // Fires the session's schedules (the world's market checks) until it is
        // destroyed, whichever view is open; once the residents' standing orders are
        // read, so a scheduled run keeps them from its first call.
        let schedules = app.run_schedules();
        let residents = world.clone().map(|w| (w, demo::roster(&settings.backend)));
        let given = app.clone();
        leptos::task::spawn_local(async move {
            if let Some((world, residents)) = residents {
                match crate::world::orders::kept(&*world, &residents).await {
                    Ok(kept) => {
                        for (name, orders) in kept {
                            given.set_orders(&name, Some(orders));
                        }
                    }
                    // Without their orders the residents ask for every action.
                    Err(error) => web_sys::console::warn_1(
                        &format!("familiar: the residents' standing orders: {error}").into(),
                    ),
                }
            }
            schedules.await;
        });
        self.connect(app.clone(), world, true);
        Some(app)
    }

    /// Mirrors `app`'s updates into the signals (after reading its saved state, when
    /// `restore`), and shows its open conversation.
    fn connect(
        &self,
        app: app::Session,
        world: Option<Rc<dyn Store>>,
        restore: bool,
    ) -> app::ListenerId {
        let chat = *self;
        let listener = app.on(move |update| chat.on_update(update));
        if restore {
            // The listener above has told the person already.
            let _ = app.restore();
        }
        self.inner.update_value(|inner| {
            inner.app = Some(app.clone());
            inner.world = world;
        });
        self.saved.set(app.conversations());
        // At start-up the conversation read from storage is on screen already (the
        // same one the controller just read): its turns are not built a second time.
        let shown = !self.turns.with_untracked(Vec::is_empty)
            && self.conversation_id.get_untracked() == app.conversation_id()
            && self.inner.try_with_value(|i| !i.connected).unwrap_or(false);
        self.inner.update_value(|inner| inner.connected = true);
        if shown {
            self.show_approvals();
        } else {
            self.conversation_id.set(app.conversation_id());
            self.show(app.conversation());
        }
        self.send_waiting(&app.conversation_id());
        listener
    }

    /// The controller, for a view that drives it beside the chat (the World view).
    pub fn session(&self) -> Option<app::Session> {
        self.app()
    }

    /// The world the controller's agents act on, if there is one.
    pub fn world_store(&self) -> Option<Rc<dyn Store>> {
        self.world()
    }

    fn world(&self) -> Option<Rc<dyn Store>> {
        self.app()?;
        self.inner.try_with_value(|inner| inner.world.clone())?
    }

    fn owner(&self) -> Owner {
        self.inner
            .try_with_value(|i| i.owner.clone())
            .unwrap_or_default()
    }

    /// Replaces the conversation on screen with `conversation`.
    fn show(&self, conversation: Conversation) {
        self.hidden
            .set(conversation.interactions.len().saturating_sub(SHOWN_TURNS));
        let owner = self.owner();
        let turns = owner.with(|| {
            conversation
                .interactions
                .into_iter()
                .map(|i| TurnHandle {
                    id: i.id,
                    interaction: RwSignal::new(i),
                })
                .collect()
        });
        self.turns.set(turns);
        self.cancel_editing();
        // What waits in its queue (kept there across a reload) shows as queued.
        let id = self.conversation_id.get_untracked();
        self.queued.set(match self.app() {
            Some(app) => app.queued(&id),
            None => load_json(&Keys::new(demo::NAMESPACE).queued(&id)).unwrap_or_default(),
        });
        self.show_approvals();
    }

    /// Shows what the controller holds for the open conversation: the tools allowed
    /// "always", and a call that still waits (the conversation was opened again), so
    /// its card comes back rather than the run being left undecided. Before the
    /// controller is built (start-up draws the saved conversation first) there are
    /// none: it is not built for them, which would read the conversation a second time
    /// and the world before the first frame.
    fn show_approvals(&self) {
        let app = self.inner.try_with_value(|i| i.app.clone()).flatten();
        let Some(app) = app else {
            self.allowed.set(Vec::new());
            self.pending.set(None);
            return;
        };
        self.allowed.set(app.always_allowed());
        let open = self.conversation_id.get_untracked();
        let waiting = app
            .pending()
            .into_iter()
            .find(|p| p.conversation == open)
            .map(Pending::from);
        self.pending.set(waiting);
    }

    /// Sends `text`. While a run is in flight the composer shows Stop instead; a
    /// message sent while an approval waits is queued by the controller and answered
    /// after it, never dropped.
    pub fn send(&self, text: String) {
        let text = text.trim().to_owned();
        if text.is_empty() || self.busy.get_untracked() {
            return;
        }
        let Some(app) = self.app() else {
            return;
        };
        if self.pending.get_untracked().is_none() {
            // Busy at once: the turn itself begins a moment later.
            self.busy.set(true);
        } else {
            self.queued.update(|q| q.push(text.clone()));
        }
        let chat = *self;
        spawn_local(async move {
            let _ = app.send(&text).await;
            // Began (and shown as its turn) or refused: no longer queued either way.
            chat.queued.try_update(|queued| {
                if let Some(at) = queued.iter().position(|q| *q == text) {
                    queued.remove(at);
                }
            });
            // A played character's turn already showed its transaction as recorded,
            // which is newer than a re-read would say (a completed one is no longer
            // pending).
            chat.refresh(false);
        });
    }

    /// The `/command`s and `@agent`s the composer offers, with `@` and the main
    /// agent's name, the way back to it, last.
    pub fn completions(&self) -> Vec<super::Completion> {
        self.app()
            .map(|app| app.commands())
            .unwrap_or_default()
            .into_iter()
            .map(|command| super::Completion {
                insert: command.value,
                description: command.label,
            })
            .collect()
    }

    /// A person's answer to the pending call, with what it grants besides (see
    /// [`Grant`]: `Always` approves the tool for this agent in this conversation).
    pub fn decide(&self, approve: bool, grant: Option<Grant>) {
        let (Some(pending), Some(app)) = (self.pending.get_untracked(), self.app()) else {
            return;
        };
        self.pending.set(None);
        self.busy.set(true);
        let decision = match (approve, grant) {
            (true, Some(Grant::Always)) => app::Decision::ApproveAlways,
            (true, Some(Grant::Task)) => app::Decision::ApproveForTask,
            (true, Some(Grant::Site)) => app::Decision::ApproveOnSite,
            (true, None) => app::Decision::Approve,
            (false, _) => app::Decision::Deny {
                reason: "the user said no".into(),
            },
        };
        let _ = app.decide(&pending.key, decision);
    }

    /// Takes back an "always": the tool asks again in this conversation.
    pub fn ask_again(&self, agent: &str, tool: &str) {
        if let Some(app) = self.app() {
            app.ask_again(agent, tool);
            self.allowed.set(app.always_allowed());
        }
    }

    /// Stops the run in flight (or the one waiting for approval).
    pub fn stop(&self) {
        if let Some(app) = self.app() {
            app.abort();
        }
        self.pending.set(None);
    }

    /// Asks `input` of turn `id` again.
    pub fn retry(&self, id: u64) {
        let input = self.turns.with_untracked(|turns| {
            turns
                .iter()
                .find(|t| t.id == id)
                .map(|t| t.interaction.with_untracked(|i| i.input.clone()))
        });
        if let Some(input) = input {
            self.send(input);
        }
    }

    /// Applies and saves valid settings (the controller is rebuilt with them);
    /// returns the problems otherwise. Another backend signs out of the old one first:
    /// its login never follows the settings to a new URL.
    pub fn apply_settings(&self, settings: Settings) -> Vec<crate::app::settings::FieldProblem> {
        let problems = settings.problems();
        if !problems.is_empty() {
            return problems;
        }
        let old = self.settings.with_untracked(|s| s.backend.clone());
        if let Some(ending) = demo::change_backend(&old, &settings.backend) {
            spawn_local(ending);
        }
        save_json(SETTINGS_KEY, &settings.to_store(crate::web::in_host_page()));
        self.settings.set(settings);
        let demo = self
            .inner
            .try_with_value(|i| matches!(i.source, Source::Demo))
            .unwrap_or(false);
        if demo {
            let old = self
                .inner
                .try_update_value(|inner| inner.app.take())
                .flatten();
            if let Some(old) = old {
                old.destroy();
            }
            self.app();
            self.refresh_world();
        }
        problems
    }
}
