//! Durable runs: a run cut off by a reload (its session gone while a host tool or a
//! person was still to answer) is reported by the next session over the same
//! storage, resumed in its own turn without applying its actions again, or discarded.

use familiar::app::AppError;
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;
use familiar::run::interaction::Step;

use super::*;

fn call(id: &str, name: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    }
}

/// A model that bumps, then waits on the host's `slow`, then answers.
fn bump_then_wait() -> Rc<ScriptedModel> {
    let model = ScriptedModel::new();
    model
        .push_tool_calls(vec![call("c1", "bump")])
        .push_tool_calls(vec![call("c2", "slow")]);
    Rc::new(model)
}

/// A model that answers once, as the rest of a script cut off mid-way.
fn answering(text: &str) -> Rc<ScriptedModel> {
    let model = ScriptedModel::new();
    model.push_text(text);
    Rc::new(model)
}

fn run_keys(storage: &VolatileStorage) -> Vec<String> {
    let keys = storage.keys().into_iter();
    keys.filter(|k| k.starts_with("t.run.")).collect()
}

/// A run that bumped (approved) and then waited on the host, when its session went.
fn cut_off_after_the_action(storage: &Rc<VolatileStorage>, counter: &Rc<RefCell<i64>>) -> String {
    let w = world_with(
        "t",
        Rc::clone(storage),
        bump_then_wait(),
        Rc::clone(counter),
    );
    let _slow = host_slow(&w.session);
    let mut pool = LocalPool::new();
    let sent = spawn_send(&pool, &w.session, "bump, then wait");
    pool.run_until_stalled();
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, false).unwrap();
    pool.run_until_stalled();
    assert!(sent.borrow().is_none(), "still waiting on the host");
    assert_eq!(*counter.borrow(), 1);
    assert_eq!(run_keys(storage).len(), 1, "the run in flight is saved");
    // The page goes: the pool and the session are dropped mid-run.
    w.session.conversation_id()
}

#[test]
fn a_run_cut_off_by_a_reload_is_reported_and_resumed_without_applying_twice() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let conversation = cut_off_after_the_action(&storage, &counter);

    let model = answering("Bumped, and waited.");
    let w = world_with("t", Rc::clone(&storage), model.clone(), Rc::clone(&counter));
    let slow = host_slow(&w.session);
    let notices = w.session.restore();
    assert_eq!(
        notices,
        [Notice::Interrupted {
            conversation: conversation.clone(),
            turn: 1,
            agent: "familiar".into(),
            refused: None,
        }]
    );
    let mut pool = LocalPool::new();
    let resumed = spawn_resume(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    assert!(w.session.busy());
    // The host is asked again for the look-up it never answered.
    slow.borrow_mut()
        .pop()
        .unwrap()
        .send(json!({"done": "yes"}))
        .unwrap();
    pool.run_until_stalled();
    let outcome = resumed.borrow_mut().take().unwrap().unwrap();
    assert_eq!(outcome.text(), "Bumped, and waited.");
    assert_eq!(*counter.borrow(), 1, "the bump is not applied again");
    assert_eq!(model.remaining(), 0);
    // One turn, reopened and finished, with each call once and no "stopped" step.
    let turns = w.session.conversation().interactions;
    assert_eq!(turns.len(), 1);
    let turn = &turns[0];
    assert_eq!(turn.outcome(), Some(&outcome));
    let tools: Vec<&str> = turn
        .steps
        .iter()
        .filter_map(|s| match s {
            Step::ToolCall { call, .. } => Some(call.name.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(tools, ["bump", "slow"]);
    let answers = turn
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Answer { .. }));
    assert_eq!(answers.count(), 1);
    assert!(names(&w.updates.borrow()).contains(&"turn_resumed"));
    // Finished: nothing left to resume, and the answer is saved.
    assert!(run_keys(&storage).is_empty());
    let again = world("t", Rc::clone(&storage));
    assert!(again.session.restore().is_empty());
    assert_eq!(
        again.session.conversation().interactions[0].outcome(),
        Some(&outcome)
    );
}

#[test]
fn a_saved_run_leaves_the_earlier_turns_to_the_conversation_and_gets_them_back_on_resume() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    {
        let model = Rc::new(ScriptedModel::new());
        model
            .push_text("The harbour bell rings at dawn.")
            .push_tool_calls(vec![call("c1", "bump")]);
        let w = world_with("t", Rc::clone(&storage), model, Rc::clone(&counter));
        let mut pool = LocalPool::new();
        spawn_send(&pool, &w.session, "when does the harbour bell ring?");
        pool.run_until_stalled();
        spawn_send(&pool, &w.session, "bump it");
        pool.run_until_stalled();
        assert_eq!(w.session.pending().len(), 1);
    }
    // The step's save holds the run's own messages, not the first turn again.
    let saved = storage.load(&run_keys(&storage)[0]).unwrap();
    assert!(saved.contains("bump it"), "{saved}");
    assert!(!saved.contains("harbour"), "{saved}");

    let model = answering("Bumped.");
    let w = world_with("t", Rc::clone(&storage), model.clone(), Rc::clone(&counter));
    let conversation = match &w.session.restore()[..] {
        [Notice::Interrupted { conversation, .. }] => conversation.clone(),
        other => panic!("not reported: {other:?}"),
    };
    let mut pool = LocalPool::new();
    let resumed = spawn_resume(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    w.session
        .approve(&w.session.pending()[0].call.id, false)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        resumed.borrow_mut().take().unwrap().unwrap().text(),
        "Bumped."
    );
    // The model, after the resume, reads the earlier turn and then the run's own.
    let sent: Vec<String> = model.requests()[0]
        .messages
        .iter()
        .map(|m| m.content.clone())
        .collect();
    let at = |text: &str| sent.iter().position(|m| m.contains(text));
    let (Some(earlier), Some(answer), Some(own)) = (
        at("when does the harbour bell ring?"),
        at("The harbour bell rings at dawn."),
        at("bump it"),
    ) else {
        panic!("the history is not sent: {sent:?}");
    };
    assert!(earlier < answer && answer < own, "{sent:?}");
    assert_eq!(*counter.borrow(), 1);
}

