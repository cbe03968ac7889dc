//! Signing in to a Supabase project through Supabase Auth's REST API (`/auth/v1`),
//! over the [`Http`] seam: anonymous sign-in, email + password sign-up and sign-in,
//! refreshing the access token before it expires, and sign-out. An [`Account`] holds
//! the session, keeps it in a [`Persist`] so it survives a reload, and hands out a
//! fresh access token; [`SignedInStore`] puts that token on every PostgREST request
//! (the `apikey` header stays the anon key). An ended session — expired past refresh,
//! or revoked — is [`AuthError::SessionEnded`], said plainly, never a silent failure.
//!
//! A login belongs to the project that issued it ([`Login::project`]): its tokens go
//! to that project's URL and nowhere else. [`AuthClient`] refuses, unsent, a login of
//! another project; an [`Account`] discards one it finds kept; [`SignedInStore`] never
//! puts a login on requests to another project's endpoint.

use crate::base::json::Read;
use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use futures::future::LocalBoxFuture;
use serde::Serialize;
use serde_json::{Value, json};

use crate::base::clock::Clock;
use crate::base::http::{Http, HttpError, HttpRequest};
use crate::store::{
    Delete, Insert, Patch, Persist, PostgrestStore, Row, Rpc, Select, Store, StoreError,
};

/// How long before its expiry an access token is refreshed, in seconds.
const REFRESH_MARGIN_S: i64 = 60;
/// The most bytes an auth answer may take.
const MAX_ANSWER_BYTES: usize = 1 << 20;

/// A signed-in user as Supabase Auth describes them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct AuthUser {
    /// The user's id: the JWT's `sub`, and `users.auth_id` in the world.
    pub id: String,
    #[serde(default)]
    pub email: Option<String>,
    #[serde(default)]
    pub is_anonymous: bool,
}

/// A login: the tokens of a signed-in user, whom they belong to, and which project
/// issued them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Login {
    /// The issuing project's root URL, as [`project_root`] gives it: its tokens are
    /// sent there only. A kept login without one (saved before logins recorded their
    /// project) does not read, and so is discarded.
    pub project: String,
    pub access_token: String,
    pub refresh_token: String,
    /// When the access token expires, in seconds since the epoch.
    pub expires_at: i64,
    pub user: AuthUser,
}

impl Login {
    /// Whether the access token should be refreshed at `now_ms` (it expires within a
    /// minute, or has).
    pub fn needs_refresh(&self, now_ms: i64) -> bool {
        self.expires_at - now_ms / 1000 <= REFRESH_MARGIN_S
    }

    /// Whether `project` (a root URL or REST endpoint) is the one that issued this login.
    pub fn is_for(&self, project: &str) -> bool {
        !self.project.is_empty() && self.project == project_root(project)
    }

    /// The session from `project`'s Supabase Auth answer, at `now_ms` (`expires_at` is
    /// computed from `expires_in` when the server leaves it out).
    fn from_answer(project: &str, answer: &Value, now_ms: i64) -> Result<Self, AuthError> {
        let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
        let (Some(access_token), Some(refresh_token)) =
            (text("access_token"), text("refresh_token"))
        else {
            return Err(AuthError::BadAnswer("it has no session".into()));
        };
        let expires_at = answer
            .get("expires_at")
            .and_then(Value::as_i64)
            .or_else(|| {
                let expires_in = answer.get("expires_in").and_then(Value::as_i64)?;
                Some(now_ms / 1000 + expires_in)
            })
            .ok_or_else(|| AuthError::BadAnswer("it says no expiry".into()))?;
        let user = answer
            .get("user")
            .cloned()
            .ok_or_else(|| AuthError::BadAnswer("it names no user".into()))
            .and_then(read_user)?;
        Ok(Self {
            project: project.to_owned(),
            access_token,
            refresh_token,
            expires_at,
            user,
        })
    }
}

/// A project's root URL, the same however it is written: trimmed, without trailing
/// slashes or the `/rest/v1` endpoint, scheme and host in lower case
/// (`HTTPS://Demo.supabase.co/rest/v1/` is `https://demo.supabase.co`).
pub fn project_root(url: &str) -> String {
    let url = url.trim().trim_end_matches('/');
    let url = url
        .strip_suffix("/rest/v1")
        .unwrap_or(url)
        .trim_end_matches('/');
    let origin_end = url.find("://").map_or(0, |scheme| {
        let rest = url.get(scheme + 3..).unwrap_or_default();
        scheme + 3 + rest.find(['/', '?', '#']).unwrap_or(rest.len())
    });
    let (origin, path) = url.split_at_checked(origin_end).unwrap_or((url, ""));
    format!("{}{path}", origin.to_ascii_lowercase())
}

