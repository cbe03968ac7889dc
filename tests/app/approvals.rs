//! Approvals: a turn pauses until a person approves, a denial is heard by the model
//! and nothing is applied, `always` holds for its conversation and agent only, and an
//! approver in code decides without a person. Approvals are keyed by (conversation,
//! turn, call): models number their calls `call_1`, `call_2`… in every run, so two
//! conversations' runs can wait on calls of the same id at once, and a decision for
//! one must never reach the other.

use familiar::app::{AppError, ApprovalKey};

use super::*;

/// Two conversations, each with a turn waiting to bump on a call of the same id.
fn two_waiting(w: &World, pool: &mut LocalPool) -> [(ApprovalKey, Slot); 2] {
    let first = spawn_send(pool, &w.session, "bump it");
    pool.run_until_stalled();
    w.session.new_conversation();
    let second = spawn_send(pool, &w.session, "bump it too");
    pool.run_until_stalled();
    let pending = w.session.pending();
    assert_eq!(pending.len(), 2, "{pending:?}");
    assert_eq!(pending[0].call.id, pending[1].call.id, "the same call id");
    assert_ne!(pending[0].conversation, pending[1].conversation);
    [(pending[0].key(), first), (pending[1].key(), second)]
}

type Slot = Rc<RefCell<Option<Result<Outcome, AppError>>>>;

#[test]
fn a_decision_by_key_reaches_its_own_conversation_only_and_the_other_still_waits() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let [(first, first_turn), (second, second_turn)] = two_waiting(&w, &mut pool);
    w.session.decide(&first, Decision::Approve).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&first_turn), "Bumped to 1.");
    assert!(second_turn.borrow().is_none(), "the other still waits");
    assert_eq!(*w.counter.borrow(), 1, "approved once");
    let pending = w.session.pending();
    assert_eq!(pending.len(), 1, "the other is not left undecided");
    assert_eq!(pending[0].key(), second);
    // Deciding the first again is refused: it is no longer waiting.
    assert!(matches!(
        w.session.decide(&first, Decision::Approve),
        Err(AppError::NotPending(_))
    ));
    w.session
        .decide(
            &second,
            Decision::Deny {
                reason: "not here".into(),
            },
        )
        .unwrap();
    pool.run_until_stalled();
    assert!(matches!(
        second_turn.borrow().as_ref(),
        Some(Ok(Outcome::Answered { .. }))
    ));
    assert_eq!(*w.counter.borrow(), 1, "the denied one applied nothing");
    assert!(w.session.pending().is_empty());
}

#[test]
fn a_call_id_shared_by_two_waiting_turns_is_refused_as_ambiguous_and_decides_nothing() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let [(first, first_turn), (second, second_turn)] = two_waiting(&w, &mut pool);
    let error = w.session.approve(&first.call, false).unwrap_err();
    assert!(
        matches!(error, AppError::AmbiguousCall { count: 2, .. }),
        "{error}"
    );
    assert!(error.to_string().contains(&first.conversation), "{error}");
    assert!(w.session.deny(&first.call, "no").is_err());
    pool.run_until_stalled();
    assert!(first_turn.borrow().is_none() && second_turn.borrow().is_none());
    assert_eq!(w.session.pending().len(), 2, "both still wait");
    assert_eq!(*w.counter.borrow(), 0);
    // Once only one waits, its call id alone is enough again.
    w.session.decide(&second, Decision::Approve).unwrap();
    pool.run_until_stalled();
    w.session.approve(&first.call, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&first_turn), "Bumped to 2.");
    assert_eq!(answer(&second_turn), "Bumped to 1.");
}

#[test]
fn always_granted_in_one_conversation_leaves_the_other_conversations_call_waiting() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let [(first, first_turn), (second, second_turn)] = two_waiting(&w, &mut pool);
    w.session.decide(&second, Decision::ApproveAlways).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&second_turn), "Bumped to 1.");
    assert!(first_turn.borrow().is_none());
    assert_eq!(w.session.pending()[0].key(), first);
}

