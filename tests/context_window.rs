//! A run fits its model's context window: the estimate against real token counts, the
//! order of the trims, what is never trimmed, the refusal when even this turn cannot
//! fit, and the one retry after a server's refusal for length.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::rc::Rc;

use familiar::base::clock::ManualClock;
use familiar::llm::message::{Message, ToolCall};
use familiar::llm::scripted::ScriptedModel;
use familiar::llm::window::{
    ContextWindow, Overflow, WindowSource, estimate_request, estimate_tokens,
};
use familiar::llm::{ChatRequest, ChatResponse, DeltaSink, Llm, LlmError, ToolSpec};
use familiar::run::driver::{Seams, Stop, drive};
use familiar::run::event::Event;
use familiar::run::{AgentRun, Boundaries, NextStep, Observation, Outcome, Trim};
use familiar::tool::{Approval, Author, NoArgs, RunsOn, ToolInfo, ToolKind, ToolRegistry};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

/// Real token counts of SmolLM2-135M's tokenizer (llama-cpp-python's `/extras/tokenize`
/// on the server the test command starts), recorded by `scripts/record-tokens.py`.
const RECORDED: &str = include_str!("fixtures/tokens/smollm2.json");

#[test]
fn the_estimate_is_never_below_the_real_count_and_not_wastefully_above() {
    let recorded: Value = serde_json::from_str(RECORDED).unwrap();
    let samples = recorded["samples"].as_array().unwrap();
    assert!(samples.len() >= 10);
    let (mut estimated, mut real) = (0, 0);
    for sample in samples {
        let text = sample["text"].as_str().unwrap();
        let tokens = sample["tokens"].as_u64().unwrap() as usize;
        let estimate = estimate_tokens(text);
        println!("{estimate:>4} estimated, {tokens:>4} real: {text:?}");
        assert!(
            estimate >= tokens,
            "{estimate} estimated < {tokens} real for {text:?}"
        );
        estimated += estimate;
        real += tokens;
    }
    // Conservative, yet a window is not wasted: at most half again the real count
    // over all samples.
    assert!(
        estimated * 2 <= real * 3,
        "{estimated} estimated for {real} real"
    );
}

#[test]
fn the_estimate_of_a_whole_request_covers_what_the_server_counted() {
    let recorded: Value = serde_json::from_str(RECORDED).unwrap();
    for request in recorded["requests"].as_array().unwrap() {
        let chat: ChatRequest = serde_json::from_value(request["request"].clone()).unwrap();
        let real = request["prompt_tokens"].as_u64().unwrap() as usize;
        let estimate = estimate_request(&chat);
        println!("{estimate} estimated, {real} real: {}", request["name"]);
        assert!(
            estimate >= real && estimate * 2 <= real * 3,
            "{estimate} estimated for {real} real ({})",
            request["name"]
        );
    }
}

fn tool(name: &str, kind: ToolKind, words: usize) -> ToolInfo {
    let description = format!(
        "Looks after {name}. {}",
        "It explains itself at length. ".repeat(words)
    );
    ToolInfo {
        spec: ToolSpec {
            name: name.into(),
            description,
            parameters: json!({
                "type": "object",
                "properties": {
                    "target": {"type": "string", "description": "Which one, by its full name as the world knows it.", "maxLength": 80},
                    "amount": {"type": "integer", "description": "How many, at least one.", "minimum": 1}
                },
                "required": ["target"]
            }),
        },
        kind,
        approval: Approval::Auto,
        author: Author::default(),
        consequential: Vec::new(),
        runs_on: RunsOn::Page,
        timeout_ms: 1_000,
    }
}

fn catalogue() -> Vec<ToolInfo> {
    let mut tools: Vec<ToolInfo> = (0..6)
        .map(|n| tool(&format!("look_{n}"), ToolKind::Data, 4))
        .collect();
    tools.push(tool("give", ToolKind::Action, 4));
    tools.push(tool("attack", ToolKind::Action, 4));
    tools
}

/// Ten earlier exchanges and a pinned fact.
fn history() -> Vec<Message> {
    let mut history = vec![Message::system("Pinned memory:\n- The ale is cold.")];
    for n in 1..=10 {
        history.push(Message::user(format!(
            "question {n}: {}",
            "where is it? ".repeat(10)
        )));
        history.push(Message::assistant(
            format!("answer {n}: {}", "over there. ".repeat(10)),
            Vec::new(),
        ));
    }
    history
}

fn window(tokens: u32) -> ContextWindow {
    ContextWindow::new(tokens, Some(100), WindowSource::Configured)
}

