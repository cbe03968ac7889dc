//! The local store answers as PostgREST over PostgreSQL would: rows, order, limits,
//! single-row errors, constraints and error kinds, and it survives a reload.
#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use std::cell::RefCell;
use std::rc::Rc;

mod common;

use common::rows;
use familiar::store::{
    Delete, Filter, Filtered, Insert, LocalStore, Op, Patch, Persist, Row, Rpc, Select, StoreError,
    TableSchema,
};
use serde_json::{Value, json};

fn schemas() -> Vec<TableSchema> {
    vec![common::people("users")]
}

fn store() -> LocalStore {
    let store = LocalStore::new(schemas());
    store
        .run_insert(&Insert {
            table: "users".into(),
            rows: rows(json!([
                {"name": "Ann", "level": 5, "guild": "owls"},
                {"name": "Bob", "level": 2, "guild": null},
                {"name": "Cy, the Bold", "level": 9, "guild": "owls"},
                {"name": "dora", "level": null, "guild": "bats"},
            ])),
            on_conflict: None,
            client_key: None,
            returning: false,
        })
        .unwrap();
    store
}

fn names(result: Result<Vec<Row>, StoreError>) -> Vec<String> {
    result
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_owned())
        .collect()
}

fn select() -> Select {
    Select::from("users").order("id", true)
}

#[test]
fn comparisons_follow_sql_including_nulls() {
    let s = store();
    assert_eq!(
        names(s.run_select(&select().eq("guild", "owls"))),
        ["Ann", "Cy, the Bold"]
    );
    assert_eq!(
        names(s.run_select(&select().neq("guild", "owls"))),
        ["dora"],
        "null is neither"
    );
    assert_eq!(
        names(s.run_select(&select().gt("level", 2))),
        ["Ann", "Cy, the Bold"]
    );
    assert_eq!(
        names(s.run_select(&select().gte("level", "2"))),
        ["Ann", "Bob", "Cy, the Bold"]
    );
    assert_eq!(names(s.run_select(&select().lt("level", 5))), ["Bob"]);
    assert_eq!(
        names(s.run_select(&select().lte("level", 5))),
        ["Ann", "Bob"]
    );
    assert_eq!(
        names(s.run_select(&select().is("level", Value::Null))),
        ["dora"]
    );
    assert_eq!(
        names(
            s.run_select(&select().filter(Filter::compare("guild", Op::Is, Value::Null).negate()))
        ),
        ["Ann", "Cy, the Bold", "dora"]
    );
    assert_eq!(
        names(s.run_select(&select().is("active", json!(true)))).len(),
        4
    );
}

#[test]
fn patterns_lists_and_or_groups() {
    let s = store();
    assert_eq!(
        names(s.run_select(&select().like("name", "%o%"))),
        ["Bob", "Cy, the Bold", "dora"]
    );
    assert_eq!(
        names(s.run_select(&select().like("name", "D%"))),
        Vec::<String>::new()
    );
    assert_eq!(names(s.run_select(&select().ilike("name", "D%"))), ["dora"]);
    assert_eq!(names(s.run_select(&select().like("name", "_ob"))), ["Bob"]);
    assert_eq!(
        names(s.run_select(&select().in_list(
            "name",
            vec![json!("Ann"), json!("Cy, the Bold"), json!("Zed")]
        ))),
        ["Ann", "Cy, the Bold"]
    );
    let either = select().or(vec![
        Filter::compare("level", Op::Gt, 8),
        Filter::And(vec![
            Filter::compare("guild", Op::Is, Value::Null),
            Filter::compare("level", Op::Eq, 2),
        ]),
    ]);
    assert_eq!(names(s.run_select(&either)), ["Bob", "Cy, the Bold"]);
}

#[test]
fn order_limit_and_offset_put_nulls_where_postgresql_does() {
    let s = store();
    let by_level = |asc| Select::from("users").order("level", asc);
    assert_eq!(
        names(s.run_select(&by_level(true))),
        ["Bob", "Ann", "Cy, the Bold", "dora"]
    );
    assert_eq!(
        names(s.run_select(&by_level(false))),
        ["dora", "Cy, the Bold", "Ann", "Bob"]
    );
    assert_eq!(
        names(s.run_select(&by_level(true).limit(2).offset(1))),
        ["Ann", "Cy, the Bold"]
    );
    let projected = s
        .run_select(&select().columns("who:name,level").limit(1))
        .unwrap();
    assert_eq!(projected, rows(json!([{"who": "Ann", "level": 5}])));
}

