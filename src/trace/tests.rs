//! The tracer and the OTLP encoding on real and scripted runs. One test writes its
//! export to `target/otlp/scripted-run.json`, which the test command decodes with the
//! OpenTelemetry project's own definitions (`scripts/otlp_receiver.py check`).

use super::*;
use crate::base::clock::{FixedClock, Instant};
use crate::base::json::from_value;
use crate::llm::message::ToolCall;
use crate::llm::rules::RulesModel;
use crate::run::driver::{Seams, drive};
use crate::run::event::{Decided, Event, Grant, Thought};
use crate::run::{AgentRun, Observation, Outcome, Purpose, Trigger};
use crate::tool::{CurrentTime, ToolKind, ToolRegistry};
use serde_json::json;
use std::rc::Rc;

const T0: i64 = 1_795_320_964_000;
const PASSWORD: &str = "hunter2-correct-horse";

pub(super) fn agent() -> Agent {
    Agent {
        name: "shopkeeper".into(),
        id: None,
        provider: "openai".into(),
        model: "gpt-test".into(),
        conversation: Some("conv-1".into()),
    }
}

fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.into(),
    }
}

/// The events of a real run: the rules model asks the clock, then answers.
fn driven_run(input: &str) -> Vec<Event> {
    let clock = FixedClock(Instant {
        epoch_ms: T0,
        utc_offset_minutes: 0,
    });
    let mut tools = ToolRegistry::new();
    tools.register(CurrentTime::new(Rc::new(clock)));
    let rules = r#"{"fallback": "I can tell the time.",
        "rules": [{"keywords": ["time"], "tool": "current_time", "answer": "It is {time}."}]}"#;
    let llm = RulesModel::from_json(rules).unwrap();
    let seams = Seams {
        llm: &llm,
        tools: &tools,
        clock: &clock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut run = AgentRun::new("", Vec::new(), Observation::chat(input), tools.catalogue());
    let mut events = Vec::new();
    futures::executor::block_on(drive(&mut run, &seams, &mut |e| events.push(e)));
    events
}

/// A chat turn that buys after a person's approval, with the password typed into the
/// prompt and the arguments, a tool that fails, and a grant.
pub(super) fn scripted_run() -> Vec<Event> {
    let buy = call(
        "call_buy",
        "buy",
        &format!(r#"{{"item":"sword","pin":"{PASSWORD}"}}"#),
    );
    let look = call("call_look", "look_up", r#"{"item":"sword"}"#);
    vec![
        Event::Started {
            trigger: Trigger {
                kind: "chat".into(),
                event: "message.received".into(),
                timestamp: None,
            },
            input: format!("buy the sword, my pin is {PASSWORD}"),
            environment: None,
        },
        Event::StepStarted(Purpose::Reason { iteration: 1 }),
        Event::Thought(Thought::Actions {
            text: String::new(),
            calls: vec![look.clone()],
        }),
        Event::ToolStarted {
            call: look,
            kind: Some(ToolKind::Data),
            agent: None,
        },
        Event::Thought(Thought::ToolReturn {
            call_id: "call_look".into(),
            tool: "look_up".into(),
            result: Err("no such shop".into()),
            duration_ms: 5,
        }),
        Event::StepStarted(Purpose::Reason { iteration: 2 }),
        Event::Thought(Thought::Actions {
            text: String::new(),
            calls: vec![buy.clone()],
        }),
        Event::ApprovalNeeded {
            call: buy.clone(),
            description: Some("Buy a sword".into()),
            agent: Some("shop".into()),
        },
        Event::Decided {
            call_id: "call_buy".into(),
            decision: Decided::Approved,
        },
        Event::ToolStarted {
            call: buy,
            kind: Some(ToolKind::Action),
            agent: Some("shop".into()),
        },
        Event::Thought(Thought::ToolReturn {
            call_id: "call_buy".into(),
            tool: "buy".into(),
            result: Ok(json!({"bought": "sword", "receipt": PASSWORD})),
            duration_ms: 7,
        }),
        Event::Allowed {
            call: call("call_again", "buy", "{}"),
            description: None,
            by: Grant::Always,
            agent: None,
        },
        Event::StepStarted(Purpose::Reason { iteration: 3 }),
        Event::Thought(Thought::Message {
            text: "Bought the sword.".into(),
        }),
        Event::Done(Outcome::Answered {
            text: "Bought the sword.".into(),
        }),
    ]
}

/// Every event recorded, 10 ms apart from [`T0`].
pub(super) fn traced(tracer: &mut Tracer, events: &[Event], from: i64) {
    for (i, event) in events.iter().enumerate() {
        tracer.record(event, T0 + from + 10 * i as i64);
    }
}

pub(super) fn text<'a>(span: &'a Span, key: &str) -> Option<&'a str> {
    match span.attribute(key) {
        Some(Value::Text(t)) => Some(t),
        _ => None,
    }
}

