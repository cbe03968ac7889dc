//! One suite of queries and writes against both stores: the local store in the page,
//! and PostgREST (postrust over PostgreSQL, started by scripts/test.sh) through the real
//! fetch path. They must give identical rows and identical error kinds.
#![cfg(target_arch = "wasm32")]
// clippy does not see `#[wasm_bindgen_test]` functions as tests.
#![allow(clippy::unwrap_used, clippy::panic, clippy::indexing_slicing)]

use std::rc::Rc;

use familiar::base::retry::RetryPolicy;
mod common;

use common::guild::guild_suite;
use common::rows;
use common::world::world_suite;
use familiar::store::auth::{Account, AuthClient, SignedInStore};
use familiar::store::{
    Delete, Filter, Filtered, Insert, LocalStore, Op, Patch, Persist, PostgrestStore, Row, Rpc,
    Select, Store, StoreError,
};
use familiar::web::{BrowserClock, Fetch};
use serde_json::{Value, json};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

const TABLE: &str = "conformance_items";

/// The local twin of tests/sql/conformance.sql.
fn local_store() -> LocalStore {
    let schema = common::people(TABLE);
    LocalStore::new(vec![schema]).with_function(
        "count_guild",
        Rc::new(|store: &LocalStore, args: &Row| {
            let guild = args.get("guild").cloned().unwrap_or(Value::Null);
            Ok(json!(
                store
                    .run_select(&Select::from(TABLE).eq("guild", guild))?
                    .len()
            ))
        }),
    )
}

fn remote_store() -> PostgrestStore {
    let (Some(url), Some(key)) = (
        option_env!("FAMILIAR_POSTGREST_URL"),
        option_env!("FAMILIAR_ANON_KEY"),
    ) else {
        panic!("FAMILIAR_POSTGREST_URL and FAMILIAR_ANON_KEY are unset: run scripts/test.sh");
    };
    PostgrestStore::new(
        url,
        key,
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    )
    .with_retry(RetryPolicy {
        max_retries: 0,
        ..RetryPolicy::default()
    })
}

fn by_id() -> Select {
    Select::from(TABLE).order("id", true)
}

fn insert(values: Value, returning: bool) -> Insert {
    Insert {
        table: TABLE.into(),
        rows: rows(values),
        on_conflict: None,
        client_key: None,
        returning,
    }
}

/// What a step produced: rows (or a value), or the kind of error.
fn outcome<T: serde::Serialize>(result: Result<T, StoreError>) -> Value {
    match result {
        Ok(value) => json!({ "ok": value }),
        Err(error) => json!({ "error": error.kind() }),
    }
}

