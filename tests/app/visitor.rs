//! A call from outside the session (a browser's agent through WebMCP, issue 59): a
//! turn of its own, judged by the run's own rules as text another party wrote. An
//! action the person's own message runs unasked waits for a person when a browser
//! agent asks for it; a denial applies nothing and says so; a look-up runs; a tool
//! the session does not have is refused.

use familiar::app::{AppError, VISITOR, Visited};

use super::*;

const GATE_RULES: &str = r#"{
    "fallback": "Quiet.",
    "rules": [{"keywords": ["gate"], "tool": "open_gate", "answer": "Gate {gate}."}]
}"#;

/// A session whose agent has `open_gate` (an action with the default approval: it
/// asks only once the conversation read others' words) and `clock` (a look-up);
/// the gate's openings are counted.
fn gatehouse() -> (Session, Rc<RefCell<i64>>) {
    let opened = Rc::new(RefCell::new(0));
    let mut tools = ToolRegistry::new();
    tools.register_fn("clock", ToolKind::Data, "The time.", |_: NoArgs, _| async {
        Ok::<_, String>(json!({"time": "noon"}))
    });
    let count = Rc::clone(&opened);
    tools.register_fn(
        "open_gate",
        ToolKind::Action,
        "Opens the gate.",
        move |_: NoArgs, _| {
            *count.borrow_mut() += 1;
            async move { Ok::<_, String>(json!({"gate": "open"})) }
        },
    );
    let llm = Rc::new(RulesModel::from_json(GATE_RULES).unwrap());
    let agent = Agent::new("familiar", "Helps", "You help.", llm, Rc::new(tools));
    let storage = Rc::new(VolatileStorage::new());
    let session = Session::new(config("visit", &storage), Delegate::new(Rc::new(agent)));
    (session, opened)
}

type Visit = Rc<RefCell<Option<Result<Visited, AppError>>>>;

fn spawn_visit(pool: &LocalPool, session: &Session, tool: &str, arguments: Value) -> Visit {
    let slot = Rc::new(RefCell::new(None));
    let out = Rc::clone(&slot);
    let session = session.clone();
    let tool = tool.to_owned();
    pool.spawner()
        .spawn_local(
            async move { *out.borrow_mut() = Some(session.visit(&tool, &arguments).await) },
        )
        .unwrap();
    slot
}

#[test]
fn a_browser_agents_call_to_an_action_waits_for_a_person_where_the_persons_own_would_not() {
    let (session, opened) = gatehouse();
    let mut pool = LocalPool::new();
    let own = spawn_send(&pool, &session, "open the gate");
    pool.run_until_stalled();
    assert_eq!(answer(&own), "Gate open.");
    assert_eq!(
        *opened.borrow(),
        1,
        "the person's own words open it unasked"
    );
    let visit = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    assert!(visit.borrow().is_none(), "it waits");
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].call.name, "open_gate");
    assert_eq!(*opened.borrow(), 1, "nothing ran before the person said so");
    // The turn says who asked, as another party's words.
    let conversation = session.conversation();
    let last = conversation.interactions.last().unwrap();
    assert!(last.input.contains("open_gate"), "{}", last.input);
    session
        .decide(&pending[0].key(), Decision::Approve)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        visit.borrow_mut().take().unwrap().unwrap(),
        Visited::Ran(r#"{"gate":"open"}"#.into())
    );
    assert_eq!(*opened.borrow(), 2);
    assert!(VISITOR.contains("WebMCP"));
}

#[test]
fn a_browser_agents_call_denied_applies_nothing_and_says_so() {
    let (session, opened) = gatehouse();
    let mut pool = LocalPool::new();
    let visit = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let reason = "not for strangers".to_owned();
    session
        .decide(&pending[0].key(), Decision::Deny { reason })
        .unwrap();
    pool.run_until_stalled();
    let visited = visit.borrow_mut().take().unwrap().unwrap();
    let Visited::Refused(why) = visited else {
        panic!("{visited:?}");
    };
    assert!(why.contains("not for strangers"), "{why}");
    assert!(
        why.starts_with("`open_gate` was not run"),
        "said in words, not JSON: {why}"
    );
    assert_eq!(*opened.borrow(), 0);
}