#[test]
fn single_wants_exactly_one_row_and_maybe_single_at_most_one() {
    let s = store();
    assert_eq!(
        names(s.run_select(&select().eq("name", "Bob").single())),
        ["Bob"]
    );
    assert_eq!(
        s.run_select(&select().eq("name", "Zed").single()),
        Err(StoreError::NotSingle(0))
    );
    assert_eq!(
        s.run_select(&select().eq("guild", "owls").single()),
        Err(StoreError::NotSingle(2))
    );
    assert_eq!(
        s.run_select(&select().eq("name", "Zed").maybe_single()),
        Ok(vec![])
    );
    assert_eq!(
        s.run_select(&select().eq("guild", "owls").maybe_single()),
        Err(StoreError::NotSingle(2))
    );
}

#[test]
fn inserts_fill_defaults_and_a_duplicate_key_writes_nothing() {
    let s = store();
    let inserted = s
        .run_insert(&Insert {
            table: "users".into(),
            rows: rows(json!([{"name": "Eve"}])),
            on_conflict: None,
            client_key: None,
            returning: true,
        })
        .unwrap();
    assert_eq!(
        inserted,
        rows(json!([{"id": 5, "name": "Eve", "level": 1, "guild": null, "active": true}]))
    );
    let duplicate = Insert {
        table: "users".into(),
        rows: rows(json!([{"name": "Fay"}, {"name": "Ann"}])),
        on_conflict: None,
        client_key: None,
        returning: true,
    };
    assert_eq!(
        s.run_insert(&duplicate),
        Err(StoreError::Duplicate("name".into()))
    );
    assert!(
        names(s.run_select(&select().eq("name", "Fay"))).is_empty(),
        "all or nothing"
    );
}