/// Runs the suite on `store`; returns each step's name and outcome.
async fn suite(store: &dyn Store) -> Vec<(&'static str, Value)> {
    let mut log = Vec::new();
    let wipe = Delete {
        table: TABLE.into(),
        filters: vec![],
        returning: false,
    }
    .gte("id", 0);
    log.push(("wipe", outcome(store.delete(&wipe).await)));
    let seed = insert(
        json!([
            {"id": 1, "name": "Ann", "level": 5, "guild": "owls", "active": true},
            {"id": 2, "name": "Bob", "level": 2, "guild": null, "active": true},
            {"id": 3, "name": "Cy, the (Bold)", "level": 9, "guild": "owls", "active": false},
            {"id": 4, "name": "dora \"D\"", "level": null, "guild": "bats", "active": true},
        ]),
        true,
    );
    log.push(("insert many", outcome(store.insert(&seed).await)));
    let selects: Vec<(&'static str, Select)> = vec![
        ("eq", by_id().eq("guild", "owls")),
        ("neq skips nulls", by_id().neq("guild", "owls")),
        ("gt", by_id().gt("level", 2)),
        ("gte", by_id().gte("level", 2)),
        ("lt", by_id().lt("level", 5)),
        ("lte", by_id().lte("level", 5)),
        ("like", by_id().like("name", "%o%")),
        ("ilike", by_id().ilike("name", "D%")),
        (
            "in with reserved characters",
            by_id().in_list(
                "name",
                vec![json!("Cy, the (Bold)"), json!("dora \"D\""), json!("Zed")],
            ),
        ),
        ("is null", by_id().is("level", Value::Null)),
        (
            "not is null",
            by_id().filter(Filter::compare("guild", Op::Is, Value::Null).negate()),
        ),
        ("is false", by_id().is("active", json!(false))),
        (
            "or with and",
            by_id().or(vec![
                Filter::compare("level", Op::Gt, 8),
                Filter::And(vec![
                    Filter::compare("guild", Op::Is, Value::Null),
                    Filter::compare("level", Op::Eq, 2),
                ]),
            ]),
        ),
        (
            "order desc, nulls first",
            Select::from(TABLE).order("level", false),
        ),
        (
            "order asc, nulls last",
            Select::from(TABLE).order("level", true),
        ),
        ("limit and offset", by_id().limit(2).offset(1)),
        ("columns", by_id().columns("id,name").limit(2)),
        ("single", by_id().eq("name", "Bob").single()),
        ("single on none", by_id().eq("name", "Zed").single()),
        ("single on two", by_id().eq("guild", "owls").single()),
        (
            "maybe single on none",
            by_id().eq("name", "Zed").maybe_single(),
        ),
        ("bad column", by_id().eq("nope", 1)),
        ("bad value", by_id().eq("level", "high")),
        // No unknown table here: postrust answers the CORS preflight for one with a
        // 404, so a browser never sees the error body (README, compatibility notes).
    ];
    for (name, select) in selects {
        log.push((name, outcome(store.select(&select).await)));
    }
    log.push((
        "unique violation",
        outcome(
            store
                .insert(&insert(json!([{"id": 5, "name": "Ann"}]), true))
                .await,
        ),
    ));
    log.push(("after the violation", outcome(store.select(&by_id()).await)));
    let update = Patch {
        table: TABLE.into(),
        set: rows(json!([{"guild": "foxes"}])).remove(0),
        filters: vec![],
        returning: true,
    }
    .eq("guild", "owls");
    log.push(("update returning", outcome(store.update(&update).await)));
    let upsert = Insert {
        on_conflict: Some(vec!["id".into()]),
        client_key: None,
        ..insert(
            json!([{"id": 2, "name": "Bob", "level": 7, "guild": "bats", "active": true},
                        {"id": 6, "name": "Eve", "level": 3, "guild": "bats", "active": true}]),
            true,
        )
    };
    log.push(("upsert", outcome(store.insert(&upsert).await)));
    let rpc = Rpc {
        function: "count_guild".into(),
        args: rows(json!([{"guild": "bats"}])).remove(0),
    };
    log.push(("rpc", outcome(store.rpc(&rpc).await)));
    let delete = Delete {
        table: TABLE.into(),
        filters: vec![],
        returning: true,
    }
    .eq("guild", "foxes");
    log.push(("delete returning", outcome(store.delete(&delete).await)));
    log.push(("final", outcome(store.select(&by_id()).await)));
    log
}

/// Each step whose outcome differs between the two logs, said side by side.
fn differences<N: std::fmt::Display>(
    expected: &[(N, Value)],
    actual: &[(N, Value)],
) -> Vec<String> {
    expected
        .iter()
        .zip(actual)
        .filter(|((_, local), (_, remote))| local != remote)
        .map(|((name, local), (_, remote))| {
            format!("{name}:\n  local:     {local}\n  postgrest: {remote}")
        })
        .collect()
}

