//! A turn's steps: a failed tool call stands out with its error, closed steps are built
//! only when opened, and a reflection shows its verdict and critique.

use familiar::llm::message::ToolCall;
use familiar::run::interaction::Step;
use familiar::tool::ToolKind;
use familiar::ui::StepList;

use super::*;

#[wasm_bindgen_test]
async fn a_failed_tool_call_stands_out_with_its_error() {
    let step = Step::ToolCall {
        call: ToolCall {
            id: "call_1".into(),
            name: "page_title".into(),
            arguments: "{oops".into(),
        },
        kind: Some(ToolKind::Data),
        result: Some(Err(
            "invalid arguments for `page_title`: not valid JSON".into()
        )),
        duration_ms: Some(0),
        agent: None,
    };
    let root = mount(move || view! { <StepList steps=vec![step] /> });
    open_steps(&root).await;
    assert!(
        text_of(&root, ".steps-summary").contains("1 failed"),
        "the summary line says so while closed"
    );
    assert_eq!(count(&root, ".step-tool.step-failed[data-state=error]"), 1);
    assert_eq!(
        text_of(&root, ".tool-result"),
        "invalid arguments for `page_title`: not valid JSON"
    );
    assert_eq!(
        text_of(&root, ".tool-args"),
        "{oops",
        "bad JSON is shown as written"
    );
}

#[wasm_bindgen_test]
async fn closed_steps_are_built_only_when_opened() {
    let steps = vec![Step::Error {
        message: "the review was not JSON".into(),
    }];
    let root = mount(move || view! { <StepList steps=steps /> });
    leptos::task::tick().await;
    assert_eq!(
        text_of(&root, ".steps-summary"),
        "1 steps · 1 failed · working"
    );
    assert_eq!(count(&root, ".step"), 0, "nothing is built while closed");
    click(&root, ".steps-summary");
    until("the steps to be built", || count(&root, ".step") == 1).await;
    assert_eq!(count(&root, ".step-error"), 1);
}

#[wasm_bindgen_test]
async fn a_reflection_shows_its_verdict_and_critique() {
    use familiar::run::{Review, Verdict};
    let steps = vec![Step::Reflection {
        review: Review {
            verdict: Verdict::Revise,
            feedback: "Say the time in 24-hour form.".into(),
        },
    }];
    let root = mount(move || view! { <StepList steps=steps /> });
    open_steps(&root).await;
    assert_eq!(text_of(&root, ".step-reflection .step-verdict"), "revise");
    assert_eq!(
        text_of(&root, ".step-reflection .step-text"),
        "Say the time in 24-hour form."
    );
    assert!(text_of(&root, ".steps-summary").starts_with("1 steps"));
}
