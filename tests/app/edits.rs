//! Editing a sent message regenerates in place: the edited turn and every later one
//! are dropped (from memory and from storage) and the new text is asked in their
//! place, so a reload shows the edited conversation, not the old one.

use familiar::app::AppError;

use super::*;

/// Sends each of `texts` to completion.
fn converse(pool: &mut LocalPool, session: &Session, texts: &[&str]) {
    for text in texts {
        let slot = spawn_send(pool, session, text);
        pool.run_until_stalled();
        assert!(slot.borrow().is_some(), "{text} finished");
    }
}

/// The turn records stored for the open conversation, by id.
fn stored_turns(storage: &VolatileStorage, session: &Session) -> Vec<String> {
    let key = familiar::app::Keys::new("edit").conversation(&session.conversation_id());
    let prefix = format!("{key}.turn.");
    storage
        .keys()
        .into_iter()
        .filter(|k| k.starts_with(&prefix))
        .collect()
}

#[test]
fn an_edited_message_replaces_its_turn_and_the_later_ones_and_a_reload_shows_the_edit() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("edit", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    converse(
        &mut pool,
        &w.session,
        &["what time is it", "hello", "hello again"],
    );
    assert_eq!(stored_turns(&storage, &w.session).len(), 3);

    let run = w.session.edit(2, "the time, please").unwrap();
    // Dropped at once, before the new turn runs.
    assert_eq!(inputs(&w.session), ["what time is it"]);
    let outcome = Rc::new(RefCell::new(None));
    let out = Rc::clone(&outcome);
    pool.spawner()
        .spawn_local(async move { *out.borrow_mut() = Some(run.await) })
        .unwrap();
    pool.run_until_stalled();
    let answered = outcome.borrow().clone().unwrap().unwrap();
    assert_eq!(answered.text(), "It is noon.");
    assert_eq!(inputs(&w.session), ["what time is it", "the time, please"]);
    assert_eq!(
        stored_turns(&storage, &w.session).len(),
        2,
        "the third turn's record is gone from storage"
    );

    let again = world("edit", Rc::clone(&storage));
    again.session.restore();
    assert_eq!(
        inputs(&again.session),
        ["what time is it", "the time, please"]
    );
    let turns = again.session.conversation().interactions;
    assert_eq!(
        turns[1]
            .steps
            .last()
            .map(|s| format!("{s:?}").contains("noon")),
        Some(true)
    );
}

#[test]
fn editing_the_first_message_starts_over_and_its_new_turn_is_stored_while_it_runs() {
    let storage = Rc::new(VolatileStorage::new());
    let w = world("edit", Rc::clone(&storage));
    let mut pool = LocalPool::new();
    converse(&mut pool, &w.session, &["hello", "what time is it"]);
    let run = w.session.edit(1, "bump it").unwrap();
    pool.spawner()
        .spawn_local(async move {
            run.await.unwrap();
        })
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        w.session.pending().len(),
        1,
        "the new turn waits for approval"
    );
    // The new turn is numbered 1 again: its record, saved as it began, is not taken
    // for the old turn 1's and removed with it.
    assert_eq!(inputs(&w.session), ["bump it"]);
    let again = world("edit", Rc::clone(&storage));
    again.session.restore();
    assert_eq!(inputs(&again.session), ["bump it"]);
    w.session
        .approve(&w.session.pending()[0].call.id, false)
        .unwrap();
    pool.run_until_stalled();
    assert_eq!(
        w.session.conversations()[0].title,
        "bump it",
        "History's title too"
    );
}

#[test]
fn an_edit_is_refused_for_an_unknown_turn_empty_text_or_while_a_run_waits() {
    let w = solo("edit");
    let mut pool = LocalPool::new();
    converse(&mut pool, &w.session, &["hello"]);
    assert!(matches!(
        w.session.edit(7, "hi").err(),
        Some(AppError::NoTurn(7))
    ));
    assert!(matches!(
        w.session.edit(1, "  ").err(),
        Some(AppError::Empty)
    ));
    spawn_send(&pool, &w.session, "bump it");
    pool.run_until_stalled();
    assert_eq!(w.session.pending().len(), 1, "an approval waits");
    assert!(matches!(
        w.session.edit(1, "hi").err(),
        Some(AppError::Busy(_))
    ));
    assert_eq!(
        inputs(&w.session),
        ["hello", "bump it"],
        "nothing was dropped"
    );
}