#[test]
fn upsert_merges_on_a_unique_key_and_refuses_other_columns() {
    let s = store();
    let upsert = |on: &str, row: Value| Insert {
        table: "users".into(),
        rows: rows(json!([row])),
        on_conflict: Some(vec![on.into()]),
        client_key: None,
        returning: true,
    };
    let merged = s
        .run_insert(&upsert("name", json!({"name": "Bob", "level": 7})))
        .unwrap();
    assert_eq!(merged[0]["id"], 2);
    assert_eq!(merged[0]["level"], 7);
    assert_eq!(merged[0]["guild"], Value::Null);
    let added = s
        .run_insert(&upsert("name", json!({"name": "Gus"})))
        .unwrap();
    assert_eq!(added[0]["id"], 5);
    assert!(matches!(
        s.run_insert(&upsert("level", json!({"name": "Hal", "level": 1}))),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn updates_and_deletes_return_the_rows_they_touched() {
    let s = store();
    let update = Patch {
        table: "users".into(),
        set: rows(json!([{"guild": "foxes"}])).remove(0),
        filters: vec![],
        returning: true,
    }
    .eq("guild", "owls");
    assert_eq!(names(s.run_update(&update)), ["Ann", "Cy, the Bold"]);
    let clash = Patch {
        table: "users".into(),
        set: rows(json!([{"name": "Ann"}])).remove(0),
        filters: vec![],
        returning: true,
    }
    .eq("name", "Bob");
    assert_eq!(
        s.run_update(&clash),
        Err(StoreError::Duplicate("name".into()))
    );
    let delete = Delete {
        table: "users".into(),
        filters: vec![],
        returning: true,
    }
    .eq("guild", "foxes");
    assert_eq!(names(s.run_delete(&delete)), ["Ann", "Cy, the Bold"]);
    assert_eq!(names(s.run_select(&select())), ["Bob", "dora"]);
}

#[test]
fn mistakes_get_the_error_kinds_postgrest_gives() {
    let s = store();
    let kind = |r: Result<Vec<Row>, StoreError>| r.unwrap_err().kind();
    assert_eq!(kind(s.run_select(&Select::from("nope"))), "unknown_table");
    assert_eq!(
        kind(s.run_select(&select().eq("nope", 1))),
        "unknown_column"
    );
    assert_eq!(
        kind(s.run_select(&Select::from("users").columns("id,nope"))),
        "unknown_column"
    );
    assert_eq!(kind(s.run_select(&select().eq("level", "high"))), "invalid");
    let insert = |row: Value| Insert {
        table: "users".into(),
        rows: rows(json!([row])),
        on_conflict: None,
        client_key: None,
        returning: false,
    };
    assert_eq!(kind(s.run_insert(&insert(json!({"level": 3})))), "not_null");
    assert_eq!(
        kind(s.run_insert(&insert(json!({"name": "X", "nope": 1})))),
        "unknown_column"
    );
    let rpc = Rpc {
        function: "nope".into(),
        args: Row::new(),
    };
    assert_eq!(s.run_rpc(&rpc).unwrap_err().kind(), "unknown_function");
    let delete = Delete {
        table: "users".into(),
        filters: vec![],
        returning: true,
    }
    .eq("level", "oops");
    assert_eq!(kind(s.run_delete(&delete)), "invalid");
    assert_eq!(
        names(s.run_select(&select())).len(),
        4,
        "a failed delete removes nothing"
    );
}

#[test]
fn functions_are_called_by_rpc() {
    let s = store().with_function(
        "count_guild",
        Rc::new(|store: &LocalStore, args: &Row| {
            let guild = args.get("guild").cloned().unwrap_or(Value::Null);
            Ok(json!(
                store
                    .run_select(&Select::from("users").eq("guild", guild))?
                    .len()
            ))
        }),
    );
    let rpc = Rpc {
        function: "count_guild".into(),
        args: rows(json!([{"guild": "owls"}])).remove(0),
    };
    assert_eq!(s.run_rpc(&rpc), Ok(json!(2)));
}

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

#[test]
fn the_tables_survive_a_reload_through_persistence() {
    let memory = Memory::default();
    let before = LocalStore::new(schemas())
        .with_persistence(Box::new(memory.clone()))
        .unwrap();
    before
        .run_insert(&Insert {
            table: "users".into(),
            rows: rows(json!([{"name": "Ann"}])),
            on_conflict: None,
            client_key: None,
            returning: false,
        })
        .unwrap();
    let after = LocalStore::new(schemas())
        .with_persistence(Box::new(memory.clone()))
        .unwrap();
    assert_eq!(names(after.run_select(&select())), ["Ann"]);
    let next = after
        .run_insert(&Insert {
            table: "users".into(),
            rows: rows(json!([{"name": "Bo"}])),
            on_conflict: None,
            client_key: None,
            returning: true,
        })
        .unwrap();
    assert_eq!(next[0]["id"], 2, "the sequence survives too");
    *memory.0.borrow_mut() = Some("not json".into());
    assert!(matches!(
        LocalStore::new(schemas()).with_persistence(Box::new(memory)),
        Err(StoreError::Invalid(_))
    ));
}

fn world() -> LocalStore {
    let store = LocalStore::new(familiar::world::schemas().unwrap());
    store.seed(familiar::world::SEED).unwrap();
    store
}

#[test]
fn embedded_resources_follow_foreign_keys_both_ways() {
    let world = world();
    let one = world
        .run_select(
            &Select::from("user_communities")
                .columns("user_id,communities(name)")
                .eq("user_id", 4),
        )
        .unwrap();
    assert_eq!(
        one,
        rows(json!([
            {"user_id": 4, "communities": {"name": "Ashen Circle"}},
            {"user_id": 4, "communities": {"name": "Lantern Guild"}},
        ]))
    );
    let many = world
        .run_select(
            &Select::from("users")
                .columns("username,inventory(item_name,quantity)")
                .eq("id", 3),
        )
        .unwrap();
    assert_eq!(
        many,
        rows(json!([{"username": "player", "inventory": [{"item_name": "bread", "quantity": 2}]}]))
    );
    let hinted = world
        .run_select(
            &Select::from("battles").columns("home:communities!battles_community1_id_fkey(name)"),
        )
        .unwrap();
    assert_eq!(hinted, rows(json!([{"home": {"name": "Lantern Guild"}}])));
    let ambiguous = world.run_select(&Select::from("battles").columns("communities(name)"));
    assert!(
        matches!(ambiguous, Err(StoreError::Invalid(_))),
        "{ambiguous:?}"
    );
    let unrelated = world.run_select(&Select::from("market_items").columns("name,votes(*)"));
    assert!(matches!(unrelated, Err(StoreError::Invalid(_))));
}

/// The seed both seed tests plant.
const SEED: &str = r#"{"users": [{"id": 7, "name": "Seeded"}]}"#;

/// A store restored from (and saving to) `memory`.
fn persisted(memory: &Memory) -> LocalStore {
    LocalStore::new(schemas())
        .with_persistence(Box::new(memory.clone()))
        .unwrap()
}

#[test]
fn seeding_a_world_restored_whole_writes_nothing() {
    let memory = Memory::default();
    persisted(&memory).seed(SEED).unwrap();
    assert!(memory.0.borrow().is_some(), "the first seed is saved");

    // A sentinel in place of the snapshot: a second save would overwrite it.
    let restored = persisted(&memory);
    *memory.0.borrow_mut() = Some("untouched".into());
    restored.seed(SEED).unwrap();
    assert_eq!(memory.0.borrow().as_deref(), Some("untouched"));
}

#[test]
fn the_seed_fills_tables_once_and_names_only_known_tables() {
    let memory = Memory::default();
    let first = persisted(&memory);
    first.seed(SEED).unwrap();
    let delete = Delete {
        table: "users".into(),
        filters: vec![],
        returning: false,
    }
    .gte("id", 0);
    first.run_delete(&delete).unwrap();
    let reloaded = persisted(&memory);
    reloaded.seed(SEED).unwrap();
    assert!(
        names(reloaded.run_select(&select())).is_empty(),
        "what the user deleted stays deleted"
    );
    let fresh = LocalStore::new(schemas());
    fresh.seed(SEED).unwrap();
    let next = fresh
        .run_insert(&Insert {
            table: "users".into(),
            rows: rows(json!([{"name": "After"}])),
            on_conflict: None,
            client_key: None,
            returning: true,
        })
        .unwrap();
    assert_eq!(next[0]["id"], 8, "identities continue after the seed");
    assert_eq!(
        fresh.seed(r#"{"nope": []}"#),
        Err(StoreError::UnknownTable("nope".into()))
    );
}

#[test]
fn an_id_given_for_an_always_generated_identity_is_refused_and_the_sequence_goes_on() {
    let world = world();
    let squat = Insert {
        table: "memories".into(),
        rows: rows(json!([{"id": 2, "user_id": 3, "content": "squat"}])),
        on_conflict: None,
        client_key: None,
        returning: true,
    };
    assert_eq!(
        world.run_insert(&squat),
        Err(StoreError::Invalid(
            "cannot insert a non-DEFAULT value into column \"id\"".into()
        ))
    );
    let fair = Insert {
        rows: rows(json!([{"user_id": 3, "content": "fair"}])),
        ..squat
    };
    assert_eq!(world.run_insert(&fair).unwrap()[0]["id"], json!(2));
}

#[test]
fn a_function_that_fails_leaves_no_write_behind() {
    let store = store().with_function(
        "add_then_fail",
        Rc::new(|store: &LocalStore, _: &Row| {
            store.run_insert(&Insert {
                table: "users".into(),
                rows: rows(json!([{"name": "Eve"}])),
                on_conflict: None,
                client_key: None,
                returning: false,
            })?;
            Err(StoreError::Rule("no room at the inn".into()))
        }),
    );
    let call = Rpc {
        function: "add_then_fail".into(),
        args: Row::new(),
    };
    assert_eq!(
        store.run_rpc(&call),
        Err(StoreError::Rule("no room at the inn".into()))
    );
    assert_eq!(names(store.run_select(&Select::from("users"))).len(), 4);
}
