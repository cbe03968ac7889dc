//! Incremental saves: a turn stores its own record and the conversation's small head,
//! so what a turn writes does not grow with the conversation; and a conversation saved
//! in the whole-conversation form of earlier builds still opens.

use familiar::app::{Keys, Loaded, load_conversation};
use familiar::run::interaction::Conversation;

use super::*;

/// Bytes the session writes for one more "what time is it" turn after `turns` more.
fn bytes_per_turn(storage: &Rc<VolatileStorage>, session: &Session, turns: usize) -> usize {
    let mut pool = LocalPool::new();
    for _ in 0..turns {
        spawn_send(&pool, session, "what time is it");
        pool.run_until_stalled();
    }
    let before = storage.bytes_written();
    let slot = spawn_send(&pool, session, "what time is it");
    pool.run_until_stalled();
    assert!(answer(&slot).contains("noon"), "{}", answer(&slot));
    storage.bytes_written() - before
}

#[test]
fn a_turn_writes_the_same_bytes_at_the_four_hundredth_turn_as_at_the_two_hundredth() {
    let storage = Rc::new(VolatileStorage::new());
    let world = world("saves", Rc::clone(&storage));
    // By the two hundredth turn the history a run carries (saved with it before every
    // step) has reached the context budget; from there on nothing may grow.
    let early = bytes_per_turn(&storage, &world.session, 199);
    let late = bytes_per_turn(&storage, &world.session, 199);
    assert_eq!(world.session.conversation().interactions.len(), 400);
    // The head's turn list is a range and the index names the conversation once: what
    // differs is a few digits of ids and revisions.
    assert!(
        late <= early + early / 50,
        "turn 400 wrote {late} bytes, turn 200 wrote {early}"
    );
}

#[test]
fn a_conversation_saved_whole_by_an_earlier_build_opens_and_goes_on() {
    let storage = Rc::new(VolatileStorage::new());
    let first = world("old", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &first.session, "what time is it");
    pool.run_until_stalled();
    let id = first.session.conversation_id();
    let conversation: Conversation = first.session.conversation();
    // Rewrite it as builds before per-turn keys did: one key, the whole conversation.
    let key = Keys::new("old").conversation(&id);
    for stored in storage.keys() {
        if stored.starts_with(&format!("{key}.turn.")) {
            storage.remove(&stored);
        }
    }
    let whole = json!({ "version": 1, "revision": 7, "conversation": conversation });
    storage.save(&key, &whole.to_string()).unwrap();

    let again = world("old", Rc::clone(&storage));
    assert!(again.session.restore().is_empty());
    assert_eq!(again.session.conversation(), conversation);
    spawn_send(&pool, &again.session, "and the time now");
    pool.run_until_stalled();
    let Loaded::Found(read) = load_conversation(storage.as_ref(), &key) else {
        panic!("the migrated conversation does not read back");
    };
    assert_eq!(inputs_of(&read), ["what time is it", "and the time now"]);
    assert!(
        storage.load(&format!("{key}.turn.1")).is_some(),
        "migrated to turn keys"
    );
}

fn inputs_of(conversation: &Conversation) -> Vec<&str> {
    conversation
        .interactions
        .iter()
        .map(|i| i.input.as_str())
        .collect()
}
