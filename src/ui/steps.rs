//! The timeline of an interaction — observe, reason, plan, tool calls, approvals,
//! reflection, goal checks, the outcome — folded into one summary line until opened,
//! and built only then.

use leptos::prelude::*;
use serde_json::Value;

use crate::run::event::Decided;
use crate::run::interaction::Step;
use crate::run::{Outcome, Purpose, Verdict};
use crate::tool::ToolKind;

/// The steps of one interaction, in order, under a one-line summary.
#[component]
pub fn StepList(
    /// The steps to show.
    #[prop(into)]
    steps: Signal<Vec<Step>>,
    /// The run's iteration cap, for the counter.
    #[prop(optional)]
    cap: Option<u32>,
) -> impl IntoView {
    let summary = move || steps.with(|s| summary(s, cap));
    let failed = move || steps.with(|s| s.iter().any(is_failure));
    // The list is built when first opened: the closed timelines of a long conversation
    // cost nothing to mount, nor to update while a run streams, until someone looks.
    let details = NodeRef::<leptos::html::Details>::new();
    let opened = RwSignal::new(false);
    let on_toggle = move |_| {
        if details.get_untracked().is_some_and(|d| d.open()) {
            opened.set(true);
        }
    };
    view! {
        <details node_ref=details class="steps" class:steps-failed=failed on:toggle=on_toggle>
            <summary class="steps-summary">{summary}</summary>
            <Show when=move || opened.get()>
                <ol class="step-list" aria-label="Steps">
                    {move || {
                        let mut seen = std::collections::BTreeSet::new();
                        by_agent(steps.get())
                            .into_iter()
                            .map(|(agent, run)| {
                                let views = run
                                    .into_iter()
                                    .map(|step| {
                                        // A second model call in the same iteration
                                        // follows look-ups.
                                        let again = match &step {
                                            Step::Reason {
                                                purpose: Purpose::Reason { iteration },
                                                ..
                                            } => !seen.insert(*iteration),
                                            _ => false,
                                        };
                                        step_view(step, again)
                                    })
                                    .collect_view();
                                match agent {
                                    None => views.into_any(),
                                    Some(agent) => nested(agent, views.into_any()),
                                }
                            })
                            .collect_view()
                    }}
                </ol>
            </Show>
        </details>
    }
}

/// The steps in runs of one agent each: `None` for the run's own agent, else the
/// sub-agent of a composite whose tools they used.
fn by_agent(steps: Vec<Step>) -> Vec<(Option<String>, Vec<Step>)> {
    let mut runs: Vec<(Option<String>, Vec<Step>)> = Vec::new();
    for step in steps {
        let agent = step.agent().map(str::to_owned);
        match runs.last_mut() {
            Some((last, run)) if *last == agent => run.push(step),
            _ => runs.push((agent, vec![step])),
        }
    }
    runs
}

/// A sub-agent's steps, nested under its name within the composite's.
fn nested(agent: String, steps: AnyView) -> AnyView {
    view! {
        <li class="step step-agent" data-agent=agent.clone()>
            <span class="step-label">{format!("@{agent}")}</span>
            <ol class="step-list step-nested" aria-label=format!("Steps of @{agent}")>
                {steps}
            </ol>
        </li>
    }
    .into_any()
}

fn is_failure(step: &Step) -> bool {
    matches!(
        step,
        Step::ToolCall {
            result: Some(Err(_)),
            ..
        } | Step::Error { .. }
    ) || matches!(
        step,
        Step::Answer {
            outcome: Outcome::Failed { .. },
            ..
        }
    )
}

