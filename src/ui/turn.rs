//! One turn of the conversation: the message, the answer as it streams (markdown),
//! the model's thinking, an approval card when the run waits for one, and the steps.

use leptos::prelude::*;

use crate::base::clock::{Clock, Instant};
use crate::run::Outcome;
use crate::run::event::Grant;
use crate::run::interaction::{Interaction, Status, Step};
use crate::web::BrowserClock;

use super::steps::pretty_text;
use super::{Chat, Markdown, StepList};

/// A user message with the agent's answer and the steps that led to it.
#[component]
pub fn Turn(
    /// The interaction to show, live.
    #[prop(into)]
    interaction: Signal<Interaction>,
) -> impl IntoView {
    let chat = use_context::<Chat>();
    let composer = use_context::<super::ComposerFocus>();
    let id = interaction.with_untracked(|i| i.id);
    let input = interaction.with_untracked(|i| i.input.clone());
    let time = interaction.with_untracked(|i| clock_time(i.started_ms));
    let status = move || interaction.with(|i| format!("{:?}", i.status).to_lowercase());
    let finished = move || interaction.with(|i| i.status.is_finished());
    // A Stop is the person's decision, not a failure: only a failed run is marked.
    let failed = move || interaction.with(|i| i.status == Status::Failed);
    // A world event's turn (a market check, a battle, a resident's own message) is
    // shown as the event, answered by the resident in words (`super::deeds`).
    let resident = chat.and_then(|chat| {
        let open = chat.conversation_id.get_untracked();
        interaction.with_untracked(|i| resident_of(i, &open))
    });
    let is_resident = resident.is_some();
    let event = Memo::new(move |_| {
        interaction.with(|i| {
            crate::world::told::trigger_of(i).filter(|(kind, _)| kind != "chat" || is_resident)
        })
    });
    let answer = Signal::derive(move || {
        interaction.with(|i| match is_resident {
            true => crate::world::told::told(i).unwrap_or_else(|| shown_answer(i)),
            false => shown_answer(i),
        })
    });
    let waiting = move || interaction.with(|i| !i.status.is_finished() && i.draft.is_empty());
    let stopped = move || {
        interaction.with(|i| match i.steps.last() {
            Some(Step::Answer {
                outcome: Outcome::Aborted { reason },
                ..
            }) if reason == STOPPED => Some("Stopped.".to_owned()),
            Some(Step::Answer {
                outcome: Outcome::Aborted { reason } | Outcome::BudgetReached { reason },
                ..
            }) => {
                // A turn saved before the reason stopped saying "Stopped: " itself.
                let reason = reason.trim_start_matches("Stopped: ").trim_end_matches('.');
                Some(format!("Stopped: {reason}."))
            }
            _ => None,
        })
    };
    let awaiting = move || {
        chat.is_some_and(|chat| {
            chat.pending
                .with(|p| p.as_ref().is_some_and(|p| p.key.turn == id))
        })
    };
    let speaker = resident
        .clone()
        .or_else(|| chat.map(speaker))
        .unwrap_or_else(|| "Familiar".to_owned());
    let thinking = Memo::new(move |_| interaction.with(reasoning));
    let steps = Memo::new(move |_| interaction.with(|i| i.steps.clone()));
    let remote_images = chat.is_some_and(|s| s.settings.with_untracked(|s| s.remote_images));
    let cap = chat.map(|s| s.settings.with_untracked(|s| s.max_iterations));
    // "Copy" says "Copied" for a moment, on the button and to a screen reader.
    let copied = RwSignal::new(false);
    let copy = move |_| {
        super::copy_text(&answer.get_untracked());
        copied.set(true);
        if let Some(chat) = chat {
            chat.say("Copied.");
        }
        set_timeout(
            move || {
                copied.try_set(false);
            },
            std::time::Duration::from_secs(2),
        );
    };
    let about = quoted(&input);
    let (copy_label, retry_label, edit_label) = (
        format!("Copy the answer to {about}"),
        format!("Retry {about}"),
        format!("Edit {about}"),
    );
    // Shown once the answer is final: a draft is not worth copying, and a run in
    // flight is not restarted.
    let actions = chat.map(|chat| {
        view! {
            <Show when=finished>
                <div class="answer-actions">
                    <button type="button" class="answer-copy" aria-label={
                        let label = copy_label.clone();
                        move || if copied.get() { "Copied".to_owned() } else { label.clone() }
                    } on:click=copy>
                        {move || if copied.get() { "Copied" } else { "Copy" }}
                    </button>
                    <button
                        type="button"
                        class="answer-retry"
                        aria-label=retry_label.clone()
                        disabled=move || chat.busy.get()
                        on:click=move |_| {
                            chat.retry(id);
                            super::focus_composer();
                        }
                    >
                        "Retry"
                    </button>
                    <button
                        type="button"
                        class="answer-edit"
                        aria-label=edit_label.clone()
                        disabled=move || chat.busy.get()
                        on:click=move |_| {
                            if let (Some(text), Some(focus)) = (chat.start_editing(id), composer) {
                                focus.fill(&text);
                            }
                        }
                    >
                        "Edit"
                    </button>
                </div>
            </Show>
        }
    });
    view! {
        <li class="turn" class:turn-editing=move || chat.is_some_and(|c| c.editing.get() == Some(id)) data-status=status>
            {move || {
                let (input, time) = (input.clone(), time.clone());
                match event.get() {
                    Some((kind, event)) => view! {
                        <div class="message message-event" data-event=event.clone()>
                            <span class="event-name">{crate::world::told::event_name(&kind, &event)}<span class="sr-only">":"</span></span>
                            <p>{input}</p>
                            <time class="message-time">{time}</time>
                        </div>
                    }.into_any(),
                    None => view! {
                        <div class="message message-user">
                            <span class="sr-only">"You said:"</span>
                            <p>{input}</p>
                            <time class="message-time">{time}</time>
                        </div>
                    }.into_any(),
                }
            }}
            <div
                class="message message-assistant"
                class:message-failed=failed
                // Reached by a shortcut (read the latest answer whole), not by Tab.
                tabindex="-1"
                aria-busy=move || (!finished()).to_string()
            >
                <span class="speaker">{speaker}<span class="sr-only">" said:"</span></span>
                <Show when=move || !thinking.with(String::is_empty)>
                    <details class="thinking" open=move || !finished()>
                        <summary>"Thinking"</summary>
                        <p class="thinking-text">{move || thinking.get()}</p>
                    </details>
                </Show>
                <Show when=waiting fallback=move || view! { <Markdown text=answer remote_images=remote_images /> }>
                    <Waiting approval=Signal::derive(awaiting) />
                </Show>
                {move || stopped().map(|note| view! { <p class="answer-stopped">{note}</p> })}
                // What this turn's model calls used and cost, quietly.
                {move || interaction.with(|i| (!i.usage.is_empty()).then(|| i.usage.words())).map(|words| view! {
                    <p class="turn-usage"><span class="sr-only">"This turn used "</span>{words}</p>
                })}
                {actions}
            </div>
            {chat.map(|chat| view! { <ApprovalCard chat=chat turn=id /> })}
            <StepList steps=steps cap=cap.unwrap_or_default() />
        </li>
    }
}