pub(super) fn named<'a>(spans: &'a [Span], name: &str) -> Vec<&'a Span> {
    spans.iter().filter(|s| s.name == name).collect()
}

#[test]
fn a_real_turn_with_a_tool_is_an_agent_span_with_its_chats_and_the_tool_as_children() {
    let mut tracer = Tracer::new(1, agent(), Capture::default());
    traced(&mut tracer, &driven_run("What time is it?"), 0);
    let spans = tracer.take_finished();
    let run = named(&spans, "invoke_agent shopkeeper");
    let chats = named(&spans, "chat gpt-test");
    let tools = named(&spans, "execute_tool current_time");
    assert_eq!((run.len(), chats.len(), tools.len()), (1, 2, 1));
    let run = run[0];
    assert_eq!(run.parent_span_id, None);
    assert_eq!(run.kind, Kind::Internal);
    assert_eq!(text(run, "gen_ai.operation.name"), Some("invoke_agent"));
    assert_eq!(text(run, "gen_ai.agent.name"), Some("shopkeeper"));
    assert_eq!(text(run, "gen_ai.conversation.id"), Some("conv-1"));
    assert_eq!(text(run, "familiar.outcome"), Some("answered"));
    for child in chats.iter().chain(&tools) {
        assert_eq!(child.trace_id, run.trace_id);
        assert_eq!(child.parent_span_id.as_deref(), Some(run.span_id.as_str()));
        assert!(child.start_ms >= run.start_ms && child.end_ms <= run.end_ms);
    }
    assert!(chats.iter().all(|c| c.kind == Kind::Client));
    assert_eq!(text(chats[0], "gen_ai.operation.name"), Some("chat"));
    assert_eq!(text(chats[0], "gen_ai.request.model"), Some("gpt-test"));
    assert_eq!(text(chats[0], "gen_ai.provider.name"), Some("openai"));
    assert_eq!(
        chats[0].attribute("gen_ai.response.finish_reasons"),
        Some(&Value::Texts(vec!["tool_calls".into()]))
    );
    let tool = tools[0];
    assert_eq!(text(tool, "gen_ai.operation.name"), Some("execute_tool"));
    assert_eq!(text(tool, "gen_ai.tool.name"), Some("current_time"));
    assert!(text(tool, "gen_ai.tool.call.id").is_some_and(|id| !id.is_empty()));
    assert_eq!(tool.status, Status::Unset);
    assert!(spans.iter().all(|s| s.end_ms.is_some()));
}

#[test]
fn an_approval_its_decision_and_a_grant_are_events_on_the_run_span_with_the_call_id() {
    let mut tracer = Tracer::new(2, agent(), Capture::default());
    traced(&mut tracer, &scripted_run(), 0);
    let spans = tracer.take_finished();
    let run = named(&spans, "invoke_agent shopkeeper")[0];
    let names: Vec<&str> = run.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "familiar.approval_needed",
            "familiar.decided",
            "familiar.allowed"
        ]
    );
    let call_id = Attribute::text("gen_ai.tool.call.id", "call_buy");
    assert!(run.events[0].attributes.contains(&call_id));
    assert!(
        run.events[0]
            .attributes
            .contains(&Attribute::text("familiar.agent", "shop"))
    );
    assert!(run.events[1].attributes.contains(&call_id));
    assert!(
        run.events[1]
            .attributes
            .contains(&Attribute::text("familiar.decision", "approved"))
    );
    assert!(
        run.events[2]
            .attributes
            .contains(&Attribute::text("familiar.grant", "always"))
    );
    let buy = named(&spans, "execute_tool buy")[0];
    assert_eq!(text(buy, "gen_ai.tool.call.id"), Some("call_buy"));
    assert_eq!(text(buy, "familiar.tool.kind"), Some("action"));
    assert_eq!(text(buy, "familiar.agent"), Some("shop"));
}