/// The approval names what the tool says it does, from the tool itself: a registered
/// tool's description, and a host tool's (given through `host_tools`, as the JS API
/// registers them) for a host tool.
#[test]
fn a_waiting_call_carries_the_tools_own_description_to_the_person_deciding() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let pending = w.session.pending();
    assert_eq!(pending[0].description.as_deref(), Some("Bumps."));
    let announced = w.updates.borrow().iter().find_map(|u| match u {
        Update::Event {
            event: Event::ApprovalNeeded { description, .. },
            ..
        } => Some(description.clone()),
        _ => None,
    });
    assert_eq!(
        announced,
        Some(Some("Bumps.".to_owned())),
        "the update says it too"
    );
    let json = serde_json::to_value(&pending[0]).unwrap();
    assert_eq!(
        json["description"], "Bumps.",
        "and so does what JavaScript gets"
    );
    w.session.abort();
    pool.run_until_stalled();

    let ran = Rc::new(RefCell::new(0));
    let count = Rc::clone(&ran);
    let tool = HostTool {
        spec: ToolSpec {
            name: "spawn".into(),
            description: "Spawns a monster at the gate.".into(),
            parameters: json!({"type": "object", "properties": {"kind": {"type": "string"}}}),
        },
        kind: ToolKind::Action,
        approval: Approval::Ask,
        timeout_ms: 5_000,
        author: None,
        consequential: Vec::new(),
    };
    let handler = move |_: &str, _: Value| -> LocalBoxFuture<'static, _> {
        *count.borrow_mut() += 1;
        Box::pin(async { Ok(json!({"spawned": "goblin"})) })
    };
    w.session
        .host_tools()
        .register(tool, Rc::new(handler))
        .unwrap();
    spawn_send(&pool, &w.session, "a goblin");
    pool.run_until_stalled();
    let pending = w.session.pending();
    assert_eq!(pending.len(), 1, "{pending:?}");
    assert_eq!(pending[0].call.name, "spawn");
    assert_eq!(
        pending[0].description.as_deref(),
        Some("Spawns a monster at the gate.")
    );
    assert_eq!(*ran.borrow(), 0, "nothing ran before the decision");
}

#[test]
fn an_approval_pauses_the_turn_until_a_person_approves() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    assert!(bumped.borrow().is_none(), "waiting for a person");
    let pending = w.session.pending();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0].agent, "familiar");
    assert_eq!(*w.counter.borrow(), 0);
    assert!(names(&w.updates.borrow()).contains(&"approval_needed"));
    w.session.approve(&pending[0].call.id, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&bumped), "Bumped to 1.");
    assert!(w.session.pending().is_empty());
    assert!(w.session.approve("nope", false).is_err());
}

#[test]
fn a_denial_is_heard_by_the_model_and_nothing_is_applied() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let call = w.session.pending()[0].call.id.clone();
    w.session.deny(&call, "not today").unwrap();
    pool.run_until_stalled();
    assert!(bumped.borrow().is_some());
    assert_eq!(*w.counter.borrow(), 0);
    let turn = &w.session.conversation().interactions[0];
    let text = serde_json::to_string(turn).unwrap();
    assert!(text.contains("not today"), "{text}");
}

#[test]
fn always_holds_for_its_conversation_and_agent_only() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, true).unwrap();
    pool.run_until_stalled();
    // Same conversation, same agent: no question.
    let again = spawn_send(&pool, &w.session, "bump again");
    pool.run_until_stalled();
    assert_eq!(answer(&again), "Bumped to 2.");
    assert_eq!(
        w.session.always_allowed(),
        [("familiar".to_owned(), "bump".to_owned())],
        "what was allowed is visible"
    );
    // Taken back, it asks again; allowed once more, it goes on as before.
    w.session.ask_again("familiar", "bump");
    assert!(w.session.always_allowed().is_empty());
    let asked = spawn_send(&pool, &w.session, "bump once more");
    pool.run_until_stalled();
    assert!(asked.borrow().is_none(), "waits for a person again");
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, true).unwrap();
    pool.run_until_stalled();
    // Another agent in the same conversation asks.
    let keeper = spawn_send(&pool, &w.session, "@keeper bump");
    pool.run_until_stalled();
    assert!(keeper.borrow().is_none());
    assert_eq!(w.session.pending()[0].agent, "keeper");
    w.session.abort();
    pool.run_until_stalled();
    assert!(matches!(
        keeper.borrow().clone().unwrap().unwrap(),
        Outcome::Aborted { .. }
    ));
    // The same agent in another conversation asks again.
    w.session.new_conversation();
    let elsewhere = spawn_send(&pool, &w.session, "@familiar bump");
    pool.run_until_stalled();
    assert!(elsewhere.borrow().is_none());
    assert_eq!(w.session.pending().len(), 1);
}

#[test]
fn an_approver_in_code_decides_without_a_person() {
    let w = solo("t");
    let asked = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&asked);
    w.session.set_approver(Some(Rc::new(move |pending| {
        log.borrow_mut().push(pending.call.name.clone());
        Box::pin(async {
            Decision::Deny {
                reason: "the game says no".into(),
            }
        })
    })));
    let mut pool = LocalPool::new();
    let bumped = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    assert!(bumped.borrow().is_some());
    assert_eq!(*asked.borrow(), ["bump"]);
    assert_eq!(*w.counter.borrow(), 0);
}
