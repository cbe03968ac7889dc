//! One turn of the conversation: the user's message, the answer, and its steps.

use leptos::prelude::*;

use crate::interaction::{Interaction, Status};

use super::StepList;

/// A user message with the agent's answer and the steps that led to it.
#[component]
pub fn Turn(
    /// The interaction to show.
    interaction: Interaction,
) -> impl IntoView {
    let answer = match interaction.outcome() {
        Some(outcome) => outcome.text().to_owned(),
        None if interaction.draft.is_empty() => "…".to_owned(),
        None => interaction.draft.clone(),
    };
    let status = format!("{:?}", interaction.status).to_lowercase();
    let failed = interaction.status == Status::Failed;
    view! {
        <li class="turn" data-status=status>
            <p class="message message-user">{interaction.input}</p>
            <p class="message message-assistant" class:message-failed=failed>{answer}</p>
            <StepList steps=interaction.steps />
        </li>
    }
}
