//! The timeline of an interaction: reason → tool calls → answer.

use leptos::prelude::*;
use serde_json::Value;

use crate::interaction::Step;
use crate::run::{Outcome, Purpose};
use crate::tool::ToolKind;

/// The steps of one interaction, in order.
#[component]
pub fn StepList(
    /// The steps to show.
    steps: Vec<Step>,
) -> impl IntoView {
    view! {
        <ol class="steps" aria-label="Steps">
            {steps.into_iter().map(step_view).collect_view()}
        </ol>
    }
}

fn step_view(step: Step) -> AnyView {
    match step {
        Step::Reason {
            purpose,
            reasoning,
            calls,
        } => {
            let decision = if calls.is_empty() {
                "answer".to_owned()
            } else {
                format!("call {}", calls.join(", "))
            };
            let label = match purpose {
                Purpose::Reason { iteration } => format!("Reason #{iteration}"),
                Purpose::FinalAnswer => "Final answer".to_owned(),
                Purpose::GuessGoal => "Goal".to_owned(),
                Purpose::CheckGoal => "Goal check".to_owned(),
                Purpose::Reflect { round } => format!("Reflection #{round}"),
            };
            view! {
                <li class="step step-reason">
                    <span class="step-label">{label}</span>
                    <span class="step-text">{reasoning}</span>
                    <span class="step-decision">{format!("→ {decision}")}</span>
                </li>
            }
            .into_any()
        }
        Step::ToolCall {
            call,
            kind,
            result,
            duration_ms,
        } => {
            let kind = match kind {
                Some(ToolKind::Data) => "data",
                Some(ToolKind::Action) => "action",
                None => "unknown",
            };
            let (state, output) = match result {
                None => ("running", String::new()),
                Some(Ok(value)) => ("ok", pretty(&value)),
                Some(Err(error)) => ("error", error),
            };
            let duration = duration_ms.map(|ms| format!("{ms} ms")).unwrap_or_default();
            view! {
                <li class="step step-tool" data-state=state class:step-failed=state == "error">
                    <span class="step-label">"Tool"</span>
                    <span class="tool-name">{call.name}</span>
                    <span class="tool-kind">{kind}</span>
                    <pre class="tool-args">{pretty_text(&call.arguments)}</pre>
                    <pre class="tool-result">{output}</pre>
                    <span class="tool-duration">{duration}</span>
                </li>
            }
            .into_any()
        }
        Step::Plan { steps, memory } => {
            let owed: Vec<String> = memory.owed.iter().map(|f| f.note.clone()).collect();
            view! {
                <li class="step step-plan">
                    <span class="step-label">"Plan"</span>
                    <span class="step-text">{steps.join(" → ")}</span>
                    <span class="step-decision">{owed.join("; ")}</span>
                </li>
            }
            .into_any()
        }
        Step::Approval { call } => view! {
            <li class="step step-approval">
                <span class="step-label">"Needs approval"</span>
                <span class="tool-name">{call.name}</span>
            </li>
        }
        .into_any(),
        Step::Reflection { review } => view! {
            <li class="step step-reflection">
                <span class="step-label">"Reflection"</span>
                <span class="step-text">{review.feedback}</span>
            </li>
        }
        .into_any(),
        Step::GoalCheck { complete, answer } => view! {
            <li class="step step-goal">
                <span class="step-label">{if complete { "Goal complete" } else { "Goal not complete" }}</span>
                <span class="step-text">{answer}</span>
            </li>
        }
        .into_any(),
        Step::Error { message } => view! {
            <li class="step step-error">
                <span class="step-label">"Error"</span>
                <span class="step-text">{message}</span>
            </li>
        }
        .into_any(),
        Step::Answer { outcome, .. } => {
            let label = match outcome {
                Outcome::Answered { .. } => "Answered",
                Outcome::GoalComplete { .. } => "Goal complete",
                Outcome::CapReached { .. } => "Answered at the step cap",
                Outcome::Aborted { .. } => "Stopped",
                Outcome::Failed { .. } => "Failed",
            };
            view! {
                <li class="step step-answer">
                    <span class="step-label">{label}</span>
                </li>
            }
            .into_any()
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Model-written argument text, formatted when it is JSON and shown as-is otherwise.
fn pretty_text(text: &str) -> String {
    serde_json::from_str::<Value>(text).map_or_else(|_| text.to_owned(), |v| pretty(&v))
}
