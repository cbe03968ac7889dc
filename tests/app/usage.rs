//! Usage and cost (issue 60): each model call's usage as its provider counted it,
//! priced per model, counted to its turn, conversation, agent and day, told as
//! `usage` updates and kept; budgets per conversation, per agent and per day stop a
//! run in words before the model is asked again, for a message and a resident's
//! trigger alike (a schedule fires through the same trigger), and what was spent
//! outlives the session.

use super::paid::{Paid, counted, priced_and_heard, scripted, send};
use super::*;
use familiar::app::{Budgets, day_of};
use familiar::llm::ChatResponse;
use familiar::llm::usage::{Price, Prices};
use familiar::run::Limit;
use familiar::run::interaction::Status;

/// A session whose `familiar` answers from `replies` as `paid-model` at $2 / $8 per
/// million tokens, and whose resident `Dotty` answers by the rules model.
fn paid(
    storage: &Rc<VolatileStorage>,
    replies: Vec<ChatResponse>,
) -> (Session, Rc<RefCell<Vec<Update>>>, Rc<Paid>) {
    paid_with(storage, replies, Options::default())
}

/// [`paid`] with `options` (the supervisor on, say).
fn paid_with(
    storage: &Rc<VolatileStorage>,
    replies: Vec<ChatResponse>,
    options: Options,
) -> (Session, Rc<RefCell<Vec<Update>>>, Rc<Paid>) {
    let model = scripted(replies);
    let mut tools = ToolRegistry::new();
    tools.register_fn("clock", ToolKind::Data, "The time.", |_: NoArgs, _| async {
        Ok::<_, String>(json!({"time": "noon"}))
    });
    let familiar = Agent::new(
        "familiar",
        "Helps",
        "You help.",
        Rc::clone(&model) as Rc<dyn Llm>,
        Rc::new(tools),
    );
    let dotty = Agent::new(
        "Dotty",
        "",
        "You are Dotty.",
        rules(),
        Rc::new(ToolRegistry::new()),
    )
    .with_own_memory();
    let mut config = config("usage", storage);
    config.options = options;
    let session = Session::new(
        config,
        Delegate::new(Rc::new(familiar)).with_agent(Rc::new(dotty)),
    );
    session.restore();
    let updates = priced_and_heard(&session);
    (session, updates, model)
}

fn tokens(limit: u64) -> Limit {
    Limit {
        tokens: Some(limit),
        cost: None,
    }
}

