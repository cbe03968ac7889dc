//! Tracing (feature `telemetry`): every run of a conversation records its spans in the
//! conversation's one trace and hands them to the host's sink as they end; a run
//! resumed after a reload continues its open spans in that trace; content stays out
//! unless asked for, and a secret never leaves.

use familiar::app::Telemetry;
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;
use familiar::trace::{Capture, MASKED, Span, Value as Attr};

use super::*;

type Spans = Rc<RefCell<Vec<Span>>>;

/// Traces `session`'s runs into the returned list.
fn traced(session: &Session, capture: Capture) -> Spans {
    let spans: Spans = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&spans);
    session.set_telemetry(Some(Telemetry {
        capture,
        provider: "familiar.rules".into(),
        model: "rules".into(),
        sink: Rc::new(move |ended: &[Span]| sink.borrow_mut().extend(ended.iter().cloned())),
    }));
    spans
}

fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

fn text<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    match span.attribute(key) {
        Some(Attr::Text(text)) => Some(text),
        _ => None,
    }
}

#[test]
fn a_chat_turn_with_a_tool_and_an_approval_is_spans_in_the_conversations_trace() {
    let w = solo("t");
    let spans = traced(&w.session, Capture::default());
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&bumped), "Bumped to 1.");
    let time = spawn_send(&pool, &w.session, "what time is it");
    pool.run_until_stalled();
    assert_eq!(answer(&time), "It is noon.");

    let spans = spans.borrow();
    let runs = named(&spans, "invoke_agent familiar");
    assert_eq!(runs.len(), 2, "a span per turn");
    let conversation = w.session.conversation_id();
    assert!(runs.iter().all(|r| r.parent_span_id.is_none()));
    assert!(
        spans.iter().all(|s| s.trace_id == runs[0].trace_id),
        "both turns in the conversation's one trace"
    );
    assert_eq!(
        text(runs[0], "gen_ai.conversation.id"),
        Some(conversation.as_str())
    );
    let bump = named(&spans, "execute_tool bump")[0];
    assert_eq!(
        bump.parent_span_id.as_deref(),
        Some(runs[0].span_id.as_str())
    );
    assert_eq!(text(bump, "gen_ai.tool.call.id"), Some(call.as_str()));
    let events: Vec<&str> = runs[0].events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(events, ["familiar.approval_needed", "familiar.decided"]);
    assert!(!named(&spans, "chat rules").is_empty());
    assert!(
        spans.iter().all(|s| s.end_ms.is_some()),
        "only ended spans are handed out"
    );
    // The inspector's download: what the sink got, kept with the conversation.
    assert_eq!(w.session.trace_of(&conversation), *spans);
}

#[test]
fn a_residents_trigger_is_traced_as_its_agents_run_with_its_trigger() {
    let w = solo("t");
    let spans = traced(&w.session, Capture::default());
    let mut pool = LocalPool::new();
    let session = w.session.clone();
    let observation = Observation {
        trigger: Trigger {
            kind: "schedule".into(),
            event: "clock.tick".into(),
            timestamp: None,
        },
        actor: Actor {
            name: "keeper".into(),
            ..Actor::default()
        },
        subject: Subject {
            kind: "tick".into(),
            content: "what time is it".into(),
            ..Subject::default()
        },
        boundaries: Boundaries::default(),
        environment: None,
    };
    pool.spawner()
        .spawn_local(async move {
            session.trigger(observation).await.unwrap();
        })
        .unwrap();
    pool.run_until_stalled();
    let spans = spans.borrow();
    let run = named(&spans, "invoke_agent keeper")[0];
    assert_eq!(text(run, "familiar.trigger.kind"), Some("schedule"));
    assert_eq!(text(run, "familiar.trigger.event"), Some("clock.tick"));
    assert_eq!(text(run, "familiar.outcome"), Some("answered"));
    let tool = named(&spans, "execute_tool clock")[0];
    assert_eq!(tool.trace_id, run.trace_id);
}

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    }
}

