//! [`PostgrestStore`]: the store behind a PostgREST API (Supabase's data API) over the
//! [`Http`] seam. It builds PostgREST URLs and headers, reads PostgREST's error bodies
//! (`code`, `message`, `details`, `hint`) into the same [`StoreError`] kinds the local
//! store gives, and retries only requests that are safe to repeat.

use std::cell::RefCell;
use std::rc::Rc;

use futures::StreamExt;
use futures::future::LocalBoxFuture;
use serde_json::Value;

use super::query::{
    Cardinality, Delete, Filter, Insert, Op, Patch, Rpc, Select, filter_param, order_param,
    query_string,
};
use super::{Row, Store, StoreError};
use crate::base::clock::{Clock, within};
use crate::base::http::{Http, HttpError, HttpRequest, HttpResponse};
use crate::base::retry::{RetryPolicy, is_retryable_status};

/// A PostgREST endpoint, e.g. `https://<project>.supabase.co/rest/v1` with the project's
/// public anon key (never a service key: row-level security protects the tables).
pub struct PostgrestStore {
    base_url: String,
    anon_key: String,
    user_token: RefCell<Option<String>>,
    schema: Option<String>,
    http: Rc<dyn Http>,
    clock: Rc<dyn Clock>,
    random: Box<dyn Fn() -> f64>,
    retry: RetryPolicy,
    timeout_ms: u64,
    /// Writes sent so far ([`Store::writes`]).
    writes: std::cell::Cell<u64>,
}

/// A request as the store sends it, before headers.
struct Call {
    method: &'static str,
    path: String,
    params: Vec<(String, String)>,
    body: Option<Value>,
    prefer: Vec<&'static str>,
    /// Ask for exactly one row as an object (PostgREST answers 406 otherwise).
    single: bool,
    /// Safe to send again after a failure that may have been applied.
    idempotent: bool,
}

impl PostgrestStore {
    pub fn new(
        base_url: &str,
        anon_key: &str,
        http: Rc<dyn Http>,
        clock: Rc<dyn Clock>,
        random: Box<dyn Fn() -> f64>,
    ) -> Self {
        Self {
            base_url: base_url.trim_end_matches('/').to_owned(),
            anon_key: anon_key.to_owned(),
            user_token: RefCell::new(None),
            schema: None,
            http,
            clock,
            random,
            retry: RetryPolicy::default(),
            timeout_ms: 30_000,
            writes: std::cell::Cell::new(0),
        }
    }

    /// A Supabase project's REST endpoint (`/rest/v1` is added when `project_url`
    /// lacks it), or any PostgREST server's, with its anon key.
    pub fn supabase(
        project_url: &str,
        anon_key: &str,
        http: Rc<dyn Http>,
        clock: Rc<dyn Clock>,
        random: Box<dyn Fn() -> f64>,
    ) -> Self {
        let url = project_url.trim().trim_end_matches('/');
        let rest = if url.ends_with("/rest/v1") {
            url.to_owned()
        } else {
            format!("{url}/rest/v1")
        };
        Self::new(&rest, anon_key.trim(), http, clock, random)
    }

    /// The longest wait for a response and its body (30 s by default).
    pub fn with_timeout(mut self, timeout_ms: u64) -> Self {
        self.timeout_ms = timeout_ms;
        self
    }

