//! Tool calls: unknown tools, invalid arguments and failing tools become errors the
//! model reads, a hanging tool is stopped at its timeout, one step's data tools run
//! concurrently, host tools are awaited by request id, a switched-off tool never runs,
//! a reply with too many calls runs the first sixteen, and a huge result is cut to its
//! start.

use familiar::run::event::Thought;

use super::*;

#[test]
fn unknown_tools_invalid_arguments_and_failing_tools_become_errors_the_model_reads() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![
            call("c1", "teleport", "{}"),
            call("c2", "read", r#"{"unexpected": true}"#),
            call("c3", "fail", "{}"),
            call("c4", "bump", r#"{"by": "two"}"#),
        ])
        .push_text("Some tools did not work.");
    let mut run = bench.run("try everything");
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let errors: Vec<String> = tool_messages(&run)
        .iter()
        .map(|m| m["error"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(errors[0], "there is no tool named `teleport`");
    assert!(
        errors[1].starts_with("invalid arguments for `read`"),
        "{}",
        errors[1]
    );
    assert_eq!(errors[2], "`fail` failed: the well is dry");
    assert!(
        errors[3].starts_with("invalid arguments for `bump`"),
        "{}",
        errors[3]
    );
    assert_eq!(bench.applied.get(), 0, "an invalid action is not applied");
    let returns = events
        .iter()
        .filter(|e| {
            matches!(
                e,
                Event::Thought(Thought::ToolReturn { result: Err(_), .. })
            )
        })
        .count();
    assert_eq!(returns, 4);
    // The model saw the errors on its next turn.
    let last_request = model.requests().pop().unwrap();
    assert_eq!(
        last_request
            .messages
            .iter()
            .filter(|m| m.role == Role::Tool)
            .count(),
        4
    );
}

#[test]
fn a_tool_that_hangs_past_its_timeout_is_stopped_and_reported() {
    let bench = bench();
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "hang", "{}"), call("c2", "read", "{}")])
        .push_text("The slow tool timed out.");
    let mut run = bench.run("wait for it");
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let results = tool_messages(&run);
    assert_eq!(
        results[0]["error"],
        "`hang` took longer than 5000 ms and was stopped"
    );
    assert_eq!(
        results[1],
        json!({"counter": 0}),
        "the other call was not held up"
    );
    assert!(bench.clock.sleeps().contains(&5_000));
}

#[test]
fn data_tools_of_one_step_run_concurrently() {
    // `wait` finishes only once `signal` has run: in sequence it would never finish.
    let (tx, rx) = futures::channel::oneshot::channel::<()>();
    let rx = Rc::new(std::cell::RefCell::new(Some(rx)));
    let tx = Rc::new(std::cell::RefCell::new(Some(tx)));
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "wait",
        ToolKind::Data,
        "Waits for the signal.",
        move |_: NoArgs, _| {
            let rx = rx.borrow_mut().take();
            async move {
                match rx {
                    Some(rx) => rx.await.map(|()| "signalled").map_err(|_| "no signal"),
                    None => Err("already waited"),
                }
            }
        },
    );
    tools.register_fn("signal", ToolKind::Data, "Signals.", move |_: NoArgs, _| {
        let sent = tx.borrow_mut().take().map(|tx| tx.send(()));
        async move { sent.map(|_| "sent").ok_or("already signalled") }
    });
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "wait", "{}"), call("c2", "signal", "{}")])
        .push_text("both ran");
    let mut run = AgentRun::new("t", Vec::new(), Observation::chat("go"), tools.catalogue());
    let seams = Seams {
        llm: &model,
        tools: &tools,
        clock: &FrozenClock::at(0),
        host: None,
        checkpoint: None,
        relay: None,
    };
    let stop = block_on(drive(&mut run, &seams, &mut |_| {}));
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "both ran".into()
        })
    );
    assert_eq!(tool_messages(&run), [json!("signalled"), json!("sent")]);
}

/// A host that answers `spawn` calls and never answers anything else.
struct Game {
    requests: std::cell::RefCell<Vec<String>>,
}

impl familiar::run::driver::Host for Game {
    fn call<'a>(
        &'a self,
        request_id: &'a str,
        call: &'a ToolCall,
    ) -> futures::future::LocalBoxFuture<'a, Result<Value, String>> {
        self.requests.borrow_mut().push(request_id.to_owned());
        if call.name == "spawn" {
            Box::pin(async { Ok(json!({"spawned": "goblin"})) })
        } else {
            Box::pin(futures::future::pending())
        }
    }
}

