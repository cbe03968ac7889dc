//! A chat session: the agent's parts, the conversation as signals (one per turn, so
//! a streaming answer re-renders only its own turn), runs in flight, approvals, the
//! inspector's view of the run, settings and saved conversations. Views read the
//! signals and call the actions here; nothing else starts or stops runs.

mod character;
mod saved;

use std::collections::BTreeSet;
use std::rc::Rc;

use futures::channel::oneshot;
use leptos::prelude::*;
use leptos::task::spawn_local;
use serde::{Deserialize, Serialize};

use crate::agent::Agent;
use crate::clock::Clock;
use crate::delegate::Delegate;
use crate::driver::{Seams, Stop, drive_until};
use crate::event::Event;
use crate::interaction::{Conversation, Interaction};
use crate::message::ToolCall;
use crate::run::{AgentRun, Boundaries, ContextMemory, Observation};
use crate::settings::Settings;
use crate::store::{Filtered, Select, Store};
use crate::web::{BrowserClock, demo, load_json, save_json};
use crate::workflow::{Character, Prepared, Transactions};
use character::describe;

const SETTINGS_KEY: &str = "familiar.settings";
const INDEX_KEY: &str = "familiar.conversations";
const CURRENT_KEY: &str = "familiar.current";
/// History the model sees, in estimated tokens (the system prompt has its own room).
const CONTEXT_BUDGET: usize = 3_000;

/// One turn of the conversation and its live record.
#[derive(Clone, Copy)]
pub struct TurnHandle {
    pub id: u64,
    pub interaction: RwSignal<Interaction>,
}

/// A saved conversation in the list of past ones.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SavedConversation {
    pub id: String,
    pub title: String,
    pub updated_ms: i64,
}

/// What the inspector shows about the latest run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inspector {
    pub trigger: String,
    pub boundaries: Boundaries,
    pub plan: Vec<String>,
    pub memory: ContextMemory,
    pub iterations: u32,
    pub cap: u32,
    /// The agent's memories in the world, newest first.
    pub world: Vec<String>,
    /// The character's transaction with the player, when a character is played.
    pub transaction: String,
    /// What the character's workflows injected into the last prompt.
    pub injection: String,
}

/// A call waiting for a person.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    pub turn: u64,
    pub call: ToolCall,
}

struct Parts {
    delegate: Delegate,
    world: Option<Rc<dyn Store>>,
}

struct Inner {
    /// The app's reactive owner: turn signals are created under it, not under the
    /// button that happened to start them (which may be gone a moment later).
    owner: Owner,
    /// Built on first use (see [`Session::prepare`]): reading and seeding the world is
    /// the slowest part of startup and nothing on the first screen needs it.
    parts: Option<Parts>,
    conversation: Conversation,
    paused: Option<(u64, AgentRun, Rc<Agent>)>,
    stop: Option<oneshot::Sender<()>>,
    /// Tools a person approved for the rest of the session.
    always: BTreeSet<String>,
}

/// The demo's session; cheap to copy into event handlers.
#[derive(Clone, Copy)]
pub struct Session {
    inner: StoredValue<Inner, LocalStorage>,
    pub turns: RwSignal<Vec<TurnHandle>>,
    pub busy: RwSignal<bool>,
    pub pending: RwSignal<Option<Pending>>,
    pub inspector: RwSignal<Inspector>,
    pub settings: RwSignal<Settings>,
    pub conversation_id: RwSignal<String>,
    pub saved: RwSignal<Vec<SavedConversation>>,
}

fn parts(settings: &Settings) -> Parts {
    let world = demo::world_for(&settings.backend);
    Parts {
        delegate: demo::delegate(demo::model_for(&settings.model), world.clone()),
        world,
    }
}

fn now_ms() -> i64 {
    BrowserClock.now().epoch_ms
}

fn conversation_key(id: &str) -> String {
    format!("familiar.conversation.{id}")
}