#[test]
fn a_run_cut_off_while_waiting_for_approval_asks_again_when_resumed() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    {
        let model = Rc::new(ScriptedModel::new());
        model.push_tool_calls(vec![call("c1", "bump")]);
        let w = world_with("t", Rc::clone(&storage), model, Rc::clone(&counter));
        let mut pool = LocalPool::new();
        spawn_send(&pool, &w.session, "bump it");
        pool.run_until_stalled();
        assert_eq!(w.session.pending().len(), 1);
    }
    let w = world_with(
        "t",
        Rc::clone(&storage),
        answering("Bumped."),
        Rc::clone(&counter),
    );
    let conversation = match &w.session.restore()[..] {
        [Notice::Interrupted { conversation, .. }] => conversation.clone(),
        other => panic!("not reported: {other:?}"),
    };
    let mut pool = LocalPool::new();
    let resumed = spawn_resume(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    let pending = w.session.pending();
    assert_eq!(pending.len(), 1, "the person is asked again");
    assert_eq!(*counter.borrow(), 0);
    w.session.approve(&pending[0].call.id, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(
        resumed.borrow_mut().take().unwrap().unwrap().text(),
        "Bumped."
    );
    assert_eq!(*counter.borrow(), 1);
    assert!(run_keys(&storage).is_empty());
}

#[test]
fn a_discarded_run_is_gone_and_cannot_be_resumed() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let conversation = cut_off_after_the_action(&storage, &counter);
    let w = world("t", Rc::clone(&storage));
    assert_eq!(w.session.restore().len(), 1);
    w.session.discard_interrupted(&conversation).unwrap();
    assert!(run_keys(&storage).is_empty());
    assert!(world("t", Rc::clone(&storage)).session.restore().is_empty());
    let error = futures::executor::block_on(w.session.resume(&conversation)).unwrap_err();
    assert_eq!(error, AppError::NotInterrupted(conversation.clone()));
    assert!(w.session.discard_interrupted(&conversation).is_err());
    // The turn stays closed as it was read: stopped by the page closing.
    let turn = &w.session.conversation().interactions[0];
    assert!(matches!(turn.outcome(), Some(Outcome::Aborted { .. })));
    assert_eq!(*counter.borrow(), 1);
}