/// A run that looked something up (a long result, read by the model at its next
/// turn) and is about to reason again.
fn run_after_a_long_look_up() -> AgentRun {
    let observation = Observation {
        boundaries: Boundaries {
            allowed_actions: Some(vec!["give".into()]),
            ..Boundaries::default()
        },
        environment: None,
        ..Observation::chat("Who has the key?")
    };
    let mut run = AgentRun::new(
        "You are the innkeeper.",
        history(),
        observation,
        catalogue(),
    );
    for n in 0..2 {
        let call = ToolCall {
            id: format!("call_{n}").into(),
            name: "look_0".into(),
            arguments: "{}".into(),
        };
        run.model_responded(ChatResponse {
            text: String::new(),
            reasoning: String::new(),
            tool_calls: vec![call],
            finish: familiar::llm::FinishReason::ToolCalls,
            usage: None,
            served: Default::default(),
        });
        let NextStep::CallTools(calls) = run.next_step() else {
            panic!("no look-up");
        };
        run.tools_returned(vec![familiar::run::ToolResult {
            call_id: calls[0].call.id.clone(),
            result: Ok(json!({ "rows": "the key, the cellar, the barrel ".repeat(60) })),
            duration_ms: 1,
            at_ms: 0,
            usage: Default::default(),
        }]);
    }
    run.take_events();
    run
}

fn next_call(run: &AgentRun) -> familiar::run::ModelCall {
    match run.next_step() {
        NextStep::CallModel(call) => call,
        other => panic!("not a model call: {other:?}"),
    }
}

