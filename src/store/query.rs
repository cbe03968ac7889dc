//! Queries in PostgREST's vocabulary, as plain data, and their PostgREST encoding.
//!
//! A [`Select`], [`Insert`], [`Patch`], [`Delete`] or [`Rpc`] says what to do;
//! `store::postgrest` sends it over HTTP and `store::local` runs it in memory, so both
//! answer the same question. Encoding follows PostgREST's rules: values holding
//! reserved characters are double-quoted inside `in` and `or`, with `"` and `\`
//! backslash-escaped, and the whole is percent-encoded (a space as `%20`).

use crate::base::json::Read;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Eq,
    Neq,
    Gt,
    Gte,
    Lt,
    Lte,
    /// SQL `LIKE`: `%` any run, `_` one character.
    Like,
    /// Case-insensitive `LIKE`.
    Ilike,
    /// Membership in a list (`value` is an array).
    In,
    /// `IS null | true | false`.
    Is,
}

impl Op {
    pub fn name(self) -> &'static str {
        match self {
            Self::Eq => "eq",
            Self::Neq => "neq",
            Self::Gt => "gt",
            Self::Gte => "gte",
            Self::Lt => "lt",
            Self::Lte => "lte",
            Self::Like => "like",
            Self::Ilike => "ilike",
            Self::In => "in",
            Self::Is => "is",
        }
    }
}

/// A row filter.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Filter {
    /// `column op value`, negated when `not`.
    Compare {
        column: String,
        op: Op,
        value: Value,
        #[serde(default)]
        not: bool,
    },
    /// Any of these.
    Or(Vec<Filter>),
    /// All of these (useful inside an `Or`).
    And(Vec<Filter>),
}

/// Sort by a column.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Order {
    pub column: String,
    pub ascending: bool,
    /// Where nulls go; PostgreSQL's default is last ascending, first descending.
    pub nulls_first: Option<bool>,
}

/// How many rows a select must return.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cardinality {
    #[default]
    Many,
    /// Exactly one row, else an error.
    Single,
    /// At most one row.
    MaybeSingle,
}

/// Reads rows.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Select {
    pub table: String,
    /// PostgREST's `select` list, e.g. `id,name,inventory(item_id,quantity)`.
    pub columns: String,
    pub filters: Vec<Filter>,
    pub order: Vec<Order>,
    pub limit: Option<u64>,
    pub offset: Option<u64>,
    pub cardinality: Cardinality,
}

/// Adds rows, or with `on_conflict` merges them into rows that share those columns.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Insert {
    pub table: String,
    pub rows: Vec<Map<String, Value>>,
    /// Upsert: the unique columns that identify an existing row.
    pub on_conflict: Option<Vec<String>>,
    /// Unique columns whose values the client generated (a UUID, say). A remote
    /// store may then retry a failed insert without ever writing a row twice.
    #[serde(default)]
    pub client_key: Option<Vec<String>>,
    pub returning: bool,
}

/// Changes the filtered rows (SQL `UPDATE`, PostgREST `PATCH`).
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Patch {
    pub table: String,
    pub set: Map<String, Value>,
    pub filters: Vec<Filter>,
    pub returning: bool,
}

/// Removes the filtered rows.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Delete {
    pub table: String,
    pub filters: Vec<Filter>,
    pub returning: bool,
}

/// Calls a database function with named arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Read)]
pub struct Rpc {
    pub function: String,
    pub args: Map<String, Value>,
}

/// Filter-building methods shared by the queries that take filters.
pub trait Filtered: Sized {
    fn filters_mut(&mut self) -> &mut Vec<Filter>;

    /// Adds a filter.
    fn filter(mut self, filter: Filter) -> Self {
        self.filters_mut().push(filter);
        self
    }

    fn compare(self, column: &str, op: Op, value: impl Into<Value>) -> Self {
        self.filter(Filter::Compare {
            column: column.to_owned(),
            op,
            value: value.into(),
            not: false,
        })
    }

    fn eq(self, column: &str, value: impl Into<Value>) -> Self {
        self.compare(column, Op::Eq, value)
    }

    fn neq(self, column: &str, value: impl Into<Value>) -> Self {
        self.compare(column, Op::Neq, value)
    }

    fn gt(self, column: &str, value: impl Into<Value>) -> Self {
        self.compare(column, Op::Gt, value)
    }

    fn gte(self, column: &str, value: impl Into<Value>) -> Self {
        self.compare(column, Op::Gte, value)
    }

    fn lt(self, column: &str, value: impl Into<Value>) -> Self {
        self.compare(column, Op::Lt, value)
    }

    fn lte(self, column: &str, value: impl Into<Value>) -> Self {
        self.compare(column, Op::Lte, value)
    }

