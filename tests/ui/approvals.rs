//! The approval card: an unfinished answer offers no copy or retry while focus goes to
//! the card, `always` leaves a visible trace that can be taken back, and an approved
//! action runs while a denied one does not.

use super::*;

/// Remembers a fact, then asks to forget it: the run stops at the approval card.
async fn forgetting_waits_for_approval() -> HtmlElement {
    let root = fresh_app();
    press(&root, "Remember that the ale is cold", false);
    until("the memory", || {
        count(&root, ".turn[data-status=completed]") == 1
    })
    .await;
    press(&root, "Forget about the ale", false);
    until("the approval card", || count(&root, ".approval") == 1).await;
    assert!(text_of(&root, ".approval").contains("forget"));
    assert!(text_of(&root, ".approval-args").contains("ale"));
    assert_eq!(
        count(&root, ".turn[data-status=completed]"),
        1,
        "the run waits"
    );
    root
}

#[wasm_bindgen_test]
async fn an_unfinished_answer_offers_no_copy_or_retry_and_focus_goes_to_the_approval() {
    let root = forgetting_waits_for_approval().await;
    assert_eq!(count(&root, ".turn:nth-child(1) .answer-actions"), 1);
    assert_eq!(count(&root, ".turn:nth-child(2) .answer-actions"), 0);
    let focused = document().active_element().unwrap();
    assert!(
        focused.class_list().contains("approval"),
        "focus is on the card"
    );
    click(&root, ".approval .approve");
    let textarea = root.query_selector("textarea").unwrap().unwrap();
    assert_eq!(
        document().active_element(),
        Some(textarea),
        "then back to the composer"
    );
}

#[wasm_bindgen_test]
async fn always_leaves_a_visible_trace_that_can_be_taken_back() {
    let root = forgetting_waits_for_approval().await;
    click(&root, ".approval .approve-always");
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    assert!(text_of(&root, ".always-allowed").contains("forget"));
    click(&root, ".always-allowed .ask-again");
    leptos::task::tick().await;
    assert_eq!(count(&root, ".always-allowed"), 0);
    // Taken back, `forget` asks again.
    press(&root, "Remember that the ale is cold", false);
    until("the second memory", || {
        count(&root, ".turn[data-status=completed]") == 3
    })
    .await;
    press(&root, "Forget about the ale", false);
    until("the approval card, again", || {
        count(&root, ".approval") == 1
    })
    .await;
    assert_eq!(
        count(&root, ".turn[data-status=completed]"),
        3,
        "the run waits for the person"
    );
}

#[wasm_bindgen_test]
async fn an_approved_action_runs_and_the_answer_follows() {
    let root = forgetting_waits_for_approval().await;
    click(&root, ".approval .approve");
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    assert_eq!(count(&root, ".approval"), 0);
    let shown = answers(&root);
    let last = shown.last().unwrap();
    assert!(last.starts_with("Forgotten (1)"), "{last}");
}

#[wasm_bindgen_test]
async fn a_denied_action_is_not_run_and_the_answer_says_so() {
    let root = forgetting_waits_for_approval().await;
    click(&root, ".approval .deny");
    until("the answer", || {
        count(&root, ".turn[data-status=completed]") == 2
    })
    .await;
    let shown = answers(&root);
    let last = shown.last().unwrap();
    assert!(last.contains("you declined forget"), "{last}");
    assert!(
        !root
            .query_selector(".turn:nth-child(2) .message-assistant")
            .unwrap()
            .unwrap()
            .class_list()
            .contains("message-failed"),
        "a person's no is not a failure"
    );
    let summary = text_of(&root, ".turn:nth-child(2) .steps-summary");
    assert!(!summary.contains("failed"), "{summary}");
    click(&root, ".turn:nth-child(2) .steps-summary");
    until("the steps", || {
        count(&root, ".turn:nth-child(2) .step-approval") == 1
    })
    .await;
    assert_eq!(
        text_of(&root, ".turn:nth-child(2) .step-approval .step-label"),
        "Declined"
    );
    assert_eq!(count(&root, ".turn:nth-child(2) .step-tool"), 0);
    press(&root, "What do you remember?", false);
    until("the recall", || {
        count(&root, ".turn[data-status=completed]") == 3
    })
    .await;
    let recall = &answers(&root)[2];
    assert!(
        recall.contains("the ale is cold"),
        "nothing was forgotten: {recall}"
    );
}
