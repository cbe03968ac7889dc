//! Signing in through Supabase Auth's REST API against a scripted HTTP peer: the
//! requests the client makes, the session it keeps across a reload, refreshing before
//! expiry, and ended sessions said plainly; and a login's tokens going only to the
//! project that issued them.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

mod common;

use std::cell::RefCell;
use std::rc::Rc;

use common::ScriptedHttp;
use familiar::base::clock::{Clock, ManualClock};
use familiar::store::auth::{Account, AuthClient, AuthError, SignedInStore};
use familiar::store::{Persist, PostgrestStore, Select, Store, StoreError};
use futures::executor::block_on;
use serde_json::{Value, json};

const NOW_MS: i64 = 1_795_320_964_000;

#[derive(Default, Clone)]
struct Memory(Rc<RefCell<Option<String>>>);

impl Persist for Memory {
    fn load(&self) -> Option<String> {
        self.0.borrow().clone()
    }

    fn save(&self, snapshot: &str) {
        *self.0.borrow_mut() = Some(snapshot.to_owned());
    }
}

fn session(token: &str, expires_in: i64) -> String {
    json!({
        "access_token": token, "token_type": "bearer", "expires_in": expires_in,
        "expires_at": NOW_MS / 1000 + expires_in, "refresh_token": format!("refresh-{token}"),
        "user": {"id": "4b1d", "email": "", "is_anonymous": true, "role": "authenticated"},
    })
    .to_string()
}

fn account(http: &Rc<ScriptedHttp>, clock: &ManualClock, memory: &Memory) -> Account {
    account_of("https://demo.supabase.co/rest/v1/", http, clock, memory)
}

/// An account of the project at `url`, keeping its login in `memory`.
fn account_of(url: &str, http: &Rc<ScriptedHttp>, clock: &ManualClock, memory: &Memory) -> Account {
    let client = AuthClient::new(url, "anon-key", http.clone(), Rc::new(clock.clone()));
    Account::new(client, Box::new(memory.clone()))
}

/// Whether any request so far went to `origin`, or carried `secret` anywhere.
fn sent(http: &ScriptedHttp, origin: &str, secret: &str) -> Vec<String> {
    http.requests
        .borrow()
        .iter()
        .filter(|r| {
            r.url.starts_with(origin)
                || r.headers.iter().any(|(_, v)| v.contains(secret))
                || r.body.as_deref().is_some_and(|b| b.contains(secret))
        })
        .map(|r| format!("{} {}", r.method, r.url))
        .collect()
}

fn body(http: &ScriptedHttp, n: usize) -> Value {
    serde_json::from_str(http.requests.borrow()[n].body.as_deref().unwrap()).unwrap()
}

#[test]
fn an_anonymous_sign_in_is_a_signup_with_no_email_and_survives_a_reload() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("first", 3600));
    let signed_in = block_on(account(&http, &clock, &memory).sign_in_anonymously()).unwrap();
    assert_eq!(signed_in.user.id, "4b1d");
    assert!(signed_in.user.is_anonymous);
    assert_eq!(signed_in.user.email, None);
    let requests = http.requests.borrow();
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].url, "https://demo.supabase.co/auth/v1/signup");
    drop(requests);
    assert_eq!(body(&http, 0), json!({"data": {}}));
    assert_eq!(http.header(0, "apikey").as_deref(), Some("anon-key"));
    let reloaded = account(&http, &clock, &memory);
    assert_eq!(reloaded.login(), Some(signed_in));
    assert_eq!(block_on(reloaded.access_token()).unwrap(), "first");
    assert_eq!(
        http.requests.borrow().len(),
        1,
        "a fresh token needs no request"
    );
}

#[test]
fn a_token_about_to_expire_is_refreshed_first_and_the_new_session_kept() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("first", 3600));
    let account = account(&http, &clock, &memory);
    block_on(account.sign_in_anonymously()).unwrap();
    block_on(clock.sleep(3_560_000));
    http.reply(200, &session("second", 3600));
    assert_eq!(block_on(account.access_token()).unwrap(), "second");
    assert_eq!(
        http.requests.borrow()[1].url,
        "https://demo.supabase.co/auth/v1/token?grant_type=refresh_token"
    );
    assert_eq!(body(&http, 1), json!({"refresh_token": "refresh-first"}));
    assert!(memory.load().unwrap().contains("second"));
}

#[test]
fn a_revoked_session_is_a_clear_notice_and_is_forgotten() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("first", 30));
    let account = account(&http, &clock, &memory);
    block_on(account.sign_in_anonymously()).unwrap();
    http.reply(
        400,
        r#"{"code": 400, "error_code": "refresh_token_not_found", "msg": "Invalid Refresh Token: Refresh Token Not Found"}"#,
    );
    let error = block_on(account.access_token()).unwrap_err();
    assert_eq!(
        error,
        AuthError::SessionEnded("Invalid Refresh Token: Refresh Token Not Found".into())
    );
    assert_eq!(
        error.to_string(),
        "your session has ended (Invalid Refresh Token: Refresh Token Not Found); sign in again"
    );
    assert_eq!(account.login(), None);
    assert_eq!(memory.load().as_deref(), Some("null"));
}