    /// Uses a schema other than the default (`Accept-Profile` / `Content-Profile`).
    pub fn with_schema(mut self, schema: &str) -> Self {
        self.schema = Some(schema.to_owned());
        self
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    /// The endpoint requests go to (e.g. `https://<project>.supabase.co/rest/v1`).
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Acts as a signed-in user (their JWT), or again as anonymous with `None`.
    pub fn sign_in_as(&self, jwt: Option<String>) {
        *self.user_token.borrow_mut() = jwt;
    }

    fn headers(&self, call: &Call) -> Vec<(String, String)> {
        let token = self
            .user_token
            .borrow()
            .clone()
            .unwrap_or_else(|| self.anon_key.clone());
        let accept = if call.single {
            "application/vnd.pgrst.object+json"
        } else {
            "application/json"
        };
        let mut headers = vec![
            ("apikey".to_owned(), self.anon_key.clone()),
            ("authorization".to_owned(), format!("Bearer {token}")),
            ("accept".to_owned(), accept.to_owned()),
        ];
        if call.body.is_some() {
            headers.push(("content-type".to_owned(), "application/json".to_owned()));
        }
        if !call.prefer.is_empty() {
            headers.push(("prefer".to_owned(), call.prefer.join(",")));
        }
        if let Some(schema) = &self.schema {
            let profile = if call.method == "GET" {
                "accept-profile"
            } else {
                "content-profile"
            };
            headers.push((profile.to_owned(), schema.clone()));
        }
        headers
    }

    /// Sends `call`; a write is counted once answered or given up on.
    async fn send(&self, call: Call, table: &str) -> Result<Value, StoreError> {
        let write = call.method != "GET";
        let answer = self.exchange(call, table).await;
        if write {
            self.writes.set(self.writes.get().wrapping_add(1));
        }
        answer
    }

    /// Sends `call`, retrying what is safe to retry; the response body as JSON.
    async fn exchange(&self, call: Call, table: &str) -> Result<Value, StoreError> {
        let query = query_string(&call.params);
        let url = if query.is_empty() {
            format!("{}/{}", self.base_url, call.path)
        } else {
            format!("{}/{}?{query}", self.base_url, call.path)
        };
        let mut retries = 0;
        loop {
            let request = HttpRequest {
                method: call.method,
                url: url.clone(),
                headers: self.headers(&call),
                body: call.body.as_ref().map(Value::to_string),
            };
            let exchange = async {
                match self.http.send(request).await {
                    Ok(response) => read_response(response, table).await,
                    Err(HttpError::Network(why)) => Err((StoreError::Unreachable(why), 0)),
                    Err(HttpError::Invalid(why)) => Err((StoreError::Invalid(why), 400)),
                }
            };
            let (error, retryable) = match within(&*self.clock, self.timeout_ms, exchange).await {
                Some(Ok(value)) => return Ok(value),
                Some(Err((error, status))) => {
                    let retryable = status == 0 || is_retryable_status(status);
                    (error, retryable)
                }
                None => {
                    let why = format!("no answer within {} ms", self.timeout_ms);
                    (StoreError::Unreachable(why), true)
                }
            };
            let wait = (retryable && call.idempotent)
                .then(|| self.retry.delay_ms(retries, (self.random)(), None))
                .flatten();
            let Some(wait) = wait else {
                return Err(error);
            };
            self.clock.sleep(wait).await;
            retries += 1;
        }
    }
}

impl PostgrestStore {
    /// An insert or upsert; only an upsert is retried (it lands the same rows however
    /// often it is sent).
    async fn insert_once(&self, query: &Insert) -> Result<Vec<Row>, StoreError> {
        let mut prefer = vec![returning(query.returning)];
        let mut params = Vec::new();
        if let Some(columns) = &query.on_conflict {
            prefer.push("resolution=merge-duplicates");
            params.push(("on_conflict".to_owned(), columns.join(",")));
        }
        let call = Call {
            method: "POST",
            path: query.table.clone(),
            params,
            body: Some(insert_body(query)),
            prefer,
            single: false,
            idempotent: query.on_conflict.is_some(),
        };
        rows_of(self.send(call, &query.table).await?, query.returning)
    }

    /// An insert whose rows carry client-generated keys. If the first attempt fails in
    /// a way that may have written the rows, it is sent again skipping rows whose key
    /// already exists, and the rows are read back by key: never written twice.
    async fn insert_keyed(&self, query: &Insert, key: &[String]) -> Result<Vec<Row>, StoreError> {
        match self.insert_once(query).await {
            Err(error) if error.is_transient() => {}
            done => return done,
        }
        let call = Call {
            method: "POST",
            path: query.table.clone(),
            params: vec![("on_conflict".to_owned(), key.join(","))],
            body: Some(insert_body(query)),
            prefer: vec!["return=minimal", "resolution=ignore-duplicates"],
            single: false,
            idempotent: true,
        };
        self.send(call, &query.table).await?;
        if !query.returning {
            return Ok(Vec::new());
        }
        let by_key = query
            .rows
            .iter()
            .map(|row| {
                Filter::And(
                    key.iter()
                        .map(|column| {
                            Filter::compare(
                                column,
                                Op::Eq,
                                row.get(column).cloned().unwrap_or(Value::Null),
                            )
                        })
                        .collect(),
                )
            })
            .collect();
        let select = Select {
            filters: vec![Filter::Or(by_key)],
            ..Select::from(&query.table)
        };
        self.select(&select).await
    }
}

fn insert_body(query: &Insert) -> Value {
    Value::Array(query.rows.iter().cloned().map(Value::Object).collect())
}

fn filter_params(filters: &[Filter]) -> Vec<(String, String)> {
    filters.iter().map(filter_param).collect()
}

fn returning(returning: bool) -> &'static str {
    if returning {
        "return=representation"
    } else {
        "return=minimal"
    }
}

