//! An agent called as an opaque tool (`register_as_tool`) is part of the run that calls
//! it (issue 60): what its model calls used is counted to the caller's turn, agent,
//! conversation and day; it runs within what is left of the caller's budgets, and a
//! budget reached inside it stops it in words and the caller before its next model
//! call; its run is traced under the call's span.

use super::paid::{Paid, counted, priced_and_heard, scripted, send};
use super::*;
use familiar::app::{Budgets, day_of};
use familiar::compose::agent::register_as_tool;
use familiar::llm::ChatResponse;
use familiar::llm::message::ToolCall;
use familiar::run::Limit;

fn call(id: &str, name: &str, arguments: Value) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: arguments.to_string().into(),
    }
}

/// A session whose `familiar` (on `main`) has `scout` (on `sub`, with a `clock`) as
/// its opaque data tool, both at $2 / $8 per million tokens.
fn coordinated(main: &Rc<Paid>, sub: &Rc<Paid>) -> (Session, Rc<RefCell<Vec<Update>>>) {
    let mut scout_tools = ToolRegistry::new();
    scout_tools.register_fn("clock", ToolKind::Data, "The time.", |_: NoArgs, _| async {
        Ok::<_, String>(json!({"time": "noon"}))
    });
    let scout = Agent::new(
        "scout",
        "Looks things up.",
        "You look things up.",
        Rc::clone(sub) as Rc<dyn Llm>,
        Rc::new(scout_tools),
    );
    let mut tools = ToolRegistry::new();
    register_as_tool(
        &mut tools,
        Rc::new(scout),
        Rc::new(FrozenClock::at(1_000)),
        ToolKind::Data,
    );
    let familiar = Agent::new(
        "familiar",
        "Helps",
        "You help.",
        Rc::clone(main) as Rc<dyn Llm>,
        Rc::new(tools),
    );
    let storage = Rc::new(VolatileStorage::new());
    let session = Session::new(
        config("sub-agents", &storage),
        Delegate::new(Rc::new(familiar)),
    );
    session.restore();
    let updates = priced_and_heard(&session);
    (session, updates)
}

/// The main agent asks the scout, then answers.
fn asking_the_scout(answer: &str) -> Vec<ChatResponse> {
    let ask = call("c1", "scout", json!({"request": "what time is it?"}));
    vec![
        counted("", vec![ask], (100, 10)),
        counted(answer, Vec::new(), (300, 20)),
    ]
}

#[test]
fn an_agent_called_as_a_tool_is_counted_to_the_turn_its_agent_conversation_and_day() {
    let main = scripted(asking_the_scout("The scout says noon."));
    let sub = scripted(vec![
        counted("", vec![call("s1", "clock", json!({}))], (50, 5)),
        counted("It is noon.", Vec::new(), (60, 6)),
    ]);
    let (session, updates) = coordinated(&main, &sub);
    assert_eq!(
        send(&session, "ask the scout").text(),
        "The scout says noon."
    );
    assert_eq!(sub.0.remaining(), 0, "the scout ran");
    let turn = session.conversation().interactions[0].usage;
    assert_eq!(
        (turn.calls, turn.prompt_tokens, turn.completion_tokens),
        (4, 510, 41),
        "the caller's two calls and the scout's two"
    );
    assert!((turn.cost - (510.0 * 2.0 + 41.0 * 8.0) / 1e6).abs() < 1e-12);
    let told: Vec<(String, u64)> = updates
        .borrow()
        .iter()
        .filter_map(|u| match u {
            Update::Usage { agent, call, .. } => Some((agent.clone(), call.tokens())),
            _ => None,
        })
        .collect();
    let familiar = |n: u64| ("familiar".to_owned(), n);
    assert_eq!(
        told,
        [familiar(110), familiar(121), familiar(320)],
        "the scout's calls counted once, with the call that made them"
    );
    let spending = session.spending();
    assert_eq!(
        spending.conversation(&session.conversation_id()).tokens(),
        551
    );
    assert_eq!(spending.agent("familiar").calls, 4);
    assert_eq!(spending.day(day_of(1_000)).tokens(), 551);
    assert_eq!(spending.agent("scout").calls, 0, "counted as its caller's");
}

