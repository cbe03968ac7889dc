//! The controller's updates mirrored into the chat's signals: a turn begun (or
//! resumed) gets its row, each event lands in its own turn's signal, and the
//! conversation list and the busy state follow the runs' ends.

use leptos::prelude::*;

use super::transaction::describe;
use super::{Chat, Pending, TurnHandle, announce};
use crate::app;
use crate::demo::characters;
use crate::run::event::Event;
use crate::run::{Boundaries, ContextMemory, Purpose};

impl Chat {
    /// Mirrors one of the controller's updates.
    pub(super) fn on_update(&self, update: &app::Update) {
        let shown = self.conversation_id.get_untracked();
        match update {
            app::Update::TurnBegan {
                conversation, turn, ..
            }
            | app::Update::TurnResumed { conversation, turn } => {
                // A new turn supersedes a run cut off in the same conversation.
                self.forget_interrupted(conversation);
                if *conversation == shown {
                    self.turn_began(conversation, *turn);
                }
            }
            app::Update::Event {
                conversation,
                turn,
                event,
            } if *conversation == shown => self.on_event(*turn, event),
            app::Update::CharacterPrepared {
                conversation,
                injection,
                ..
            } if *conversation == shown => self.inspector.update(|i| {
                i.injection = injection.clone().unwrap_or_else(|| "—".into());
            }),
            app::Update::TransactionRecorded {
                conversation,
                transaction,
                error,
                ..
            } if *conversation == shown => {
                let text = match (transaction, error) {
                    (_, Some(error)) => format!("not recorded: {error}"),
                    (Some(transaction), None) => describe(transaction),
                    (None, None) => return,
                };
                self.inspector.update(|i| i.transaction = text);
            }
            app::Update::Notice(notice) => self.notice(notice),
            // The session counted a model call: the turn shows its total so far.
            app::Update::Usage {
                conversation,
                turn,
                total,
                ..
            } if *conversation == shown => {
                if let Some(handle) = self
                    .turns
                    .with_untracked(|t| t.iter().find(|t| t.id == *turn).copied())
                {
                    handle.interaction.update(|i| i.usage = *total);
                }
            }
            // A message to a resident opened its own conversation: show it.
            app::Update::Opened { conversation } if *conversation != shown => {
                self.view(conversation);
            }
            _ => {}
        }
        if let app::Update::Event {
            conversation,
            event: Event::Done(_),
            ..
        } = update
            && let Some(app) = self.inner.try_with_value(|i| i.app.clone()).flatten()
        {
            self.saved.set(app.conversations());
            if *conversation == shown {
                // A turn queued behind this one sets it again when it begins.
                self.busy.set(false);
            }
        }
    }

    fn turn_began(&self, conversation: &str, turn: u64) {
        let Some(app) = self.inner.try_with_value(|i| i.app.clone()).flatten() else {
            return;
        };
        let Some(interaction) = app.interaction(conversation, turn) else {
            return;
        };
        self.queued.update(|queued| {
            if let Some(at) = queued.iter().position(|q| *q == interaction.input) {
                queued.remove(at);
            }
        });
        // A resumed turn is already on screen: its row (keyed by id) keeps its signal,
        // so the reopened record goes into that signal rather than a new handle.
        let shown = self
            .turns
            .with_untracked(|t| t.iter().find(|t| t.id == turn).map(|t| t.interaction));
        match shown {
            Some(signal) => signal.set(interaction),
            None => {
                let interaction = self.owner().with(|| RwSignal::new(interaction));
                self.turns.update(|turns| {
                    turns.push(TurnHandle {
                        id: turn,
                        interaction,
                    });
                });
            }
        }
        self.busy.set(true);
        let cap = self.settings.with_untracked(|s| s.max_iterations);
        let character = self
            .settings
            .with_untracked(|s| s.character.clone())
            .and_then(|key| characters::name_of(&key));
        self.inspector.update(|i| {
            i.trigger = match character {
                Some(name) => format!("chat · message to {name}"),
                None => "chat · message.received".into(),
            };
            i.boundaries = Boundaries::default();
            i.plan.clear();
            i.memory = ContextMemory::default();
            i.iterations = 0;
            i.cap = cap;
        });
    }

    fn on_event(&self, turn: u64, event: &Event) {
        if let Some(handle) = self
            .turns
            .with_untracked(|t| t.iter().find(|t| t.id == turn).copied())
        {
            handle.interaction.update(|i| i.apply(event));
        }
        match event {
            Event::Started { trigger, .. } => self.inspector.update(|i| {
                if trigger.kind != "chat" {
                    i.trigger = format!("{} · {}", trigger.kind, trigger.event);
                }
            }),
            Event::PlanUpdated { plan, memory } => self.inspector.update(|i| {
                i.plan = plan.iter().map(ToString::to_string).collect();
                i.memory = memory.clone();
            }),
            Event::StepStarted(Purpose::Reason { iteration }) => {
                // The iteration under way, as the step summary counts it ("1 / 10").
                self.inspector.update(|i| i.iterations = *iteration);
            }
            Event::Done(outcome) => announce::announce(
                self.announcement,
                match outcome {
                    crate::run::Outcome::Aborted { .. } => "Stopped.".to_owned(),
                    crate::run::Outcome::BudgetReached { reason } => announce::spoken(reason, ""),
                    crate::run::Outcome::Failed { error } => {
                        format!(
                            "The agent failed: {}",
                            announce::spoken(&error.to_string(), "")
                        )
                    }
                    done => format!(
                        "{} answered: {}",
                        crate::ui::turn::speaker(*self),
                        announce::spoken(done.text(), crate::ui::shortcuts::READ_REST)
                    ),
                },
            ),
            // The controller has recorded an "always" by the time the run hears it.
            Event::Decided { .. } => {
                if let Some(app) = self.app() {
                    self.allowed.set(app.always_allowed());
                }
            }
            Event::ApprovalNeeded {
                call,
                description,
                agent,
            } => {
                let who = agent
                    .as_ref()
                    .map_or_else(|| "the agent".to_owned(), |a| format!("@{a}"));
                announce::announce(
                    self.announcement,
                    format!("Approval needed: {who} wants to run {}.", call.name),
                );
                self.busy.set(false);
                let key = app::ApprovalKey {
                    conversation: self.conversation_id.get_untracked(),
                    turn,
                    call: call.id.to_string(),
                };
                // The grants the card may offer are the controller's to say.
                let pending = self
                    .app()
                    .and_then(|app| app.pending().into_iter().find(|p| p.is(&key)));
                let (grants, always_asks, values) = pending
                    .map(|p| (p.grants, p.always_asks, p.values))
                    .unwrap_or_default();
                self.pending.set(Some(Pending {
                    key,
                    call: call.clone(),
                    description: description.clone(),
                    grants,
                    always_asks,
                    values,
                }));
            }
            _ => {}
        }
    }
}