impl Session {
    /// The demo session, restored from local storage: settings, the list of saved
    /// conversations, and the one open last.
    pub fn restore() -> Self {
        let settings: Settings = load_json(SETTINGS_KEY)
            .filter(|s: &Settings| s.problems().is_empty())
            .unwrap_or_default();
        let saved: Vec<SavedConversation> = load_json(INDEX_KEY).unwrap_or_default();
        let current: Option<String> = load_json(CURRENT_KEY);
        let (id, conversation) = current
            .and_then(|id| Some((id.clone(), load_json(&conversation_key(&id))?)))
            .unwrap_or_else(|| (format!("c{}", now_ms()), Conversation::default()));
        let session = Self {
            inner: StoredValue::new_local(Inner {
                owner: Owner::current().unwrap_or_default(),
                parts: None,
                conversation: Conversation::default(),
                paused: None,
                stop: None,
                always: BTreeSet::new(),
            }),
            turns: RwSignal::new(Vec::new()),
            busy: RwSignal::new(false),
            pending: RwSignal::new(None),
            inspector: RwSignal::new(Inspector::default()),
            settings: RwSignal::new(settings),
            conversation_id: RwSignal::new(id),
            saved: RwSignal::new(saved),
        };
        session.show(conversation);
        session
    }

    /// Builds the agent's parts and fills the inspector once the first frame is out
    /// (the second animation frame), so the page is interactive and painted before the
    /// world is read. A message sent sooner builds them itself.
    pub fn prepare(&self) {
        let session = *self;
        request_animation_frame(move || {
            request_animation_frame(move || {
                set_timeout(
                    move || {
                        session.with_parts(|_| ());
                        session.refresh_world();
                    },
                    std::time::Duration::ZERO,
                );
            });
        });
    }

    /// Runs `f` on the agent's parts, building them first if needed; `None` once the
    /// session is gone.
    fn with_parts<R>(&self, f: impl FnOnce(&mut Parts) -> R) -> Option<R> {
        if self.inner.try_with_value(|inner| inner.parts.is_none())? {
            let built = self.settings.try_with_untracked(parts)?;
            self.inner
                .try_update_value(|inner| inner.parts = Some(built))?;
        }
        self.inner
            .try_update_value(|inner| inner.parts.as_mut().map(f))
            .flatten()
    }

    /// The world the demo's tools act on, if it could be opened.
    fn world(&self) -> Option<Rc<dyn Store>> {
        self.with_parts(|p| p.world.clone()).flatten()
    }

    fn owner(&self) -> Owner {
        self.inner
            .try_with_value(|i| i.owner.clone())
            .unwrap_or_default()
    }

    /// Replaces the conversation on screen with `conversation`.
    fn show(&self, mut conversation: Conversation) {
        // A run cut off by a reload cannot go on; its turn says so instead of spinning.
        for interaction in &mut conversation.interactions {
            if !interaction.status.is_finished() {
                interaction.apply(&Event::Done(crate::run::Outcome::Aborted {
                    reason: "Stopped: the page was closed before the answer.".into(),
                }));
            }
        }
        let owner = self.owner();
        let turns = owner.with(|| {
            conversation
                .interactions
                .iter()
                .map(|i| TurnHandle {
                    id: i.id,
                    interaction: RwSignal::new(i.clone()),
                })
                .collect()
        });
        self.inner
            .update_value(|inner| inner.conversation = conversation);
        self.turns.set(turns);
    }

