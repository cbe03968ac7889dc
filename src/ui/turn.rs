//! One turn of the conversation: the message, the answer as it streams (markdown),
//! the model's thinking, an approval card when the run waits for one, and the steps.

use leptos::prelude::*;

use crate::base::clock::{Clock, Instant};
use crate::run::Outcome;
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
    let id = interaction.with_untracked(|i| i.id);
    let input = interaction.with_untracked(|i| i.input.clone());
    let time = interaction.with_untracked(|i| clock_time(i.started_ms));
    let status = move || interaction.with(|i| format!("{:?}", i.status).to_lowercase());
    let finished = move || interaction.with(|i| i.status.is_finished());
    let failed = move || interaction.with(|i| matches!(i.status, Status::Failed | Status::Aborted));
    let answer = Signal::derive(move || interaction.with(shown_answer));
    let waiting = move || interaction.with(|i| !i.status.is_finished() && i.draft.is_empty());
    let stopped = move || {
        interaction.with(|i| match i.steps.last() {
            Some(Step::Answer {
                text,
                outcome: Outcome::Aborted { reason },
            }) if text != reason => Some(format!("Stopped: {reason}")),
            _ => None,
        })
    };
    let thinking = Memo::new(move |_| interaction.with(reasoning));
    let steps = Memo::new(move |_| interaction.with(|i| i.steps.clone()));
    let remote_images = chat.is_some_and(|s| s.settings.with_untracked(|s| s.remote_images));
    let cap = chat.map(|s| s.settings.with_untracked(|s| s.max_iterations));
    let copy = move |_| super::copy_text(&answer.get_untracked());
    let about = quoted(&input);
    let (copy_label, retry_label) = (
        format!("Copy the answer to {about}"),
        format!("Ask {about} again"),
    );
    // Shown once the answer is final: a draft is not worth copying, and a run in
    // flight is not restarted.
    let actions = chat.map(|chat| {
        view! {
            <Show when=finished>
                <div class="answer-actions">
                    <button type="button" class="answer-copy" aria-label=copy_label.clone() on:click=copy>
                        "Copy"
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
                </div>
            </Show>
        }
    });
    view! {
        <li class="turn" data-status=status>
            <div class="message message-user">
                <span class="sr-only">"You said:"</span>
                <p>{input}</p>
                <time class="message-time">{time}</time>
            </div>
            <div
                class="message message-assistant"
                class:message-failed=failed
                aria-busy=move || (!finished()).to_string()
            >
                <span class="sr-only">"The agent said:"</span>
                <Show when=move || !thinking.with(String::is_empty)>
                    <details class="thinking" open=move || !finished()>
                        <summary>"Thinking"</summary>
                        <p class="thinking-text">{move || thinking.get()}</p>
                    </details>
                </Show>
                <Show when=waiting fallback=move || view! { <Markdown text=answer remote_images=remote_images /> }>
                    <Waiting />
                </Show>
                {move || stopped().map(|note| view! { <p class="answer-stopped">{note}</p> })}
                {actions}
            </div>
            {chat.map(|chat| view! { <ApprovalCard chat=chat turn=id /> })}
            <StepList steps=steps cap=cap.unwrap_or_default() />
        </li>
    }
}

/// The answer as the person should read it: the outcome's text, or what streamed
/// before a Stop, or the draft streaming now.
fn shown_answer(interaction: &Interaction) -> String {
    interaction
        .steps
        .iter()
        .rev()
        .find_map(|step| match step {
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
/// so a slow or silent model is visible (Stop is next to the composer).
#[component]
fn Waiting() -> impl IntoView {
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
            let decide = move |approve: bool, always: bool| {
                chat.decide(approve, always);
                super::focus_composer();
            };
            view! {
                <div node_ref=card tabindex="-1" class="approval" role="group" aria-label="Approval needed">
                    <p class="approval-text">
                        "The agent wants to run " <code>{p.call.name.clone()}</code> ":"
                    </p>
                    <pre class="approval-args">{pretty_text(&p.call.arguments)}</pre>
                    <div class="approval-actions">
                        <button type="button" class="approve" on:click=move |_| decide(true, false)>
                            "Approve"
                        </button>
                        <button type="button" class="deny" on:click=move |_| decide(false, false)>
                            "Deny"
                        </button>
                        <button type="button" class="approve-always" on:click=move |_| decide(true, true)>
                            "Always for this chat"
                        </button>
                    </div>
                </div>
            }
        })
    }
}