/// The rows of a successful answer. With `return=minimal` there is no body; any other
/// answer that is not rows is an error, never "no rows": rows the server returned but
/// the page cannot read are lost data, and the caller must know.
fn rows_of(value: Value, expected: bool) -> Result<Vec<Row>, StoreError> {
    let not_rows =
        |what: &str| StoreError::Invalid(format!("the server answered {what}, not rows"));
    match value {
        Value::Array(items) => items
            .into_iter()
            .map(|item| match item {
                Value::Object(row) => Ok(row),
                other => Err(not_rows(&format!("a list holding {other}"))),
            })
            .collect(),
        Value::Object(row) => Ok(vec![row]),
        Value::Null if !expected => Ok(Vec::new()),
        Value::Null => Err(not_rows("nothing")),
        other => Err(not_rows(&other.to_string())),
    }
}

impl Store for PostgrestStore {
    fn select<'a>(&'a self, query: &'a Select) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            let mut params = vec![("select".to_owned(), query.columns.clone())];
            params.extend(filter_params(&query.filters));
            params.extend(order_param(&query.order));
            params.extend(query.limit.map(|n| ("limit".to_owned(), n.to_string())));
            params.extend(query.offset.map(|n| ("offset".to_owned(), n.to_string())));
            let call = Call {
                method: "GET",
                path: query.table.clone(),
                params,
                body: None,
                prefer: vec![],
                single: query.cardinality == Cardinality::Single,
                idempotent: true,
            };
            let rows = rows_of(self.send(call, &query.table).await?, true)?;
            match (query.cardinality, rows.len()) {
                (Cardinality::Single, n) if n != 1 => Err(StoreError::NotSingle(n)),
                (Cardinality::MaybeSingle, n) if n > 1 => Err(StoreError::NotSingle(n)),
                _ => Ok(rows),
            }
        })
    }

    fn insert<'a>(&'a self, query: &'a Insert) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            match (&query.client_key, &query.on_conflict) {
                (Some(key), None) => self.insert_keyed(query, key).await,
                _ => self.insert_once(query).await,
            }
        })
    }

    fn update<'a>(&'a self, query: &'a Patch) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            let call = Call {
                method: "PATCH",
                path: query.table.clone(),
                params: filter_params(&query.filters),
                body: Some(Value::Object(query.set.clone())),
                prefer: vec![returning(query.returning)],
                single: false,
                idempotent: true,
            };
            rows_of(self.send(call, &query.table).await?, query.returning)
        })
    }

    fn delete<'a>(&'a self, query: &'a Delete) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        Box::pin(async move {
            let call = Call {
                method: "DELETE",
                path: query.table.clone(),
                params: filter_params(&query.filters),
                body: None,
                prefer: vec![returning(query.returning)],
                single: false,
                idempotent: true,
            };
            rows_of(self.send(call, &query.table).await?, query.returning)
        })
    }

    fn rpc<'a>(&'a self, query: &'a Rpc) -> LocalBoxFuture<'a, Result<Value, StoreError>> {
        Box::pin(async move {
            let call = Call {
                method: "POST",
                path: format!("rpc/{}", query.function),
                params: vec![],
                body: Some(Value::Object(query.args.clone())),
                prefer: vec![],
                single: false,
                idempotent: false,
            };
            self.send(call, &query.function).await
        })
    }

    fn writes(&self) -> u64 {
        self.writes.get()
    }
}

/// The most bytes one response may take: a runaway query or server cannot grow the
/// page's memory without end.
const MAX_RESPONSE_BYTES: usize = 32 << 20;

/// The body of a response as JSON, or the store error (with the status) it reports.
async fn read_response(response: HttpResponse, table: &str) -> Result<Value, (StoreError, u16)> {
    let status = response.status;
    let mut body = response.body;
    let mut bytes = Vec::new();
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(error) => return Err((StoreError::Unreachable(error.to_string()), 0)),
        }
        if bytes.len() > MAX_RESPONSE_BYTES {
            let error = format!(
                "the response passed {} MiB and was refused",
                MAX_RESPONSE_BYTES >> 20
            );
            return Err((StoreError::Invalid(error), status));
        }
    }
    let parsed = if bytes.iter().all(u8::is_ascii_whitespace) {
        Ok(Value::Null)
    } else {
        crate::base::json::value_from_bytes(&bytes)
    };
    match parsed {
        Ok(json) if (200..300).contains(&status) => Ok(json),
        // A success whose body cannot be read may have been applied: it is an error the
        // caller sees (never "no rows"), and one that is not retried.
        Err(error) if (200..300).contains(&status) => {
            let why = format!("the server's answer ({status}) cannot be read: {error}");
            Err((StoreError::Invalid(why), status))
        }
        Ok(json) => Err((error_from_body(status, &json, table), status)),
        Err(_) => {
            let text = Value::String(String::from_utf8_lossy(&bytes).into_owned());
            Err((error_from_body(status, &text, table), status))
        }
    }
}