#[test]
fn a_run_resumed_after_a_reload_continues_its_open_span_in_the_same_trace() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let (before, conversation) = {
        let model = ScriptedModel::new();
        model.push_tool_calls(vec![call("c1", "slow")]);
        let w = world_with(
            "t",
            Rc::clone(&storage),
            Rc::new(model),
            Rc::clone(&counter),
        );
        let spans = traced(&w.session, Capture::default());
        let _slow = host_slow(&w.session);
        let mut pool = LocalPool::new();
        spawn_send(&pool, &w.session, "wait for it");
        pool.run_until_stalled();
        // The page goes while the host still holds `slow`.
        let before = spans.borrow().clone();
        (before, w.session.conversation_id())
    };
    assert!(
        named(&before, "invoke_agent familiar").is_empty(),
        "still open"
    );
    let chat = named(&before, "chat rules")[0].clone();

    let model = ScriptedModel::new();
    model.push_text("Waited.");
    let w = world_with("t", Rc::clone(&storage), Rc::new(model), counter);
    let spans = traced(&w.session, Capture::default());
    let slow = host_slow(&w.session);
    w.session.restore();
    let mut pool = LocalPool::new();
    let resumed = spawn_resume(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    slow.borrow_mut()
        .pop()
        .unwrap()
        .send(json!({"done": "yes"}))
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&resumed), "Waited.");
    let after = spans.borrow();
    let run = named(&after, "invoke_agent familiar")[0];
    assert_eq!(
        chat.parent_span_id.as_deref(),
        Some(run.span_id.as_str()),
        "the span opened before the reload is the one that ends after it"
    );
    assert!(
        after.iter().all(|s| s.trace_id == chat.trace_id),
        "one trace"
    );
    assert_eq!(text(run, "familiar.outcome"), Some("answered"));
    let kept = w.session.trace_of(&conversation);
    assert_eq!(
        kept.len(),
        before.len() + after.len(),
        "kept across the reload"
    );
    assert!(storage.keys().iter().all(|k| !k.starts_with("t.tracer.")));
}

#[test]
fn a_run_resumed_after_content_was_turned_off_exports_no_content() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let conversation = {
        let model = ScriptedModel::new();
        model.push_tool_calls(vec![call("c1", "slow")]);
        let w = world_with(
            "t",
            Rc::clone(&storage),
            Rc::new(model),
            Rc::clone(&counter),
        );
        let on = Capture {
            content: true,
            secrets: Vec::new(),
        };
        let _spans = traced(&w.session, on);
        let _slow = host_slow(&w.session);
        let mut pool = LocalPool::new();
        spawn_send(&pool, &w.session, "wait for it");
        pool.run_until_stalled();
        w.session.conversation_id()
    };

    let model = ScriptedModel::new();
    model.push_text("Waited-answer.");
    let w = world_with("t", Rc::clone(&storage), Rc::new(model), counter);
    let spans = traced(&w.session, Capture::default());
    let slow = host_slow(&w.session);
    w.session.restore();
    let mut pool = LocalPool::new();
    let resumed = spawn_resume(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    slow.borrow_mut()
        .pop()
        .unwrap()
        .send(json!({"done": "slow-result"}))
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&resumed), "Waited-answer.");
    let after = spans.borrow();
    assert!(!named(&after, "invoke_agent familiar").is_empty(), "ended");
    let exported = serde_json::to_string(&*after).unwrap();
    assert!(
        !exported.contains("Waited-answer") && !exported.contains("slow-result"),
        "the host's setting now, not the saved one: {exported}"
    );
}

#[test]
fn a_destroyed_session_lets_go_of_its_sink_so_an_exporter_stops() {
    let w = solo("t");
    let owner = Rc::new(());
    let held = Rc::downgrade(&owner);
    w.session.set_telemetry(Some(Telemetry {
        capture: Capture::default(),
        provider: "familiar.rules".into(),
        model: "rules".into(),
        sink: Rc::new(move |_: &[Span]| {
            let _ = &owner;
        }),
    }));
    assert!(held.upgrade().is_some(), "the session holds the sink");
    w.session.destroy();
    assert!(
        held.upgrade().is_none(),
        "dropped with the session's tracing"
    );
    assert!(!w.session.traced());
}

#[test]
fn content_stays_out_unless_asked_and_a_secret_never_leaves() {
    let secret = "hunter2-horse";
    let w = solo("t");
    let plain = traced(&w.session, Capture::default());
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, &format!("what time is it, {secret}"));
    pool.run_until_stalled();
    let exported = serde_json::to_string(&*plain.borrow()).unwrap();
    assert!(!exported.contains("what time") && !exported.contains(secret));

    let w = solo("u");
    let capture = Capture {
        content: true,
        secrets: vec![secret.into()],
    };
    let asked = traced(&w.session, capture);
    spawn_send(&pool, &w.session, &format!("what time is it, {secret}"));
    pool.run_until_stalled();
    let exported = serde_json::to_string(&*asked.borrow()).unwrap();
    assert!(exported.contains("what time") && exported.contains(MASKED));
    assert!(!exported.contains(secret));
    let kept = serde_json::to_string(&w.session.trace_of(&w.session.conversation_id())).unwrap();
    assert!(!kept.contains(secret), "nor is it kept");
}

#[test]
fn a_deleted_conversations_trace_goes_with_it() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    traced(&w.session, Capture::default());
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "what time is it");
    pool.run_until_stalled();
    let id = w.session.conversation_id();
    assert!(storage.keys().contains(&format!("t.trace.{id}")));
    assert!(!w.session.trace_of(&id).is_empty());
    w.session.delete(&id);
    assert!(w.session.trace_of(&id).is_empty());
    assert!(storage.keys().iter().all(|k| !k.starts_with("t.trace.")));
}
