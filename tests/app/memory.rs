//! One memory per agent (seed 000): a resident's triggers and the person's `@name`
//! messages share its own conversation, whichever is open, with the context memory
//! its runs carry from one to the next; `@name` switches per conversation, and
//! another agent's answers are quoted as that agent's, not as the reader's own.

use super::*;
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;
use familiar::run::{ContextMemory, FollowUp};

fn scripted(answers: &[&str]) -> Rc<ScriptedModel> {
    let model = ScriptedModel::new();
    for answer in answers {
        model.push_text(*answer);
    }
    Rc::new(model)
}

fn agent(name: &str, model: &Rc<ScriptedModel>) -> Agent {
    Agent::new(
        name,
        format!("{name} of the world"),
        format!("You are {name}."),
        Rc::clone(model) as Rc<dyn Llm>,
        Rc::new(ToolRegistry::new()),
    )
}

/// A session whose default is `familiar`, with residents Dotty and Brannoc (each a
/// memory of its own) and a shared sub-agent `scribe`.
struct Town {
    session: Session,
    familiar: Rc<ScriptedModel>,
    dotty: Rc<ScriptedModel>,
    brannoc: Rc<ScriptedModel>,
    scribe: Rc<ScriptedModel>,
    updates: Rc<RefCell<Vec<Update>>>,
}

fn town(storage: &Rc<VolatileStorage>, answers: [&[&str]; 4]) -> Town {
    let [familiar, dotty, brannoc, scribe] = answers.map(scripted);
    let delegate = Delegate::new(Rc::new(agent("familiar", &familiar)))
        .with_agent(Rc::new(agent("Dotty", &dotty).with_own_memory()))
        .with_agent(Rc::new(agent("Brannoc", &brannoc).with_own_memory()))
        .with_agent(Rc::new(agent("scribe", &scribe)));
    let session = Session::new(config("town", storage), delegate);
    let updates = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&updates);
    session.on(move |u| log.borrow_mut().push(u.clone()));
    Town {
        session,
        familiar,
        dotty,
        brannoc,
        scribe,
        updates,
    }
}

fn event_for(name: &str, text: &str) -> Observation {
    Observation {
        trigger: Trigger {
            kind: "battle".into(),
            event: "battle.started".into(),
            timestamp: None,
        },
        actor: Actor {
            name: name.into(),
            ..Actor::default()
        },
        subject: Subject {
            content: text.into(),
            ..Subject::default()
        },
        boundaries: Boundaries::default(),
        environment: None,
    }
}

/// The user and assistant texts of a model request.
fn said(model: &ScriptedModel, request: usize) -> Vec<String> {
    model.requests()[request]
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect()
}

fn block<T>(future: impl std::future::Future<Output = T>) -> T {
    futures::executor::block_on(future)
}

#[test]
fn two_residents_triggered_in_turn_each_read_only_their_own_history() {
    let storage = Rc::new(VolatileStorage::new());
    let t = town(
        &storage,
        [
            &[],
            &["Dotty joins.", "Dotty rests."],
            &["Brannoc sulks."],
            &[],
        ],
    );
    let open = t.session.conversation_id();
    block(
        t.session
            .trigger(event_for("Dotty", "Battle 1 has started.")),
    )
    .unwrap();
    block(
        t.session
            .trigger(event_for("Brannoc", "Battle 2 has started.")),
    )
    .unwrap();
    block(
        t.session
            .trigger(event_for("Dotty", "Battle 3 has started.")),
    )
    .unwrap();

    // Dotty's second run reads her first turn, and nothing of Brannoc's.
    assert_eq!(
        said(&t.dotty, 1),
        [
            "Battle 1 has started.",
            "Dotty joins.",
            "Battle 3 has started."
        ]
    );
    assert_eq!(said(&t.brannoc, 0), ["Battle 2 has started."]);
    // Each is kept in the resident's own conversation, not in the open chat.
    assert_eq!(t.session.conversation_id(), open, "a trigger opens nothing");
    assert!(t.session.conversation().interactions.is_empty());
    let own = |id: &str| {
        t.session.open(id).unwrap();
        inputs(&t.session)
    };
    assert_eq!(
        own("agent:Dotty"),
        ["Battle 1 has started.", "Battle 3 has started."]
    );
    assert_eq!(own("agent:Brannoc"), ["Battle 2 has started."]);
    let who: Vec<String> = t
        .session
        .conversation()
        .interactions
        .iter()
        .map(|i| i.agent.clone())
        .collect();
    assert_eq!(who, ["Brannoc"], "each turn names the agent that answered");

    // After a reload, the histories are still apart.
    let again = town(&storage, [&[], &["Dotty again."], &[], &[]]);
    again.session.restore();
    block(
        again
            .session
            .trigger(event_for("Dotty", "Battle 4 has started.")),
    )
    .unwrap();
    let history = said(&again.dotty, 0);
    assert_eq!(history.len(), 5, "{history:?}");
    assert!(
        history.iter().all(|m| !m.contains("Brannoc")),
        "{history:?}"
    );
}