    /// Starts a run on `text`; ignored while another run is in flight.
    pub fn send(&self, text: String) {
        let text = text.trim().to_owned();
        if text.is_empty() || self.busy.get_untracked() || self.pending.get_untracked().is_some() {
            return;
        }
        let settings = self.settings.get_untracked();
        let Some((agent, request, _)) = self.with_parts(|p| p.delegate.resolve(&text)) else {
            return;
        };
        let Some((id, history)) = self.inner.try_update_value(|inner| {
            let history = inner.conversation.context(CONTEXT_BUDGET);
            let id = inner.conversation.begin(&text);
            if let Some(interaction) = inner.conversation.interactions.last_mut() {
                interaction.started_ms = now_ms();
            }
            (id, history)
        }) else {
            return;
        };
        let interaction = self
            .inner
            .with_value(|inner| inner.conversation.interactions.last().cloned())
            .unwrap_or_else(|| Interaction::new(id, &text));
        let interaction = self.owner().with(|| RwSignal::new(interaction));
        self.turns
            .update(|turns| turns.push(TurnHandle { id, interaction }));
        let world = self.world();
        let character = settings.character.as_deref().and_then(demo::character);
        if let (Some(character), Some(world)) = (character, world) {
            self.save();
            return self.send_in_character(id, history, text, character, world);
        }
        if request.is_empty() {
            // `@agent` alone: switched, nothing to ask.
            let outcome = crate::run::Outcome::Answered {
                text: format!("You are now talking to @{}.", agent.name),
            };
            self.on_event(id, &Event::Done(outcome));
            return self.save();
        }
        let run_id = format!("{}-{id}", self.conversation_id.get_untracked());
        let mut run = AgentRun::new(
            agent.system.clone(),
            history,
            Observation::chat(request),
            agent.tools.catalogue(),
        )
        .with_id(run_id)
        .with_max_iterations(settings.max_iterations);
        if settings.reflection {
            run = run.with_reflection(1);
        }
        self.inspector.update(|i| {
            i.trigger = "chat · message.received".into();
            i.boundaries = run.observation().boundaries.clone();
            i.plan.clear();
            i.memory = ContextMemory::default();
            i.iterations = 0;
            i.cap = run.max_iterations();
        });
        self.save();
        self.drive(id, run, agent, None);
    }

    /// The `/command`s and `@agent`s the composer offers.
    pub fn completions(&self) -> Vec<super::Completion> {
        self.with_parts(|parts| {
            parts
                .delegate
                .routes()
                .into_iter()
                .map(|(insert, description)| super::Completion {
                    insert,
                    description,
                })
                .collect()
        })
        .unwrap_or_default()
    }

    /// Drives `run` (for turn `id`) with `agent` until it ends or pauses for a person.
    fn drive(
        &self,
        id: u64,
        mut run: AgentRun,
        agent: Rc<Agent>,
        after: Option<(Rc<Character>, Prepared)>,
    ) {
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        self.inner.update_value(|inner| inner.stop = Some(stop_tx));
        self.busy.set(true);
        let session = *self;
        spawn_local(async move {
            let seams = Seams {
                llm: &*agent.llm,
                tools: &agent.tools,
                clock: &BrowserClock,
                host: None,
            };
            // Only a press of Stop cancels; a sender dropped at the end does not.
            let cancel = async move {
                if stop_rx.await.is_err() {
                    futures::future::pending::<()>().await;
                }
            };
            let stop =
                drive_until(&mut run, &seams, &mut |e| session.on_event(id, &e), cancel).await;
            session
                .inspector
                .update(|i| i.iterations = run.iterations());
            session.inner.update_value(|inner| inner.stop = None);
            match stop {
                Stop::AwaitingApproval(call) => session.await_approval(id, run, agent, call),
                Stop::Done(outcome) => {
                    let answered = !matches!(
                        outcome,
                        crate::run::Outcome::Failed { .. } | crate::run::Outcome::Aborted { .. }
                    );
                    let recorded = after.is_some();
                    if let Some((character, prepared)) = after.filter(|_| answered) {
                        session.record(&character, &prepared).await;
                    }
                    session.busy.set(false);
                    // The record just shown is newer than a re-read would say.
                    session.refresh(!recorded);
                }
            }
            session.save();
        });
    }

    fn await_approval(&self, id: u64, mut run: AgentRun, agent: Rc<Agent>, call: ToolCall) {
        let always = self
            .inner
            .with_value(|inner| inner.always.contains(&call.name));
        if always {
            run.approve(&call.id);
            return self.drive(id, run, agent, None);
        }
        self.inner
            .update_value(|inner| inner.paused = Some((id, run, agent)));
        self.busy.set(false);
        self.pending.set(Some(Pending { turn: id, call }));
    }

