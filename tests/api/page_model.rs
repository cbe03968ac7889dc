//! A model the page gives (its `respond`): its answers drive a turn, a supervised one
//! reporting its stages included, and one that throws or answers nonsense fails the run
//! saying why.

use super::*;

#[wasm_bindgen_test]
async fn a_page_model_answers_through_respond_and_a_supervised_turn_reports_its_stages() {
    js("window.asked = [], window.stages = []");
    let config = js(r#"{
        name: "copilot", persist: false, supervisor: true,
        model: { respond: async (request) => {
            window.asked.push(request);
            const stage = request.responseFormat && request.responseFormat.name;
            if (stage === "Complexity") return '{"level": "SIMPLE", "reason": "one monster"}';
            if (stage === "TaskPlan") return '{"tasks": ["Spawn a goblin"]}';
            if (stage === "Judgement") return '{"done": true, "summary": "a goblin stands"}';
            const last = request.messages[request.messages.length - 1];
            if (last.role === "tool") return { text: "Spawned a " + JSON.parse(last.content).spawned + "." };
            return { toolCalls: [{ name: "spawn", arguments: { kind: "goblin" } }] };
        } }
    }"#);
    let agent = create_agent(config)
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap();
    agent
        .register_tool(tool("a => ({ spawned: a.kind })", ""))
        .unwrap();
    let stages: Function = js("e => window.stages.push(e.stage)").unchecked_into();
    agent.on("supervisor", stages).unwrap();
    let outcome = settle(agent.send("a goblin, please".into())).await.unwrap();
    assert_eq!(text(&outcome, "text"), "Spawned a goblin.");
    let stages: Vec<String> = Array::from(&js("window.stages"))
        .iter()
        .filter_map(|s| s.as_string())
        .collect();
    assert_eq!(
        stages,
        [
            "analysing",
            "assessed",
            "planning",
            "planned",
            "executing",
            "deciding",
            "decided"
        ]
    );
    let first = js("window.asked[0]");
    assert_eq!(text(&first, "responseFormat.name"), "Complexity");
    let executor = js("window.asked[2]");
    assert_eq!(text(&executor, "tools.0.name"), "spawn");
    assert!(
        text(&executor, "messages.0.content")
            .starts_with("a goblin, please\n\nThe whole plan:\n1. Spawn a goblin")
    );
    let decider = js("window.asked[4]");
    assert_eq!(text(&decider, "responseFormat.name"), "Judgement");
    assert!(
        text(&decider, "messages.0.content")
            .contains("- spawn: succeeded: {\"spawned\":\"goblin\"}")
    );
}

#[wasm_bindgen_test]
async fn a_page_model_that_throws_or_answers_nonsense_fails_the_run_saying_why() {
    for (respond, expected) in [
        (
            "() => { throw new Error('planner broke') }",
            "respond threw: planner broke",
        ),
        ("() => 42", "respond must return text or {text, toolCalls"),
        (
            "() => ({ toolCalls: [{ arguments: {} }] })",
            "toolCalls[0] has no name",
        ),
    ] {
        let config = js(&format!(
            "{{ name: 'broken', persist: false, model: {{ respond: {respond} }} }}"
        ));
        let agent = create_agent(config)
            .await
            .map_err(|e| format!("{e:?}"))
            .unwrap();
        let outcome = settle(agent.send("anything".into())).await.unwrap();
        assert_eq!(text(&outcome, "type"), "failed", "{respond}");
        assert!(
            text(&outcome, "error").contains(expected),
            "{respond}: {}",
            text(&outcome, "error")
        );
    }
}