#[test]
fn finished_and_stopped_runs_leave_no_saved_run_behind() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    let time = spawn_send(&pool, &w.session, "what time is it");
    pool.run_until_stalled();
    assert_eq!(answer(&time), "It is noon.");
    assert!(run_keys(&storage).is_empty());
    let bump = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    assert_eq!(
        run_keys(&storage).len(),
        1,
        "saved while it waits for a person"
    );
    assert!(
        w.session.interrupted().is_empty(),
        "a run in flight here was not cut off"
    );
    w.session.abort();
    pool.run_until_stalled();
    assert!(matches!(
        bump.borrow().clone().unwrap().unwrap(),
        Outcome::Aborted { .. }
    ));
    assert!(run_keys(&storage).is_empty());
}

#[test]
fn an_unreadable_saved_run_is_kept_aside_and_told() {
    let storage = Rc::new(VolatileStorage::new());
    let counter = Rc::new(RefCell::new(0));
    let conversation = cut_off_after_the_action(&storage, &counter);
    let key = format!("t.run.{conversation}");
    let saved = storage.load(&key).unwrap();
    let mut newer: serde_json::Value = serde_json::from_str(&saved).unwrap();
    newer["version"] = json!(99);
    let newer = newer.to_string();
    storage.save(&key, &newer).unwrap();
    let w = world("t", Rc::clone(&storage));
    let notices = w.session.restore();
    let [Notice::Corrupt { kept_as, error, .. }] = &notices[..] else {
        panic!("not told: {notices:?}");
    };
    assert!(error.contains("version 99"), "{error}");
    assert_eq!(storage.load(kept_as), Some(newer));
    assert!(run_keys(&storage).iter().all(|k| k.ends_with(".corrupt")));
    let error = futures::executor::block_on(w.session.resume(&conversation)).unwrap_err();
    assert_eq!(error, AppError::NotInterrupted(conversation));
}

#[test]
fn a_played_characters_run_is_reported_but_resuming_it_is_refused() {
    let storage = Rc::new(VolatileStorage::new());
    let played = |llm: Rc<ScriptedModel>| {
        let world_store = Rc::new(LocalStore::new(familiar::world::schemas().unwrap()));
        let character =
            Character::from_json(include_str!("../../public/characters/dotty.json")).unwrap();
        let mut config = config("t", &storage);
        config.play = Some(Play {
            character: Rc::new(character),
            world: world_store,
            llm: Some(llm),
            player: "player".into(),
        });
        let familiar = Agent::new("familiar", "", "", rules(), Rc::new(ToolRegistry::new()));
        Session::new(config, Delegate::new(Rc::new(familiar)))
    };
    {
        // The character waits on the host when the page goes.
        let model = Rc::new(ScriptedModel::new());
        model.push_tool_calls(vec![call("c1", "slow")]);
        let session = played(model);
        let _slow = host_slow(&session);
        let mut pool = LocalPool::new();
        let sent = spawn_send(&pool, &session, "Hello there");
        pool.run_until_stalled();
        assert!(sent.borrow().is_none());
        assert_eq!(run_keys(&storage).len(), 1);
    }
    let session = played(answering("Here you are."));
    let notices = session.restore();
    let [
        Notice::Interrupted {
            conversation,
            refused: Some(why),
            ..
        },
    ] = &notices[..]
    else {
        panic!("not reported as refused: {notices:?}");
    };
    assert!(why.contains("character"), "{why}");
    let error = futures::executor::block_on(session.resume(conversation)).unwrap_err();
    assert!(matches!(error, AppError::CannotResume(_)), "{error}");
    assert_eq!(run_keys(&storage).len(), 1, "kept until it is discarded");
    session.discard_interrupted(conversation).unwrap();
    assert!(run_keys(&storage).is_empty());
}