    fn like(self, column: &str, pattern: &str) -> Self {
        self.compare(column, Op::Like, pattern)
    }

    fn ilike(self, column: &str, pattern: &str) -> Self {
        self.compare(column, Op::Ilike, pattern)
    }

    fn in_list(self, column: &str, values: Vec<Value>) -> Self {
        self.compare(column, Op::In, Value::Array(values))
    }

    /// `IS NULL` for `Value::Null`, `IS TRUE/FALSE` for booleans.
    fn is(self, column: &str, value: Value) -> Self {
        self.compare(column, Op::Is, value)
    }

    fn or(self, any_of: Vec<Filter>) -> Self {
        self.filter(Filter::Or(any_of))
    }
}

impl Filtered for Select {
    fn filters_mut(&mut self) -> &mut Vec<Filter> {
        &mut self.filters
    }
}

impl Filtered for Patch {
    fn filters_mut(&mut self) -> &mut Vec<Filter> {
        &mut self.filters
    }
}

impl Filtered for Delete {
    fn filters_mut(&mut self) -> &mut Vec<Filter> {
        &mut self.filters
    }
}

impl Filter {
    /// `column op value`, for use inside [`Filter::Or`] and [`Filter::And`].
    pub fn compare(column: &str, op: Op, value: impl Into<Value>) -> Self {
        Self::Compare {
            column: column.to_owned(),
            op,
            value: value.into(),
            not: false,
        }
    }

    /// The same filter, negated; groups by De Morgan's laws.
    pub fn negate(self) -> Self {
        match self {
            Self::Compare {
                column,
                op,
                value,
                not,
            } => Self::Compare {
                column,
                op,
                value,
                not: !not,
            },
            Self::And(all) => Self::Or(all.into_iter().map(Self::negate).collect()),
            Self::Or(any) => Self::And(any.into_iter().map(Self::negate).collect()),
        }
    }
}

impl Select {
    /// All columns of `table`.
    pub fn from(table: &str) -> Self {
        Self {
            table: table.to_owned(),
            columns: "*".to_owned(),
            filters: Vec::new(),
            order: Vec::new(),
            limit: None,
            offset: None,
            cardinality: Cardinality::Many,
        }
    }

    pub fn columns(mut self, columns: &str) -> Self {
        columns.clone_into(&mut self.columns);
        self
    }

    pub fn order(mut self, column: &str, ascending: bool) -> Self {
        self.order.push(Order {
            column: column.to_owned(),
            ascending,
            nulls_first: None,
        });
        self
    }

    pub fn limit(mut self, limit: u64) -> Self {
        self.limit = Some(limit);
        self
    }

    pub fn offset(mut self, offset: u64) -> Self {
        self.offset = Some(offset);
        self
    }

    pub fn single(mut self) -> Self {
        self.cardinality = Cardinality::Single;
        self
    }

    pub fn maybe_single(mut self) -> Self {
        self.cardinality = Cardinality::MaybeSingle;
        self
    }
}

/// Characters that make a value need double quotes inside `in.(…)` and `or=(…)`.
const RESERVED: &[char] = &[',', '.', ':', '(', ')', '"', '\\', ' '];

/// A value as PostgREST reads it in a filter; `nested` for lists and logic groups.
fn value_text(value: &Value, nested: bool) -> String {
    let raw = match value {
        Value::String(s) => s.clone(),
        Value::Null => "null".to_owned(),
        other => other.to_string(),
    };
    let needs_quotes = nested && (raw.is_empty() || raw.contains(RESERVED));
    if needs_quotes {
        format!("\"{}\"", raw.replace('\\', "\\\\").replace('"', "\\\""))
    } else {
        raw
    }
}

/// `op.value` (with `not.` when negated): the right-hand side of a filter.
fn operation(op: Op, value: &Value, not: bool, nested: bool) -> String {
    let negation = if not { "not." } else { "" };
    let operand = match (op, value) {
        (Op::In, Value::Array(items)) => {
            let list: Vec<String> = items.iter().map(|v| value_text(v, true)).collect();
            format!("({})", list.join(","))
        }
        (Op::Like | Op::Ilike, Value::String(pattern)) if !nested => pattern.replace('%', "*"),
        (Op::Like | Op::Ilike, Value::String(pattern)) => {
            value_text(&Value::String(pattern.replace('%', "*")), true)
        }
        _ => value_text(value, nested),
    };
    format!("{negation}{}.{operand}", op.name())
}