#[test]
fn a_budget_reached_inside_an_agent_called_as_a_tool_stops_it_in_words_and_then_the_caller() {
    let main = scripted(asking_the_scout("Never said."));
    let sub = scripted(vec![
        counted("", vec![call("s1", "clock", json!({}))], (80, 10)),
        counted("Never said either.", Vec::new(), (60, 6)),
    ]);
    let (session, _) = coordinated(&main, &sub);
    session.set_budgets(Budgets {
        conversation: Limit {
            tokens: Some(150),
            cost: None,
        },
        ..Budgets::default()
    });
    let stopped = send(&session, "ask the scout");
    let words = |used: u32| {
        format!(
            "Stopped: this conversation's budget of 150 tokens is reached ({used} tokens used). Nothing more was asked of the model."
        )
    };
    assert_eq!(stopped, Outcome::BudgetReached { reason: words(200) });
    assert_eq!(sub.0.remaining(), 1, "the scout was not asked again");
    assert_eq!(main.0.remaining(), 1, "nor was the caller");
    let turn = &session.conversation().interactions[0];
    assert_eq!(
        turn.usage.tokens(),
        200,
        "110 of the caller's, 90 of the scout's"
    );
    let failed = turn.steps.iter().find_map(|s| match s {
        familiar::run::interaction::Step::ToolCall {
            result: Some(Err(error)),
            ..
        } => Some(error.clone()),
        _ => None,
    });
    assert!(
        failed.as_deref().is_some_and(|e| e.contains(&words(200))),
        "the call failed with the budget's sentence: {failed:?}"
    );
}

#[cfg(feature = "telemetry")]
#[test]
fn an_agent_called_as_a_tool_is_an_invoke_agent_span_under_its_call_with_its_own_spans() {
    use familiar::trace::{Span, Value as Attr};
    let main = scripted(asking_the_scout("The scout says noon."));
    let sub = scripted(vec![
        counted("", vec![call("s1", "clock", json!({}))], (50, 5)),
        counted("It is noon.", Vec::new(), (60, 6)),
    ]);
    let (session, _) = coordinated(&main, &sub);
    let spans: Rc<RefCell<Vec<Span>>> = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&spans);
    session.set_telemetry(Some(familiar::app::Telemetry {
        capture: familiar::trace::Capture::default(),
        provider: "openai".into(),
        model: "paid-model".into(),
        sink: Rc::new(move |ended: &[Span]| sink.borrow_mut().extend(ended.iter().cloned())),
    }));
    assert_eq!(
        send(&session, "ask the scout").text(),
        "The scout says noon."
    );
    let spans = spans.borrow();
    let one = |name: &str| {
        let found: Vec<&Span> = spans.iter().filter(|s| s.name == name).collect();
        assert_eq!(found.len(), 1, "{name}: {:?}", names(&spans));
        found[0]
    };
    let run = one("invoke_agent familiar");
    let call = one("execute_tool scout");
    let scout = one("invoke_agent scout");
    let clock = one("execute_tool clock");
    assert_eq!(call.parent_span_id.as_ref(), Some(&run.span_id));
    assert_eq!(scout.parent_span_id.as_ref(), Some(&call.span_id));
    assert_eq!(clock.parent_span_id.as_ref(), Some(&scout.span_id));
    assert_eq!(
        scout.attribute("gen_ai.agent.name"),
        Some(&Attr::Text("scout".into()))
    );
    assert!(
        spans.iter().all(|s| s.trace_id == run.trace_id),
        "one trace"
    );
    let tokens = |s: &Span| match s.attribute("gen_ai.usage.input_tokens") {
        Some(Attr::Int(n)) => *n,
        _ => -1,
    };
    let chats = |parent: &Span| -> Vec<i64> {
        // In the order they ended, which is the order they were made.
        spans
            .iter()
            .filter(|s| s.name == "chat paid-model")
            .filter(|s| s.parent_span_id.as_ref() == Some(&parent.span_id))
            .map(tokens)
            .collect()
    };
    assert_eq!(chats(run), [100, 300], "the caller's calls");
    assert_eq!(
        chats(scout),
        [50, 60],
        "the scout's calls, each with its tokens"
    );
    assert!(
        spans.iter().all(|s| s.end_ms.is_some()),
        "every span ended: {:?}",
        names(&spans)
    );
}

#[cfg(feature = "telemetry")]
fn names(spans: &[familiar::trace::Span]) -> Vec<&str> {
    spans.iter().map(|s| s.name.as_str()).collect()
}
