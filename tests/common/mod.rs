//! Fixtures shared by the store tests.
#![allow(dead_code)]

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

use std::cell::RefCell;
use std::collections::VecDeque;

use familiar::http::{Http, HttpError, HttpRequest, HttpResponse};
use futures::future::LocalBoxFuture;
use futures::stream::{self, StreamExt};

/// An HTTP peer that answers from a script (status and body, or a network error) and
/// records every request.
#[derive(Default)]
pub struct ScriptedHttp {
    replies: RefCell<VecDeque<Result<(u16, String), HttpError>>>,
    pub requests: RefCell<Vec<HttpRequest>>,
}

impl ScriptedHttp {
    pub fn reply(&self, status: u16, body: &str) -> &Self {
        self.replies
            .borrow_mut()
            .push_back(Ok((status, body.to_owned())));
        self
    }

    pub fn fail(&self, error: HttpError) -> &Self {
        self.replies.borrow_mut().push_back(Err(error));
        self
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
        let reply = self
            .replies
            .borrow_mut()
            .pop_front()
            .unwrap_or(Err(HttpError::Network(
                "the script has no reply for this request".into(),
            )));
        Box::pin(async move {
            let (status, body) = reply?;
            Ok(HttpResponse {
                status,
                headers: vec![("content-type".into(), "application/json".into())],
                body: stream::iter([Ok(body.into_bytes())]).boxed_local(),
            })
        })
    }
}