#[test]
fn a_tool_that_fails_has_an_error_status_and_the_run_goes_on() {
    let mut tracer = Tracer::new(3, agent(), Capture::default());
    traced(&mut tracer, &scripted_run(), 0);
    let spans = tracer.take_finished();
    let look = named(&spans, "execute_tool look_up")[0];
    assert!(matches!(look.status, Status::Error(_)));
    assert_eq!(text(look, "error.type"), Some("tool_error"));
    let run = named(&spans, "invoke_agent shopkeeper")[0];
    assert_eq!(run.status, Status::Unset);
}

/// A run that meets an error, then fails with the proxy's body as its text.
fn failing_run() -> Vec<Event> {
    vec![
        Event::Started {
            trigger: Trigger {
                kind: "schedule".into(),
                event: "tick".into(),
                timestamp: None,
            },
            input: String::new(),
            environment: None,
        },
        Event::Thought(Thought::Error {
            message: "the model wrote: the password is swordfish".into(),
        }),
        Event::StepStarted(Purpose::Reason { iteration: 1 }),
        Event::Done(Outcome::Failed {
            error: "the proxy answered 502".into(),
        }),
    ]
}

#[test]
fn a_failed_run_marks_the_model_call_in_flight_and_the_run_as_errors() {
    let capture = Capture {
        content: true,
        secrets: Vec::new(),
    };
    let mut tracer = Tracer::new(4, agent(), capture);
    traced(&mut tracer, &failing_run(), 0);
    let spans = tracer.take_finished();
    let chat = named(&spans, "chat gpt-test")[0];
    let run = named(&spans, "invoke_agent shopkeeper")[0];
    assert_eq!(chat.status, Status::Error("the proxy answered 502".into()));
    assert_eq!(run.status, Status::Error("the proxy answered 502".into()));
    assert_eq!(text(run, "error.type"), Some("run_failed"));
    assert_eq!(text(run, "familiar.trigger.kind"), Some("schedule"));
}

#[test]
fn with_content_off_errors_leave_as_their_type_and_a_set_phrase_only() {
    let mut tracer = Tracer::new(4, agent(), Capture::default());
    traced(&mut tracer, &failing_run(), 0);
    let spans = tracer.take_finished();
    let chat = named(&spans, "chat gpt-test")[0];
    let run = named(&spans, "invoke_agent shopkeeper")[0];
    assert_eq!(chat.status, Status::Error("the model call failed".into()));
    assert_eq!(text(chat, "error.type"), Some("model_error"));
    assert_eq!(run.status, Status::Error("the run failed".into()));
    assert_eq!(text(run, "error.type"), Some("run_failed"));
    let thought = run.events.iter().find(|e| e.name == "exception");
    assert!(thought.is_some(), "the error is still an event");
    let written = export_request(&spans, &Resource::default()).to_string();
    assert!(
        !written.contains("502") && !written.contains("swordfish"),
        "{written}"
    );
}

#[test]
fn prompts_arguments_and_results_are_left_out_unless_content_is_captured() {
    let content_keys = [
        "gen_ai.input.messages",
        "gen_ai.output.messages",
        "gen_ai.tool.call.arguments",
        "gen_ai.tool.call.result",
    ];
    let has = |spans: &[Span], key: &str| spans.iter().any(|s| s.attribute(key).is_some());
    let mut quiet = Tracer::new(5, agent(), Capture::default());
    traced(&mut quiet, &scripted_run(), 0);
    let quiet = quiet.take_finished();
    assert!(content_keys.iter().all(|k| !has(&quiet, k)));
    let written = export_request(&quiet, &Resource::default()).to_string();
    assert!(!written.contains("sword"), "{written}");
    let capture = Capture {
        content: true,
        secrets: Vec::new(),
    };
    let mut told = Tracer::new(5, agent(), capture);
    traced(&mut told, &scripted_run(), 0);
    let told = told.take_finished();
    assert!(content_keys.iter().all(|k| has(&told, k)));
    let buy = named(&told, "execute_tool buy")[0];
    assert!(text(buy, "gen_ai.tool.call.arguments").is_some_and(|a| a.contains("sword")));
}

#[test]
fn a_secret_never_leaves_even_when_content_is_captured_nor_is_it_saved() {
    let capture = Capture {
        content: true,
        secrets: vec![PASSWORD.into()],
    };
    let mut tracer = Tracer::new(6, agent(), capture);
    traced(&mut tracer, &scripted_run()[..8], 0);
    let saved = serde_json::to_string(&tracer).unwrap();
    assert!(!saved.contains(PASSWORD));
    traced(&mut tracer, &scripted_run()[8..], 80);
    let spans = tracer.take_finished();
    let written = export_request(&spans, &Resource::default()).to_string();
    assert!(!written.contains(PASSWORD), "{written}");
    assert!(written.contains(MASKED));
    assert!(written.contains("sword"));
}

