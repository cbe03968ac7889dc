//! The PostgREST store against a scripted HTTP peer: the requests it builds, what it
//! retries, and how a retried insert with client-generated keys never writes twice.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use std::rc::Rc;

use common::{ScriptedHttp, rows};
use familiar::base::clock::ManualClock;
use familiar::base::http::HttpError;
use familiar::store::{Filtered, Insert, PostgrestStore, Select, Store, StoreError};
use futures::executor::block_on;
use serde_json::json;

fn store(http: &Rc<ScriptedHttp>) -> PostgrestStore {
    PostgrestStore::new(
        "http://127.0.0.1:3000/rest/v1/",
        "anon-key",
        http.clone(),
        Rc::new(ManualClock::default()),
        Box::new(|| 0.5),
    )
}

fn transaction_insert(client_key: bool) -> Insert {
    Insert {
        table: "transactions".into(),
        rows: rows(
            json!([{"id": "4f1c2d9e-0000-4000-8000-000000000001", "user_id": "3", "state": "ordered"}]),
        ),
        on_conflict: None,
        client_key: client_key.then(|| vec!["id".into()]),
        returning: true,
    }
}

#[test]
fn a_select_is_one_get_with_postgrest_parameters_and_keys() {
    let http = Rc::new(ScriptedHttp::default());
    http.reply(200, r#"[{"id": 1, "name": "Ann"}]"#);
    let select = Select::from("users")
        .columns("id,name")
        .eq("guild", "Lantern Guild")
        .order("id", false)
        .limit(5);
    let found = block_on(store(&http).with_schema("game").select(&select)).unwrap();
    assert_eq!(found, rows(json!([{"id": 1, "name": "Ann"}])));
    let requests = http.requests.borrow();
    assert_eq!(requests[0].method, "GET");
    assert_eq!(
        requests[0].url,
        "http://127.0.0.1:3000/rest/v1/users?select=id,name&guild=eq.Lantern%20Guild&order=id.desc&limit=5"
    );
    drop(requests);
    assert_eq!(http.header(0, "apikey").as_deref(), Some("anon-key"));
    assert_eq!(
        http.header(0, "authorization").as_deref(),
        Some("Bearer anon-key")
    );
    assert_eq!(http.header(0, "accept-profile").as_deref(), Some("game"));
}

#[test]
fn a_signed_in_user_sends_their_token() {
    let http = Rc::new(ScriptedHttp::default());
    http.reply(200, "[]");
    let store = store(&http);
    store.sign_in_as(Some("user-jwt".into()));
    block_on(store.select(&Select::from("memories"))).unwrap();
    assert_eq!(
        http.header(0, "authorization").as_deref(),
        Some("Bearer user-jwt")
    );
    assert_eq!(http.header(0, "apikey").as_deref(), Some("anon-key"));
}

#[test]
fn reads_are_retried_after_a_server_error() {
    let http = Rc::new(ScriptedHttp::default());
    http.reply(503, r#"{"message": "starting up"}"#)
        .reply(200, "[]");
    assert_eq!(
        block_on(store(&http).select(&Select::from("users"))),
        Ok(vec![])
    );
    assert_eq!(http.requests.borrow().len(), 2);
}

#[test]
fn a_plain_insert_is_never_retried() {
    let http = Rc::new(ScriptedHttp::default());
    http.fail(HttpError::Network("connection reset".into()));
    let result = block_on(store(&http).insert(&transaction_insert(false)));
    assert_eq!(
        result,
        Err(StoreError::Unreachable("connection reset".into()))
    );
    assert_eq!(http.requests.borrow().len(), 1);
}

#[test]
fn a_keyed_insert_retried_after_a_lost_response_never_writes_twice() {
    let http = Rc::new(ScriptedHttp::default());
    let row =
        r#"[{"id": "4f1c2d9e-0000-4000-8000-000000000001", "user_id": "3", "state": "ordered"}]"#;
    // The first insert landed but its response was lost; the retry skips the existing
    // row; the row is then read back by its key.
    http.fail(HttpError::Network("connection reset".into()))
        .reply(201, "")
        .reply(200, row);
    let stored = block_on(store(&http).insert(&transaction_insert(true))).unwrap();
    assert_eq!(stored, rows(serde_json::from_str(row).unwrap()));
    let requests = http.requests.borrow();
    assert_eq!(requests.len(), 3);
    assert_eq!(
        requests[1].url,
        "http://127.0.0.1:3000/rest/v1/transactions?on_conflict=id"
    );
    assert_eq!(
        requests[2].url,
        "http://127.0.0.1:3000/rest/v1/transactions?select=*&or=(and(id.eq.4f1c2d9e-0000-4000-8000-000000000001))"
    );
    drop(requests);
    assert_eq!(
        http.header(1, "prefer").as_deref(),
        Some("return=minimal,resolution=ignore-duplicates")
    );
    assert_eq!(
        http.header(0, "prefer").as_deref(),
        Some("return=representation")
    );
}

#[test]
fn a_keyed_insert_that_truly_conflicts_is_not_retried() {
    let http = Rc::new(ScriptedHttp::default());
    http.reply(409, r#"{"code": "23505", "message": "duplicate key", "details": "Key (id)=(x) already exists."}"#);
    let result = block_on(store(&http).insert(&transaction_insert(true)));
    assert_eq!(result, Err(StoreError::Duplicate("id".into())));
    assert_eq!(http.requests.borrow().len(), 1);
}

#[test]
fn single_asks_for_an_object_and_reads_postgrest_s_406() {
    let http = Rc::new(ScriptedHttp::default());
    http.reply(200, r#"{"id": 2, "name": "Bob"}"#).reply(
        406,
        r#"{"code": "PGRST116", "message": "JSON object requested, multiple (or no) rows returned", "details": "The result contains 0 rows"}"#,
    );
    let store = store(&http);
    let found = block_on(store.select(&Select::from("users").eq("id", 2).single())).unwrap();
    assert_eq!(found, rows(json!([{"id": 2, "name": "Bob"}])));
    assert_eq!(
        http.header(0, "accept").as_deref(),
        Some("application/vnd.pgrst.object+json")
    );
    let none = block_on(store.select(&Select::from("users").eq("id", 9).single()));
    assert_eq!(none, Err(StoreError::NotSingle(0)));
}

#[test]
fn a_hung_read_times_out_and_is_retried() {
    let http = Rc::new(ScriptedHttp::default());
    http.push(common::Reply::Hang).reply(200, "[]");
    let clock = ManualClock::default();
    let store = PostgrestStore::new(
        "http://127.0.0.1:3000",
        "anon-key",
        http.clone(),
        Rc::new(clock.clone()),
        Box::new(|| 0.5),
    )
    .with_timeout(2_000);
    assert_eq!(block_on(store.select(&Select::from("users"))), Ok(vec![]));
    assert_eq!(http.requests.borrow().len(), 2);
    assert_eq!(
        clock.sleeps(),
        [2_000, 250],
        "the timeout, then the jittered backoff"
    );
}

#[test]
fn a_hung_write_times_out_without_a_retry() {
    let http = Rc::new(ScriptedHttp::default());
    http.push(common::Reply::Hang);
    let store = PostgrestStore::new(
        "http://127.0.0.1:3000",
        "anon-key",
        http.clone(),
        Rc::new(ManualClock::default()),
        Box::new(|| 0.5),
    );
    let result = block_on(store.insert(&transaction_insert(false)));
    assert_eq!(
        result,
        Err(StoreError::Unreachable("no answer within 30000 ms".into()))
    );
    assert_eq!(http.requests.borrow().len(), 1);
}
