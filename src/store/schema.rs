//! Table schemas for the local store: column types, nullability, defaults and unique
//! keys, and how a JSON value is read as a column's type (as PostgreSQL casts text).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::StoreError;

/// The PostgreSQL types the local store tells apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ColumnType {
    /// `smallint`, `integer`, `bigint`, identities.
    Integer,
    /// `real`, `double precision`, `numeric`.
    Numeric,
    /// `text`, `varchar`, `uuid`, `timestamptz` (kept as their text).
    Text,
    Boolean,
    /// `json`, `jsonb`.
    Json,
}

/// Where a column's value comes from when an insert leaves it out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Default {
    /// The next number of the table's sequence.
    Identity,
    /// A fixed value.
    Value(Value),
    /// The current time (`now()`), as RFC 3339 text.
    Now,
    /// A fresh random UUID (`gen_random_uuid()`).
    Uuid,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ColumnSchema {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: ColumnType,
    #[serde(default = "nullable")]
    pub nullable: bool,
    #[serde(default)]
    pub default: Option<Default>,
    /// The column this one refers to (a foreign key), for embedding.
    #[serde(default)]
    pub references: Option<Reference>,
}

/// A foreign key's target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reference {
    pub table: String,
    pub column: String,
}

fn nullable() -> bool {
    true
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TableSchema {
    pub name: String,
    pub columns: Vec<ColumnSchema>,
    /// The primary key's columns.
    pub primary_key: Vec<String>,
    /// Other unique keys.
    #[serde(default)]
    pub unique: Vec<Vec<String>>,
}

impl TableSchema {
    pub fn column(&self, name: &str) -> Result<&ColumnSchema, StoreError> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| StoreError::UnknownColumn {
                table: self.name.clone(),
                column: name.to_owned(),
            })
    }

    /// Every unique key, the primary key first.
    pub fn unique_keys(&self) -> impl Iterator<Item = &Vec<String>> {
        std::iter::once(&self.primary_key)
            .filter(|key| !key.is_empty())
            .chain(&self.unique)
    }
}

/// `value` read as a value of `kind`, as PostgreSQL would cast its text; `null` stays.
pub fn coerce(kind: ColumnType, value: &Value) -> Result<Value, StoreError> {
    let invalid = || {
        StoreError::Invalid(format!(
            "`{}` is not a valid {}",
            text_of(value),
            type_name(kind)
        ))
    };
    Ok(match (kind, value) {
        (_, Value::Null) => Value::Null,
        (ColumnType::Json, v) => v.clone(),
        (ColumnType::Text, Value::String(s)) => Value::String(s.clone()),
        (ColumnType::Text, v) => Value::String(v.to_string()),
        (ColumnType::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => value.clone(),
        (ColumnType::Integer, Value::String(s)) => s
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| invalid())?,
        (ColumnType::Numeric, Value::Number(_)) => value.clone(),
        (ColumnType::Numeric, Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number)
            .ok_or_else(invalid)?,
        (ColumnType::Boolean, Value::Bool(b)) => Value::Bool(*b),
        (ColumnType::Boolean, Value::String(s)) => match s.trim().to_ascii_lowercase().as_str() {
            "true" | "t" | "yes" | "y" | "on" | "1" => Value::Bool(true),
            "false" | "f" | "no" | "n" | "off" | "0" => Value::Bool(false),
            _ => return Err(invalid()),
        },
        _ => return Err(invalid()),
    })
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn type_name(kind: ColumnType) -> &'static str {
    match kind {
        ColumnType::Integer => "integer",
        ColumnType::Numeric => "number",
        ColumnType::Text => "text",
        ColumnType::Boolean => "boolean",
        ColumnType::Json => "JSON value",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_read_as_postgresql_casts_text() {
        assert_eq!(coerce(ColumnType::Integer, &json!("42")), Ok(json!(42)));
        assert_eq!(coerce(ColumnType::Numeric, &json!("2.5")), Ok(json!(2.5)));
        assert_eq!(coerce(ColumnType::Boolean, &json!("t")), Ok(json!(true)));
        assert_eq!(coerce(ColumnType::Text, &json!(7)), Ok(json!("7")));
        assert_eq!(coerce(ColumnType::Integer, &Value::Null), Ok(Value::Null));
        assert_eq!(
            coerce(ColumnType::Integer, &json!("abc")),
            Err(StoreError::Invalid("`abc` is not a valid integer".into()))
        );
        assert!(coerce(ColumnType::Integer, &json!(1.5)).is_err());
    }
}