#[test]
fn a_wrong_password_is_refused_in_the_servers_words_old_or_new() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    let account = account(&http, &clock, &memory);
    http.reply(
        400,
        r#"{"code": 400, "error_code": "invalid_credentials", "msg": "Invalid login credentials"}"#,
    );
    http.reply(
        400,
        r#"{"error": "invalid_grant", "error_description": "Invalid login credentials"}"#,
    );
    for _ in 0..2 {
        assert_eq!(
            block_on(account.sign_in("ann@example.com", "wrong")),
            Err(AuthError::Refused("Invalid login credentials".into()))
        );
    }
    assert_eq!(
        body(&http, 0),
        json!({"email": "ann@example.com", "password": "wrong"})
    );
    assert!(
        http.requests.borrow()[0]
            .url
            .ends_with("/auth/v1/token?grant_type=password")
    );
    assert_eq!(account.login(), None);
}

#[test]
fn a_sign_up_awaiting_email_confirmation_says_so() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(
        200,
        r#"{"id": "77", "email": "ann@example.com", "aud": "authenticated"}"#,
    );
    let account = account(&http, &clock, &memory);
    assert_eq!(
        block_on(account.sign_up("ann@example.com", "secret-1")),
        Err(AuthError::ConfirmEmail("ann@example.com".into()))
    );
}

#[test]
fn the_signed_in_store_sends_the_users_token_and_keeps_the_anon_key() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("user-jwt", 3600));
    let account = Rc::new(account(&http, &clock, &memory));
    block_on(account.sign_in_anonymously()).unwrap();
    let rest = PostgrestStore::new(
        "https://demo.supabase.co/rest/v1",
        "anon-key",
        http.clone(),
        Rc::new(clock.clone()),
        Box::new(|| 0.5),
    );
    let store = SignedInStore::new(rest, Rc::clone(&account));
    http.reply(200, r#"[{"id": 7, "content": "The ale is cold."}]"#);
    let found = block_on(store.select(&Select::from("memories"))).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(http.header(1, "apikey").as_deref(), Some("anon-key"));
    assert_eq!(
        http.header(1, "authorization").as_deref(),
        Some("Bearer user-jwt")
    );
    // Signed out, and the session ended elsewhere: a clear refusal, not anon rows.
    block_on(clock.sleep(3_600_000));
    http.reply(400, r#"{"error_code": "refresh_token_not_found", "msg": "Invalid Refresh Token: Refresh Token Not Found"}"#);
    let refused = block_on(store.select(&Select::from("memories"))).unwrap_err();
    assert!(matches!(&refused, StoreError::PermissionDenied(why) if why.contains("sign in again")));
}

#[test]
fn signing_out_ends_the_session_on_the_server_and_here() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("user-jwt", 3600));
    let account = account(&http, &clock, &memory);
    block_on(account.sign_in_anonymously()).unwrap();
    http.reply(204, "");
    block_on(account.sign_out()).unwrap();
    assert!(http.requests.borrow()[1].url.ends_with("/auth/v1/logout"));
    assert_eq!(
        http.header(1, "authorization").as_deref(),
        Some("Bearer user-jwt")
    );
    assert_eq!(account.login(), None);
    assert_eq!(block_on(account.access_token()), Err(AuthError::SignedOut));
}

#[test]
fn a_write_with_no_one_signed_in_is_refused_before_it_is_sent() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    let account = Rc::new(account(&http, &clock, &memory));
    let rest = PostgrestStore::new(
        "https://demo.supabase.co/rest/v1",
        "anon-key",
        http.clone(),
        Rc::new(clock.clone()),
        Box::new(|| 0.5),
    );
    let store = SignedInStore::new(rest, account);
    let call = familiar::store::Rpc {
        function: "do_work".into(),
        args: familiar::store::Row::new(),
    };
    let refused = block_on(store.rpc(&call)).unwrap_err();
    assert_eq!(
        refused,
        StoreError::PermissionDenied(
            "you are not signed in: sign in to the Supabase project first".into()
        )
    );
    assert!(http.requests.borrow().is_empty());
    http.reply(200, "[]");
    block_on(store.select(&Select::from("users"))).unwrap();
    assert_eq!(
        http.header(0, "authorization").as_deref(),
        Some("Bearer anon-key"),
        "reads go as anon"
    );
}

#[test]
fn a_login_records_the_project_that_issued_it() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("first", 3600));
    block_on(account(&http, &clock, &memory).sign_in_anonymously()).unwrap();
    let kept: Value = serde_json::from_str(&memory.load().unwrap()).unwrap();
    assert_eq!(kept["project"], "https://demo.supabase.co");
}

#[test]
fn a_kept_login_of_another_project_is_discarded_and_its_tokens_never_sent() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    // Signed in to the first project with a token about to expire: the next use
    // would refresh it.
    http.reply(200, &session("first", 30));
    block_on(account(&http, &clock, &memory).sign_in_anonymously()).unwrap();
    // The settings now name another project.
    http.reply(200, &session("stolen", 3600));
    let other = account_of("https://other.example.com", &http, &clock, &memory);
    assert_eq!(other.login(), None);
    assert_eq!(memory.load().as_deref(), Some("null"), "discarded");
    assert_eq!(block_on(other.access_token()), Err(AuthError::SignedOut));
    assert_eq!(
        sent(&http, "https://other.example.com", "first"),
        Vec::<String>::new()
    );
}