/// What each step must give, written down from the seed rows by hand rather than taken
/// from either store (so a mistake both stores share fails too): the ids of the rows in
/// order, a value, or an error kind.
fn written_down() -> Vec<(&'static str, Value)> {
    let ids = |ids: &[i64]| json!({ "ids": ids });
    vec![
        ("wipe", ids(&[])),
        ("insert many", ids(&[1, 2, 3, 4])),
        ("eq", ids(&[1, 3])),
        ("neq skips nulls", ids(&[4])),
        ("gt", ids(&[1, 3])),
        ("gte", ids(&[1, 2, 3])),
        ("lt", ids(&[2])),
        ("lte", ids(&[1, 2])),
        ("like", ids(&[2, 3, 4])),
        ("ilike", ids(&[4])),
        ("in with reserved characters", ids(&[3, 4])),
        ("is null", ids(&[4])),
        ("not is null", ids(&[1, 3, 4])),
        ("is false", ids(&[3])),
        ("or with and", ids(&[2, 3])),
        ("order desc, nulls first", ids(&[4, 3, 1, 2])),
        ("order asc, nulls last", ids(&[2, 1, 3, 4])),
        ("limit and offset", ids(&[2, 3])),
        (
            "columns",
            json!({ "ok": [{"id": 1, "name": "Ann"}, {"id": 2, "name": "Bob"}] }),
        ),
        // `single` answers its one row as a list of one.
        ("single", ids(&[2])),
        ("single on none", json!({ "error": "not_single" })),
        ("single on two", json!({ "error": "not_single" })),
        ("maybe single on none", ids(&[])),
        ("bad column", json!({ "error": "unknown_column" })),
        ("bad value", json!({ "error": "invalid" })),
        ("unique violation", json!({ "error": "duplicate" })),
        ("after the violation", ids(&[1, 2, 3, 4])),
        ("update returning", ids(&[1, 3])),
        ("upsert", ids(&[2, 6])),
        ("rpc", json!({ "ok": 3 })),
        ("delete returning", ids(&[1, 3])),
        ("final", ids(&[2, 4, 6])),
    ]
}

/// A step's outcome in the written-down terms: its rows' ids where ids are written.
fn as_written(outcome: &Value, like: &Value) -> Value {
    match (like.get("ids"), outcome.get("ok")) {
        (Some(_), Some(Value::Array(rows))) => {
            json!({ "ids": rows.iter().map(|r| r["id"].clone()).collect::<Vec<_>>() })
        }
        _ => outcome.clone(),
    }
}