#[test]
fn host_tools_are_awaited_by_request_id_under_their_timeout() {
    let mut tools = ToolRegistry::new();
    let spec = |name: &str| familiar::llm::ToolSpec {
        name: name.into(),
        description: format!("The game's {name}."),
        parameters: json!({"type": "object", "properties": {}}),
    };
    tools.register_host(spec("spawn"), ToolKind::Action, 30_000);
    tools.register_host(spec("look"), ToolKind::Data, 2_000);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "look", "{}")])
        .push_tool_calls(vec![call("c2", "spawn", "{}")])
        .push_text("A goblin appears.");
    let mut run = AgentRun::new(
        "t",
        Vec::new(),
        Observation::chat("spawn"),
        tools.catalogue(),
    )
    .with_id("npc-7");
    let game = Game {
        requests: Default::default(),
    };
    let clock = ManualClock::starting_at(0);
    let seams = Seams {
        llm: &model,
        tools: &tools,
        clock: &clock,
        host: Some(&game),
        checkpoint: None,
        relay: None,
    };
    let stop = block_on(drive(&mut run, &seams, &mut |_| {}));
    assert_eq!(
        stop,
        Stop::Done(Outcome::Answered {
            text: "A goblin appears.".into()
        })
    );
    let results = tool_messages(&run);
    assert_eq!(
        results[0]["error"],
        "`look` took longer than 2000 ms and was stopped"
    );
    assert_eq!(results[1], json!({"spawned": "goblin"}));
    assert_eq!(
        *game.requests.borrow(),
        ["npc-7/0.1/c1", "npc-7/1/c2"],
        "every call carries its key as request id"
    );
}

#[test]
fn a_switched_off_or_unknown_data_tool_called_by_name_does_not_run() {
    let mut bench = bench();
    bench.tools.set_approval("read", Approval::Deny);
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "read", "{}"), call("c2", "nowhere", "{}")])
        .push_text("I could not look.");
    let mut run = bench.run("read it anyway");
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::ToolStarted { .. }))
    );
    let errors: Vec<String> = tool_messages(&run)
        .iter()
        .map(|m| m["error"].as_str().unwrap().to_owned())
        .collect();
    assert!(errors[0].contains("switched off"), "{}", errors[0]);
    assert_eq!(errors[1], "there is no tool named `nowhere`");
}

#[test]
fn a_reply_with_too_many_calls_runs_the_first_sixteen_and_refuses_the_rest() {
    let bench = bench();
    let model = ScriptedModel::new();
    let calls = (0..40)
        .map(|i| call(&format!("r{i}"), "read", "{}"))
        .collect();
    model.push_tool_calls(calls).push_text("Read a lot.");
    let mut run = bench.run("read everything");
    let (stop, events) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let ran = events
        .iter()
        .filter(|e| matches!(e, Event::ToolStarted { .. }))
        .count();
    assert_eq!(ran, familiar::run::MAX_CALLS_PER_REPLY);
    let messages = tool_messages(&run);
    assert_eq!(messages.len(), 40, "every call gets its answer");
    assert!(
        messages[39]["error"]
            .as_str()
            .unwrap()
            .contains("at most 16 calls per reply")
    );
}

#[test]
fn a_huge_tool_result_reaches_the_model_cut_to_its_start() {
    let mut bench = bench();
    bench.tools.register_fn(
        "dump",
        ToolKind::Data,
        "Returns a lot.",
        |_: NoArgs, _| async { Ok::<_, String>(json!({ "text": "x".repeat(100_000) })) },
    );
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("d1", "dump", "{}")])
        .push_text("That was long.");
    let mut run = bench.run("dump it");
    bench.drive(&mut run, &model);
    let shown = &tool_messages(&run)[0];
    let note = shown["truncated"].as_str().unwrap();
    assert!(note.contains("100011 characters"), "{note}");
    assert_eq!(
        shown["start"].as_str().unwrap().chars().count(),
        familiar::run::MAX_RESULT_CHARS
    );
}