fn trims(events: &[Event]) -> Vec<Trim> {
    events
        .iter()
        .find_map(|e| match e {
            Event::Fitted(fit) => Some(fit.trims.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[test]
fn a_request_that_fits_goes_as_it_is_and_nothing_is_reported() {
    let mut run = run_after_a_long_look_up().with_context_window(window(100_000));
    let call = next_call(&run);
    let fitted = run.fit(call.clone(), None).unwrap();
    assert_eq!(fitted, call);
    assert!(run.take_events().is_empty());
}

/// The reasoning call's answer is capped as seed 000's reason node caps it (2000
/// tokens), or at what the agent says; and within what the model's window leaves after
/// the prompt, so prompt and cap together never pass the window.
#[test]
fn the_reasoning_calls_answer_is_capped_at_the_seeds_2000_tokens_within_the_window() {
    let run = run_after_a_long_look_up();
    assert_eq!(next_call(&run).request.max_tokens, Some(2_000));
    let run = run_after_a_long_look_up().with_reason_tokens(300);
    assert_eq!(next_call(&run).request.max_tokens, Some(300));
    let mut run = run_after_a_long_look_up().with_context_window(window(100_000));
    let fitted = run.fit(next_call(&run), None).unwrap();
    assert_eq!(fitted.request.max_tokens, Some(2_000), "room enough");
    let full = estimate_request(&next_call(&run).request);
    let tight = u32::try_from(full).unwrap() + 600;
    let mut run = run_after_a_long_look_up().with_context_window(window(tight));
    let fitted = run.fit(next_call(&run), None).unwrap();
    let cap = fitted.request.max_tokens.unwrap();
    let prompt = u32::try_from(estimate_request(&fitted.request)).unwrap();
    assert!((100..2_000).contains(&cap), "{cap}");
    assert!(prompt + cap <= tight, "{prompt} + {cap} within {tight}");
}

/// A model that reasons first may spend the whole cap before it answers: the run fails
/// saying so and naming the setting to raise, never ending on an empty answer.
#[test]
fn an_answer_cut_at_the_cap_before_it_said_anything_fails_naming_the_setting() {
    let mut run = run_after_a_long_look_up().with_reason_tokens(300);
    next_call(&run);
    run.model_responded(ChatResponse {
        text: " ".into(),
        reasoning: "Let me think about the key. ".repeat(40),
        tool_calls: Vec::new(),
        finish: familiar::llm::FinishReason::Length,
        usage: None,
        served: Default::default(),
    });
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("not failed: {:?}", run.outcome());
    };
    assert!(error.contains("cut at 300 tokens"), "{error}");
    assert!(error.contains("reasonMaxTokens"), "{error}");
    // An answer cut short that said something is still an answer.
    let mut run = run_after_a_long_look_up();
    next_call(&run);
    run.model_responded(ChatResponse {
        text: "The innkeeper has the key".into(),
        reasoning: String::new(),
        tool_calls: Vec::new(),
        finish: familiar::llm::FinishReason::Length,
        usage: None,
        served: Default::default(),
    });
    assert!(
        !matches!(run.outcome(), Some(Outcome::Failed { .. })),
        "{:?}",
        run.outcome()
    );
}

#[test]
fn the_trims_come_in_order_and_stop_as_soon_as_the_request_fits() {
    let run = run_after_a_long_look_up();
    let full = estimate_request(&next_call(&run).request);
    // Each window a little tighter: first the schemas only, then read results too,
    // then the oldest turns as well.
    let mut seen = Vec::new();
    for tokens in [full - 150, full - 900, full - 1_300] {
        let mut run = run.clone().with_context_window(window(tokens as u32 + 100));
        let fitted = run.fit(next_call(&run), None).unwrap();
        let room = tokens;
        assert!(estimate_request(&fitted.request) <= room);
        let kinds: Vec<&'static str> = trims(&run.take_events())
            .iter()
            .map(|t| match t {
                Trim::ToolsNotOffered { .. } => "not offered",
                Trim::SchemasShortened { .. } => "schemas",
                Trim::ResultsCut { .. } => "results",
                Trim::TurnsDropped { .. } => "turns",
                Trim::ToolsLeftOut { .. } => "tools",
                Trim::Refused { .. } => "refused",
            })
            .collect();
        seen.push(kinds);
    }
    assert_eq!(
        seen,
        [
            vec!["not offered", "schemas"],
            vec!["not offered", "schemas", "results"],
            vec!["not offered", "schemas", "results", "turns"],
        ]
    );
}

#[test]
fn the_pinned_facts_and_this_turn_are_never_left_out() {
    let run = run_after_a_long_look_up();
    let before = next_call(&run).request;
    let turn: Vec<Message> = before.messages[21..].to_vec();
    let mut tight = run.clone().with_context_window(window(1_500));
    let fitted = tight.fit(next_call(&tight), None).unwrap().request;
    let messages = &fitted.messages;
    assert_eq!(messages[0].content, "Pinned memory:\n- The ale is cold.");
    assert!(
        fitted.system.contains("left out"),
        "a note says turns were left out"
    );
    // This turn's messages are all there, in order: the question, both look-ups, and
    // the newest result whole (only the result already read is cut).
    let tail = &messages[messages.len() - turn.len()..];
    assert_eq!(tail[0], turn[0]);
    assert_eq!(tail.last(), turn.last());
    assert!(tail[2].content.contains("already read"));
    assert_eq!(
        tail.iter().map(|m| m.role).collect::<Vec<_>>(),
        turn.iter().map(|m| m.role).collect::<Vec<_>>()
    );
    // The newest earlier exchange survives longer than the oldest.
    assert!(
        !messages
            .iter()
            .any(|m| m.content.starts_with("question 1:"))
    );
    let Some(Event::Fitted(fit)) = tight.take_events().pop() else {
        panic!("no fit reported");
    };
    assert!(fit.after <= fit.room && fit.before > fit.room);
}

#[test]
fn when_even_the_shortest_schemas_do_not_fit_the_tools_this_turn_names_are_kept() {
    // Many tools, a short question, and a window that holds the question and a few
    // schemas at their shortest: a small model's first message.
    let mut catalogue: Vec<ToolInfo> = (0..30)
        .map(|n| tool(&format!("look_{n}"), ToolKind::Data, 1))
        .collect();
    catalogue.push(tool("attack", ToolKind::Action, 1));
    let run = AgentRun::new(
        "You guard.",
        Vec::new(),
        Observation::chat("Attack the goblin!"),
        catalogue,
    );
    let call = next_call(&run);
    let question = estimate_request(&ChatRequest {
        tools: Rc::from([]),
        ..call.request.clone()
    });
    let mut tight = run.with_context_window(window(question as u32 + 100 + 60));
    let fitted = tight.fit(next_call(&tight), None).unwrap().request;
    let names: Vec<&str> = fitted.tools.iter().map(|t| t.name.as_str()).collect();
    assert!(names.contains(&"attack"), "{names:?}");
    assert!(names.len() < 31, "{names:?}");
    let trims = trims(&tight.take_events());
    let Some(Trim::ToolsLeftOut { count, kept, .. }) = trims.last() else {
        panic!("{trims:?}");
    };
    assert_eq!((*count + *kept, *kept), (31, names.len()));
}

#[test]
fn when_even_this_turn_cannot_fit_the_run_fails_naming_the_window_and_the_parts() {
    let mut run = run_after_a_long_look_up().with_context_window(window(400));
    assert_eq!(run.fit(next_call(&run), None), None);
    let Some(Outcome::Failed { error }) = run.outcome() else {
        panic!("not failed: {:?}", run.outcome());
    };
    assert!(error.contains("context window of 400 tokens"), "{error}");
    assert!(error.contains("100 kept for the answer"), "{error}");
    assert!(error.contains("this turn's messages"), "{error}");
    assert!(error.contains("tool schemas"), "{error}");
    assert!(matches!(run.take_events().last(), Some(Event::Done(_))));
}

/// A scripted model with a window, like the proxy client.
struct Windowed {
    script: ScriptedModel,
    window: ContextWindow,
}

impl Llm for Windowed {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.script.chat(request, sink)
    }

    fn context_window(&self) -> LocalBoxFuture<'_, Option<ContextWindow>> {
        Box::pin(async { Some(self.window) })
    }
}

fn refusal() -> LlmError {
    LlmError::Status {
        status: 400,
        message: "This model's maximum context length is 2048 tokens. However, you requested \
                  3000 tokens (2904 in the messages, 96 in the completion). Please reduce the \
                  length of the messages or completion. [context_length_exceeded]"
            .into(),
    }
}

fn drive_with(llm: &Windowed) -> (AgentRun, Stop, Vec<Event>) {
    let tools = ToolRegistry::new();
    let clock = ManualClock::starting_at(0);
    let seams = Seams {
        llm,
        tools: &tools,
        clock: &clock,
        host: None,
        checkpoint: None,
        relay: None,
    };
    let mut run = AgentRun::new(
        "You are the innkeeper.",
        history(),
        Observation::chat("Hello?"),
        Vec::new(),
    );
    let mut events = Vec::new();
    let stop = block_on(drive(&mut run, &seams, &mut |e| events.push(e)));
    (run, stop, events)
}

#[test]
fn a_refusal_for_length_is_retried_once_trimmed_to_what_the_server_said() {
    let llm = Windowed {
        script: ScriptedModel::new(),
        window: ContextWindow::new(8_192, Some(96), WindowSource::Default),
    };
    llm.script.push(Err(refusal()));
    llm.script.push_text("Welcome!");
    let (run, stop, events) = drive_with(&llm);
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "Welcome!".into()
        })
    );
    let requests = llm.script.requests();
    assert_eq!(requests.len(), 2);
    // The server counted 2,904 prompt tokens where we estimated fewer: the retry
    // counts as it does, and fits its 2,048 less the answer's 96.
    let first = estimate_request(&requests[0]);
    let window = run.context_window().copied().unwrap();
    assert_eq!(window.tokens, 2_048);
    assert!(window.scaled(estimate_request(&requests[1])) <= 2_048 - 96);
    assert!(requests[1].messages.len() < requests[0].messages.len());
    assert!(
        window.scaled(first) > 2_904,
        "{first} scaled by {}",
        window.scale
    );
    let Some(Trim::Refused { window: said, .. }) = trims(&events).first().cloned() else {
        panic!("the refusal is not reported: {events:?}");
    };
    assert_eq!(said, Some(2_048));
}

