//! The timeline of an interaction: reason → tool calls → answer.

use leptos::prelude::*;
use serde_json::Value;

use crate::interaction::Step;
use crate::run::Outcome;
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
            iteration,
            reasoning,
            calls,
        } => {
            let decision = if calls.is_empty() {
                "answer".to_owned()
            } else {
                format!("call {}", calls.join(", "))
            };
            view! {
                <li class="step step-reason">
                    <span class="step-label">{format!("Reason #{iteration}")}</span>
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
        Step::Answer { outcome, .. } => {
            let label = match outcome {
                Outcome::Answered { .. } => "Answered",
                Outcome::CapReached { .. } => "Answered at the step cap",
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