#[test]
fn each_model_call_is_counted_to_its_turn_conversation_agent_and_day_priced() {
    let storage = Rc::new(VolatileStorage::new());
    let clock_call = familiar::llm::message::ToolCall {
        id: "c1".into(),
        name: "clock".into(),
        arguments: "{}".into(),
    };
    let (session, updates, _) = paid(
        &storage,
        vec![
            counted("", vec![clock_call], (1_000, 100)),
            counted("It is noon.", Vec::new(), (1_200, 50)),
            counted("Hello.", Vec::new(), (300, 10)),
        ],
    );
    assert_eq!(send(&session, "what time?").text(), "It is noon.");
    assert_eq!(send(&session, "hi").text(), "Hello.");
    let turns = session.conversation().interactions;
    let first = turns[0].usage;
    assert_eq!(
        (first.calls, first.prompt_tokens, first.completion_tokens),
        (2, 2_200, 150)
    );
    assert!((first.cost - (2_200.0 * 2.0 + 150.0 * 8.0) / 1e6).abs() < 1e-12);
    assert_eq!(first.words(), "2,350 tokens · $0.0056");
    assert_eq!(turns[1].usage.tokens(), 310);
    let told: Vec<(u64, u64, u64)> = updates
        .borrow()
        .iter()
        .filter_map(|u| match u {
            Update::Usage {
                turn,
                call,
                total,
                agent,
                ..
            } => {
                assert_eq!(agent, "familiar");
                Some((*turn, call.tokens(), total.tokens()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        told,
        [
            (turns[0].id, 1_100, 1_100),
            (turns[0].id, 1_250, 2_350),
            (turns[1].id, 310, 310)
        ]
    );
    let spending = session.spending();
    assert_eq!(
        spending.conversation(&session.conversation_id()).tokens(),
        2_660
    );
    assert_eq!(spending.agent("familiar").calls, 3);
    assert_eq!(spending.day(day_of(1_000)).tokens(), 2_660);
    let saved = storage.load("usage.usage").unwrap_or_default();
    assert!(saved.contains("\"familiar\""), "kept: {saved}");
}

#[test]
fn the_rules_model_is_counted_as_using_nothing_and_costing_nothing() {
    let storage = Rc::new(VolatileStorage::new());
    let (session, _, _) = paid(&storage, Vec::new());
    send(&session, "@Dotty hello");
    // Its calls use no tokens, so the turn counts none: nothing shown, nothing saved.
    let turn = &session.conversation().interactions[0];
    assert!(turn.usage.is_empty(), "{:?}", turn.usage);
    assert_eq!(turn.usage.words(), "0 tokens · free");
    let saved = serde_json::to_value(turn).unwrap();
    assert!(saved.get("usage").is_none(), "{saved}");
}

#[test]
fn a_conversation_budget_stops_the_next_turn_in_words_keeping_the_message() {
    let storage = Rc::new(VolatileStorage::new());
    let (session, _, model) = paid(
        &storage,
        vec![
            counted("One.", Vec::new(), (100, 20)),
            counted("Two.", Vec::new(), (100, 20)),
            counted("Three.", Vec::new(), (100, 20)),
        ],
    );
    session.set_budgets(Budgets {
        conversation: tokens(200),
        ..Budgets::default()
    });
    assert_eq!(send(&session, "one").text(), "One.");
    assert_eq!(
        send(&session, "two").text(),
        "Two.",
        "120 of 200 left room to ask"
    );
    let stopped = send(&session, "three");
    let words = "Stopped: this conversation's budget of 200 tokens is reached (240 tokens used). Nothing more was asked of the model.";
    assert_eq!(
        stopped,
        Outcome::BudgetReached {
            reason: words.into()
        }
    );
    assert_eq!(
        model.0.remaining(),
        1,
        "the model was not asked a third time"
    );
    let last = session.conversation().interactions.last().cloned().unwrap();
    assert_eq!(
        (last.input.as_str(), last.status),
        ("three", Status::Aborted)
    );
    assert!(
        !last
            .steps
            .iter()
            .any(|s| matches!(s, familiar::run::interaction::Step::Error { .. })),
        "no error step: {:?}",
        last.steps
    );
    assert!(last.stopped_by_budget(), "marked: {:?}", last.steps);
    // Another conversation is not held to this one's budget.
    session.new_conversation();
    assert_eq!(send(&session, "four").text(), "Three.");
}

#[test]
fn a_message_a_budget_stopped_stays_in_what_the_model_reads_next() {
    let storage = Rc::new(VolatileStorage::new());
    let (session, _, model) = paid(
        &storage,
        vec![
            counted("One.", Vec::new(), (100, 20)),
            counted("Two.", Vec::new(), (100, 20)),
        ],
    );
    session.set_budgets(Budgets {
        conversation: tokens(100),
        ..Budgets::default()
    });
    assert_eq!(send(&session, "one").text(), "One.");
    let stopped = send(&session, "the second question");
    assert!(stopped.text().starts_with("Stopped: "), "{stopped:?}");
    session.set_budgets(Budgets::default());
    assert_eq!(send(&session, "three").text(), "Two.");
    let requests = model.0.requests();
    let last = requests.last().unwrap();
    let said: Vec<(String, &str)> = last
        .messages
        .iter()
        .map(|m| (format!("{:?}", m.role), m.content.as_str()))
        .collect();
    let asked = said
        .iter()
        .position(|(_, text)| *text == "the second question");
    assert!(asked.is_some(), "the stopped message is kept: {said:?}");
    let answered = asked.and_then(|i| said.get(i + 1)).map(|(_, text)| *text);
    assert_eq!(
        answered,
        Some(stopped.text()),
        "answered by its stop, as shown"
    );
    assert_eq!(
        session.conversation().interactions.len(),
        3,
        "no turn disappears"
    );
}

#[test]
fn a_budget_reached_mid_run_stops_before_the_next_model_call_and_survives_a_reload() {
    let storage = Rc::new(VolatileStorage::new());
    let clock_call = familiar::llm::message::ToolCall {
        id: "c1".into(),
        name: "clock".into(),
        arguments: "{}".into(),
    };
    let (session, _, model) = paid(
        &storage,
        vec![
            counted("", vec![clock_call], (900, 100)),
            counted("It is noon.", Vec::new(), (10, 10)),
        ],
    );
    let day = Budgets {
        day: Limit {
            tokens: None,
            cost: Some(0.002),
        },
        ..Budgets::default()
    };
    session.set_budgets(day);
    let stopped = send(&session, "what time?");
    assert_eq!(
        stopped.text(),
        "Stopped: today's budget of $0.0020 is reached ($0.0026 used). Nothing more was asked of the model."
    );
    assert_eq!(
        model.0.remaining(),
        1,
        "the look-up ran, the answer was never asked"
    );
    let turn = session.conversation().interactions[0].clone();
    assert!(
        turn.steps
            .iter()
            .any(|s| matches!(s, familiar::run::interaction::Step::ToolCall { .. }))
    );
    // A new session on the same storage reads what was spent today.
    let (again, _, again_model) = paid(&storage, vec![counted("Hi.", Vec::new(), (1, 1))]);
    again.set_budgets(day);
    assert!(
        send(&again, "hello")
            .text()
            .starts_with("Stopped: today's budget")
    );
    assert_eq!(again_model.0.remaining(), 1);
}

#[test]
fn a_residents_trigger_is_held_to_its_agents_budget() {
    let storage = Rc::new(VolatileStorage::new());
    let (session, _, _) = paid(&storage, vec![counted("Hello.", Vec::new(), (60, 0))]);
    session.set_budgets(Budgets {
        agent: tokens(50),
        ..Budgets::default()
    });
    assert_eq!(send(&session, "hello").text(), "Hello.");
    // Dotty's own budget is untouched: her rules model uses no tokens.
    let event = Observation {
        trigger: Trigger {
            kind: "game_event".into(),
            event: "customer.arrived".into(),
            timestamp: None,
        },
        actor: Actor {
            name: "Dotty".into(),
            ..Actor::default()
        },
        subject: Subject {
            content: "A customer arrives.".into(),
            ..Subject::default()
        },
        boundaries: Boundaries::default(),
        environment: None,
    };
    let outcome = LocalPool::new()
        .run_until(session.trigger(event.clone()))
        .unwrap();
    assert!(!outcome.text().starts_with("Stopped"), "{outcome:?}");
    // familiar's own trigger is stopped by its spent budget, in words.
    let mut to_familiar = event;
    to_familiar.actor.name = "familiar".into();
    let outcome = LocalPool::new()
        .run_until(session.trigger(to_familiar))
        .unwrap();
    assert_eq!(
        outcome.text(),
        "Stopped: @familiar's budget of 50 tokens is reached (60 tokens used). Nothing more was asked of the model."
    );
}

/// The spans of `session`'s runs, as they end.
#[cfg(feature = "telemetry")]
fn traced(session: &Session) -> Rc<RefCell<Vec<familiar::trace::Span>>> {
    use familiar::trace::Span;
    let spans: Rc<RefCell<Vec<Span>>> = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&spans);
    session.set_telemetry(Some(familiar::app::Telemetry {
        capture: familiar::trace::Capture::default(),
        provider: "openai".into(),
        model: "paid-model".into(),
        sink: Rc::new(move |ended: &[Span]| sink.borrow_mut().extend(ended.iter().cloned())),
    }));
    spans
}

/// What each `usage` update counted, as (turn, the call's tokens).
fn told(updates: &RefCell<Vec<Update>>) -> Vec<(u64, u64)> {
    let updates = updates.borrow();
    let calls = updates.iter().filter_map(|u| match u {
        Update::Usage { turn, call, .. } => Some((*turn, call.tokens())),
        _ => None,
    });
    calls.collect()
}

#[test]
fn a_supervisors_stages_are_counted_to_the_turn_traced_and_held_to_its_budgets() {
    let storage = Rc::new(VolatileStorage::new());
    let supervised = Options {
        supervisor: true,
        ..Options::default()
    };
    let (session, updates, model) = paid_with(
        &storage,
        vec![
            counted(
                r#"{"level": "SIMPLE", "reason": "one"}"#,
                Vec::new(),
                (50, 5),
            ),
            counted(r#"{"tasks": ["Greet"]}"#, Vec::new(), (60, 6)),
            counted("Hello.", Vec::new(), (70, 7)),
            counted(
                r#"{"done": true, "summary": "greeted"}"#,
                Vec::new(),
                (80, 8),
            ),
            counted(
                r#"{"level": "SIMPLE", "reason": "one"}"#,
                Vec::new(),
                (1, 1),
            ),
        ],
        supervised,
    );
    #[cfg(feature = "telemetry")]
    let spans = traced(&session);
    assert_eq!(send(&session, "greet me").text(), "Hello.");
    #[cfg(feature = "telemetry")]
    {
        use familiar::trace::Value as Attr;
        let spans = spans.borrow();
        let stages: Vec<(&str, Option<&Attr>)> = spans
            .iter()
            .filter_map(|s| match s.attribute("familiar.step") {
                Some(Attr::Text(step)) => {
                    Some((step.as_str(), s.attribute("gen_ai.usage.input_tokens")))
                }
                _ => None,
            })
            .collect();
        assert_eq!(
            stages,
            [
                ("complexity", Some(&Attr::Int(50))),
                ("plan", Some(&Attr::Int(60))),
                ("reason", Some(&Attr::Int(70))),
                ("decision", Some(&Attr::Int(80)))
            ],
            "each stage a chat span with its tokens, in the turn's one trace"
        );
        assert!(spans.iter().all(|s| s.trace_id == spans[0].trace_id));
    }
    let turn = session.conversation().interactions[0].clone();
    assert_eq!(
        told(&updates).iter().map(|t| t.1).collect::<Vec<_>>(),
        [55, 66, 77, 88],
        "complexity, plan, the executor's call, the decision"
    );
    assert_eq!((turn.usage.calls, turn.usage.tokens()), (4, 286));
    assert!((turn.usage.cost - (260.0 * 2.0 + 26.0 * 8.0) / 1e6).abs() < 1e-12);
    assert_eq!(session.spending().agent("familiar").tokens(), 286);
    // The conversation's budget is spent: the next turn's first stage is not asked.
    session.set_budgets(Budgets {
        conversation: tokens(286),
        ..Budgets::default()
    });
    let stopped = send(&session, "again");
    assert!(
        stopped
            .text()
            .starts_with("Stopped: this conversation's budget of 286 tokens is reached"),
        "{stopped:?}"
    );
    assert_eq!(model.0.remaining(), 1, "the analyst was not asked");
}

#[test]
fn a_cost_budget_stops_a_model_with_no_price_before_asking_it() {
    let storage = Rc::new(VolatileStorage::new());
    let (session, _, model) = paid(&storage, vec![counted("Hi.", Vec::new(), (5, 5))]);
    session.set_prices(Prices::default());
    session.set_budgets(Budgets {
        agent: Limit {
            tokens: None,
            cost: Some(1.0),
        },
        ..Budgets::default()
    });
    let stopped = send(&session, "hello");
    assert_eq!(
        stopped.text(),
        "Stopped: @familiar's budget of $1.00 counts cost, and the model has no price, so its cost is unknown. Set its price, or hold it to tokens. Nothing more was asked of the model."
    );
    assert_eq!(model.0.remaining(), 1, "never asked");
    // A price set, the same budget holds it and lets it answer.
    session.set_prices(Prices(vec![(
        "paid-model".into(),
        Price {
            input: 1.0,
            output: 1.0,
        },
    )]));
    assert_eq!(send(&session, "hello again").text(), "Hi.");
}

#[cfg(feature = "telemetry")]
#[test]
fn each_model_calls_tokens_and_response_are_on_its_chat_span() {
    use familiar::trace::{Span, Value as Attr};
    let storage = Rc::new(VolatileStorage::new());
    let clock_call = familiar::llm::message::ToolCall {
        id: "c1".into(),
        name: "clock".into(),
        arguments: "{}".into(),
    };
    // Who answered each call, as the provider said (gen_ai.response.id and .model).
    let served = |reply: ChatResponse, id: &str| ChatResponse {
        served: familiar::llm::Served {
            id: Some(id.into()),
            model: Some("paid-model-2026-01".into()),
        },
        ..reply
    };
    let (session, _, _) = paid(
        &storage,
        vec![
            served(counted("", vec![clock_call], (1_000, 100)), "chatcmpl-1"),
            served(
                counted("It is noon.", Vec::new(), (1_200, 50)),
                "chatcmpl-2",
            ),
        ],
    );
    let spans = traced(&session);
    assert_eq!(send(&session, "what time?").text(), "It is noon.");
    let spans = spans.borrow();
    let tokens = |s: &Span| {
        let int = |key| match s.attribute(key) {
            Some(Attr::Int(n)) => *n,
            _ => -1,
        };
        (
            int("gen_ai.usage.input_tokens"),
            int("gen_ai.usage.output_tokens"),
        )
    };
    let chats: Vec<(i64, i64)> = spans
        .iter()
        .filter(|s| s.name == "chat paid-model")
        .map(tokens)
        .collect();
    assert_eq!(chats, [(1_000, 100), (1_200, 50)], "each call's own tokens");
    let text = |s: &Span, key| match s.attribute(key) {
        Some(Attr::Text(t)) => t.clone(),
        other => format!("{other:?}"),
    };
    let answered: Vec<(String, String)> = spans
        .iter()
        .filter(|s| s.name == "chat paid-model")
        .map(|s| {
            (
                text(s, "gen_ai.response.id"),
                text(s, "gen_ai.response.model"),
            )
        })
        .collect();
    assert_eq!(
        answered,
        [
            ("chatcmpl-1".into(), "paid-model-2026-01".into()),
            ("chatcmpl-2".into(), "paid-model-2026-01".into())
        ],
        "each call's own response id, and the model that served it"
    );
    let conversation = session.conversation_id();
    assert_eq!(
        session.trace_of(&conversation).len(),
        spans.len(),
        "kept too"
    );
}