#[test]
fn a_secret_is_masked_in_names_and_ids_too_with_content_off() {
    // A host that made its conversation id of a session token, content left off.
    let token = "sess-7f3a9c";
    let capture = Capture {
        content: false,
        secrets: vec![token.into()],
    };
    let owner = Agent {
        conversation: Some(format!("conv-{token}")),
        ..agent()
    };
    let mut tracer = Tracer::new(8, owner, capture);
    traced(&mut tracer, &scripted_run(), 0);
    let written = export_request(&tracer.take_finished(), &Resource::default()).to_string();
    assert!(!written.contains(token), "{written}");
    assert!(written.contains(&format!("conv-{MASKED}")), "{written}");
}

#[test]
fn a_tracer_saved_mid_run_continues_the_same_trace_after_a_reload() {
    let events = scripted_run();
    let mut whole = Tracer::new(7, agent(), Capture::default());
    traced(&mut whole, &events, 0);
    let whole = whole.take_finished();

    let mut before = Tracer::new(7, agent(), Capture::default());
    traced(&mut before, &events[..8], 0);
    let mut spans = before.take_finished();
    let saved = serde_json::to_value(&before).unwrap();
    let mut after: Tracer = from_value(saved).unwrap();
    traced(&mut after, &events[8..], 80);
    spans.extend(after.take_finished());

    assert_eq!(spans, whole);
    let traces: std::collections::HashSet<&str> =
        spans.iter().map(|s| s.trace_id.as_str()).collect();
    assert_eq!(traces.len(), 1);
}

#[test]
fn a_sub_agents_tracer_under_the_callers_span_continues_its_trace() {
    let mut caller = Tracer::new(9, agent(), Capture::default());
    traced(&mut caller, &scripted_run()[..4], 0);
    let parent = caller.current().unwrap();
    let helper = Agent {
        name: "shop".into(),
        ..agent()
    };
    let mut sub = Tracer::new(10, helper, Capture::default()).under(parent.clone());
    traced(&mut sub, &driven_run("What time is it?"), 40);
    let spans = sub.take_finished();
    let run = named(&spans, "invoke_agent shop")[0];
    assert_eq!(run.trace_id, parent.trace_id);
    assert_eq!(run.parent_span_id.as_deref(), Some(parent.span_id.as_str()));
    assert!(spans.iter().all(|s| s.trace_id == parent.trace_id));
}

#[test]
fn a_new_run_while_one_is_open_ends_the_old_one_as_interrupted() {
    let mut tracer = Tracer::new(11, agent(), Capture::default());
    let events = scripted_run();
    traced(&mut tracer, &events[..4], 0);
    traced(&mut tracer, &events[..1], 100);
    let spans = tracer.take_finished();
    let runs = named(&spans, "invoke_agent shopkeeper");
    assert_eq!(runs.len(), 1);
    assert_eq!(text(runs[0], "error.type"), Some("interrupted"));
    let look = named(&spans, "execute_tool look_up")[0];
    assert_eq!(text(look, "error.type"), Some("unfinished"));
    assert_eq!(
        tracer.current().map(|p| p.trace_id == runs[0].trace_id),
        Some(false)
    );
}