/// The steps of `log` that do not give what was written down.
fn against_written(store: &str, log: &[(&'static str, Value)]) -> Vec<String> {
    let written = written_down();
    assert_eq!(
        log.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        written.iter().map(|(name, _)| *name).collect::<Vec<_>>(),
        "the suite's steps are the ones written down"
    );
    log.iter()
        .zip(&written)
        .filter(|((_, outcome), (_, like))| as_written(outcome, like) != *like)
        .map(|((name, outcome), (_, like))| {
            format!("{store} {name}: gave {outcome}, written down {like}")
        })
        .collect()
}

#[wasm_bindgen_test]
async fn the_local_store_and_postgrest_answer_alike() {
    let local = local_store();
    let remote = remote_store();
    let expected = suite(&local).await;
    let actual = suite(&remote).await;
    // Each as written down by hand, then each as the other.
    let mut wrong = against_written("local", &expected);
    wrong.extend(against_written("postgrest", &actual));
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let changed = |log: &[(&str, Value)], step: &str| {
        log.iter()
            .find(|(name, _)| *name == step)
            .map(|(_, v)| v.clone())
    };
    for log in [&expected, &actual] {
        let updated = changed(log, "update returning").unwrap();
        assert!(
            updated["ok"]
                .as_array()
                .unwrap()
                .iter()
                .all(|r| r["guild"] == "foxes")
        );
        let upserted = changed(log, "upsert").unwrap();
        assert_eq!(upserted["ok"][0]["level"], 7, "the upsert updated Bob");
    }
    let differences = differences(&expected, &actual);
    assert!(
        differences.is_empty(),
        "the stores differ:\n{}",
        differences.join("\n")
    );
    assert_eq!(expected.len(), actual.len());
    // The suite is not vacuous: the errors it provokes happened.
    let kinds: Vec<&Value> = expected
        .iter()
        .filter_map(|(_, v)| v.get("error"))
        .collect();
    assert_eq!(
        kinds,
        [
            &json!("not_single"),
            &json!("not_single"),
            &json!("unknown_column"),
            &json!("invalid"),
            &json!("duplicate")
        ]
    );
}

/// The columns PostgreSQL fills with `now()`: they differ between the two seedings.
const STAMPS: [&str; 2] = ["created_at", "started_at"];

fn without_stamps(rows: Vec<Row>) -> Vec<Row> {
    rows.into_iter()
        .map(|mut row| {
            for stamp in STAMPS {
                row.remove(stamp);
            }
            row
        })
        .collect()
}

#[wasm_bindgen_test]
async fn the_json_seed_and_the_sql_seed_are_the_same_world() {
    let local = LocalStore::new(familiar::world::schemas().unwrap());
    local.seed(familiar::world::SEED).unwrap();
    let remote = remote_store();
    // What anon may read (migrations/0004_security.sql), in key order: the seeded
    // rows only, and not the battle's running damage (other suites play on the
    // same database).
    let seeded = |select: Select, column: &str| select.lte(column, 4);
    let tables: [(&str, &[&str], Select); 13] = [
        (
            "users",
            &["id"],
            // The world's own users (players and their agents come after them), by the
            // columns anyone may read: `auth_id` is refused, and so is `*`
            // (migrations/0020_private_auth_id.sql).
            seeded(
                Select::from("users")
                    .columns("id,username,is_agent,health,energy,morale,gold,created_at"),
                "id",
            ),
        ),
        ("communities", &["id"], Select::from("communities")),
        (
            "user_communities",
            &["user_id", "community_id"],
            seeded(Select::from("user_communities"), "user_id"),
        ),
        (
            "battles",
            &["id"],
            Select::from("battles").columns("id,community1_id,community2_id,status"),
        ),
        (
            "battle_participants",
            &["battle_id", "user_id"],
            seeded(Select::from("battle_participants"), "user_id"),
        ),
        (
            "market_items",
            &["id"],
            Select::from("market_items").eq("available", true),
        ),
        ("posts", &["id"], Select::from("posts").eq("id", 1)),
        ("proposals", &["id"], Select::from("proposals").eq("id", 1)),
        (
            "votes",
            &["proposal_id", "user_id"],
            seeded(Select::from("votes"), "user_id"),
        ),
        ("jobs", &["name"], Select::from("jobs")),
        ("knowledge", &["id"], Select::from("knowledge")),
        (
            "agent_owners",
            &["agent_id"],
            seeded(Select::from("agent_owners"), "agent_id"),
        ),
        (
            "starter_agents",
            &["agent_id"],
            Select::from("starter_agents"),
        ),
    ];
    for (table, key, mut select) in tables {
        for column in key {
            select = select.order(column, true);
        }
        let local_rows = without_stamps(local.select(&select).await.unwrap());
        let remote_rows = without_stamps(remote.select(&select).await.unwrap());
        assert!(!local_rows.is_empty(), "{table} is seeded");
        assert_eq!(local_rows, remote_rows, "{table}");
    }
    // Embedded resources, both directions, with aliases and foreign-key hints.
    let embeds = [
        seeded(
            Select::from("user_communities").columns("user_id,is_primary,communities(name)"),
            "user_id",
        )
        .order("user_id", true)
        .order("community_id", true),
        seeded(
            Select::from("users").columns("username,user_communities(community_id,is_primary)"),
            "id",
        )
        .order("id", true),
        Select::from("battles").columns(
            "id,home:communities!battles_community1_id_fkey(name),away:communities!battles_community2_id_fkey(name)",
        ),
        seeded(
            Select::from("battle_participants").columns("side,damage_dealt,users(username,morale)"),
            "user_id",
        )
        .order("user_id", true),
    ];
    for select in embeds {
        let local_rows = local.select(&select).await.unwrap();
        let remote_rows = remote.select(&select).await.unwrap();
        assert!(!local_rows.is_empty(), "{}", select.columns);
        assert_eq!(local_rows, remote_rows, "{}", select.columns);
    }
    let ambiguous = Select::from("battles").columns("id,communities(name)");
    assert_eq!(
        local.select(&ambiguous).await.unwrap_err().kind(),
        "invalid"
    );
    assert_eq!(
        remote.select(&ambiguous).await.unwrap_err().kind(),
        "invalid"
    );
}

/// A session kept for the length of the test only.
struct Forgetful;

impl Persist for Forgetful {
    fn load(&self) -> Option<String> {
        None
    }

    fn save(&self, _: &str) {}
}

/// A new anonymous player of the Supabase stand-in, and their store.
async fn signed_in_player() -> (Rc<SignedInStore>, String) {
    let (Some(project), Some(key)) = (
        option_env!("FAMILIAR_SUPABASE_URL"),
        option_env!("FAMILIAR_ANON_KEY"),
    ) else {
        panic!("FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY are unset: run scripts/test.sh");
    };
    let client = AuthClient::new(project, key, Rc::new(Fetch), Rc::new(BrowserClock));
    let account = Rc::new(Account::new(client, Box::new(Forgetful)));
    let session = account.sign_in_anonymously().await.unwrap();
    let rest = PostgrestStore::new(
        &format!("{project}/rest/v1"),
        key,
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    );
    (Rc::new(SignedInStore::new(rest, account)), session.user.id)
}

#[wasm_bindgen_test]
async fn the_guild_councils_rules_answer_alike_for_a_signed_in_player() {
    let local = familiar::guild::local(Rc::new(BrowserClock), None).unwrap();
    let expected = guild_suite(Rc::new(local)).await;
    let (remote, _) = signed_in_player().await;
    let actual = guild_suite(remote).await;
    let differences = differences(&expected.steps, &actual.steps);
    assert!(
        differences.is_empty(),
        "the stores differ:\n{}",
        differences.join("\n")
    );
    assert_eq!(expected.steps.len(), actual.steps.len());
    // Not vacuous: the rules refused, and the ticks applied and pressed.
    let refusals = expected
        .steps
        .iter()
        .filter(|(_, v)| v.get("error").is_some())
        .count();
    assert!(refusals >= 15, "{refusals} refusals");
    let ruined = &expected.step("tick 2")["ok"];
    assert_eq!(
        (ruined["gold"].clone(), ruined["morale"].clone()),
        (json!(0), json!(40))
    );
}

#[wasm_bindgen_test]
async fn two_ticks_at_once_over_postgrest_apply_once() {
    let (remote, _) = signed_in_player().await;
    let game = familiar::guild::Game::new(
        remote,
        Rc::new(familiar::guild::Unlocked),
        familiar::guild::Council::offline(),
    );
    let made = game.propose(None).await.unwrap();
    game.decide(made[0].id, true).await.unwrap();
    let (one, two) = futures::future::join(game.tick(0), game.tick(0)).await;
    let (one, two) = (one.unwrap(), two.unwrap());
    assert_eq!(one.resources, two.resources);
    assert_eq!(
        [one.fresh, two.fresh]
            .iter()
            .filter(|f| **f == Some(true))
            .count(),
        1,
        "one of the two applied"
    );
    let board = game.board().await.unwrap();
    assert_eq!(board.guild.tick, 1);
    assert_eq!(board.history.len(), 2);
}

#[wasm_bindgen_test]
async fn the_worlds_tools_answer_alike_for_a_signed_in_player() {
    let local =
        familiar::world::functions::install(LocalStore::new(familiar::world::schemas().unwrap()));
    local.seed(familiar::world::SEED).unwrap();
    local.sign_in_as(Some("local-player".into()));
    let expected = world_suite(Rc::new(local), "local-player").await;

    let (Some(project), Some(key)) = (
        option_env!("FAMILIAR_SUPABASE_URL"),
        option_env!("FAMILIAR_ANON_KEY"),
    ) else {
        panic!("FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY are unset: run scripts/test.sh");
    };
    let client = AuthClient::new(project, key, Rc::new(Fetch), Rc::new(BrowserClock));
    let account = Rc::new(Account::new(client, Box::new(Forgetful)));
    let session = account.sign_in_anonymously().await.unwrap();
    let rest = PostgrestStore::new(
        &format!("{project}/rest/v1"),
        key,
        Rc::new(Fetch),
        Rc::new(BrowserClock),
        Box::new(js_sys::Math::random),
    );
    let remote = Rc::new(SignedInStore::new(rest, account));
    let actual = world_suite(remote, &session.user.id).await;

    let differences = differences(&expected, &actual);
    assert!(
        differences.is_empty(),
        "the stores differ:\n{}",
        differences.join("\n")
    );
    assert_eq!(expected.len(), actual.len());
    // Not vacuous: rules refused, and actions took effect.
    let refusals = expected
        .iter()
        .filter(|(_, v)| v.get("error").is_some())
        .count();
    assert!(refusals >= 10, "{refusals} refusals");
    let end = &expected
        .iter()
        .find(|(n, _)| n == "stats at the end")
        .unwrap()
        .1;
    assert_eq!(end["ok"]["gold"], json!(69));
}