fn text<'v>(json: &'v Value, key: &str) -> &'v str {
    json.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// PostgREST's (and PostgreSQL's) error codes to the store's error kinds.
pub fn error_from_body(status: u16, json: &Value, table: &str) -> StoreError {
    let (code, message, details) = (
        text(json, "code"),
        text(json, "message"),
        text(json, "details"),
    );
    let message = if message.is_empty() {
        json.as_str().unwrap_or_default()
    } else {
        message
    };
    match code {
        "42P01" | "PGRST205" => StoreError::UnknownTable(table.to_owned()),
        "42703" | "PGRST204" => StoreError::UnknownColumn {
            table: table.to_owned(),
            column: column_named_in(message),
        },
        "42883" | "PGRST202" => StoreError::UnknownFunction(table.to_owned()),
        "23505" => StoreError::Duplicate(
            between(details, "Key (", ")=")
                .unwrap_or(details)
                .to_owned(),
        ),
        "23502" => StoreError::NotNull(
            between(message, "column \"", "\"")
                .unwrap_or(message)
                .to_owned(),
        ),
        "PGRST116" => StoreError::NotSingle(first_number(details)),
        "42501" => StoreError::PermissionDenied(message.to_owned()),
        // `raise exception '…'` in a function: a rule of the game said no.
        "P0001" => StoreError::Rule(message.to_owned()),
        _ if status == 401 || status == 403 => StoreError::PermissionDenied(message.to_owned()),
        _ if status >= 500 || status == 408 || status == 429 => {
            StoreError::Server(format!("HTTP {status}: {message}"))
        }
        _ => StoreError::Invalid(if message.is_empty() {
            format!("HTTP {status}")
        } else {
            message.to_owned()
        }),
    }
}

fn between<'t>(text: &'t str, open: &str, close: &str) -> Option<&'t str> {
    let start = text.find(open)? + open.len();
    let rest = text.get(start..)?;
    rest.find(close).and_then(|end| rest.get(..end))
}

/// The column a PostgreSQL or PostgREST message names: `column users.nope does not
/// exist`, or `Could not find the 'nope' column of 'users'`.
fn column_named_in(message: &str) -> String {
    if let Some(quoted) = between(message, "the '", "' column") {
        return quoted.to_owned();
    }
    let named = between(message, "column ", " does not exist").unwrap_or(message);
    named
        .rsplit('.')
        .next()
        .unwrap_or(named)
        .trim_matches('"')
        .to_owned()
}

fn first_number(text: &str) -> usize {
    text.split(|c: char| !c.is_ascii_digit())
        .find(|s| !s.is_empty())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn postgrest_error_bodies_map_to_the_store_error_kinds() {
        let cases = [
            (
                400,
                json!({"code": "42703", "message": "column users.nope does not exist"}),
                "unknown_column",
            ),
            (
                400,
                json!({"code": "PGRST204", "message": "Could not find the 'nope' column of 'users' in the schema cache"}),
                "unknown_column",
            ),
            (
                404,
                json!({"code": "PGRST205", "message": "Could not find the table 'public.nope'"}),
                "unknown_table",
            ),
            (
                409,
                json!({"code": "23505", "message": "duplicate key value violates unique constraint \"users_name_key\"", "details": "Key (name)=(Ann) already exists."}),
                "duplicate",
            ),
            (
                406,
                json!({"code": "PGRST116", "message": "JSON object requested, multiple (or no) rows returned", "details": "The result contains 2 rows"}),
                "not_single",
            ),
            (
                400,
                json!({"code": "23502", "message": "null value in column \"name\" of relation \"users\" violates not-null constraint"}),
                "not_null",
            ),
            (
                401,
                json!({"code": "42501", "message": "permission denied for table users"}),
                "permission_denied",
            ),
            (
                400,
                json!({"code": "22P02", "message": "invalid input syntax for type integer: \"high\""}),
                "invalid",
            ),
            (503, json!("upstream down"), "server"),
        ];
        for (status, body, kind) in cases {
            assert_eq!(
                error_from_body(status, &body, "users").kind(),
                kind,
                "{body}"
            );
        }
        assert_eq!(
            error_from_body(409, &cases_duplicate(), "users"),
            StoreError::Duplicate("name".into())
        );
        assert_eq!(
            error_from_body(
                400,
                &json!({"code": "42703", "message": "column users.nope does not exist"}),
                "users"
            ),
            StoreError::UnknownColumn {
                table: "users".into(),
                column: "nope".into()
            }
        );
    }

    fn cases_duplicate() -> Value {
        json!({"code": "23505", "details": "Key (name)=(Ann) already exists."})
    }
}
