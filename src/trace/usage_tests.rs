//! The tracer's usage (issue 60): the tokens a model call used land on its `chat`
//! span, whether they are known while it is in flight or only once the session has
//! counted them after the run took the answer, and a supervisor's stage is a `chat`
//! span of its own.

use super::tests::{agent, named, scripted_run, text, traced};
use super::*;

#[test]
fn usage_given_for_a_model_call_lands_on_its_chat_span_open_or_just_ended() {
    let mut tracer = Tracer::new(8, agent(), Capture::default());
    let events = scripted_run();
    traced(&mut tracer, &events[..2], 0);
    let usage = |input, output| ModelUsage {
        input_tokens: Some(input),
        output_tokens: Some(output),
        response_id: Some("chatcmpl-1".into()),
        response_model: Some("gpt-test-0613".into()),
        finish_reasons: vec!["tool_calls".into()],
    };
    tracer.model_usage(&usage(120, 9));
    traced(&mut tracer, &events[2..3], 20);
    traced(&mut tracer, &events[3..6], 30);
    traced(&mut tracer, &events[6..7], 60);
    tracer.model_usage(&usage(200, 11));
    let spans = tracer.take_finished();
    let chats = named(&spans, "chat gpt-test");
    let tokens = |s: &Span, key: &str| s.attribute(key).cloned();
    assert_eq!(
        tokens(chats[0], "gen_ai.usage.input_tokens"),
        Some(Value::Int(120))
    );
    assert_eq!(
        tokens(chats[0], "gen_ai.usage.output_tokens"),
        Some(Value::Int(9))
    );
    assert_eq!(
        tokens(chats[1], "gen_ai.usage.input_tokens"),
        Some(Value::Int(200))
    );
    assert_eq!(text(chats[1], "gen_ai.response.id"), Some("chatcmpl-1"));
    assert_eq!(
        text(chats[1], "gen_ai.response.model"),
        Some("gpt-test-0613")
    );
}

#[test]
fn a_model_call_that_answered_waits_for_its_usage_then_leaves_with_its_tokens() {
    let mut tracer = Tracer::new(21, agent(), Capture::default());
    let events = scripted_run();
    // Started, the first call, its answer: the call waits, the run is open.
    traced(&mut tracer, &events[..3], 0);
    assert!(tracer.take_settled().is_empty(), "the answered call waits");
    let counted = ModelUsage {
        input_tokens: Some(310),
        output_tokens: Some(12),
        ..ModelUsage::default()
    };
    tracer.settle(Some(&counted));
    let first = tracer.take_settled();
    let chat = named(&first, "chat gpt-test")[0];
    assert_eq!(
        (
            chat.attribute("gen_ai.usage.input_tokens"),
            chat.attribute("gen_ai.usage.output_tokens")
        ),
        (Some(&Value::Int(310)), Some(&Value::Int(12)))
    );
    assert_eq!(
        chat.attribute("gen_ai.response.finish_reasons"),
        Some(&Value::Texts(vec!["tool_calls".into()]))
    );
    // The rest of the run; the last call's usage is counted after the run ended.
    traced(&mut tracer, &events[3..], 30);
    let before = tracer.take_settled();
    assert_eq!(named(&before, "invoke_agent shopkeeper").len(), 1);
    assert_eq!(named(&before, "chat gpt-test").len(), 1, "the second call");
    assert_eq!(
        named(&before, "chat gpt-test")[0].attribute("gen_ai.usage.input_tokens"),
        None,
        "the second call's usage was never counted: it left when the third answered"
    );
    tracer.settle(Some(&ModelUsage {
        input_tokens: Some(400),
        output_tokens: Some(7),
        ..ModelUsage::default()
    }));
    let last = tracer.take_settled();
    assert_eq!(
        named(&last, "chat gpt-test")[0].attribute("gen_ai.usage.output_tokens"),
        Some(&Value::Int(7))
    );
    // A call that used nothing (the rules model): it leaves as it is.
    tracer.settle(None);
    assert!(tracer.take_settled().is_empty());
}

#[test]
fn an_answered_call_waiting_for_its_usage_survives_a_save() {
    let mut tracer = Tracer::new(22, agent(), Capture::default());
    traced(&mut tracer, &scripted_run()[..3], 0);
    let saved = serde_json::to_string(&tracer).unwrap();
    let mut back: Tracer = crate::base::json::from_text(&saved).unwrap();
    assert!(back.take_settled().is_empty());
    back.settle(Some(&ModelUsage {
        output_tokens: Some(3),
        ..ModelUsage::default()
    }));
    let spans = back.take_settled();
    assert_eq!(
        named(&spans, "chat gpt-test")[0].attribute("gen_ai.usage.output_tokens"),
        Some(&Value::Int(3))
    );
}

#[test]
fn a_supervisors_stage_is_a_chat_span_of_its_own_in_the_trace() {
    let trace = "0af7651916cd43dd8448eb211c80319c".to_owned();
    let mut tracer = Tracer::new(23, agent(), Capture::default()).in_trace(trace.clone());
    let usage = ModelUsage {
        input_tokens: Some(90),
        output_tokens: Some(20),
        ..ModelUsage::default()
    };
    tracer.stage("plan", (1_000, 1_250), &usage, None);
    tracer.stage("decision", (2_000, 2_100), &usage, Some("not JSON"));
    let spans = tracer.take_settled();
    assert_eq!(spans.len(), 2);
    let plan = &spans[0];
    assert_eq!(plan.name, "chat gpt-test");
    assert_eq!(plan.kind, Kind::Client);
    assert_eq!(plan.trace_id, trace, "in the conversation's trace");
    assert_eq!(plan.parent_span_id, None, "no run open: a root of its own");
    assert_eq!(text(plan, "familiar.step"), Some("plan"));
    assert_eq!((plan.start_ms, plan.end_ms), (1_000, Some(1_250)));
    assert_eq!(
        plan.attribute("gen_ai.usage.input_tokens"),
        Some(&Value::Int(90))
    );
    let decision = &spans[1];
    assert_eq!(text(decision, "error.type"), Some("model_error"));
    assert_eq!(
        decision.status,
        Status::Error("the model call failed".into()),
        "no content asked: the set phrase"
    );
    // Under an open run, a stage is its child.
    traced(&mut tracer, &scripted_run()[..1], 3_000);
    tracer.stage("complexity", (3_100, 3_200), &usage, None);
    let run = tracer.current().unwrap();
    let stage = tracer.take_settled().pop().unwrap();
    assert_eq!(stage.parent_span_id, Some(run.span_id));
}