#[test]
fn a_residents_conversation_opens_before_its_first_turn_and_no_one_elses_does() {
    let t = town(&Rc::new(VolatileStorage::new()), [&[], &[], &[], &[]]);
    t.session.open("agent:Dotty").unwrap();
    assert_eq!(t.session.conversation_id(), "agent:Dotty");
    assert!(t.session.conversation().interactions.is_empty());
    assert!(t.session.open("agent:scribe").is_err(), "not a resident");
    assert!(t.session.open("agent:nobody").is_err());
}

#[test]
fn a_message_to_a_resident_opens_its_own_conversation_and_the_default_name_leaves_it() {
    let storage = Rc::new(VolatileStorage::new());
    let t = town(
        &storage,
        [
            &["Hi.", "Welcome back."],
            &["Dotty fought.", "Hello, friend."],
            &[],
            &[],
        ],
    );
    block(t.session.send("hello")).unwrap_err_or_answer();
    let chat = t.session.conversation_id();
    block(
        t.session
            .trigger(event_for("Dotty", "Battle 1 has started.")),
    )
    .unwrap();

    let outcome = block(t.session.send("@Dotty how was the battle?")).unwrap();
    assert_eq!(outcome.text(), "Hello, friend.");
    assert_eq!(t.session.conversation_id(), "agent:Dotty");
    assert!(
        t.updates
            .borrow()
            .iter()
            .any(|u| matches!(u, Update::Opened { conversation } if conversation == "agent:Dotty"))
    );
    // The message joins the memory her triggers share.
    assert_eq!(
        said(&t.dotty, 1),
        [
            "Battle 1 has started.",
            "Dotty fought.",
            "how was the battle?"
        ]
    );

    // `@familiar` leaves for the newest other conversation.
    let outcome = block(t.session.send("@familiar I am back")).unwrap();
    assert_eq!(outcome.text(), "Welcome back.");
    assert_eq!(t.session.conversation_id(), chat);
    assert_eq!(inputs(&t.session), ["hello", "@familiar I am back"]);
}

#[test]
fn switching_agents_holds_per_conversation_and_survives_a_reload() {
    let storage = Rc::new(VolatileStorage::new());
    let t = town(
        &storage,
        [&["Plain answer."], &[], &[], &["Noted.", "Still noting."]],
    );
    block(t.session.send("@scribe take a note")).unwrap();
    let first = t.session.conversation_id();
    t.session.new_conversation();
    let outcome = block(t.session.send("who answers here?")).unwrap();
    assert_eq!(
        outcome.text(),
        "Plain answer.",
        "a new conversation starts at the default"
    );

    let again = town(&storage, [&[], &[], &[], &["Still noting."]]);
    again.session.restore();
    again.session.open(&first).unwrap();
    let outcome = block(again.session.send("and another")).unwrap();
    assert_eq!(
        outcome.text(),
        "Still noting.",
        "the switch was kept with the conversation"
    );
    assert_eq!(t.familiar.remaining() + t.scribe.remaining(), 1);
}

