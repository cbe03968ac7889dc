//! Settings → Agent: the step cap, reflection, goal guessing, and images from other
//! sites.

use leptos::prelude::*;

use super::{Problems, parse};
use crate::app::settings::{FieldProblem, Settings};

/// The Agent fieldset's fields, as typed.
#[derive(Clone, Copy)]
pub(super) struct Fields {
    cap: RwSignal<String>,
    reflection: RwSignal<bool>,
    goal_guess: RwSignal<bool>,
    images: RwSignal<bool>,
}

impl Fields {
    pub(super) fn new(initial: &Settings) -> Self {
        Self {
            cap: RwSignal::new(initial.max_iterations.to_string()),
            reflection: RwSignal::new(initial.reflection),
            goal_guess: RwSignal::new(initial.goal_guess),
            images: RwSignal::new(initial.remote_images),
        }
    }

    /// Reads the fields whose edits re-check the form.
    pub(super) fn track(&self) {
        self.cap.track();
    }

    /// The step cap and the three choices, into `settings`.
    pub(super) fn read(&self, settings: &mut Settings, found: &mut Vec<FieldProblem>) {
        settings.max_iterations = parse(
            &self.cap.get_untracked(),
            "max_iterations",
            "the step cap must be a whole number",
            found,
        )
        .unwrap_or(1);
        settings.reflection = self.reflection.get_untracked();
        settings.goal_guess = self.goal_guess.get_untracked();
        settings.remote_images = self.images.get_untracked();
    }

    /// The Agent fieldset.
    pub(super) fn view(self, problems: Problems) -> impl IntoView {
        let Self {
            cap,
            reflection,
            goal_guess,
            images,
        } = self;
        view! {
            <fieldset>
                <legend>"Agent"</legend>
                <label>"Step cap"<input class="step-cap" inputmode="numeric" bind:value=cap aria-invalid=problems.invalid("max_iterations") aria-describedby=problems.described("max_iterations", "hint-cap") /></label>
                <p class="field-hint" id="hint-cap">"1 to 50 steps a run"</p>
                {problems.error("max_iterations")}
                <label><input type="checkbox" class="reflection" bind:checked=reflection />" Review each answer once (reflection)"</label>
                <label><input type="checkbox" class="goal-guess" bind:checked=goal_guess />" Guess the goal of each message first"</label>
                <label><input type="checkbox" class="remote-images" bind:checked=images />" Show images from other sites"</label>
            </fieldset>
        }
    }
}