fn read_user(user: Value) -> Result<AuthUser, AuthError> {
    let mut user: AuthUser = crate::base::json::from_value(user)
        .map_err(|e| AuthError::BadAnswer(format!("the user cannot be read ({e})")))?;
    if user.email.as_deref() == Some("") {
        user.email = None;
    }
    Ok(user)
}

/// What went wrong signing in, or staying signed in.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AuthError {
    /// The session expired past refreshing, or was revoked (signed out elsewhere).
    #[error("your session has ended ({0}); sign in again")]
    SessionEnded(String),
    /// Not signed in at all.
    #[error("you are not signed in")]
    SignedOut,
    /// A login issued by another project, refused before anything was sent: its
    /// tokens go only to the project that issued them.
    #[error("the login belongs to another project ({0}); sign in to this one")]
    OtherProject(String),
    /// The server said no: wrong password, anonymous sign-ins disabled, and the like.
    #[error("sign-in refused: {0}")]
    Refused(String),
    /// Signed up; the project wants the email confirmed before signing in.
    #[error("check your email to confirm {0}, then sign in")]
    ConfirmEmail(String),
    #[error("the sign-in server could not be reached: {0}")]
    Unreachable(String),
    #[error("the sign-in server failed: {0}")]
    Server(String),
    #[error("the sign-in server's answer cannot be read: {0}")]
    BadAnswer(String),
}

/// Supabase Auth's REST API for one project.
pub struct AuthClient {
    /// The project's root URL (see [`project_root`]).
    project: String,
    /// `https://<project>.supabase.co/auth/v1`.
    base_url: String,
    anon_key: String,
    http: Rc<dyn Http>,
    clock: Rc<dyn Clock>,
}

impl AuthClient {
    /// The project at `project_url` (its root, or its `/rest/v1` endpoint), reached
    /// with its public anon key.
    pub fn new(
        project_url: &str,
        anon_key: &str,
        http: Rc<dyn Http>,
        clock: Rc<dyn Clock>,
    ) -> Self {
        let root = project_root(project_url);
        Self {
            base_url: format!("{root}/auth/v1"),
            project: root,
            anon_key: anon_key.trim().to_owned(),
            http,
            clock,
        }
    }

    /// The project's root URL: the logins it gives are this project's.
    pub fn project(&self) -> &str {
        &self.project
    }

    /// `Ok` for a login this project issued; refused otherwise, before anything is sent.
    fn own<'l>(&self, session: &'l Login) -> Result<&'l Login, AuthError> {
        if session.is_for(&self.project) {
            Ok(session)
        } else {
            Err(AuthError::OtherProject(session.project.clone()))
        }
    }

    /// A new anonymous user (the project must allow anonymous sign-ins).
    pub async fn sign_in_anonymously(&self) -> Result<Login, AuthError> {
        self.session("signup", json!({"data": {}})).await
    }

    /// A new user with an email and password; [`AuthError::ConfirmEmail`] when the
    /// project confirms emails before the first sign-in.
    pub async fn sign_up(&self, email: &str, password: &str) -> Result<Login, AuthError> {
        let body = json!({"email": email.trim(), "password": password, "data": {}});
        let answer = self.post("signup", body, None).await?;
        if answer.get("access_token").is_none() && answer.get("id").is_some() {
            return Err(AuthError::ConfirmEmail(email.trim().to_owned()));
        }
        Login::from_answer(&self.project, &answer, self.clock.now().epoch_ms)
    }

    pub async fn sign_in(&self, email: &str, password: &str) -> Result<Login, AuthError> {
        let body = json!({"email": email.trim(), "password": password});
        self.session("token?grant_type=password", body).await
    }

    /// A new session for `session`'s refresh token (which then no longer works).
    pub async fn refresh(&self, session: &Login) -> Result<Login, AuthError> {
        let session = self.own(session)?;
        let body = json!({"refresh_token": session.refresh_token});
        self.session("token?grant_type=refresh_token", body)
            .await
            .map_err(ended)
    }

    /// The user the access token belongs to, as the server sees it now.
    pub async fn user(&self, session: &Login) -> Result<AuthUser, AuthError> {
        let session = self.own(session)?;
        let answer = self
            .send("GET", "user", None, Some(&session.access_token))
            .await
            .map_err(ended)?;
        read_user(answer)
    }

    /// Ends the session on the server (its refresh token stops working).
    pub async fn sign_out(&self, session: &Login) -> Result<(), AuthError> {
        let session = self.own(session)?;
        self.send("POST", "logout", None, Some(&session.access_token))
            .await
            .map(drop)
    }

    async fn session(&self, path: &str, body: Value) -> Result<Login, AuthError> {
        let answer = self.post(path, body, None).await?;
        Login::from_answer(&self.project, &answer, self.clock.now().epoch_ms)
    }

    async fn post(&self, path: &str, body: Value, token: Option<&str>) -> Result<Value, AuthError> {
        self.send("POST", path, Some(body), token).await
    }

    async fn send(
        &self,
        method: &'static str,
        path: &str,
        body: Option<Value>,
        token: Option<&str>,
    ) -> Result<Value, AuthError> {
        let mut headers = vec![
            ("apikey".to_owned(), self.anon_key.clone()),
            (
                "authorization".to_owned(),
                format!("Bearer {}", token.unwrap_or(&self.anon_key)),
            ),
        ];
        if body.is_some() {
            headers.push(("content-type".to_owned(), "application/json".to_owned()));
        }
        let request = HttpRequest {
            method,
            url: format!("{}/{path}", self.base_url),
            headers,
            body: body.map(|b| b.to_string()),
        };
        let response = self.http.send(request).await.map_err(|e| match e {
            HttpError::Network(why) => AuthError::Unreachable(why),
            HttpError::Invalid(why) => AuthError::Refused(why),
        })?;
        let status = response.status;
        let mut chunks = response.body;
        let mut bytes = Vec::new();
        while let Some(chunk) = chunks.next().await {
            bytes.extend(chunk.map_err(|e| AuthError::Unreachable(e.to_string()))?);
            if bytes.len() > MAX_ANSWER_BYTES {
                return Err(AuthError::BadAnswer("it is too large".into()));
            }
        }
        let answer: Value = if bytes.iter().all(u8::is_ascii_whitespace) {
            Value::Null
        } else {
            crate::base::json::value_from_bytes(&bytes)
                .map_err(|_| AuthError::BadAnswer(String::from_utf8_lossy(&bytes).into_owned()))?
        };
        match status {
            200..=299 => Ok(answer),
            401 | 403 if token.is_some() => Err(AuthError::SessionEnded(message(&answer))),
            500.. => Err(AuthError::Server(format!(
                "HTTP {status}: {}",
                message(&answer)
            ))),
            _ => Err(AuthError::Refused(message(&answer))),
        }
    }
}