#[test]
fn a_second_refusal_ends_the_run_instead_of_looping() {
    let llm = Windowed {
        script: ScriptedModel::new(),
        window: ContextWindow::new(8_192, Some(96), WindowSource::Default),
    };
    for _ in 0..5 {
        llm.script.push(Err(refusal()));
    }
    let (_, stop, _) = drive_with(&llm);
    let Stop::Done(Outcome::Failed { error }) = stop else {
        panic!("not failed: {stop:?}");
    };
    assert!(error.contains("maximum context length is 2048"), "{error}");
    assert_eq!(llm.script.requests().len(), 2, "one retry, no more");
}

#[test]
fn other_errors_are_not_retried_as_refusals_for_length() {
    let llm = Windowed {
        script: ScriptedModel::new(),
        window: ContextWindow::new(8_192, Some(96), WindowSource::Default),
    };
    llm.script.push(Err(LlmError::Status {
        status: 400,
        message: "unknown model".into(),
    }));
    llm.script.push_text("never");
    let (_, stop, _) = drive_with(&llm);
    assert!(matches!(stop, Stop::Done(Outcome::Failed { .. })));
    assert_eq!(llm.script.requests().len(), 1);
    assert_eq!(Overflow::read(&refusal()).unwrap().prompt, Some(2_904));
}

#[test]
fn a_model_with_no_window_is_never_trimmed() {
    let mut run = run_after_a_long_look_up();
    let call = next_call(&run);
    assert_eq!(run.fit(call.clone(), None), Some(call));
    let _ = NoArgs {};
}

