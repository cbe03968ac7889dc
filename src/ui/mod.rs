//! The Leptos interface: a conversation, its interaction steps, and a composer.
//!
//! Views only render signals; [`session`] owns the agent and turns driver events
//! into those signals.

mod composer;
mod session;
mod steps;
mod turn;

use leptos::prelude::*;

pub use composer::Composer;
pub use session::Session;
pub use steps::StepList;
pub use turn::Turn;

/// The whole demo page.
#[component]
pub fn App() -> impl IntoView {
    let session = Session::demo();
    let conversation = session.conversation();
    let busy = session.busy();
    view! {
        <main class="familiar">
            <header class="familiar-header">
                <h1>"Familiar"</h1>
                <p class="familiar-tagline">"An agent that lives in this tab · rules model · no server"</p>
            </header>
            <ol class="conversation" aria-live="polite">
                {move || {
                    conversation
                        .with(|c| {
                            c.interactions
                                .iter()
                                .map(|interaction| view! { <Turn interaction=interaction.clone() /> })
                                .collect_view()
                        })
                }}
            </ol>
            <Composer busy=busy on_send=move |text| session.send(text) />
        </main>
    }
}
