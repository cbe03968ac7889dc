//! Local-store query time on a 10,000-row table: filter + order + limit, as a game
//! tool would ask. Run: `cargo run --release --example local_store`.
#![allow(clippy::unwrap_used)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use familiar::store::{
    ColumnDefault, ColumnSchema, ColumnType, Filter, Filtered, Insert, LocalStore, Op, Select,
    TableSchema,
};
use serde_json::json;

fn column(name: &str, kind: ColumnType) -> ColumnSchema {
    ColumnSchema {
        name: name.into(),
        kind,
        nullable: true,
        default: None,
        references: None,
    }
}

fn main() {
    let schema = TableSchema {
        name: "messages".into(),
        columns: vec![
            ColumnSchema {
                default: Some(ColumnDefault::Identity),
                nullable: false,
                ..column("id", ColumnType::Integer)
            },
            column("sender_id", ColumnType::Integer),
            column("receiver_id", ColumnType::Integer),
            column("content", ColumnType::Text),
            column("created_at", ColumnType::Text),
        ],
        primary_key: vec!["id".into()],
        unique: vec![],
    };
    let store = LocalStore::new(vec![schema]);
    let rows = (0..10_000)
        .map(|i| {
            let row = json!({"sender_id": i % 97, "receiver_id": i % 13, "content": format!("message {i}"),
                             "created_at": format!("2026-11-{:02}T{:02}:00:00Z", 1 + i % 28, i % 24)});
            serde_json::from_value(row).unwrap()
        })
        .collect();
    let started = Instant::now();
    store
        .run_insert(&Insert {
            table: "messages".into(),
            rows,
            on_conflict: None,
            client_key: None,
            returning: false,
        })
        .unwrap();
    println!(
        "insert 10,000 rows in one batch: {:.1} ms",
        started.elapsed().as_secs_f64() * 1e3
    );

    let queries = [
        (
            "eq + order + limit 10",
            Select::from("messages")
                .eq("receiver_id", 7)
                .order("created_at", false)
                .limit(10),
        ),
        (
            "or + like + order + limit 20",
            Select::from("messages")
                .or(vec![
                    Filter::compare("sender_id", Op::Eq, 3),
                    Filter::compare("sender_id", Op::Eq, 5),
                ])
                .like("content", "%1%")
                .order("id", false)
                .limit(20),
        ),
        (
            "full scan, order by text",
            Select::from("messages").order("content", true).limit(50),
        ),
    ];
    for (name, query) in &queries {
        let mut runs = 0u32;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(2) {
            black_box(store.run_select(query).unwrap());
            runs += 1;
        }
        let per_query = started.elapsed().as_secs_f64() / f64::from(runs) * 1e3;
        println!("{name:<32} {per_query:8.3} ms per query ({runs} runs)");
    }
}