/// A refused refresh or user look-up means the session is over.
fn ended(error: AuthError) -> AuthError {
    match error {
        AuthError::Refused(why) => AuthError::SessionEnded(why),
        other => other,
    }
}

/// The reason in a Supabase Auth error body, old (`error_description`) or new (`msg`).
fn message(answer: &Value) -> String {
    ["msg", "error_description", "message", "error"]
        .iter()
        .find_map(|key| answer.get(key).and_then(Value::as_str))
        .map_or_else(|| answer.to_string(), str::to_owned)
}

/// One person's sign-in to a project: the session, kept in `persist` across reloads,
/// refreshed before it expires. Only a login of its client's project is ever held.
pub struct Account {
    client: AuthClient,
    session: RefCell<Option<Login>>,
    persist: Box<dyn Persist>,
}

impl Account {
    /// The account, with the session `persist` kept from before if it is this
    /// project's. One that is not — another project's, saved before logins recorded
    /// their project, or unreadable — is discarded from `persist`, never sent.
    pub fn new(client: AuthClient, persist: Box<dyn Persist>) -> Self {
        let kept = persist.load().filter(|text| text.trim() != "null");
        let session = kept
            .as_deref()
            .and_then(|text| crate::base::json::from_text::<Login>(text).ok())
            .filter(|login| login.is_for(client.project()));
        if kept.is_some() && session.is_none() {
            persist.save("null");
        }
        Self {
            client,
            session: RefCell::new(session),
            persist,
        }
    }

    /// The project this account signs in to (its root URL).
    pub fn project(&self) -> &str {
        self.client.project()
    }

    /// The current session, if signed in.
    pub fn login(&self) -> Option<Login> {
        self.session.borrow().clone()
    }

    fn keep(&self, session: Option<Login>) {
        let text = session
            .as_ref()
            .and_then(|s| serde_json::to_string(s).ok())
            .unwrap_or_else(|| "null".into());
        self.persist.save(&text);
        *self.session.borrow_mut() = session;
    }

    pub async fn sign_in_anonymously(&self) -> Result<Login, AuthError> {
        let session = self.client.sign_in_anonymously().await?;
        self.keep(Some(session.clone()));
        Ok(session)
    }

    pub async fn sign_up(&self, email: &str, password: &str) -> Result<Login, AuthError> {
        let session = self.client.sign_up(email, password).await?;
        self.keep(Some(session.clone()));
        Ok(session)
    }

    pub async fn sign_in(&self, email: &str, password: &str) -> Result<Login, AuthError> {
        let session = self.client.sign_in(email, password).await?;
        self.keep(Some(session.clone()));
        Ok(session)
    }

