//! Fixtures shared by the store tests.
#![allow(dead_code)]

pub mod guild;
pub mod world;

use familiar::store::{ColumnDefault, ColumnSchema, ColumnType, Row, TableSchema};
use serde_json::{Value, json};

fn column(
    name: &str,
    kind: ColumnType,
    nullable: bool,
    default: Option<ColumnDefault>,
) -> ColumnSchema {
    ColumnSchema {
        name: name.into(),
        kind,
        nullable,
        default,
        references: None,
    }
}

/// A small table of people, the local twin of `conformance_items` in
/// tests/sql/conformance.sql: an identity key, a unique name, nullable level and guild.
pub fn people(table: &str) -> TableSchema {
    TableSchema {
        name: table.into(),
        columns: vec![
            column(
                "id",
                ColumnType::Integer,
                false,
                Some(ColumnDefault::Identity),
            ),
            column("name", ColumnType::Text, false, None),
            column(
                "level",
                ColumnType::Integer,
                true,
                Some(ColumnDefault::Value(json!(1))),
            ),
            column("guild", ColumnType::Text, true, None),
            column(
                "active",
                ColumnType::Boolean,
                false,
                Some(ColumnDefault::Value(json!(true))),
            ),
        ],
        primary_key: vec!["id".into()],
        unique: vec![vec!["name".into()]],
    }
}

/// Rows from a JSON array of objects.
pub fn rows(values: Value) -> Vec<Row> {
    serde_json::from_value(values).unwrap_or_default()
}

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::rc::Rc;

use familiar::base::http::{Http, HttpError, HttpRequest, HttpResponse};
use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt};

/// What the scripted peer does with one request.
pub enum Reply {
    /// A status, headers, body chunks; then the body ends, or hangs when `hang`.
    Respond {
        status: u16,
        headers: Vec<(&'static str, &'static str)>,
        chunks: Vec<Result<Vec<u8>, HttpError>>,
        hang: bool,
    },
    /// No response at all.
    Fail(HttpError),
    /// The response never starts.
    Hang,
}

/// A whole response: a status and a body in one chunk.
pub fn respond(status: u16, body: &str) -> Reply {
    Reply::Respond {
        status,
        headers: vec![],
        chunks: vec![Ok(body.as_bytes().to_vec())],
        hang: false,
    }
}

/// Counts drops of response bodies, to see that an abandoned request is cancelled.
struct DropFlag(Rc<Cell<u32>>);

impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

/// An HTTP peer that answers from a script and records every request.
#[derive(Default)]
pub struct ScriptedHttp {
    replies: RefCell<VecDeque<Reply>>,
    pub requests: RefCell<Vec<HttpRequest>>,
    pub bodies_dropped: Rc<Cell<u32>>,
}

impl ScriptedHttp {
    pub fn push(&self, reply: Reply) -> &Self {
        self.replies.borrow_mut().push_back(reply);
        self
    }

    pub fn reply(&self, status: u16, body: &str) -> &Self {
        self.push(respond(status, body))
    }

    pub fn fail(&self, error: HttpError) -> &Self {
        self.push(Reply::Fail(error))
    }

    /// The value of header `name` in request `n`.
    pub fn header(&self, n: usize, name: &str) -> Option<String> {
        let requests = self.requests.borrow();
        let request = requests.get(n)?;
        request
            .headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    }
}

impl Http for ScriptedHttp {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'static, Result<HttpResponse, HttpError>> {
        self.requests.borrow_mut().push(request);
        let reply =
            self.replies
                .borrow_mut()
                .pop_front()
                .unwrap_or(Reply::Fail(HttpError::Network(
                    "the script has no reply for this request".into(),
                )));
        let dropped = DropFlag(Rc::clone(&self.bodies_dropped));
        Box::pin(async move {
            match reply {
                Reply::Fail(error) => Err(error),
                Reply::Hang => futures::future::pending().await,
                Reply::Respond {
                    status,
                    headers,
                    chunks,
                    hang,
                } => {
                    let tail = if hang {
                        stream::pending().left_stream()
                    } else {
                        stream::empty().right_stream()
                    };
                    let body = stream::iter(chunks).chain(tail).map(move |chunk| {
                        let _keep = &dropped;
                        chunk
                    });
                    Ok(HttpResponse {
                        status,
                        headers: headers
                            .into_iter()
                            .map(|(k, v)| (k.to_owned(), v.to_owned()))
                            .collect(),
                        body: body.boxed_local(),
                    })
                }
            }
        })
    }
}
