//! Incremental saves: a turn stores its own record and the conversation's small head,
//! so what a turn writes does not grow with the conversation; and a conversation saved
//! in the whole-conversation form of earlier builds still opens.

use familiar::app::{KEEP_STEPS_OF, Keys, Loaded, load_conversation};
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
fn a_turn_writes_the_same_bytes_at_the_six_hundredth_turn_as_at_the_three_hundredth() {
    let storage = Rc::new(VolatileStorage::new());
    let world = world("saves", Rc::clone(&storage));
    // By the three hundredth turn the history a run is sent has reached the context
    // budget, and turns have begun to grow old (each new turn folds one); from there on
    // nothing may grow.
    let early = bytes_per_turn(&storage, &world.session, 299);
    let late = bytes_per_turn(&storage, &world.session, 299);
    assert_eq!(world.session.conversation().interactions.len(), 600);
    // The head's turn list is a range and the index names the conversation once: what
    // differs is a few digits of ids and revisions.
    assert!(
        late <= early + early / 50,
        "turn 600 wrote {late} bytes, turn 300 wrote {early}"
    );
}

#[test]
fn old_turns_keep_their_trigger_and_answer_so_what_is_stored_stays_near_constant_per_turn() {
    let storage = Rc::new(VolatileStorage::new());
    let first = world("fold", Rc::clone(&storage));
    let stored = |storage: &VolatileStorage| -> usize {
        let keys = storage.keys();
        keys.iter()
            .map(|k| k.len() + storage.load(k).map_or(0, |v| v.len()))
            .sum()
    };
    let mut pool = LocalPool::new();
    let mut send = |n: usize| {
        for _ in 0..n {
            spawn_send(&pool, &first.session, "what time is it");
            pool.run_until_stalled();
        }
    };
    send(KEEP_STEPS_OF);
    let whole = stored(&storage);
    send(KEEP_STEPS_OF);
    let grown = stored(&storage) - whole;
    // The second lot made the first lot old: each of those is now a fraction of what
    // it was, and a new turn with all its steps costs what one did before.
    assert!(
        grown < whole / 2,
        "{KEEP_STEPS_OF} more turns stored {grown} bytes, the first {whole}"
    );
    let turns = first.session.conversation().interactions;
    assert_eq!(turns.len(), 2 * KEEP_STEPS_OF);
    let (old, new) = turns.split_at(KEEP_STEPS_OF);
    assert!(
        old.iter().all(|t| t.folded > 0 && t.steps.len() == 2),
        "{:?}",
        old[0]
    );
    assert!(
        new.iter().all(|t| t.folded == 0 && t.steps.len() > 2),
        "{:?}",
        new[0]
    );
    // Folded, a turn still reads back with its answer, and the model still hears it.
    assert!(
        old.iter()
            .all(|t| t.outcome().is_some_and(|o| o.text().contains("noon")))
    );
    let again = world("fold", Rc::clone(&storage));
    assert!(again.session.restore().is_empty());
    assert_eq!(again.session.conversation().interactions, turns);
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

#[test]
fn past_keep_turns_the_oldest_go_from_memory_and_storage_and_the_rest_reads_back() {
    let storage = Rc::new(VolatileStorage::new());
    let mut config = config("keep", &storage);
    config.options.keep_turns = 20;
    let tools = Rc::new(ToolRegistry::new());
    let agent = Agent::new("familiar", "Helps", "You help.", rules(), tools);
    let session = Session::new(config, Delegate::new(Rc::new(agent)));
    let mut pool = LocalPool::new();
    for n in 1..=60 {
        spawn_send(&pool, &session, &format!("message {n}"));
        pool.run_until_stalled();
    }
    let conversation = session.conversation();
    let ids: Vec<u64> = conversation.interactions.iter().map(|i| i.id).collect();
    // Let go in lots: never more than a tenth over, never fewer than asked.
    assert!((20..=23).contains(&ids.len()), "{ids:?}");
    assert_eq!(ids.last(), Some(&60));
    assert_eq!(conversation.let_go, 60 - ids.len() as u64);
    let key = Keys::new("keep").conversation(&session.conversation_id());
    let turns = storage
        .keys()
        .into_iter()
        .filter(|k| k.starts_with(&format!("{key}.turn.")))
        .count();
    assert_eq!(
        turns,
        ids.len(),
        "the turns let go are removed from storage"
    );
    let Loaded::Found(read) = load_conversation(storage.as_ref(), &key) else {
        panic!("does not read back");
    };
    assert_eq!(read, conversation);
}

#[test]
fn a_corrupt_channel_secret_is_kept_aside_and_said_not_replaced_in_silence() {
    let storage = Rc::new(VolatileStorage::new());
    storage.save("cs.channel", "not a secret").unwrap();
    let w = world("cs", Rc::clone(&storage));
    let _channel = w.session.channel();
    let told = w.updates.borrow().iter().any(|u| {
        matches!(u, Update::Notice(Notice::Corrupt { key, kept_as, .. })
            if key == "cs.channel" && kept_as == "cs.channel.corrupt")
    });
    assert!(told, "{:?}", w.updates.borrow());
    assert_eq!(
        storage.load("cs.channel.corrupt").as_deref(),
        Some("not a secret")
    );
    let fresh = storage.load("cs.channel").unwrap();
    assert!(
        familiar::base::json::from_text::<(u64, u64)>(&fresh).is_ok(),
        "a new secret is kept in its place: {fresh}"
    );
}
