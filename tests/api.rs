//! The JavaScript API in headless Chromium: every call of `createAgent`'s agent, and
//! every way a host tool can fail, with handlers written in JavaScript.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use familiar::js_api::{FamiliarAgent, create_agent};
use js_sys::{Array, Function, JSON, Promise, Reflect};
use wasm_bindgen::{JsCast, JsValue};
use wasm_bindgen_futures::JsFuture;
use wasm_bindgen_test::*;

#[path = "api/channels.rs"]
mod channels;
#[path = "api/delegates.rs"]
mod delegates;
#[path = "api/environment.rs"]
mod environment;
#[path = "api/host_tools.rs"]
mod host_tools;
#[path = "api/page_model.rs"]
mod page_model;
#[path = "api/schedules.rs"]
mod schedules;

wasm_bindgen_test_configure!(run_in_browser);

/// A JavaScript value from its source text.
fn js(source: &str) -> JsValue {
    js_sys::eval(&format!("({source})")).unwrap()
}

fn get(value: &JsValue, path: &str) -> JsValue {
    path.split('.').fold(value.clone(), |v, key| {
        Reflect::get(&v, &key.into()).unwrap()
    })
}

fn text(value: &JsValue, path: &str) -> String {
    get(value, path).as_string().unwrap_or_default()
}

async fn settle(promise: Promise) -> Result<JsValue, String> {
    JsFuture::from(promise).await.map_err(|e| {
        Reflect::get(&e, &"message".into())
            .unwrap()
            .as_string()
            .unwrap_or_default()
    })
}

/// An offline agent whose rules call the tool each keyword names.
async fn agent(extra: &str) -> FamiliarAgent {
    let config = js(&format!(
        r#"{{
        name: "npc", persist: false, maxSteps: 3, goalCheck: false,
        model: {{ fallback: "Nothing to do.", rules: [
            {{ keywords: ["goblin"], tool: "spawn", arguments: {{ kind: "goblin" }}, answer: "A {{spawned}} appears." }},
            {{ keywords: ["look"], tool: "look", answer: "I see {{sight}}." }}
        ] }}
        {extra}
    }}"#
    ));
    create_agent(config)
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap()
}

fn tool(handler: &str, extra: &str) -> JsValue {
    js(&format!(
        r#"{{ name: "spawn", description: "Spawns a monster.", kind: "action",
              parameters: {{ type: "object", properties: {{ kind: {{ type: "string" }} }}, required: ["kind"] }},
              handler: {handler} {extra} }}"#
    ))
}

/// The first error a tool call of the open conversation's last turn ended with.
fn tool_error(agent: &FamiliarAgent) -> String {
    fn find(value: &serde_json::Value) -> Option<String> {
        match value {
            serde_json::Value::Object(fields) => fields
                .get("error")
                .and_then(|e| e.as_str().map(str::to_owned))
                .or_else(|| fields.values().find_map(find)),
            serde_json::Value::Array(items) => items.iter().find_map(find),
            _ => None,
        }
    }
    let conversation = JSON::stringify(&agent.conversation(None))
        .unwrap()
        .as_string()
        .unwrap();
    let conversation: serde_json::Value = serde_json::from_str(&conversation).unwrap();
    let last = conversation["interactions"]
        .as_array()
        .and_then(|i| i.last())
        .cloned();
    last.as_ref().and_then(find).unwrap_or_default()
}

