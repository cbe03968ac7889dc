//! Messages waiting their turn: kept with the conversation until their turn is begun
//! and saved, so a reload while an approval waits loses none; sent after the run in
//! the way is dealt with, oldest first, each once.

use familiar::app::AppError;

use super::*;

/// Where a spawned `send_queued` leaves its outcomes.
type Sent = Rc<RefCell<Option<Result<Vec<Outcome>, AppError>>>>;

/// Spawns `send_queued(conversation)`; its outcomes land in the returned cell.
fn spawn_send_queued(pool: &LocalPool, session: &Session, conversation: &str) -> Sent {
    let slot = Rc::new(RefCell::new(None));
    let out = Rc::clone(&slot);
    let (session, conversation) = (session.clone(), conversation.to_owned());
    pool.spawner()
        .spawn_local(
            async move { *out.borrow_mut() = Some(session.send_queued(&conversation).await) },
        )
        .unwrap();
    slot
}

fn texts(slot: &Sent) -> Vec<String> {
    match slot.borrow().as_ref() {
        Some(Ok(outcomes)) => outcomes.iter().map(|o| o.text().to_owned()).collect(),
        other => panic!("not sent: {other:?}"),
    }
}

/// A page that sent "bump it" (waiting for approval) and then `queued`, and was
/// closed: its storage, and the conversation.
fn closed_while_approval_waits(queued: &[&str]) -> (Rc<VolatileStorage>, String) {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    for text in queued {
        spawn_send(&pool, &w.session, text);
    }
    pool.run_until_stalled();
    assert_eq!(w.session.pending().len(), 1);
    let conversation = w.session.conversation_id();
    assert_eq!(w.session.queued(&conversation), queued, "kept as they wait");
    (storage, conversation)
}

#[test]
fn messages_queued_behind_an_approval_survive_a_reload_and_go_once_after_the_resumed_run() {
    let (storage, conversation) =
        closed_while_approval_waits(&["what time is it", "what time is it"]);
    let w = world("t", Rc::clone(&storage));
    assert!(matches!(
        &w.session.restore()[..],
        [Notice::Interrupted { .. }]
    ));
    assert_eq!(
        w.session.queued(&conversation),
        ["what time is it", "what time is it"],
        "two equal messages stay two"
    );
    let mut pool = LocalPool::new();
    let resumed = spawn_resume(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    w.session
        .approve(&w.session.pending()[0].call.id, false)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        resumed.borrow_mut().take().unwrap().unwrap().text(),
        "Bumped to 1."
    );
    let sent = spawn_send_queued(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    assert_eq!(texts(&sent), ["It is noon.", "It is noon."]);
    assert_eq!(
        inputs(&w.session),
        ["bump it", "what time is it", "what time is it"]
    );
    assert!(w.session.queued(&conversation).is_empty());
    assert!(
        !storage.keys().iter().any(|k| k.starts_with("t.queued.")),
        "nothing left behind"
    );
}

#[test]
fn a_message_sent_later_goes_behind_the_ones_a_reload_left_waiting() {
    let (storage, conversation) = closed_while_approval_waits(&["what time is it"]);
    let w = world("t", Rc::clone(&storage));
    w.session.restore();
    w.session.discard_interrupted(&conversation).unwrap();
    let mut pool = LocalPool::new();
    let later = spawn_send(&pool, &w.session, "bump it again");
    pool.run_until_stalled();
    assert_eq!(
        inputs(&w.session),
        ["bump it", "what time is it", "bump it again"],
        "the older message first"
    );
    w.session
        .approve(&w.session.pending()[0].call.id, false)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        answer(&later),
        "Bumped to 1.",
        "the later send resolves to its own turn"
    );
    assert!(w.session.queued(&conversation).is_empty());
}

#[test]
fn two_senders_of_one_queue_take_each_message_once() {
    let (storage, conversation) = closed_while_approval_waits(&["what time is it", "bump it"]);
    let w = world("t", Rc::clone(&storage));
    w.session.restore();
    w.session.discard_interrupted(&conversation).unwrap();
    let mut pool = LocalPool::new();
    let first = spawn_send_queued(&pool, &w.session, &conversation);
    let second = spawn_send_queued(&pool, &w.session, &conversation);
    pool.run_until_stalled();
    w.session
        .approve(&w.session.pending()[0].call.id, false)
        .unwrap();
    pool.run_until_stalled();
    let mut answered = texts(&first);
    answered.extend(texts(&second));
    assert_eq!(answered.len(), 2, "{answered:?}");
    assert!(
        ["Bumped to 1.", "It is noon."]
            .iter()
            .all(|a| answered.iter().any(|b| b == a))
    );
    assert_eq!(
        inputs(&w.session),
        ["bump it", "what time is it", "bump it"]
    );
}

#[test]
fn a_begun_message_is_out_of_the_queue_so_a_reload_never_sends_it_twice() {
    let (storage, conversation) = closed_while_approval_waits(&["bump it again"]);
    {
        let w = world("t", Rc::clone(&storage));
        w.session.restore();
        w.session.discard_interrupted(&conversation).unwrap();
        let mut pool = LocalPool::new();
        spawn_send_queued(&pool, &w.session, &conversation);
        pool.run_until_stalled();
        // Its turn began (it waits for approval now), and the page closes again.
        assert_eq!(w.session.pending().len(), 1);
        assert!(w.session.queued(&conversation).is_empty());
    }
    let w = world("t", Rc::clone(&storage));
    let notices = w.session.restore();
    assert!(
        matches!(&notices[..], [Notice::Interrupted { turn: 2, .. }]),
        "{notices:?}"
    );
    assert!(w.session.queued(&conversation).is_empty());
    assert_eq!(inputs(&w.session), ["bump it", "bump it again"]);
}

#[test]
fn an_unreadable_queue_is_kept_aside_and_told() {
    let storage = Rc::new(VolatileStorage::new());
    storage.save("t.queued.c1", "[{\"number\": 1").unwrap();
    let w = world("t", Rc::clone(&storage));
    assert!(w.session.queued("c1").is_empty());
    assert_eq!(
        storage.load("t.queued.c1.corrupt").as_deref(),
        Some("[{\"number\": 1")
    );
    let told =
        w.updates.borrow().iter().any(
            |u| matches!(u, Update::Notice(Notice::Corrupt { key, .. }) if key == "t.queued.c1"),
        );
    assert!(told);
}

#[test]
fn a_message_sent_while_a_turn_waits_is_queued_and_answered_after_it() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    let bump = spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    let time = spawn_send(&pool, &w.session, "what time is it");
    pool.run_until_stalled();
    assert!(time.borrow().is_none(), "queued behind the approval");
    let call = w.session.pending()[0].call.id.clone();
    w.session.approve(&call, false).unwrap();
    pool.run_until_stalled();
    assert_eq!(answer(&bump), "Bumped to 1.");
    assert_eq!(answer(&time), "It is noon.");
    let inputs = inputs(&w.session);
    assert_eq!(inputs, ["bump it", "what time is it"]);
}