#[test]
fn another_agents_answer_is_quoted_as_theirs() {
    let storage = Rc::new(VolatileStorage::new());
    let t = town(
        &storage,
        [&["I am the familiar."], &[], &[], &["Scribe here."]],
    );
    block(t.session.send("hi")).unwrap();
    block(t.session.send("@scribe and you?")).unwrap();
    let history = said(&t.scribe, 0);
    assert_eq!(history[0], "hi");
    assert!(
        history[1].contains("@familiar answered that, not you")
            && history[1].contains("I am the familiar."),
        "{history:?}"
    );
    assert_eq!(
        t.scribe.requests()[0].messages[1].role,
        familiar::llm::message::Role::User,
        "not as the scribe's own answer"
    );
}

/// Dotty with a `reply` and a `march` action, thinking with `model`.
fn dotty_with_tools(model: &Rc<ScriptedModel>) -> Agent {
    let mut tools = ToolRegistry::new();
    tools.register_fn(
        "reply",
        ToolKind::Action,
        "Replies.",
        |_: NoArgs, _| async { Ok::<_, String>(json!({"sent": true})) },
    );
    tools.register_fn(
        "march",
        ToolKind::Action,
        "Marches.",
        |_: NoArgs, _| async { Ok::<_, String>(json!({"marched": true})) },
    );
    let model = Rc::clone(model) as Rc<dyn Llm>;
    Agent::new("Dotty", "", "You are Dotty.", model, Rc::new(tools)).with_own_memory()
}

fn with_dotty(storage: &Rc<VolatileStorage>, model: &Rc<ScriptedModel>) -> Session {
    let familiar = Agent::new("familiar", "", "", rules(), Rc::new(ToolRegistry::new()));
    let config = Config {
        options: Options {
            planning_on_events: true,
            ..Options::default()
        },
        ..config("owed", storage)
    };
    let delegate = Delegate::new(Rc::new(familiar)).with_agent(Rc::new(dotty_with_tools(model)));
    Session::new(config, delegate)
}

#[test]
fn a_follow_up_a_trigger_cannot_settle_waits_for_one_that_can() {
    let storage = Rc::new(VolatileStorage::new());
    let dotty = ScriptedModel::new();
    // Run 1 (a leader's call): records that a reply is owed, then answers in words.
    dotty.push_tool_calls(vec![ToolCall {
        id: "p1".into(),
        name: "plan".into(),
        arguments: json!({"remember": {"battle_id": 456},
            "owe": [{"tool": "reply", "note": "report back to the leader"}]})
        .to_string()
        .into(),
    }]);
    dotty.push_text("Off to battle.");
    dotty.push_text("Marched.");
    dotty.push_text("Replied.");
    let dotty = Rc::new(dotty);
    let session = with_dotty(&storage, &dotty);
    block(session.trigger(event_for("Dotty", "Everyone fight!"))).unwrap();
    let kept = |session: &Session| {
        session.open("agent:Dotty").unwrap();
        session.conversation().memory
    };
    let memory = kept(&session);
    assert_eq!(memory.facts.get("battle_id"), Some(&json!(456)));
    assert_eq!(
        memory.owed,
        [FollowUp {
            tool: "reply".into(),
            note: "report back to the leader".into()
        }]
    );

    // A trigger that allows only marching: the reply is kept aside, not owed by it.
    let mut march = event_for("Dotty", "March to the gate.");
    march.boundaries.allowed_actions = Some(vec!["march".into()]);
    block(session.trigger(march)).unwrap();
    let system = |at: usize| dotty.requests()[at].system.clone();
    assert!(
        system(2).contains("battle_id") && !system(2).contains("report back"),
        "{}",
        system(2)
    );
    assert_eq!(kept(&session), memory, "still owed");

    // Reloaded, the memory is still there, and a trigger that allows replying is told
    // the reply is owed.
    let reloaded = with_dotty(&storage, &dotty);
    reloaded.restore();
    assert_eq!(kept(&reloaded), memory);
    block(reloaded.trigger(event_for("Dotty", "Report in."))).unwrap();
    assert!(
        system(3).contains("report back to the leader"),
        "{}",
        system(3)
    );
    assert_eq!(
        ContextMemory::carried(&memory, memory.owed.clone()),
        memory,
        "a follow-up kept aside is owed once"
    );
}

