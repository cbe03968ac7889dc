//! Apply-once when the store refuses the ledger's writes: the record is held, the action
//! is not applied again under its key, and the record is written once the store is back.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::indexing_slicing
)]

use std::cell::Cell;
use std::rc::Rc;

use familiar::llm::message::ToolCall;
use familiar::store::{Delete, Insert, LocalStore, Patch, Row, Rpc, Select, Store, StoreError};
use familiar::tool::ledger::Ledger;
use familiar::tool::{CallContext, NoArgs, ToolKind, ToolRegistry};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use serde_json::{Value, json};

/// The world's local store, refusing writes to `applied_actions` while `down` is set.
struct Flaky {
    inner: LocalStore,
    down: Cell<bool>,
}

impl Store for Flaky {
    fn select<'a>(&'a self, q: &'a Select) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        self.inner.select(q)
    }
    fn insert<'a>(&'a self, q: &'a Insert) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        if self.down.get() && q.table == "applied_actions" {
            return Box::pin(async { Err(StoreError::Unreachable("the store is down".into())) });
        }
        self.inner.insert(q)
    }
    fn update<'a>(&'a self, q: &'a Patch) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        self.inner.update(q)
    }
    fn delete<'a>(&'a self, q: &'a Delete) -> LocalBoxFuture<'a, Result<Vec<Row>, StoreError>> {
        self.inner.delete(q)
    }
    fn rpc<'a>(&'a self, q: &'a Rpc) -> LocalBoxFuture<'a, Result<Value, StoreError>> {
        self.inner.rpc(q)
    }
}

fn bump() -> ToolCall {
    ToolCall {
        id: "c1".into(),
        name: "bump".into(),
        arguments: "{}".into(),
    }
}

fn keyed(key: &str) -> CallContext {
    CallContext {
        idempotency_key: Some(key.into()),
        approved: false,
        caller: None,
    }
}

#[test]
fn a_record_the_store_refuses_is_held_so_the_action_is_not_applied_twice() {
    let store = Rc::new(Flaky {
        inner: LocalStore::new(familiar::world::schemas().unwrap()),
        down: Cell::new(true),
    });
    let applied = Rc::new(Cell::new(0));
    let mut tools = ToolRegistry::new();
    let counter = Rc::clone(&applied);
    tools.register_fn(
        "bump",
        ToolKind::Action,
        "Adds one.",
        move |_: NoArgs, _| {
            let counter = Rc::clone(&counter);
            async move {
                counter.set(counter.get() + 1);
                Ok::<_, StoreError>(json!({ "counter": counter.get() }))
            }
        },
    );
    let ledger = Ledger::new(Rc::clone(&store) as Rc<dyn Store>, "1");
    tools.with_ledger(ledger.clone());

    let first = block_on(tools.call(&bump(), keyed("run-1"))).unwrap();
    assert_eq!(
        first["counter"], 1,
        "the action happened: not a failure to retry"
    );
    assert!(
        first["ledger"]
            .as_str()
            .unwrap()
            .contains("could not be saved")
    );
    assert_eq!(ledger.unsaved(), 1);

    let again = block_on(tools.call(&bump(), keyed("run-1"))).unwrap();
    assert_eq!(applied.get(), 1, "the same key is not applied again");
    assert_eq!(again["counter"], 1);

    store.down.set(false);
    block_on(tools.call(&bump(), keyed("run-2"))).unwrap();
    assert_eq!(
        ledger.unsaved(),
        0,
        "the held record was written with the next one"
    );
    let fresh = Ledger::new(Rc::clone(&store) as Rc<dyn Store>, "1");
    assert_eq!(
        block_on(fresh.applied("run-1")).unwrap(),
        Some(json!({ "counter": 1 })),
        "and is in the store for a reload"
    );
}