/// One filter inside an `or(…)`/`and(…)` group.
fn group_item(filter: &Filter) -> String {
    match filter {
        Filter::Compare {
            column,
            op,
            value,
            not,
        } => format!("{column}.{}", operation(*op, value, *not, true)),
        Filter::Or(any) => format!(
            "or({})",
            any.iter().map(group_item).collect::<Vec<_>>().join(",")
        ),
        Filter::And(all) => format!(
            "and({})",
            all.iter().map(group_item).collect::<Vec<_>>().join(",")
        ),
    }
}

/// A filter as one query parameter `(name, value)`, before percent-encoding.
pub fn filter_param(filter: &Filter) -> (String, String) {
    match filter {
        Filter::Compare {
            column,
            op,
            value,
            not,
        } => (column.clone(), operation(*op, value, *not, false)),
        Filter::Or(any) => (
            "or".to_owned(),
            format!(
                "({})",
                any.iter().map(group_item).collect::<Vec<_>>().join(",")
            ),
        ),
        Filter::And(all) => (
            "and".to_owned(),
            format!(
                "({})",
                all.iter().map(group_item).collect::<Vec<_>>().join(",")
            ),
        ),
    }
}

/// `order=` for a list of orderings.
pub fn order_param(order: &[Order]) -> Option<(String, String)> {
    if order.is_empty() {
        return None;
    }
    let terms: Vec<String> = order
        .iter()
        .map(|o| {
            let direction = if o.ascending { "asc" } else { "desc" };
            match o.nulls_first {
                Some(true) => format!("{}.{direction}.nullsfirst", o.column),
                Some(false) => format!("{}.{direction}.nullslast", o.column),
                None => format!("{}.{direction}", o.column),
            }
        })
        .collect();
    Some(("order".to_owned(), terms.join(",")))
}

/// Percent-encodes a query component; unreserved characters and PostgREST's syntax
/// characters (`.,()*:`) stay readable.
pub fn percent_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || b"-_.~,()*:".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// Joins parameters into a query string.
pub fn query_string(params: &[(String, String)]) -> String {
    params
        .iter()
        .map(|(k, v)| format!("{}={}", percent_encode(k), percent_encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn params(select: &Select) -> Vec<(String, String)> {
        select.filters.iter().map(filter_param).collect()
    }

    #[test]
    fn comparisons_encode_as_column_equals_op_dot_value() {
        let select = Select::from("users")
            .eq("name", "Dotty")
            .gte("level", 3)
            .neq("role", "npc")
            .is("deleted_at", Value::Null)
            .like("title", "%Ale%")
            .filter(Filter::compare("hp", Op::Lt, 10).negate());
        let expected: Vec<(String, String)> = [
            ("name", "eq.Dotty"),
            ("level", "gte.3"),
            ("role", "neq.npc"),
            ("deleted_at", "is.null"),
            ("title", "like.*Ale*"),
            ("hp", "not.lt.10"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(params(&select), expected);
    }

    #[test]
    fn list_values_with_reserved_characters_are_quoted_and_escaped() {
        let select = Select::from("items").in_list(
            "name",
            vec![
                json!("plain"),
                json!("a,b"),
                json!("say \"hi\""),
                json!("(x)"),
                json!(""),
                json!(4),
            ],
        );
        assert_eq!(
            params(&select)[0].1,
            r#"in.(plain,"a,b","say \"hi\"","(x)","",4)"#
        );
    }

    #[test]
    fn or_groups_nest_and_quote_their_values() {
        let select = Select::from("users").or(vec![
            Filter::compare("name", Op::Eq, "Ann, the Bold"),
            Filter::And(vec![
                Filter::compare("level", Op::Gt, 5),
                Filter::compare("guild", Op::Is, Value::Null),
            ]),
        ]);
        assert_eq!(
            params(&select),
            [(
                "or".to_owned(),
                r#"(name.eq."Ann, the Bold",and(level.gt.5,guild.is.null))"#.to_owned()
            )]
        );
    }

    #[test]
    fn negating_a_group_applies_de_morgan() {
        let group = Filter::Or(vec![
            Filter::compare("a", Op::Eq, 1),
            Filter::compare("b", Op::Eq, 2),
        ]);
        assert_eq!(
            filter_param(&group.negate()),
            ("and".to_owned(), "(a.not.eq.1,b.not.eq.2)".to_owned())
        );
    }

    #[test]
    fn order_and_percent_encoding_follow_postgrest() {
        let mut select = Select::from("posts")
            .order("created_at", false)
            .order("id", true);
        select.order[1].nulls_first = Some(true);
        assert_eq!(
            order_param(&select.order),
            Some((
                "order".to_owned(),
                "created_at.desc,id.asc.nullsfirst".to_owned()
            ))
        );
        assert_eq!(
            query_string(&[("name".into(), "eq.Ann Bold&co é".into())]),
            "name=eq.Ann%20Bold%26co%20%C3%A9"
        );
    }
}