/// Who answers in `chat`: the character played, or Familiar.
pub(super) fn speaker(chat: Chat) -> String {
    chat.settings
        .with_untracked(|s| s.character.clone())
        .and_then(|key| crate::demo::characters::name_of(&key))
        .unwrap_or_else(|| "Familiar".to_owned())
}

/// The resident that answered `interaction` in its own conversation `open`
/// (`agent:<name>`), if it is one.
fn resident_of(interaction: &Interaction, open: &str) -> Option<String> {
    let name = open.strip_prefix("agent:")?;
    (interaction.agent.is_empty() || interaction.agent == name).then(|| name.to_owned())
}

/// The card's first line: who asks and for what. A resident asks in her own name, and
/// a world action reads as its deed with the names it concerns ("Dotty asks before
/// acting: send a message to Mira: “Hi”"); anything else as [`in_words`].
fn asks_first(chat: Chat, p: &super::chat::Pending) -> String {
    let resident = p
        .key
        .conversation
        .strip_prefix(&crate::app::Session::own_conversation(""))
        .map(str::to_owned);
    let what = if crate::world::ACTIONS.contains(&p.call.name.as_str()) {
        let people = chat.people.get_untracked();
        let name = |id: i64| {
            people
                .iter()
                .find(|(i, _)| *i == id)
                .map(|(_, n)| n.clone())
        };
        format!(
            "{}.",
            crate::world::told::request(&p.call.name, &p.call.arguments, name)
        )
        .replace("”.", "”")
    } else {
        in_words(&p.call.name, &p.call.arguments)
    };
    match resident {
        Some(name) => format!("{name} asks before acting: {what}"),
        None => format!("{} asks before it acts: {what}", speaker(chat)),
    }
}