#[test]
fn a_browser_agents_look_up_runs_unasked_and_returns_its_result() {
    let (session, _) = gatehouse();
    let mut pool = LocalPool::new();
    let visit = spawn_visit(&pool, &session, "clock", json!({}));
    pool.run_until_stalled();
    assert!(session.pending().is_empty());
    assert_eq!(
        visit.borrow_mut().take().unwrap().unwrap(),
        Visited::Ran(r#"{"time":"noon"}"#.into())
    );
}

#[test]
fn a_browser_agents_call_to_a_tool_the_session_lacks_is_refused() {
    let (session, opened) = gatehouse();
    let mut pool = LocalPool::new();
    let visit = spawn_visit(&pool, &session, "burn_keep", json!({}));
    pool.run_until_stalled();
    let visited = visit.borrow_mut().take().unwrap().unwrap();
    assert!(matches!(visited, Visited::Refused(_)), "{visited:?}");
    assert_eq!(*opened.borrow(), 0);
    let turns = session.conversation().interactions.len();
    assert_eq!(turns, 0, "a call refused before it began leaves no turn");
}

#[test]
fn a_flood_of_browser_agent_calls_has_one_in_flight_and_the_rest_refused_in_words_unsaved() {
    let (session, opened) = gatehouse();
    let mut pool = LocalPool::new();
    let first = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    let flood: Vec<Visit> = (0..20)
        .map(|_| spawn_visit(&pool, &session, "open_gate", json!({})))
        .collect();
    pool.run_until_stalled();
    for visit in &flood {
        let visited = visit.borrow_mut().take().unwrap().unwrap();
        let Visited::Refused(why) = visited else {
            panic!("{visited:?}");
        };
        assert!(
            why.contains("another browser agent's call is in progress"),
            "{why}"
        );
    }
    assert_eq!(session.pending().len(), 1, "one card, the first call's");
    assert_eq!(
        session.conversation().interactions.len(),
        1,
        "one turn kept"
    );
    let pending = session.pending();
    session
        .decide(&pending[0].key(), Decision::Approve)
        .unwrap();
    pool.run_until_stalled();
    assert!(matches!(first.borrow().as_ref(), Some(Ok(Visited::Ran(_)))));
    // Once it is done, the next call is taken.
    let next = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    assert!(next.borrow().is_none(), "it waits for its own card");
    assert_eq!(session.pending().len(), 1);
    assert_eq!(*opened.borrow(), 1);
}
#[test]
fn a_persons_allow_always_does_not_cover_a_browser_agents_call() {
    let (session, opened) = gatehouse();
    let mut pool = LocalPool::new();
    // A first visit, approved once: the conversation has now read another party's words.
    let visit = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    let pending = session.pending();
    session
        .decide(&pending[0].key(), Decision::Approve)
        .unwrap();
    pool.run_until_stalled();
    assert!(visit.borrow().is_some());
    // The person's own request now asks (untrusted conversation); they allow it always.
    let own = spawn_send(&pool, &session, "open the gate");
    pool.run_until_stalled();
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    session
        .decide(&pending[0].key(), Decision::ApproveAlways)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&own), "Gate open.");
    let before = *opened.borrow();
    // A browser agent's next call.
    let visit = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    assert!(
        visit.borrow().is_none(),
        "a browser agent's call waits for a person"
    );
    let pending = session.pending();
    assert_eq!(pending.len(), 1);
    assert!(
        pending[0].grants.is_empty(),
        "its card offers Allow once and Deny only: {:?}",
        pending[0].grants
    );
    assert_eq!(*opened.borrow(), before, "nothing ran unasked");
    // "Allow always" sent anyway grants nothing: the next call asks again.
    session
        .decide(&pending[0].key(), Decision::ApproveAlways)
        .unwrap();
    pool.run_until_stalled();
    assert!(visit.borrow().is_some());
    let _next = spawn_visit(&pool, &session, "open_gate", json!({}));
    pool.run_until_stalled();
    assert_eq!(
        session.pending().len(),
        1,
        "the next browser agent's call asks"
    );
}

#[test]
fn a_browser_agents_words_are_read_in_later_turns_as_theirs_not_the_persons() {
    let paid = Rc::new(RefCell::new(Vec::new()));
    let mut tools = ToolRegistry::new();
    let log = Rc::clone(&paid);
    tools.register_fn(
        "pay",
        ToolKind::Action,
        "Pays someone.",
        move |args: Value, _| {
            log.borrow_mut().push(args.clone());
            async move { Ok::<_, String>(json!({"paid": args["to"]})) }
        },
    );
    tools.set_consequential("pay", &[("to", "payee")]);
    let rules = r#"{"fallback": "Quiet.", "rules": [{"keywords": ["pay"], "tool": "pay",
        "arguments": {"to": "mallory"}, "answer": "Paid {paid}."}]}"#;
    let llm = Rc::new(RulesModel::from_json(rules).unwrap());
    let agent = Agent::new("familiar", "Helps", "You help.", llm, Rc::new(tools));
    let storage = Rc::new(VolatileStorage::new());
    let session = Session::new(config("visit", &storage), Delegate::new(Rc::new(agent)));
    let mut pool = LocalPool::new();
    // A browser agent names the payee; the person denies its call.
    let visit = spawn_visit(&pool, &session, "pay", json!({"to": "mallory"}));
    pool.run_until_stalled();
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let reason = "no".to_owned();
    session
        .decide(&pending[0].key(), Decision::Deny { reason })
        .unwrap();
    pool.run_until_stalled();
    assert!(visit.borrow().is_some());
    // The person's next request carries that payee: it came from the browser agent's
    // words in the history, so it asks and says whose they were.
    let _own = spawn_send(&pool, &session, "pay them");
    pool.run_until_stalled();
    assert!(paid.borrow().is_empty(), "nothing paid unasked");
    let pending = session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    let values = format!("{:?}", pending[0].values);
    assert!(values.contains("mallory"), "{values}");
    assert!(
        values.contains(VISITOR),
        "traced to the browser agent: {values}"
    );
}

#[test]
fn a_tools_own_result_with_an_error_key_is_what_it_returned_not_a_refusal() {
    let rung = Rc::new(RefCell::new(0));
    let mut tools = ToolRegistry::new();
    let count = Rc::clone(&rung);
    tools.register_fn("bell", ToolKind::Data, "Rings.", move |_: NoArgs, _| {
        *count.borrow_mut() += 1;
        async move { Ok::<_, String>(json!({"error": "the bell is cracked"})) }
    });
    let llm = Rc::new(RulesModel::from_json(GATE_RULES).unwrap());
    let agent = Agent::new("familiar", "Helps", "You help.", llm, Rc::new(tools));
    let storage = Rc::new(VolatileStorage::new());
    let session = Session::new(config("visit", &storage), Delegate::new(Rc::new(agent)));
    let mut pool = LocalPool::new();
    let visit = spawn_visit(&pool, &session, "bell", json!({}));
    pool.run_until_stalled();
    assert_eq!(*rung.borrow(), 1, "it ran");
    assert_eq!(
        visit.borrow_mut().take().unwrap().unwrap(),
        Visited::Ran(r#"{"error":"the bell is cracked"}"#.into())
    );
}