#[test]
fn a_login_kept_without_its_project_is_discarded() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    // The form logins were kept in before they recorded their project.
    memory.save(
        &json!({
            "access_token": "old", "refresh_token": "refresh-old",
            "expires_at": NOW_MS / 1000 + 30, "user": {"id": "4b1d"},
        })
        .to_string(),
    );
    let account = account(&http, &clock, &memory);
    assert_eq!(account.login(), None);
    assert_eq!(memory.load().as_deref(), Some("null"));
    assert_eq!(block_on(account.access_token()), Err(AuthError::SignedOut));
    assert!(http.requests.borrow().is_empty());
}

#[test]
fn the_auth_client_refuses_another_projects_login_before_sending_it() {
    let (http, clock) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
    );
    let login: familiar::store::auth::Login = serde_json::from_value(json!({
        "project": "https://demo.supabase.co",
        "access_token": "first", "refresh_token": "refresh-first",
        "expires_at": NOW_MS / 1000 + 30, "user": {"id": "4b1d"},
    }))
    .unwrap();
    let other = AuthClient::new(
        "https://other.example.com",
        "anon-key",
        http.clone(),
        Rc::new(clock.clone()),
    );
    for _ in 0..3 {
        http.reply(200, &session("stolen", 3600));
    }
    let refused = |e: &AuthError| {
        *e == AuthError::OtherProject("https://demo.supabase.co".into())
            && e.to_string().contains("another project")
    };
    assert!(refused(&block_on(other.refresh(&login)).unwrap_err()));
    assert!(refused(&block_on(other.user(&login)).unwrap_err()));
    assert!(refused(&block_on(other.sign_out(&login)).unwrap_err()));
    assert!(http.requests.borrow().is_empty());
    // Its own project takes it, however its URL is written.
    let own = AuthClient::new(
        "HTTPS://Demo.supabase.co/rest/v1/",
        "anon-key",
        http.clone(),
        Rc::new(clock.clone()),
    );
    assert_eq!(
        block_on(own.refresh(&login)).unwrap().access_token,
        "stolen"
    );
}

#[test]
fn a_signed_in_store_never_lends_its_login_to_another_projects_endpoint() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("user-jwt", 3600));
    let account = Rc::new(account(&http, &clock, &memory));
    block_on(account.sign_in_anonymously()).unwrap();
    let elsewhere = PostgrestStore::supabase(
        "https://other.example.com",
        "other-anon-key",
        http.clone(),
        Rc::new(clock.clone()),
        Box::new(|| 0.5),
    );
    let store = SignedInStore::new(elsewhere, account);
    http.reply(200, "[]");
    block_on(store.select(&Select::from("memories"))).unwrap();
    assert_eq!(
        http.header(1, "authorization").as_deref(),
        Some("Bearer other-anon-key"),
        "reads go as anon"
    );
    let call = familiar::store::Rpc {
        function: "do_work".into(),
        args: familiar::store::Row::new(),
    };
    let refused = block_on(store.rpc(&call)).unwrap_err();
    assert!(
        matches!(&refused, StoreError::PermissionDenied(why) if why.contains("sign in to this project")),
        "{refused:?}"
    );
    assert_eq!(http.requests.borrow().len(), 2, "the write is not sent");
    assert_eq!(
        sent(&http, "https://nowhere.invalid", "user-jwt"),
        Vec::<String>::new()
    );
}

#[test]
fn signing_out_forgets_the_login_when_called_not_when_the_server_answers() {
    let (http, clock, memory) = (
        Rc::new(ScriptedHttp::default()),
        ManualClock::starting_at(NOW_MS),
        Memory::default(),
    );
    http.reply(200, &session("user-jwt", 3600));
    let account = account(&http, &clock, &memory);
    block_on(account.sign_in_anonymously()).unwrap();
    let ending = account.sign_out();
    assert_eq!(account.login(), None);
    assert_eq!(memory.load().as_deref(), Some("null"));
    http.reply(204, "");
    block_on(ending).unwrap();
    assert!(http.requests.borrow()[1].url.ends_with("/auth/v1/logout"));
}

#[test]
fn a_project_is_the_same_however_its_url_is_written() {
    use familiar::store::auth::project_root;
    for url in [
        "https://demo.supabase.co",
        " https://demo.supabase.co/ ",
        "HTTPS://Demo.Supabase.co/rest/v1/",
        "https://demo.supabase.co/rest/v1",
    ] {
        assert_eq!(project_root(url), "https://demo.supabase.co", "{url}");
    }
    assert_eq!(
        project_root("http://127.0.0.1:8000/Project/rest/v1"),
        "http://127.0.0.1:8000/Project",
        "a path is kept as written"
    );
    assert_ne!(
        project_root("https://demo.supabase.co"),
        project_root("https://demo.supabase.co.evil.example")
    );
}