/// What a call will do, in words: `forget` with `{"about": "the ale"}` reads
/// "forget (about: “the ale”)." — the tool's name as words, then each argument.
fn in_words(name: &str, arguments: &str) -> String {
    let action = name.replace(['_', '-'], " ");
    let args = serde_json::from_str::<serde_json::Value>(arguments)
        .ok()
        .and_then(|v| v.as_object().cloned())
        .map(|object| {
            object
                .iter()
                .map(|(key, value)| {
                    let value = match value {
                        serde_json::Value::String(text) => format!("“{text}”"),
                        other => other.to_string(),
                    };
                    format!("{}: {value}", key.replace('_', " "))
                })
                .collect::<Vec<_>>()
        })
        .unwrap_or_default();
    if args.is_empty() {
        format!("{action}.")
    } else {
        format!("{action} ({}).", args.join("; "))
    }
}

/// The reason a Stop gives (the run's own words for the person's decision).
const STOPPED: &str = "stopped before it finished";

/// The answer as the person should read it: the outcome's text, or what streamed
/// before a Stop (nothing, when a Stop came first: the note says it), or the draft
/// streaming now.
fn shown_answer(interaction: &Interaction) -> String {
    interaction
        .steps
        .iter()
        .rev()
        .find_map(|step| match step {
            Step::Answer {
                text,
                outcome: Outcome::Aborted { reason } | Outcome::BudgetReached { reason },
            } if text == reason => Some(String::new()),
            Step::Answer { text, .. } => Some(text.clone()),
            _ => None,
        })
        .unwrap_or_else(|| interaction.draft.clone())
}

/// "“What time is it?”", shortened: what an answer's buttons act on, for their names.
fn quoted(input: &str) -> String {
    const MAX: usize = 40;
    let mut short: String = input.chars().take(MAX).collect();
    if input.chars().count() > MAX {
        short.push('…');
    }
    format!("“{short}”")
}

/// Shown until the first word arrives: that the agent is working, and for how long,
/// so a slow or silent model is visible (Stop is next to the composer); or, while an
/// approval card waits, that it is the person's turn.
#[component]
fn Waiting(
    /// True while the run waits for the person's decision.
    approval: Signal<bool>,
) -> impl IntoView {
    let (seconds, set_seconds) = signal(0_u32);
    let tick = set_interval_with_handle(
        move || set_seconds.update(|s| *s += 1),
        std::time::Duration::from_secs(1),
    );
    on_cleanup(move || {
        if let Ok(tick) = tick {
            tick.clear();
        }
    });
    view! {
        <p class="waiting">
            <span class="waiting-dots" aria-hidden="true">"…"</span>
            {move || match seconds.get() {
                _ if approval.get() => " waiting for your decision below".to_owned(),
                0..3 => String::new(),
                s => format!(" working · {s} s"),
            }}
        </p>
    }
}

