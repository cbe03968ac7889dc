//! What a session keeps in its storage: a failed save is reported and the list not
//! advanced, conversations survive a new session and namespaces do not mix, a deleted
//! conversation can be taken back, corrupt saved data and a corrupt list of loaded
//! characters are kept aside and told, the whole state saves and loads into another
//! session, and two tabs on one conversation never overwrite each other.

use super::*;

#[test]
fn a_failed_save_is_reported_and_the_list_is_not_advanced() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "hello");
    pool.run_until_stalled();
    assert_eq!(w.session.conversations().len(), 1);
    storage.fill_up();
    w.session.new_conversation();
    let answered = spawn_send(&pool, &w.session, "still here?");
    pool.run_until_stalled();
    assert_eq!(
        answer(&answered),
        "I am here.",
        "the turn itself is not lost"
    );
    let failed: Vec<String> = w
        .updates
        .borrow()
        .iter()
        .filter_map(|u| match u {
            Update::Notice(Notice::SaveFailed { key, error }) => Some(format!("{key}: {error}")),
            _ => None,
        })
        .collect();
    assert!(!failed.is_empty());
    assert!(
        failed.iter().any(|f| f.contains("t.conversation.")),
        "{failed:?}"
    );
    assert_eq!(
        w.session.conversations().len(),
        1,
        "the list holds only what was saved"
    );
}

#[test]
fn conversations_survive_a_new_session_and_namespaces_do_not_mix() {
    let storage = Rc::new(VolatileStorage::new());
    let a = world("npc1", Rc::clone(&storage));
    let b = world("npc2", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &a.session, "hello from a");
    spawn_send(&pool, &b.session, "hello from b");
    pool.run_until_stalled();
    let again = world("npc1", Rc::clone(&storage));
    assert!(again.session.restore().is_empty());
    let inputs = inputs(&again.session);
    assert_eq!(inputs, ["hello from a"]);
    assert!(storage.keys().iter().any(|k| k.starts_with("npc2.")));
}

#[test]
fn a_deleted_conversation_can_be_taken_back_into_its_place() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "first");
    pool.run_until_stalled();
    let first = w.session.conversation_id();
    w.session.new_conversation();
    spawn_send(&pool, &w.session, "second");
    pool.run_until_stalled();
    let titles = |s: &Session| {
        s.conversations()
            .into_iter()
            .map(|c| c.title)
            .collect::<Vec<_>>()
    };
    assert_eq!(titles(&w.session), ["second", "first"]);

    let deleted = w
        .session
        .delete(&first)
        .expect("a saved conversation comes back");
    assert_eq!(titles(&w.session), ["second"]);
    assert!(storage.load(&format!("t.conversation.{first}")).is_none());
    w.session.undelete(deleted);
    assert_eq!(titles(&w.session), ["second", "first"], "back in its place");
    // Saved again: a new session reads it, turns and all.
    let again = world("t", Rc::clone(&storage));
    again.session.restore();
    again.session.open(&first).unwrap();
    assert_eq!(inputs(&again.session), ["first"]);
}

#[test]
fn corrupt_saved_data_is_kept_aside_and_told() {
    let storage = Rc::new(VolatileStorage::new());
    storage.save("t.current", "\"c1\"").unwrap();
    storage.save("t.conversation.c1", "{broken").unwrap();
    let w = world("t", Rc::clone(&storage));
    let notices = w.session.restore();
    assert!(
        matches!(&notices[..], [Notice::Corrupt { kept_as, .. }] if kept_as == "t.conversation.c1.corrupt")
    );
    assert_eq!(
        storage.load("t.conversation.c1.corrupt").as_deref(),
        Some("{broken")
    );
    assert!(w.session.conversation().interactions.is_empty());
}

#[test]
fn a_corrupt_list_of_loaded_characters_is_kept_aside_and_told_as_the_session_starts() {
    let storage = Rc::new(VolatileStorage::new());
    storage
        .save("t.characters", "[{\"key\":\"loaded:owl")
        .unwrap();
    let w = world("t", Rc::clone(&storage));
    let told = Rc::new(RefCell::new(Vec::new()));
    let sink = Rc::clone(&told);
    w.session.on(move |update| {
        if let Update::Notice(notice) = update {
            sink.borrow_mut().push(notice.clone());
        }
    });
    let notices = w.session.restore();
    assert!(
        matches!(&notices[..], [Notice::Corrupt { key, kept_as, .. }]
            if key == "t.characters" && kept_as == "t.characters.corrupt"),
        "{notices:?}"
    );
    assert_eq!(*told.borrow(), notices, "the listeners heard it");
    assert_eq!(
        storage.load("t.characters.corrupt").as_deref(),
        Some("[{\"key\":\"loaded:owl")
    );
}

#[test]
fn the_whole_state_saves_and_loads_into_another_session() {
    let w = solo("t");
    let mut pool = LocalPool::new();
    spawn_send(&pool, &w.session, "first");
    pool.run_until_stalled();
    w.session.new_conversation();
    spawn_send(&pool, &w.session, "second");
    pool.run_until_stalled();
    let state = w.session.save_state();
    assert_eq!(state.conversations.len(), 2);
    let json = serde_json::to_value(&state).unwrap();
    let other = solo("other");
    other
        .session
        .load_state(serde_json::from_value(json).unwrap())
        .unwrap();
    assert_eq!(other.session.conversations().len(), 2);
    assert_eq!(other.session.conversation().interactions[0].input, "second");
    let mut newer = w.session.save_state();
    newer.version = 99;
    assert!(other.session.load_state(newer).is_err());
}

#[test]
fn two_tabs_on_one_conversation_never_overwrite_each_other() {
    let storage = Rc::new(VolatileStorage::new());
    let first = world("t", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    spawn_send(&pool, &first.session, "hello");
    pool.run_until_stalled();
    // A second tab opens the same conversation, then both go on.
    let second = world("t", Rc::clone(&storage));
    second.session.restore();
    assert_eq!(
        second.session.conversation_id(),
        first.session.conversation_id()
    );
    spawn_send(&pool, &second.session, "from the second tab");
    pool.run_until_stalled();
    spawn_send(&pool, &first.session, "from the first tab");
    pool.run_until_stalled();
    let conflicts: Vec<String> = first
        .updates
        .borrow()
        .iter()
        .filter_map(|u| match u {
            Update::Notice(Notice::Conflict { key }) => Some(key.clone()),
            _ => None,
        })
        .collect();
    assert!(!conflicts.is_empty(), "the first tab was told");
    // What is saved is the second tab's version, whole.
    let reader = world("t", Rc::clone(&storage));
    reader.session.restore();
    assert_eq!(inputs(&reader.session), ["hello", "from the second tab"]);
    // The first tab still shows its own turn: nothing is lost from view.
    assert_eq!(inputs(&first.session), ["hello", "from the first tab"]);
}