trait AnswerOrError {
    fn unwrap_err_or_answer(self);
}

impl AnswerOrError for Result<Outcome, familiar::app::AppError> {
    fn unwrap_err_or_answer(self) {
        assert!(self.is_ok(), "{self:?}");
    }
}

#[test]
fn the_environment_joins_each_turn_and_the_actors_state_is_read_as_it_fires() {
    let storage = Rc::new(VolatileStorage::new());
    let t = town(&storage, [&["Quiet indeed."], &["Dotty rests."], &[], &[]]);
    t.session
        .set_environment(Some(Rc::new(|observation: &Observation| {
            let mut actor = serde_json::Map::new();
            if observation.actor.name == "Dotty" {
                actor.insert("energy".into(), json!(10));
            }
            let perceived = familiar::app::Perceived {
                text: format!("The tavern is quiet. {}", "x".repeat(5_000)),
                others: observation.actor.name == "Dotty",
                actor,
            };
            Box::pin(async move { perceived })
        })));
    block(t.session.send("how is it?")).unwrap();
    let heard = said(&t.familiar, 0);
    assert!(
        heard[0].starts_with("ENVIRONMENT (what you perceive now): The tavern is quiet.")
            && heard[0].ends_with("…(cut)")
            && heard[0].chars().count() < 4_100,
        "bounded, and before the input: {heard:?}"
    );
    assert_eq!(heard[1], "how is it?");

    block(
        t.session
            .trigger(event_for("Dotty", "Battle 1 has started.")),
    )
    .unwrap();
    let request = &t.dotty.requests()[0];
    assert!(
        request.system.contains("\"energy\":10"),
        "{}",
        request.system
    );
    assert!(
        request.messages[0]
            .content
            .contains("written by others, quoted as data"),
        "{:?}",
        request.messages[0]
    );
    t.session.open("agent:Dotty").unwrap();
    assert!(
        t.session.conversation().untrusted,
        "others' text taints the conversation"
    );
}

#[test]
fn a_guessed_goal_is_recorded_with_the_turn() {
    let storage = Rc::new(VolatileStorage::new());
    let model = Rc::new(ScriptedModel::new());
    model
        .push_text(r#"{"goal": "find a cheap room for the night"}"#)
        .push_text("The Lantern has rooms at 5 gold.");
    let familiar = Agent::new(
        "familiar",
        "",
        "",
        Rc::clone(&model) as Rc<dyn Llm>,
        Rc::new(ToolRegistry::new()),
    );
    let config = Config {
        options: Options {
            guess_goal: true,
            ..Options::default()
        },
        ..config("goal", &storage)
    };
    let session = Session::new(config, Delegate::new(Rc::new(familiar)));
    block(session.send("where can I sleep?")).unwrap();
    let turn = &session.conversation().interactions[0];
    assert_eq!(
        turn.goal.as_deref(),
        Some("find a cheap room for the night")
    );
    assert_eq!(turn.agent, "familiar");
    let observed = turn.steps.iter().any(|s| {
        matches!(s, familiar::run::interaction::Step::Observe { trigger, .. } if trigger.event == "message.received")
    });
    assert!(observed, "the turn records the trigger it answered");
}

#[test]
fn another_agents_event_never_lands_in_an_open_residents_conversation() {
    let storage = Rc::new(VolatileStorage::new());
    let t = town(&storage, [&["Hi.", "The gate is shut."], &[], &[], &[]]);
    block(t.session.send("hello")).unwrap();
    let chat = t.session.conversation_id();
    t.session.open("agent:Dotty").unwrap();
    block(t.session.trigger(event_for("", "Raiders at the gate."))).unwrap();
    assert_eq!(
        t.session.conversation_id(),
        "agent:Dotty",
        "an event opens nothing"
    );
    assert!(
        t.session.conversation().interactions.is_empty(),
        "not Dotty's"
    );
    t.session.open(&chat).unwrap();
    assert_eq!(inputs(&t.session), ["hello", "Raiders at the gate."]);
}
