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