    /// A person's answer to the pending call; `always` approves the tool for the rest
    /// of the session.
    pub fn decide(&self, approve: bool, always: bool) {
        let Some(pending) = self.pending.get_untracked() else {
            return;
        };
        let Some((id, mut run, agent)) = self
            .inner
            .try_update_value(|inner| inner.paused.take())
            .flatten()
        else {
            return;
        };
        self.pending.set(None);
        if approve {
            if always {
                self.inner
                    .update_value(|inner| _ = inner.always.insert(pending.call.name.clone()));
            }
            run.approve(&pending.call.id);
        } else {
            run.deny(&pending.call.id, "the user said no");
        }
        self.drive(id, run, agent, None);
    }

    /// Stops the run in flight (or the one waiting for approval).
    pub fn stop(&self) {
        if let Some(Some(stop)) = self.inner.try_update_value(|inner| inner.stop.take()) {
            let _ = stop.send(());
        }
        let paused = self
            .inner
            .try_update_value(|inner| inner.paused.take())
            .flatten();
        if let Some((id, mut run, _)) = paused {
            self.pending.set(None);
            run.abort("stopped before it finished");
            for event in run.take_events() {
                self.on_event(id, &event);
            }
            self.save();
        }
    }

    /// Asks `input` of turn `id` again.
    pub fn retry(&self, id: u64) {
        let input = self.inner.with_value(|inner| {
            inner
                .conversation
                .interactions
                .iter()
                .find(|i| i.id == id)
                .map(|i| i.input.clone())
        });
        if let Some(input) = input {
            self.send(input);
        }
    }

    fn on_event(&self, id: u64, event: &Event) {
        self.inner
            .update_value(|inner| inner.conversation.apply(id, event));
        if let Some(turn) = self
            .turns
            .with_untracked(|t| t.iter().find(|t| t.id == id).copied())
        {
            turn.interaction.update(|i| i.apply(event));
        }
        match event {
            Event::PlanUpdated { plan, memory } => self.inspector.update(|i| {
                i.plan.clone_from(plan);
                i.memory = memory.clone();
            }),
            Event::StepStarted(crate::run::Purpose::Reason { iteration }) => {
                self.inspector.update(|i| i.iterations = iteration - 1);
            }
            _ => {}
        }
    }

    /// Reads the agent's memories and the character's transaction for the inspector.
    fn refresh_world(&self) {
        self.refresh(true);
    }

    /// Reads the agent's memories, and the character's pending transaction when
    /// `transaction`, for the inspector.
    fn refresh(&self, transaction: bool) {
        let Some(world) = self.world() else {
            return;
        };
        let inspector = self.inspector;
        let character = self.settings.with_untracked(|s| s.character.clone());
        spawn_local(async move {
            let select = Select::from("memories")
                .columns("content")
                .eq("user_id", demo::AGENT_ID)
                .order("id", false)
                .limit(20);
            if let Ok(rows) = world.select(&select).await {
                let memories = rows
                    .iter()
                    .filter_map(|r| r.get("content")?.as_str().map(str::to_owned))
                    .collect();
                inspector.update(|i| i.world = memories);
            }
            if let Some(character) = character
                .as_deref()
                .filter(|_| transaction)
                .and_then(demo::character)
            {
                let transactions = Transactions {
                    store: &*world,
                    character: &character.identity.name,
                };
                if let Ok(pending) = transactions.pending(demo::PLAYER).await {
                    let text = pending
                        .as_ref()
                        .map_or_else(|| "none pending".to_owned(), describe);
                    inspector.update(|i| i.transaction = text);
                }
            }
        });
    }

    /// Applies and saves valid settings; returns the problems otherwise.
    pub fn apply_settings(&self, settings: Settings) -> Vec<crate::settings::Problem> {
        let problems = settings.problems();
        if problems.is_empty() {
            save_json(SETTINGS_KEY, &settings);
            self.inner
                .update_value(|inner| inner.parts = Some(parts(&settings)));
            self.settings.set(settings);
            self.refresh_world();
        }
        problems
    }
}