/// "3 steps · 1 tool call (1 failed) · iteration 2/10 · answered".
fn summary(steps: &[Step], cap: Option<u32>) -> String {
    let tools = steps
        .iter()
        .filter(|s| matches!(s, Step::ToolCall { .. }))
        .count();
    let failed = steps.iter().filter(|s| is_failure(s)).count();
    let iteration = steps
        .iter()
        .filter_map(|s| match s {
            Step::Reason {
                purpose: Purpose::Reason { iteration },
                ..
            } => Some(*iteration),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut parts = vec![format!("{} steps", steps.len())];
    if tools > 0 {
        let s = if tools == 1 { "" } else { "s" };
        parts.push(format!("{tools} tool call{s}"));
    }
    if failed > 0 {
        parts.push(format!("{failed} failed"));
    }
    if iteration > 0 {
        parts.push(match cap {
            Some(cap) => format!("iteration {iteration}/{cap}"),
            None => format!("iteration {iteration}"),
        });
    }
    let state = steps.iter().rev().find_map(|s| match s {
        Step::Answer { outcome, .. } => Some(outcome_label(outcome)),
        Step::Approval { decision: None, .. } => Some("waiting for approval"),
        _ => None,
    });
    parts.push(state.unwrap_or("working").to_owned());
    parts.join(" · ")
}

fn outcome_label(outcome: &Outcome) -> &'static str {
    match outcome {
        Outcome::Answered { .. } => "answered",
        Outcome::GoalComplete { .. } => "goal complete",
        Outcome::CapReached { .. } => "stopped at the step cap",
        Outcome::Aborted { .. } => "stopped",
        Outcome::BudgetReached { .. } => "stopped by a budget",
        Outcome::Failed { .. } => "failed",
    }
}

fn step_view(step: Step, continued: bool) -> AnyView {
    match step {
        Step::Observe {
            trigger,
            environment,
        } => {
            let mut text = format!("{} ({})", trigger.event, trigger.kind);
            if let Some(environment) = environment {
                text.push_str(" · perceived: ");
                text.push_str(&environment.text);
            }
            line("step-observe", "Observe", text)
        }
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
                Purpose::Reason { iteration } if continued => {
                    format!("Reason #{iteration}, after look-ups")
                }
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
        Step::Plan { steps, memory } => {
            let owed: Vec<String> = memory
                .owed
                .iter()
                .map(|f| format!("owed: {}", f.note))
                .collect();
            let text = if steps.is_empty() {
                "no steps left".to_owned()
            } else {
                let words: Vec<String> = steps.iter().map(ToString::to_string).collect();
                words.join(" → ")
            };
            view! {
                <li class="step step-plan">
                    <span class="step-label">"Plan"</span>
                    <span class="step-text">{text}</span>
                    <span class="step-decision">{owed.join("; ")}</span>
                </li>
            }
            .into_any()
        }
        Step::ToolCall {
            call,
            kind,
            result,
            duration_ms,
            ..
        } => tool_card(
            call.name.into(),
            kind,
            call.arguments.into(),
            result,
            duration_ms,
        ),
        Step::Approval {
            call,
            description,
            decision,
            ..
        } => {
            let (label, text) = match decision {
                None => ("Needs approval", call.name.into()),
                Some(Decided::Approved) => ("Approved", call.name.into()),
                Some(Decided::Allowed { by }) => {
                    (by.label(), description.unwrap_or_else(|| call.name.into()))
                }
                Some(Decided::Denied { reason }) => {
                    ("Declined", format!("{} ({reason})", call.name))
                }
            };
            line("step-approval", label, text)
        }
        Step::Reflection { review } => {
            let verdict = match review.verdict {
                Verdict::Finished => "finished",
                Verdict::Revise => "revise",
                Verdict::MoreActions => "more actions",
            };
            view! {
                <li class="step step-reflection">
                    <span class="step-label">"Reflection"</span>
                    <span class="step-verdict">{verdict}</span>
                    <span class="step-text">{review.feedback}</span>
                </li>
            }
            .into_any()
        }
        Step::Fitted { fit } => line("step-fitted", "Fitted to the window", fit_text(&fit)),
        Step::GoalCheck { complete, answer } => {
            let label = if complete {
                "Goal complete"
            } else {
                "Goal not complete"
            };
            line("step-goal", label, answer)
        }
        Step::Error { message } => view! {
            <li class="step step-error step-failed">
                <span class="step-label">"Error"</span>
                <span class="step-text">{message}</span>
            </li>
        }
        .into_any(),
        Step::Answer { outcome, .. } => {
            let failed = matches!(outcome, Outcome::Failed { .. });
            view! {
                <li class="step step-answer" class:step-failed=failed>
                    <span class="step-label">{outcome_label(&outcome)}</span>
                </li>
            }
            .into_any()
        }
    }
}

/// "~2,100 → ~1,800 of 1,952 tokens: 23 tool schemas shortened (…); …".
fn fit_text(fit: &crate::run::Fit) -> String {
    let trims: Vec<String> = fit.trims.iter().map(crate::run::Trim::describe).collect();
    format!(
        "~{} → ~{} of {} tokens ({} window): {}",
        fit.before,
        fit.after,
        fit.room,
        fit.window,
        trims.join("; ")
    )
}

fn line(class: &'static str, label: &'static str, text: String) -> AnyView {
    view! {
        <li class=format!("step {class}")>
            <span class="step-label">{label}</span>
            <span class="step-text">{text}</span>
        </li>
    }
    .into_any()
}

fn tool_card(
    name: String,
    kind: Option<ToolKind>,
    arguments: String,
    result: Option<Result<Value, String>>,
    duration_ms: Option<i64>,
) -> AnyView {
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
            <span class="tool-name">{name}</span>
            <span class="tool-kind">{kind}</span>
            <span class="tool-status">{state}</span>
            <pre class="tool-args">{pretty_text(&arguments)}</pre>
            <pre class="tool-result">{output}</pre>
            <span class="tool-duration">{duration}</span>
        </li>
    }
    .into_any()
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

/// Model-written argument text, formatted when it is JSON and shown as-is otherwise.
pub fn pretty_text(text: &str) -> String {
    serde_json::from_str::<Value>(text).map_or_else(|_| text.to_owned(), |v| pretty(&v))
}
