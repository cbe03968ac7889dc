//! An answer as it streams: the text grows in place, and a stopped answer keeps what
//! streamed (or is empty when stopped before a word) and says it was stopped.

use super::*;

#[wasm_bindgen_test]
async fn streaming_text_grows_in_place_as_it_arrives() {
    use familiar::llm::Delta;
    use familiar::run::Purpose;
    use familiar::run::event::Event;
    use familiar::run::interaction::Interaction;
    use familiar::ui::Turn;
    let interaction = RwSignal::new(Interaction::new(1, "tell me a story"));
    let root = mount(move || view! { <Turn interaction=interaction /> });
    interaction.update(|i| i.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 })));
    leptos::task::tick().await;
    assert_eq!(text_of(&root, ".waiting"), "…", "working, no answer yet");
    assert_eq!(count(&root, ".markdown"), 0);
    let mut seen = Vec::new();
    for piece in ["Once ", "upon ", "a **time**."] {
        interaction.update(|i| i.apply(&Event::Delta(Delta::Text { text: piece.into() })));
        leptos::task::tick().await;
        seen.push(text_of(&root, ".markdown"));
    }
    assert_eq!(seen, ["Once", "Once upon", "Once upon a time."]);
    assert_eq!(
        text_of(&root, ".markdown strong"),
        "time",
        "markdown renders as it streams"
    );
    assert_eq!(count(&root, ".turn[data-status=planning]"), 1);
}

#[wasm_bindgen_test]
async fn a_stopped_answer_keeps_what_streamed_and_says_it_was_stopped() {
    use familiar::llm::Delta;
    use familiar::run::event::Event;
    use familiar::run::interaction::Interaction;
    use familiar::run::{Outcome, Purpose};
    use familiar::ui::Turn;
    let interaction = RwSignal::new(Interaction::new(1, "tell me a story"));
    let root = mount(move || view! { <Turn interaction=interaction /> });
    interaction.update(|i| {
        i.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 }));
        i.apply(&Event::Delta(Delta::Text {
            text: "Once upon a time, a dragon".into(),
        }));
        i.apply(&Event::Done(Outcome::Aborted {
            reason: "stopped before it finished".into(),
        }));
    });
    leptos::task::tick().await;
    assert_eq!(text_of(&root, ".markdown"), "Once upon a time, a dragon");
    assert_eq!(text_of(&root, ".answer-stopped"), "Stopped.");
    let answer = root.query_selector(".message-assistant").unwrap().unwrap();
    assert!(
        !answer.class_list().contains("message-failed"),
        "a Stop is the person's decision, not a failure"
    );
}

#[wasm_bindgen_test]
async fn stopped_before_a_word_the_answer_is_empty_and_the_note_says_it_was_stopped() {
    use familiar::run::event::Event;
    use familiar::run::interaction::Interaction;
    use familiar::run::{Outcome, Purpose};
    use familiar::ui::Turn;
    let interaction = RwSignal::new(Interaction::new(1, "tell me a story"));
    let root = mount(move || view! { <Turn interaction=interaction /> });
    interaction.update(|i| {
        i.apply(&Event::StepStarted(Purpose::Reason { iteration: 1 }));
        i.apply(&Event::Done(Outcome::Aborted {
            reason: "stopped before it finished".into(),
        }));
    });
    leptos::task::tick().await;
    assert_eq!(
        text_of(&root, ".markdown"),
        "",
        "no reason shown as the answer"
    );
    assert_eq!(text_of(&root, ".answer-stopped"), "Stopped.");
}