/// Seed 000's tool caching: a look-up whose tool keeps its answers, asked again in the
/// same run with the same arguments, is answered as before without running; other
/// arguments run it, and after an action it runs again (the action may have changed
/// what it reads). A tool that keeps nothing runs every time.
#[test]
fn a_kept_look_up_runs_once_a_run_until_an_action() {
    let mut bench = bench();
    let runs = Rc::new(Cell::new(0));
    for (name, keeps) in [("look", true), ("peek", false)] {
        let (runs, counter) = (Rc::clone(&runs), Rc::clone(&bench.applied));
        bench
            .tools
            .register_fn(name, ToolKind::Data, "Looks.", move |a: CountArgs, _| {
                runs.set(runs.get() + 1);
                let value = counter.get() + a.by;
                async move { Ok::<_, String>(json!({ "seen": value })) }
            });
        if keeps {
            bench.tools.cache_results(name);
        }
    }
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![
            call("c1", "look", r#"{"by": 0}"#),
            call("c2", "peek", r#"{"by": 0}"#),
        ])
        .push_tool_calls(vec![
            call("c3", "look", r#"{ "by": 0 }"#),
            call("c4", "peek", r#"{"by": 0}"#),
        ])
        .push_tool_calls(vec![call("c5", "look", r#"{"by": 1}"#)])
        .push_tool_calls(vec![call("c6", "bump", r#"{"by": 5}"#)])
        .push_tool_calls(vec![call("c7", "look", r#"{"by": 0}"#)])
        .push_text("Looked.");
    let mut run = bench.run("look around");
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let seen: Vec<Value> = tool_messages(&run)
        .iter()
        .map(|m| m["seen"].clone())
        .collect();
    assert_eq!(
        seen,
        [
            json!(0),
            json!(0),
            json!(0),
            json!(0),
            json!(1),
            Value::Null,
            json!(5)
        ]
    );
    assert_eq!(runs.get(), 5, "c3 answered as c1 was; c4, c5 and c7 ran");
}

/// The world the look-ups read is written by others during a run (another resident
/// acting in the same store): a kept answer holds only while the watched writes stay
/// where they were, so the look-up runs again once someone else has written.
#[test]
fn a_kept_look_up_runs_again_after_a_write_the_run_did_not_make() {
    let mut bench = bench();
    let runs = Rc::new(Cell::new(0));
    let writes = Rc::new(Cell::new(0_u64));
    let (count, counter) = (Rc::clone(&runs), Rc::clone(&bench.applied));
    bench
        .tools
        .register_fn("look", ToolKind::Data, "Looks.", move |_: NoArgs, _| {
            count.set(count.get() + 1);
            let value = counter.get();
            async move { Ok::<_, String>(json!({ "seen": value })) }
        });
    bench.tools.cache_results("look");
    // `other` is a look-up of the run during which another agent writes.
    let (other, counter) = (Rc::clone(&writes), Rc::clone(&bench.applied));
    bench
        .tools
        .register_fn("other", ToolKind::Data, "Waits.", move |_: NoArgs, _| {
            counter.set(counter.get() + 7);
            other.set(other.get() + 1);
            async { Ok::<_, String>(json!("waited")) }
        });
    let seen = Rc::clone(&writes);
    bench.tools.watch_writes(Rc::new(move || seen.get()));
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "look", "{}")])
        .push_tool_calls(vec![call("c2", "look", "{}")])
        .push_tool_calls(vec![call("c3", "other", "{}")])
        .push_tool_calls(vec![call("c4", "look", "{}")])
        .push_text("Looked.");
    let mut run = bench.run("look around");
    let (stop, _) = bench.drive(&mut run, &model);
    assert!(matches!(stop, Stop::Done(Outcome::Answered { .. })));
    let seen: Vec<Value> = tool_messages(&run)
        .iter()
        .map(|m| m.get("seen").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(seen, [json!(0), json!(0), Value::Null, json!(7)]);
    assert_eq!(
        runs.get(),
        2,
        "c2 answered as c1 was; c4 ran after the write"
    );
}

/// A composite takes a sub-agent's kept look-up with the writes that sub-agent's
/// registry watches, so the composite's runs drop its answers when that world is
/// written (once, however many of its tools are taken).
#[test]
fn an_adopted_look_up_brings_the_writes_its_owner_watches() {
    let writes = Rc::new(Cell::new(0_u64));
    let mut owner = ToolRegistry::new();
    for name in ["look", "peek"] {
        owner.register_fn(name, ToolKind::Data, "Looks.", |_: NoArgs, _| async {
            Ok::<_, String>(json!(1))
        });
        owner.cache_results(name);
    }
    let seen = Rc::clone(&writes);
    owner.watch_writes(Rc::new(move || seen.get()));
    let owner = Rc::new(owner);
    let mut composite = ToolRegistry::new();
    assert!(composite.adopt(&owner, "look") && composite.adopt(&owner, "peek"));
    assert!(composite.caches("look"));
    writes.set(5);
    assert_eq!(
        composite.writes_seen(),
        5,
        "watched once, as its owner does"
    );
}