/// The model's visible reasoning across the interaction's model calls.
fn reasoning(interaction: &Interaction) -> String {
    interaction
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::Reason { reasoning, .. } if !reasoning.is_empty() => Some(reasoning.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// "14:05" today, "3 Nov 14:05" another day, "3 Nov 2025" another year: when a
/// conversation was last changed, for History.
pub(super) fn when(epoch_ms: i64) -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    if epoch_ms == 0 {
        return String::new();
    }
    let now = BrowserClock.now();
    let t = Instant {
        epoch_ms,
        utc_offset_minutes: now.utc_offset_minutes,
    }
    .local();
    let today = now.local();
    let month = usize::try_from(t.month.saturating_sub(1))
        .ok()
        .and_then(|m| MONTHS.get(m))
        .copied()
        .unwrap_or_default();
    if (t.year, t.month, t.day) == (today.year, today.month, today.day) {
        format!("{:02}:{:02}", t.hour, t.minute)
    } else if t.year == today.year {
        format!("{} {month} {:02}:{:02}", t.day, t.hour, t.minute)
    } else {
        format!("{} {month} {}", t.day, t.year)
    }
}

fn clock_time(epoch_ms: i64) -> String {
    if epoch_ms == 0 {
        return String::new();
    }
    let offset = BrowserClock.now().utc_offset_minutes;
    let t = Instant {
        epoch_ms,
        utc_offset_minutes: offset,
    }
    .local();
    format!("{:02}:{:02}", t.hour, t.minute)
}

/// Approve or deny the call this turn's run waits for.
#[component]
fn ApprovalCard(
    /// The chat that holds the paused run.
    chat: Chat,
    /// The turn this card belongs to.
    turn: u64,
) -> impl IntoView {
    let pending = move || chat.pending.get().filter(|p| p.key.turn == turn);
    move || {
        pending().map(|p| {
            let card = NodeRef::<leptos::html::Div>::new();
            // The next action is here: focus moves to the card as it appears.
            card.on_load(|card| {
                let _ = card.focus();
            });
            // In a host's page only a person's own click decides: its scripts may
            // dispatch clicks, never trusted ones.
            let hosted = use_context::<super::InHostPage>().is_some();
            let decide = move |event: leptos::ev::MouseEvent, approve: bool, grant: Option<Grant>| {
                if hosted && !event.is_trusted() {
                    return;
                }
                chat.decide(approve, grant);
                super::focus_composer();
            };
            // "Allow for this task" when the call may be granted so (a page action
            // that does not always ask).
            let task = p.grants.contains(&Grant::Task).then(|| {
                view! {
                    <button type="button" class="approve-task" on:click=move |e| decide(e, true, Some(Grant::Task))>
                        "Allow for this task"
                    </button>
                }
            });
            // "Always for this chat" only where it can hold: no grant covers a call that
            // always asks (a purchase, a deletion), so it is not offered, and why is said.
            let always = p.always_asks.is_none().then(|| {
                view! {
                    <button type="button" class="approve-always" on:click=move |e| decide(e, true, Some(Grant::Always))>
                        "Always for this chat"
                    </button>
                }
            });
            let why = p.always_asks.clone().map(|why| view! { <p class="approval-why">{format!("This always asks: {why}.")}</p> });
            // Where each value that carries the call's consequence came from.
            let sources = (!p.values.is_empty()).then(|| {
                let items = p
                    .values
                    .iter()
                    .map(|v| view! { <li>{format!("{} “{}”: from {}", v.means, v.value, v.source.said())}</li> })
                    .collect::<Vec<_>>();
                view! { <ul class="approval-sources" aria-label="Where its values come from">{items}</ul> }
            });
            view! {
                <div node_ref=card tabindex="-1" class="approval" role="group" aria-label="Approval needed">
                    <p class="approval-text">
                        {asks_first(chat, &p)}
                    </p>
                    // The tool's own words for what it does, beside the call's.
                    {p.description.clone().map(|about| view! { <p class="approval-about">{about}</p> })}
                    {why}
                    {sources}
                    <div class="approval-actions">
                        <button type="button" class="approve" on:click=move |e| decide(e, true, None)>
                            "Approve"
                        </button>
                        {task}
                        <button type="button" class="deny" on:click=move |e| decide(e, false, None)>
                            "Deny"
                        </button>
                        {always}
                    </div>
                    <details class="approval-details">
                        <summary>"Details: the tool " <code>{p.call.name.to_string()}</code></summary>
                        <pre class="approval-args">{pretty_text(&p.call.arguments)}</pre>
                    </details>
                </div>
            }
        })
    }
}
