//! The inspector: what the latest run knows — its trigger and boundaries, plan and
//! context memory, iterations against the cap — and the world it acts on.

use leptos::prelude::*;

use super::chat::Inspector as State;

/// The side panel, updating live.
#[component]
pub fn Inspector(
    /// The state to show.
    #[prop(into)]
    state: Signal<State>,
) -> impl IntoView {
    let field = move |f: fn(&State) -> String| move || state.with(f);
    view! {
        <aside class="inspector" aria-label="Inspector">
            <h2>"Inspector"</h2>
            <dl>
                <dt>"Trigger"</dt>
                <dd class="inspector-trigger">{field(|s| if s.trigger.is_empty() { "—".into() } else { s.trigger.clone() })}</dd>
                <dt>"Allowed actions"</dt>
                <dd class="inspector-boundaries">{field(|s| match &s.boundaries.allowed_actions {
                    None => "all".into(),
                    Some(list) if list.is_empty() => "none".into(),
                    Some(list) => list.join(", "),
                })}</dd>
                <dt>"Iterations"</dt>
                <dd class="inspector-iterations">{field(|s| format!("{} / {}", s.iterations, s.cap))}</dd>
                <dt>"Plan"</dt>
                <dd class="inspector-plan">{field(|s| if s.plan.is_empty() { "—".into() } else { s.plan.join(" → ") })}</dd>
                <dt>"Context memory"</dt>
                <dd class="inspector-memory">{field(|s| {
                    let facts = s.memory.facts.iter().map(|(k, v)| format!("{k} = {v}"));
                    let owed = s.memory.owed.iter().map(|f| format!("owed: {}", f.note));
                    let all: Vec<String> = facts.chain(owed).collect();
                    if all.is_empty() { "—".into() } else { all.join("; ") }
                })}</dd>
            </dl>
            <h3>"Character"</h3>
            <dl>
                <dt>"Transaction"</dt>
                <dd class="inspector-transaction">{field(|s| if s.transaction.is_empty() { "—".into() } else { s.transaction.clone() })}</dd>
                <dt>"Pending"</dt>
                <dd class="inspector-pending">{field(|s| if s.pending.is_empty() { "none".into() } else { s.pending.join("; ") })}</dd>
                <dt>"Injected"</dt>
                <dd class="inspector-injection">{field(|s| if s.injection.is_empty() { "—".into() } else { s.injection.clone() })}</dd>
            </dl>
            <h3>"Memories in the world"</h3>
            <ul class="inspector-world">
                {move || state.with(|s| s.world.clone()).into_iter().map(|m| view! { <li>{m}</li> }).collect_view()}
            </ul>
        </aside>
    }
}
