//! Agents the host composes: a delegate routing by `@name` and command and switching
//! back, and a sub-agent offered to the main agent as a data tool.

use super::*;

/// A composition a host builds: a keeper (the main agent) with a scout reached by
/// `@scout`, a smith by `/forge`, and a sage offered to the keeper as a data tool;
/// each answers from a rules model of its own, so every answer says who gave it.
async fn keep() -> FamiliarAgent {
    let config = js(r#"{
        name: "keeper", persist: false, goalCheck: false,
        model: { fallback: "Keeper: welcome to the keep.", rules: [
            { keywords: ["lore"], tool: "sage", arguments: { request: "{message}" }, answer: "I asked the sage." }
        ] },
        agents: [
            { name: "scout", description: "Scouts the road", instructions: "You scout.",
              model: { fallback: "Scout: the road is clear.", rules: [] } },
            { name: "smith", description: "Forges blades", instructions: "You forge.",
              model: { fallback: "Smith: the blade is ready.", rules: [] } },
            { name: "sage", description: "Knows the old lore", instructions: "You know lore.",
              model: { fallback: "Sage: dragons sleep through winter.", rules: [] }, tool: "data" }
        ],
        commands: { forge: "smith" }
    }"#);
    create_agent(config)
        .await
        .map_err(|e| format!("{e:?}"))
        .unwrap()
}

#[wasm_bindgen_test]
async fn a_host_built_delegate_routes_at_names_and_commands_and_switches_back() {
    let keep = keep().await;
    // Each message, the answer it gets and the agent the turn records.
    for (message, answer, agent) in [
        ("hello", "Keeper: welcome to the keep.", "keeper"),
        (
            "@scout what is ahead?",
            "Scout: the road is clear.",
            "scout",
        ),
        // `@scout` switched this conversation: plain messages stay with it.
        ("and behind us?", "Scout: the road is clear.", "scout"),
        // A command reaches its agent for that message only.
        ("/forge a sword", "Smith: the blade is ready.", "smith"),
        ("anything else?", "Scout: the road is clear.", "scout"),
        // The main agent's name switches back.
        ("@keeper thanks", "Keeper: welcome to the keep.", "keeper"),
        ("goodbye", "Keeper: welcome to the keep.", "keeper"),
    ] {
        let outcome = settle(keep.send(message.into())).await.unwrap();
        assert_eq!(text(&outcome, "type"), "answered", "{message}");
        assert_eq!(text(&outcome, "text"), answer, "{message}");
        let turn = last_turn(&keep);
        assert_eq!(turn["agent"], agent, "{message}: {turn}");
        assert_eq!(turn["input"], message, "{message}: {turn}");
    }
    // `@name` alone only switches.
    let outcome = settle(keep.send("@smith".into())).await.unwrap();
    assert_eq!(text(&outcome, "text"), "You are now talking to @smith.");
    let outcome = settle(keep.send("ready?".into())).await.unwrap();
    assert_eq!(text(&outcome, "text"), "Smith: the blade is ready.");
    // An unknown name or command is the main agent's chit-chat, and switches nothing.
    let outcome = settle(keep.send("@nobody hi".into())).await.unwrap();
    assert_eq!(text(&outcome, "text"), "Keeper: welcome to the keep.");
    let outcome = settle(keep.send("/unknown hi".into())).await.unwrap();
    assert_eq!(text(&outcome, "text"), "Keeper: welcome to the keep.");
    let outcome = settle(keep.send("still there?".into())).await.unwrap();
    assert_eq!(text(&outcome, "text"), "Smith: the blade is ready.");
}

#[wasm_bindgen_test]
async fn a_sub_agent_offered_as_a_data_tool_answers_the_main_agents_call() {
    let keep = keep().await;
    js("window.keepTools = []");
    let listener: Function = js("e => window.keepTools.push(e.call.name)").unchecked_into();
    keep.on("tool_started", listener).unwrap();
    let outcome = settle(keep.send("what is the lore of dragons?".into()))
        .await
        .unwrap();
    assert_eq!(text(&outcome, "type"), "answered");
    assert_eq!(text(&outcome, "text"), "I asked the sage.");
    let turn = last_turn(&keep);
    assert_eq!(turn["agent"], "keeper", "{turn}");
    let calls: Vec<&serde_json::Value> = turn["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "tool_call")
        .collect();
    assert_eq!(calls.len(), 1, "{turn}");
    let call = calls[0];
    assert_eq!(call["call"]["name"], "sage", "{call}");
    assert_eq!(call["kind"], "data", "{call}");
    let arguments: serde_json::Value =
        serde_json::from_str(call["call"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments["request"], "what is the lore of dragons?");
    // The result is the sage's own answer, from its own model.
    assert_eq!(
        call["result"]["ok"], "Sage: dragons sleep through winter.",
        "{call}"
    );
    let tools: Vec<String> = Array::from(&js("window.keepTools"))
        .iter()
        .filter_map(|s| s.as_string())
        .collect();
    assert_eq!(tools, ["sage"]);
}