#[wasm_bindgen_test]
async fn a_game_event_runs_under_its_boundaries() {
    let agent = agent("").await;
    js("window.spawns = 0");
    agent
        .register_tool(tool(
            "async (args) => { window.spawns++; return { spawned: args.kind } }",
            "",
        ))
        .unwrap();
    let event = js(
        r#"{ kind: "battle", event: "battle.started", actor: { name: "Grunt" },
                        subject: "A goblin camp is near", allowedActions: ["spawn"] }"#,
    );
    let outcome = settle(agent.trigger(event)).await.unwrap();
    assert_eq!(text(&outcome, "text"), "A goblin appears.");
    let refused = js(
        r#"{ kind: "battle", event: "battle.started", subject: "A goblin camp", allowedActions: [] }"#,
    );
    // Not offered, so the rules model does not call it; nothing runs either way.
    let outcome = settle(agent.trigger(refused)).await.unwrap();
    assert_eq!(text(&outcome, "text"), "Nothing to do.");
    assert_eq!(js("window.spawns").as_f64(), Some(1.0));
    let bad = settle(agent.trigger(js(r#"{ subject: 3 }"#)))
        .await
        .unwrap_err();
    assert!(
        bad.contains("event.kind") && bad.contains("event.subject"),
        "{bad}"
    );
}

async fn gloo_sleep(ms: i32) {
    let promise = Promise::new(&mut |resolve, _| {
        web_sys::window()
            .unwrap()
            .set_timeout_with_callback_and_timeout_and_arguments_0(&resolve, ms)
            .unwrap();
    });
    JsFuture::from(promise).await.unwrap();
}

#[wasm_bindgen_test]
async fn listeners_hear_each_update_with_its_conversation_and_turn_and_can_be_removed() {
    let agent = agent("").await;
    agent
        .register_tool(tool("a => ({ spawned: a.kind })", ""))
        .unwrap();
    js("window.heard = []");
    let all: Function = js("e => window.heard.push(e.event + ':' + e.turn)").unchecked_into();
    let id = agent.on("*", all).unwrap();
    let done: Function = js("e => { window.done = e }").unchecked_into();
    agent.on("done", done.clone()).unwrap();
    assert!(
        agent.on("finished", done.clone()).is_err(),
        "unknown names are refused"
    );
    settle(agent.send("goblin".into())).await.unwrap();
    let heard: Vec<String> = Array::from(&js("window.heard"))
        .iter()
        .filter_map(|e| e.as_string())
        .collect();
    assert_eq!(heard.first().map(String::as_str), Some("turn_began:1"));
    assert!(heard.contains(&"tool_started:1".to_owned()), "{heard:?}");
    assert_eq!(heard.last().map(String::as_str), Some("done:1"));
    let done_event = js("window.done");
    assert_eq!(text(&done_event, "type"), "answered");
    assert!(text(&done_event, "conversation").starts_with('c'));
    assert_eq!(agent.off(JsValue::from(id), None), 1);
    assert_eq!(agent.off("done".into(), Some(done)), 1);
    js("window.heard = []");
    settle(agent.send("hello".into())).await.unwrap();
    assert_eq!(Array::from(&js("window.heard")).length(), 0);
}

#[wasm_bindgen_test]
async fn approvals_are_decided_by_a_person_or_in_code() {
    let agent = agent("").await;
    js("window.spawned = 0");
    agent
        .register_tool(tool(
            "a => { window.spawned += 1; return { spawned: a.kind } }",
            ", approval: 'ask'",
        ))
        .unwrap();
    js("window.asked = null");
    let ask: Function = js("e => { window.asked = e.call.id }").unchecked_into();
    agent.on("approval_needed", ask).unwrap();
    let running = JsFuture::from(agent.send("goblin".into()));
    let decide = async {
        gloo_sleep(20).await;
        let id = js("window.asked").as_string().expect("asked");
        let pending = Array::from(&agent.pending());
        assert_eq!(pending.length(), 1);
        assert_eq!(text(&pending.get(0), "call.id"), id);
        assert!(agent.approve("not-a-call".into(), None).is_err());
        assert!(
            agent
                .approve(js("{ conversation: 'c', turn: 1 }"), None)
                .is_err()
        );
        let elsewhere = js("{ conversation: 'another', turn: 1, callId: 'x' }");
        Reflect::set(&elsewhere, &"callId".into(), &id.clone().into()).unwrap();
        assert!(
            agent.approve(elsewhere, None).is_err(),
            "another conversation's"
        );
        // A pending() entry names its call exactly.
        agent.approve(pending.get(0), None).unwrap();
        assert!(agent.approve(id.into(), None).is_err(), "decided already");
    };
    let (outcome, ()) = futures::join!(running, decide);
    assert_eq!(text(&outcome.unwrap(), "text"), "A goblin appears.");
    assert_eq!(
        js("window.spawned").as_f64(),
        Some(1.0),
        "approved: it ran once"
    );

    // In code: a handler that denies with a reason.
    let deny: Function =
        js("async p => ({ approve: false, reason: 'not in the tavern' })").unchecked_into();
    agent.on_approval(Some(deny));
    settle(agent.send("goblin again".into())).await.unwrap();
    assert!(
        tool_error(&agent).contains("not in the tavern") || {
            let c = JSON::stringify(&agent.conversation(None))
                .unwrap()
                .as_string()
                .unwrap();
            c.contains("not in the tavern")
        }
    );
    // A handler that throws denies too.
    let throws: Function = js("() => { throw new Error('broken') }").unchecked_into();
    agent.on_approval(Some(throws));
    settle(agent.send("goblin once more".into())).await.unwrap();
    let c = JSON::stringify(&agent.conversation(None))
        .unwrap()
        .as_string()
        .unwrap();
    assert!(c.contains("the approval handler failed: broken"), "{c}");
    assert_eq!(
        js("window.spawned").as_f64(),
        Some(1.0),
        "denied, in words or by a throw: the handler never ran again"
    );
}

#[wasm_bindgen_test]
async fn abort_ends_a_run_in_flight() {
    let agent = agent("").await;
    agent
        .register_tool(tool("() => new Promise(() => {})", ", timeoutMs: 60000"))
        .unwrap();
    let running = JsFuture::from(agent.send("goblin".into()));
    let stop = async {
        gloo_sleep(20).await;
        agent.abort();
    };
    let (outcome, ()) = futures::join!(running, stop);
    assert_eq!(text(&outcome.unwrap(), "type"), "aborted");
}

#[wasm_bindgen_test]
async fn bad_input_is_refused_with_every_problem_named() {
    let error = create_agent(js(
        r#"{ name: "two words", maxSteps: 99, model: { url: "ftp://x", model: "" } }"#,
    ))
    .await
    .err()
    .map(|e| text(&e, "message"))
    .unwrap();
    for path in ["config.name", "config.maxSteps", "config.model"] {
        assert!(error.contains(path), "{path} in {error}");
    }
    let character = create_agent(js(r#"{ character: { identity: { name: 3 } } }"#))
        .await
        .err()
        .map(|e| text(&e, "message"))
        .unwrap();
    assert!(character.contains("character file"), "{character}");
    let missing = create_agent(js(r#"{ character: "/no-such-character.json" }"#))
        .await
        .err()
        .map(|e| text(&e, "message"))
        .unwrap();
    assert!(
        missing.contains("/no-such-character.json cannot be read: the server answered 404"),
        "{missing}"
    );
    let agent = agent("").await;
    let tool_error = agent
        .register_tool(js(r#"{ name: "x y", handler: 5 }"#))
        .unwrap_err();
    let message = text(&tool_error, "message");
    assert!(
        message.contains("tool.name") && message.contains("tool.description"),
        "{message}"
    );
    let empty = settle(agent.send("   ".into())).await.unwrap_err();
    assert_eq!(empty, "the message is empty");
}

#[wasm_bindgen_test]
async fn state_saves_and_loads_and_two_agents_keep_apart() {
    let storage = web_sys::window().unwrap().local_storage().unwrap().unwrap();
    storage.clear().unwrap();
    let config = |name: &str| {
        js(&format!(
            r#"{{ name: "{name}", model: {{ fallback: "I am {name}.", rules: [] }} }}"#
        ))
    };
    let a = create_agent(config("alba"))
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    let b = create_agent(config("bran"))
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    settle(a.send("hello a".into())).await.unwrap();
    settle(b.send("hello b".into())).await.unwrap();
    let keys: Vec<String> = (0..storage.length().unwrap())
        .filter_map(|i| storage.key(i).unwrap())
        .collect();
    assert!(
        keys.iter().any(|k| k.starts_with("familiar.agent.alba.")),
        "{keys:?}"
    );
    assert!(
        keys.iter().any(|k| k.starts_with("familiar.agent.bran.")),
        "{keys:?}"
    );
    // A new agent of the same name finds its conversation.
    let again = create_agent(config("alba"))
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    let conversation = JSON::stringify(&again.conversation(None))
        .unwrap()
        .as_string()
        .unwrap();
    assert!(conversation.contains("hello a") && !conversation.contains("hello b"));
    // saveState / loadState carry it to an agent kept in memory.
    let state = a.save_state();
    let copy = agent("").await;
    copy.load_state(state).unwrap();
    let copied = JSON::stringify(&copy.conversation(None))
        .unwrap()
        .as_string()
        .unwrap();
    assert!(copied.contains("hello a"), "{copied}");
    assert!(copy.load_state(js("{ version: 1 }")).is_err());
    a.destroy();
    assert!(settle(a.send("still there?".into())).await.is_err());
}

#[wasm_bindgen_test]
async fn the_widget_mounts_into_an_element_shows_the_conversation_and_unmounts() {
    let document = web_sys::window().unwrap().document().unwrap();
    let host: web_sys::HtmlElement = document.create_element("div").unwrap().unchecked_into();
    document.body().unwrap().append_child(&host).unwrap();
    let agent = agent("").await;
    agent
        .register_tool(tool("a => ({ spawned: a.kind })", ""))
        .unwrap();
    agent.mount(host.clone()).unwrap();
    settle(agent.send("goblin".into())).await.unwrap();
    gloo_sleep(30).await;
    let text = host.text_content().unwrap_or_default();
    assert!(
        text.contains("goblin") && text.contains("A goblin appears."),
        "{text}"
    );
    assert!(
        host.query_selector("textarea").unwrap().is_some(),
        "a composer"
    );
    agent.unmount();
    assert_eq!(host.child_element_count(), 0);
    // The agent goes on without its widget.
    let outcome = settle(agent.send("hello".into())).await.unwrap();
    assert_eq!(text_of(&outcome), "Nothing to do.");
    host.remove();
}

fn text_of(outcome: &JsValue) -> String {
    text(outcome, "text")
}

/// The last turn of the open conversation, as JSON.
fn last_turn(agent: &FamiliarAgent) -> serde_json::Value {
    let conversation = JSON::stringify(&agent.conversation(None))
        .unwrap()
        .as_string()
        .unwrap();
    let conversation: serde_json::Value = serde_json::from_str(&conversation).unwrap();
    conversation["interactions"]
        .as_array()
        .and_then(|i| i.last())
        .cloned()
        .unwrap_or_default()
}

#[wasm_bindgen_test]
async fn telemetry_secrets_are_masked_in_every_span_even_with_content_on() {
    const SECRET: &str = "tavern-session-7f3a";
    js("window.spanTexts = []");
    let agent = agent(&format!(
        r#", telemetry: {{ content: true, secrets: ["{SECRET}"],
              onSpan: (span) => window.spanTexts.push(JSON.stringify(span)) }}"#
    ))
    .await;
    agent
        .register_tool(js(&format!(
            r#"{{ name: "look", description: "Looks around.", kind: "data",
                  parameters: {{ type: "object", properties: {{}} }},
                  handler: () => ({{ sight: "a goblin holding {SECRET}" }}) }}"#
        )))
        .unwrap();
    // The rules call `look`, whose result and the answer quoting it hold the secret.
    let outcome = settle(agent.send(format!("look at {SECRET}")))
        .await
        .unwrap();
    assert_eq!(
        text(&outcome, "text"),
        format!("I see a goblin holding {SECRET}.")
    );
    let spans: Vec<String> = Array::from(&js("window.spanTexts"))
        .iter()
        .filter_map(|s| s.as_string())
        .collect();
    assert!(
        spans.iter().any(|s| s.contains("execute_tool"))
            && spans.iter().any(|s| s.contains("[masked]")),
        "the tool's span, its content masked: {spans:?}"
    );
    assert!(
        spans.iter().all(|s| !s.contains(SECRET)),
        "the secret left in a span: {spans:?}"
    );
    let short = create_agent(js(
        r#"{ name: "npc", persist: false, telemetry: { onSpan: () => {}, secrets: ["abc"] } }"#,
    ))
    .await
    .err()
    .map(|e| text(&e, "message"))
    .unwrap();
    assert!(
        short.contains("config.telemetry.secrets[0] has 3 characters"),
        "{short}"
    );
}
