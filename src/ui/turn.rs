//! One turn of the conversation: the message, the answer as it streams (markdown),
//! the model's thinking, an approval card when the run waits for one, and the steps.

use leptos::prelude::*;

use crate::clock::{Clock, Instant};
use crate::interaction::{Interaction, Status, Step};
use crate::web::BrowserClock;

use super::steps::pretty_text;
use super::{Markdown, Session, StepList};

/// A user message with the agent's answer and the steps that led to it.
#[component]
pub fn Turn(
    /// The interaction to show, live.
    #[prop(into)]
    interaction: Signal<Interaction>,
) -> impl IntoView {
    let session = use_context::<Session>();
    let id = interaction.with_untracked(|i| i.id);
    let input = interaction.with_untracked(|i| i.input.clone());
    let time = interaction.with_untracked(|i| clock_time(i.started_ms));
    let status = move || interaction.with(|i| format!("{:?}", i.status).to_lowercase());
    let finished = move || interaction.with(|i| i.status.is_finished());
    let failed = move || interaction.with(|i| matches!(i.status, Status::Failed | Status::Aborted));
    let answer = Signal::derive(move || {
        interaction.with(|i| match i.outcome() {
            Some(outcome) => outcome.text().to_owned(),
            None if i.draft.is_empty() => "…".to_owned(),
            None => i.draft.clone(),
        })
    });
    let thinking = Memo::new(move |_| interaction.with(reasoning));
    let steps = Memo::new(move |_| interaction.with(|i| i.steps.clone()));
    let remote_images = session.is_some_and(|s| s.settings.with_untracked(|s| s.remote_images));
    let cap = session.map(|s| s.settings.with_untracked(|s| s.max_iterations));
    let copy = move |_| super::copy_text(&answer.get_untracked());
    let actions = session.map(|session| {
        view! {
            <div class="answer-actions" hidden=move || !finished()>
                <button type="button" class="answer-copy" on:click=copy>"Copy"</button>
                <button
                    type="button"
                    class="answer-retry"
                    disabled=move || session.busy.get()
                    on:click=move |_| session.retry(id)
                >
                    "Retry"
                </button>
            </div>
        }
    });
    view! {
        <li class="turn" data-status=status>
            <div class="message message-user">
                <p>{input}</p>
                <time class="message-time">{time}</time>
            </div>
            <div class="message message-assistant" class:message-failed=failed>
                <Show when=move || !thinking.with(String::is_empty)>
                    <details class="thinking" open=move || !finished()>
                        <summary>"Thinking"</summary>
                        <p class="thinking-text">{move || thinking.get()}</p>
                    </details>
                </Show>
                <Markdown text=answer remote_images=remote_images />
                {actions}
            </div>
            {session.map(|session| view! { <ApprovalCard session=session turn=id /> })}
            <StepList steps=steps cap=cap.unwrap_or_default() />
        </li>
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
    /// The session that holds the paused run.
    session: Session,
    /// The turn this card belongs to.
    turn: u64,
) -> impl IntoView {
    let pending = move || session.pending.get().filter(|p| p.turn == turn);
    move || {
        pending().map(|p| {
            view! {
                <div class="approval" role="group" aria-label="Approval needed">
                    <p class="approval-text">
                        "The agent wants to run " <code>{p.call.name.clone()}</code> ":"
                    </p>
                    <pre class="approval-args">{pretty_text(&p.call.arguments)}</pre>
                    <div class="approval-actions">
                        <button type="button" class="approve" on:click=move |_| session.decide(true, false)>
                            "Approve"
                        </button>
                        <button type="button" class="deny" on:click=move |_| session.decide(false, false)>
                            "Deny"
                        </button>
                        <button type="button" class="approve-always" on:click=move |_| session.decide(true, true)>
                            "Always for this session"
                        </button>
                    </div>
                </div>
            }
        })
    }
}