/// The demo agent's tools as built natively: the clock, memory and the world's tools
/// (the page's title is browser-only).
fn demo_tools() -> ToolRegistry {
    use familiar::app::{Participant, register_memory};
    use familiar::store::Store;
    use familiar::tool::CurrentTime;
    let clock = Rc::new(ManualClock::starting_at(0));
    let world: Rc<dyn Store> = Rc::new(familiar::world::local(clock.clone(), None).unwrap());
    let who = Participant::local();
    let mut tools = ToolRegistry::new();
    tools.register(CurrentTime::new(clock.clone()));
    register_memory(&mut tools, &world, &who, clock);
    familiar::world::register_tools(&mut tools, world, who.me);
    tools
}

/// `demo::SYSTEM_PROMPT` (the demo module is browser-only).
const DEMO_PROMPT: &str = "You are Familiar, an assistant that lives in the user's \
    browser tab. Use the tools to read the page and the clock, and to remember, recall and \
    forget facts; answer briefly, in markdown when it helps.";

fn demo_request(input: &str) -> ChatRequest {
    let run = AgentRun::new(
        DEMO_PROMPT,
        Vec::new(),
        Observation::chat(input),
        demo_tools().catalogue(),
    );
    next_call(&run).request
}

/// Prints the requests `scripts/record-tokens.py` sends to the real model to count,
/// and holds what makes them worth recording: fitting to a smaller window sends less.
#[test]
fn print_the_requests_to_record() {
    let shortened = |tokens: u32| {
        let run = AgentRun::new(
            DEMO_PROMPT,
            history(),
            Observation::chat("What time is it?"),
            demo_tools().catalogue(),
        );
        let mut run = run.with_context_window(ContextWindow::new(
            tokens,
            Some(96),
            WindowSource::Configured,
        ));
        run.fit(next_call(&run), None).unwrap().request
    };
    let (wide, narrow) = (shortened(2_400), shortened(2_048));
    assert!(
        estimate_request(&narrow) < estimate_request(&wide),
        "a narrower window sends a smaller request"
    );
    assert!(estimate_request(&narrow) <= 2_048 - 96);
    let requests = json!([
        {"name": "demo: What time is it?", "request": demo_request("What time is it?")},
        {"name": "demo: Remember that the ale is cold", "request": demo_request("Remember that the ale is cold")},
        {"name": "demo after ten turns, fitted to 2,400", "request": shortened(2_400)},
        {"name": "demo after ten turns, fitted to 2,048", "request": shortened(2_048)},
        {"name": "ten turns, no tools", "request": next_call(&AgentRun::new(DEMO_PROMPT, history(), Observation::chat("What time is it?"), Vec::new())).request},
    ]);
    println!("REQUESTS {requests}");
}

#[test]
fn the_demo_agents_first_request_fits_a_2048_token_window() {
    let request = demo_request("What time is it?");
    let run = AgentRun::new(
        DEMO_PROMPT,
        Vec::new(),
        Observation::chat("What time is it?"),
        demo_tools().catalogue(),
    );
    let mut run = run.with_context_window(ContextWindow::new(
        2_048,
        Some(96),
        WindowSource::Configured,
    ));
    let fitted = run.fit(next_call(&run), None).unwrap().request;
    let (before, after) = (estimate_request(&request), estimate_request(&fitted));
    println!("the demo's first request: ~{before} estimated tokens, ~{after} fitted to 2,048");
    assert!(before > 2_048 - 96, "{before}");
    assert!(after <= 2_048 - 96, "{after}");
    assert_eq!(
        fitted.tools.len(),
        request.tools.len(),
        "no tool is dropped"
    );
}

/// docs/local-model.md counts the demo agent's tools where it tells what the local model reads
/// ("the demo's N tools", "lists its N tools"): the native registry plus the page's
/// title, which only the browser has.
#[test]
fn the_local_model_guide_counts_the_demo_agents_tools_as_the_demo_registers_them() {
    let count = demo_tools().catalogue().len() + 1;
    let readme = include_str!("../docs/local-model.md");
    let said: Vec<usize> = ["the demo's ", "lists its "]
        .iter()
        .flat_map(|before| {
            readme
                .match_indices(before)
                .map(move |(at, _)| at + before.len())
        })
        .filter_map(|at| {
            let rest = readme.get(at..)?.replace('\n', " ");
            let (n, after) = rest.split_once(' ')?;
            after.starts_with("tools").then(|| n.parse().ok()).flatten()
        })
        .collect();
    assert!(
        !said.is_empty(),
        "docs/local-model.md no longer counts the demo's tools"
    );
    assert!(
        said.iter().all(|&n| n == count),
        "docs/local-model.md says {said:?}; the demo has {count}"
    );
}