    /// Signs out here only, and returns the login that was held, so that its project's
    /// server can be told later (by [`AuthClient::sign_out`]).
    pub fn forget(&self) -> Option<Login> {
        let session = self.login();
        self.keep(None);
        session
    }

    /// Signs out here at once (when called, not when awaited), then on the server;
    /// signed out here even if the server cannot be reached (its tokens then expire
    /// on their own).
    pub fn sign_out(&self) -> impl Future<Output = Result<(), AuthError>> + '_ {
        let session = self.forget();
        async move {
            match session {
                Some(session) => match self.client.sign_out(&session).await {
                    Ok(()) | Err(AuthError::SessionEnded(_)) => Ok(()),
                    Err(error) => Err(error),
                },
                None => Ok(()),
            }
        }
    }

    /// An access token good for at least a minute: the session's, refreshed first if
    /// it is about to expire. An ended session is forgotten and said so.
    pub async fn access_token(&self) -> Result<String, AuthError> {
        let session = self.login().ok_or(AuthError::SignedOut)?;
        if !session.needs_refresh(self.client.clock.now().epoch_ms) {
            return Ok(session.access_token);
        }
        match self.client.refresh(&session).await {
            Ok(fresh) => {
                let token = fresh.access_token.clone();
                self.keep(Some(fresh));
                Ok(token)
            }
            Err(error @ (AuthError::SessionEnded(_) | AuthError::OtherProject(_))) => {
                self.keep(None);
                Err(error)
            }
            Err(error) => Err(error),
        }
    }

    /// Checks with the server that the session still stands (not revoked); an ended
    /// one is forgotten and said so.
    pub async fn check(&self) -> Result<AuthUser, AuthError> {
        self.access_token().await?;
        let session = self.login().ok_or(AuthError::SignedOut)?;
        match self.client.user(&session).await {
            Err(error @ AuthError::SessionEnded(_)) => {
                self.keep(None);
                Err(error)
            }
            other => other,
        }
    }
}

/// A PostgREST store that acts as the account's user: each request carries a fresh
/// access token. Not signed in, it acts as anon. An account of another project than
/// the store's endpoint never lends its login: the store then acts as anon too.
pub struct SignedInStore {
    store: PostgrestStore,
    account: Rc<Account>,
}

impl SignedInStore {
    pub fn new(store: PostgrestStore, account: Rc<Account>) -> Self {
        Self { store, account }
    }

    /// Whether the account signs in to the project the store's requests go to.
    fn same_project(&self) -> bool {
        project_root(self.account.project()) == project_root(self.store.base_url())
    }

    /// Puts the user's fresh token on the next request. Reads may go as anon; a
    /// write (`writes`) with no one signed in to the store's project is refused
    /// plainly rather than sent to be refused by row-level security in the
    /// database's words.
    async fn as_user(&self, writes: bool) -> Result<(), StoreError> {
        let anonymous = if !self.same_project() {
            Some(format!(
                "the sign-in is to {}, not to {}: sign in to this project first",
                self.account.project(),
                project_root(self.store.base_url())
            ))
        } else if self.account.login().is_none() {
            Some(format!(
                "{}: sign in to the Supabase project first",
                AuthError::SignedOut
            ))
        } else {
            None
        };
        if let Some(why) = anonymous {
            self.store.sign_in_as(None);
            return if writes {
                Err(StoreError::PermissionDenied(why))
            } else {
                Ok(())
            };
        }
        match self.account.access_token().await {
            Ok(token) => {
                self.store.sign_in_as(Some(token));
                Ok(())
            }
            Err(
                error @ (AuthError::SessionEnded(_)
                | AuthError::SignedOut
                | AuthError::OtherProject(_)),
            ) => {
                self.store.sign_in_as(None);
                Err(StoreError::PermissionDenied(error.to_string()))
            }
            Err(error) => Err(StoreError::Unreachable(error.to_string())),
        }
    }
}

impl Store for SignedInStore {
    fn select<'a>(&'a self, query: &'a Select) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            self.as_user(false).await?;
            self.store.select(query).await
        })
    }

    fn insert<'a>(&'a self, query: &'a Insert) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            self.as_user(true).await?;
            self.store.insert(query).await
        })
    }

    fn update<'a>(&'a self, query: &'a Patch) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            self.as_user(true).await?;
            self.store.update(query).await
        })
    }

    fn delete<'a>(&'a self, query: &'a Delete) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            self.as_user(true).await?;
            self.store.delete(query).await
        })
    }

    fn rpc<'a>(&'a self, query: &'a Rpc) -> LocalBoxFuture<'a, Result<Value, StoreError>> {
        Box::pin(async move {
            self.as_user(true).await?;
            self.store.rpc(query).await
        })
    }

    fn writes(&self) -> u64 {
        self.store.writes()
    }
}
