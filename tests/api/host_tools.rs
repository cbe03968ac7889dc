//! Host tools whose handlers are JavaScript: a result changes the page, every way a
//! handler fails becomes an error the model reads, a result after the timeout or for a
//! repeated request id changes nothing, and arguments that break the schema never reach
//! the handler.

use super::*;

#[wasm_bindgen_test]
async fn a_host_tool_changes_the_page_and_the_answer_uses_its_result() {
    let agent = agent("").await;
    js("window.spawned = []");
    agent
        .register_tool(tool(
            "(args, ctx) => { window.spawned.push([args.kind, ctx.requestId]); return { spawned: args.kind }; }",
            "",
        ))
        .unwrap();
    let outcome = settle(agent.send("a goblin!".into())).await.unwrap();
    assert_eq!(text(&outcome, "type"), "answered");
    assert_eq!(text(&outcome, "text"), "A goblin appears.");
    let spawned: Array = js("window.spawned").unchecked_into();
    assert_eq!(spawned.length(), 1);
    let request_id = text(&spawned.get(0), "1");
    assert!(
        request_id.starts_with("familiar.agent.npc-c"),
        "{request_id}"
    );
}

async fn failing(handler: &str, timeout_ms: u32) -> String {
    let agent = agent("").await;
    agent
        .register_tool(tool(handler, &format!(", timeoutMs: {timeout_ms}")))
        .unwrap();
    settle(agent.send("goblin".into())).await.unwrap();
    tool_error(&agent)
}

#[wasm_bindgen_test]
async fn every_way_a_handler_fails_becomes_an_error_the_model_reads() {
    let threw = failing("() => { throw new Error('no monsters today') }", 1000).await;
    assert_eq!(
        threw,
        "`spawn` failed: the handler threw: no monsters today"
    );
    let rejected = failing(
        "async () => { throw new Error('the cave is locked') }",
        1000,
    )
    .await;
    assert_eq!(
        rejected,
        "`spawn` failed: the handler rejected: the cave is locked"
    );
    let hung = failing("() => new Promise(() => {})", 50).await;
    assert_eq!(
        hung,
        "`spawn` took longer than 50 ms and was stopped; whether it took effect is unknown, so check before doing it again"
    );
    let function = failing("() => () => 1", 1000).await;
    assert!(
        function.starts_with("`spawn` failed: the handler's result is not JSON"),
        "{function}"
    );
    let big = failing("() => 10n", 1000).await;
    assert!(
        big.starts_with("`spawn` failed: the handler's result is not JSON"),
        "{big}"
    );
    let cycle = failing("() => { const a = {}; a.a = a; return a; }", 1000).await;
    assert!(
        cycle.starts_with("`spawn` failed: the handler's result is not JSON"),
        "{cycle}"
    );
}

#[wasm_bindgen_test]
async fn a_result_after_the_timeout_changes_nothing() {
    js("window.late = null");
    let agent = agent("").await;
    agent
        .register_tool(tool(
            "() => new Promise(r => setTimeout(() => { window.late = 'resolved'; r({ spawned: 'late goblin' }) }, 150))",
            ", timeoutMs: 30",
        ))
        .unwrap();
    js("window.told = 0");
    let counter: Function = js("() => { window.told += 1 }").unchecked_into();
    agent.on("*", counter).unwrap();
    settle(agent.send("goblin".into())).await.unwrap();
    assert_eq!(
        tool_error(&agent),
        "`spawn` took longer than 30 ms and was stopped; whether it took effect is unknown, so check before doing it again"
    );
    let state = JSON::stringify(&agent.save_state()).unwrap();
    let told = js("window.told").as_f64();
    assert!(told > Some(0.0), "the listener hears the run");
    gloo_sleep(250).await;
    assert_eq!(js("window.late").as_string().as_deref(), Some("resolved"));
    assert_eq!(
        JSON::stringify(&agent.save_state()).unwrap(),
        state,
        "the late result changed nothing the agent keeps"
    );
    assert_eq!(
        js("window.told").as_f64(),
        told,
        "and told its listeners nothing"
    );
}

#[wasm_bindgen_test]
async fn arguments_that_break_the_schema_never_reach_the_handler() {
    let agent = create_agent(js(r#"{ persist: false, goalCheck: false,
        model: { rules: [{ keywords: ["goblin"], tool: "spawn", arguments: { kind: 7 }, answer: "ok" }] } }"#))
    .await
    .map_err(|e| format!("{e:?}"))
    .unwrap();
    js("window.reached = false");
    agent
        .register_tool(tool("() => { window.reached = true; return {} }", ""))
        .unwrap();
    settle(agent.send("goblin".into())).await.unwrap();
    assert_eq!(js("window.reached").as_bool(), Some(false));
    assert!(
        tool_error(&agent).contains("`kind` must be a string"),
        "{}",
        tool_error(&agent)
    );
}

#[wasm_bindgen_test]
async fn a_repeated_request_id_calls_the_handler_once() {
    use familiar::app::{HostTool, HostTools};
    use familiar::run::driver::Host;
    js("window.calls = 0");
    let handler = familiar::js_api::function_handler(
        js("async a => { window.calls++; return { n: window.calls } }").unchecked_into(),
    );
    let host = HostTools::new();
    let spec = familiar::llm::ToolSpec {
        name: "count".into(),
        description: "Counts.".into(),
        parameters: serde_json::json!({"type": "object"}),
    };
    let tool = HostTool {
        spec,
        kind: familiar::tool::ToolKind::Action,
        approval: familiar::tool::Approval::Auto,
        timeout_ms: 1_000,
        author: None,
        consequential: Vec::new(),
    };
    host.register(tool, handler).unwrap();
    let call = familiar::llm::message::ToolCall {
        id: "c1".into(),
        name: "count".into(),
        arguments: "{}".into(),
    };
    let first = host.call("run/1/c1", &call).await;
    let again = host.call("run/1/c1", &call).await;
    assert_eq!(first, Ok(serde_json::json!({"n": 1})));
    assert_eq!(again, first);
    assert_eq!(js("window.calls").as_f64(), Some(1.0));
}
