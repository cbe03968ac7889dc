//! Game events: an event runs the loop under its boundaries with a host tool, and an
//! event without a kind is refused.

use super::*;

fn game_event(text: &str, allowed: Option<Vec<&str>>) -> Observation {
    Observation {
        trigger: Trigger {
            kind: "battle".into(),
            event: "battle.started".into(),
            timestamp: None,
        },
        actor: Actor {
            name: "Grunt".into(),
            ..Actor::default()
        },
        subject: Subject {
            kind: "battle".into(),
            content: text.into(),
            ..Subject::default()
        },
        boundaries: Boundaries {
            allowed_actions: allowed.map(|a| a.into_iter().map(String::from).collect()),
            ..Boundaries::default()
        },
        environment: None,
    }
}

/// A host tool `spawn` whose handler records its calls and answers at once.
fn host_spawn(session: &Session, kind: ToolKind) -> Rc<RefCell<Vec<(String, Value)>>> {
    let calls = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&calls);
    let tool = HostTool {
        spec: ToolSpec {
            name: "spawn".into(),
            description: "Spawns a monster.".into(),
            parameters: json!({"type": "object", "properties": {"kind": {"type": "string"}},
                               "required": ["kind"]}),
        },
        kind,
        approval: Approval::Auto,
        timeout_ms: 5_000,
        author: None,
        consequential: Vec::new(),
    };
    session
        .host_tools()
        .register(
            tool,
            Rc::new(move |id: &str, args: Value| -> LocalBoxFuture<'static, _> {
                log.borrow_mut().push((id.to_owned(), args.clone()));
                Box::pin(async move { Ok(json!({"spawned": args["kind"]})) })
            }),
        )
        .unwrap();
    calls
}

#[test]
fn a_game_event_runs_the_loop_with_its_boundaries_and_a_host_tool() {
    let w = solo("t");
    let calls = host_spawn(&w.session, ToolKind::Action);
    let mut pool = LocalPool::new();
    let session = w.session.clone();
    let outcome = Rc::new(RefCell::new(None));
    let out = Rc::clone(&outcome);
    pool.spawner()
        .spawn_local(async move {
            let event = game_event("A goblin attacks", Some(vec!["spawn"]));
            *out.borrow_mut() = Some(session.trigger(event).await.unwrap());
        })
        .unwrap();
    pool.run_until_stalled();
    // The seed's loop: act, then ask whether the goal is complete.
    let outcome = outcome.borrow().clone().unwrap();
    assert!(
        matches!(outcome, Outcome::GoalComplete { .. }),
        "{outcome:?}"
    );
    assert_eq!(calls.borrow().len(), 1);
    assert_eq!(calls.borrow()[0].1, json!({"kind": "goblin"}));
    let updates = w.updates.borrow();
    assert!(names(&updates).contains(&"goal_checked"));
    let conversation = w.session.conversation_id();
    assert!(updates.iter().all(|u| {
        u.turn()
            .is_none_or(|(c, turn)| c == conversation && turn == 1)
    }));

    // The same event where the trigger does not allow `spawn`: refused, not run.
    drop(updates);
    let session = w.session.clone();
    pool.spawner()
        .spawn_local(async move {
            session
                .trigger(game_event("A goblin attacks", Some(vec![])))
                .await
                .unwrap();
        })
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        calls.borrow().len(),
        1,
        "an action outside the boundaries never runs"
    );
}

#[test]
fn an_event_without_a_kind_is_refused() {
    let w = solo("t");
    let mut event = game_event("x", None);
    event.trigger.kind = " ".into();
    let error = futures::executor::block_on(w.session.trigger(event)).unwrap_err();
    assert!(error.to_string().contains("needs a kind"));
}