#[test]
fn the_export_writes_hex_ids_nanosecond_strings_typed_values_and_numbered_enums() {
    let mut tracer = Tracer::new(12, agent(), Capture::default());
    traced(&mut tracer, &scripted_run(), 0);
    tracer.model_usage(&ModelUsage {
        input_tokens: Some(42),
        ..ModelUsage::default()
    });
    let spans = tracer.take_finished();
    let request = export_request(&spans, &Resource::default());
    let scope = &request["resourceSpans"][0]["scopeSpans"][0];
    assert_eq!(scope["scope"]["name"], SCOPE);
    let written = scope["spans"].as_array().unwrap();
    assert_eq!(written.len(), spans.len());
    let run = written
        .iter()
        .find(|s| s["name"] == "invoke_agent shopkeeper")
        .unwrap();
    assert_eq!(run["kind"], 1);
    assert!(run.get("parentSpanId").is_none());
    assert_eq!(
        run["startTimeUnixNano"],
        (T0 as u64 * 1_000_000).to_string()
    );
    assert_eq!(run["events"][0]["name"], "familiar.approval_needed");
    let chat = written.iter().rev().find(|s| s["kind"] == 3).unwrap();
    assert_eq!(chat["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(chat["spanId"].as_str().unwrap().len(), 16);
    assert_eq!(chat["parentSpanId"], run["spanId"]);
    let tokens = chat["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["key"] == "gen_ai.usage.input_tokens")
        .unwrap();
    assert_eq!(tokens["value"], json!({"intValue": "42"}));
    let look = written
        .iter()
        .find(|s| s["name"] == "execute_tool look_up")
        .unwrap();
    assert_eq!(look["status"]["code"], 2);
    let resource = &request["resourceSpans"][0]["resource"]["attributes"][0];
    assert_eq!(
        resource,
        &json!({"key": "service.name", "value": {"stringValue": "familiar"}})
    );
}

/// The file the test command decodes with the OpenTelemetry project's own definitions.
pub const WRITTEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/target/otlp/scripted-run.json");

#[test]
fn the_scripted_and_real_runs_export_is_written_for_the_receiver_to_decode() {
    let capture = Capture {
        content: true,
        secrets: vec![PASSWORD.into()],
    };
    let mut tracer = Tracer::new(13, agent(), capture);
    traced(&mut tracer, &scripted_run(), 0);
    tracer.model_usage(&ModelUsage {
        input_tokens: Some(31),
        output_tokens: Some(4),
        response_id: Some("chatcmpl-9".into()),
        response_model: None,
        finish_reasons: vec!["stop".into()],
    });
    let mut spans = tracer.take_finished();
    let mut real = Tracer::new(14, agent(), Capture::default());
    traced(&mut real, &driven_run("What time is it?"), 500);
    spans.extend(real.take_finished());
    let mut resource = Resource::default();
    resource
        .attributes
        .push(Attribute::bool("familiar.test", true));
    let request = export_request(&spans, &resource);
    let path = std::path::Path::new(WRITTEN);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string_pretty(&request).unwrap()).unwrap();
    let back: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(back, request);
    assert_eq!(
        back["resourceSpans"][0]["scopeSpans"][0]["spans"]
            .as_array()
            .unwrap()
            .len(),
        11,
        "the scripted run's 8 spans (the shop's sub-agent among them) and the real run's 3"
    );
}

#[test]
fn a_composite_sub_agents_calls_hang_under_its_own_agent_span_in_the_runs_trace() {
    let mut tracer = Tracer::new(5, agent(), Capture::default());
    traced(&mut tracer, &scripted_run(), 0);
    let spans = tracer.take_finished();
    let run = named(&spans, "invoke_agent shopkeeper")[0];
    let shop = named(&spans, "invoke_agent shop")[0];
    assert_eq!(shop.parent_span_id.as_deref(), Some(run.span_id.as_str()));
    assert_eq!(shop.trace_id, run.trace_id);
    let buy = named(&spans, "execute_tool buy")[0];
    assert_eq!(buy.parent_span_id.as_deref(), Some(shop.span_id.as_str()));
    let look = named(&spans, "execute_tool look_up")[0];
    assert_eq!(look.parent_span_id.as_deref(), Some(run.span_id.as_str()));
}

#[test]
fn every_run_of_a_conversation_goes_in_the_conversations_one_trace() {
    let mut first = Tracer::new(8, agent(), Capture::default());
    let trace = first.new_trace_id();
    let mut first = first.in_trace(trace.clone());
    traced(&mut first, &driven_run("What time is it?"), 0);
    let mut second = Tracer::new(9, agent(), Capture::default()).in_trace(trace.clone());
    traced(&mut second, &driven_run("And now?"), 1_000);
    let spans: Vec<Span> = first
        .take_finished()
        .into_iter()
        .chain(second.take_finished())
        .collect();
    assert_eq!(named(&spans, "invoke_agent shopkeeper").len(), 2);
    assert!(spans.iter().all(|s| s.trace_id == trace));
}

#[test]
fn a_card_number_in_a_prompt_never_leaves_even_when_content_is_captured() {
    let capture = Capture {
        content: true,
        secrets: Vec::new(),
    };
    let mut tracer = Tracer::new(3, agent(), capture);
    let card = "4242 4242 4242 4242";
    traced(&mut tracer, &driven_run(&format!("pay with {card}")), 0);
    let exported = export_request(&tracer.take_finished(), &Resource::default()).to_string();
    assert!(exported.contains("pay with"), "content is captured");
    assert!(!exported.contains(card) && !exported.contains("4242424242424242"));
    assert!(exported.contains(MASKED));
}
