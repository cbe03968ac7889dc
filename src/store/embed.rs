//! PostgREST select lists — columns, `alias:column`, `*`, and embedded resources such as
//! `community:communities!battles_community1_id_fkey(name)` — planned against the
//! local tables' foreign keys and applied to rows.

use std::collections::BTreeMap;

use serde_json::Value;

use super::eval::order_values;
use super::table::TableSchema;
use super::{Row, StoreError};

/// One element of a select list, resolved against the schemas.
pub enum Node {
    Column {
        alias: String,
        column: String,
    },
    /// Rows of `table` whose `remote` column equals this row's `local` column: one row
    /// or null when this table holds the foreign key, a list when `table` does.
    Embed {
        alias: String,
        table: String,
        local: String,
        remote: String,
        many: bool,
        nodes: Vec<Node>,
    },
}

/// Plans `select` for rows of `table`; an unknown column or relationship is an error
/// before any row is read.
pub fn plan(
    schemas: &BTreeMap<String, TableSchema>,
    table: &str,
    select: &str,
) -> Result<Vec<Node>, StoreError> {
    let schema = schemas
        .get(table)
        .ok_or_else(|| StoreError::UnknownTable(table.to_owned()))?;
    let mut nodes = Vec::new();
    for item in split_top_level(select) {
        let item = item.trim();
        if item.is_empty() {
            continue;
        }
        if item == "*" {
            nodes.extend(schema.columns.iter().map(|c| Node::Column {
                alias: c.name.clone(),
                column: c.name.clone(),
            }));
            continue;
        }
        let (alias, rest) = match item.split_once(':') {
            Some((alias, rest)) if !alias.contains('(') => (Some(alias.trim()), rest.trim()),
            _ => (None, item),
        };
        match rest.split_once('(') {
            None => {
                schema.column(rest)?;
                nodes.push(Node::Column {
                    alias: alias.unwrap_or(rest).to_owned(),
                    column: rest.to_owned(),
                });
            }
            Some((target, inner)) => {
                let inner = inner
                    .strip_suffix(')')
                    .ok_or_else(|| invalid(item, "an unclosed `(`"))?;
                let (target, hint) = match target.split_once('!') {
                    Some((t, h)) => (t.trim(), Some(h.trim())),
                    None => (target.trim(), None),
                };
                let alias = alias.unwrap_or(target).to_owned();
                nodes.push(relationship(schemas, schema, target, hint, alias, inner)?);
            }
        }
    }
    Ok(nodes)
}

fn invalid(item: &str, why: &str) -> StoreError {
    StoreError::Invalid(format!("cannot read `{item}` in the select list: {why}"))
}

/// Splits at commas outside parentheses.
fn split_top_level(text: &str) -> Vec<&str> {
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(text.get(start..i).unwrap_or_default());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(text.get(start..).unwrap_or_default());
    out
}

/// Finds the one foreign key between `from` and `target` (narrowed by a `!hint`: a
/// column or a constraint named `{table}_{column}_fkey`), in either direction.
fn relationship(
    schemas: &BTreeMap<String, TableSchema>,
    from: &TableSchema,
    target: &str,
    hint: Option<&str>,
    alias: String,
    inner: &str,
) -> Result<Node, StoreError> {
    let other = schemas
        .get(target)
        .ok_or_else(|| StoreError::UnknownTable(target.to_owned()))?;
    let fits = |table: &str, column: &str| {
        hint.is_none_or(|h| h == column || h == format!("{table}_{column}_fkey") || h == table)
    };
    let mut found = Vec::new();
    for column in &from.columns {
        if let Some(reference) = column.references.as_ref().filter(|r| r.table == target)
            && fits(&from.name, &column.name)
        {
            found.push((true, column.name.clone(), reference.column.clone()));
        }
    }
    for column in &other.columns {
        if let Some(reference) = column.references.as_ref().filter(|r| r.table == from.name)
            && fits(&other.name, &column.name)
        {
            found.push((false, reference.column.clone(), column.name.clone()));
        }
    }
    let nodes = plan(schemas, target, inner)?;
    match found.as_slice() {
        [(holds_key, local, remote)] => Ok(Node::Embed {
            alias,
            table: target.to_owned(),
            local: local.clone(),
            remote: remote.clone(),
            many: !holds_key,
            nodes,
        }),
        [] => Err(StoreError::Invalid(format!(
            "no relationship between `{}` and `{target}`",
            from.name
        ))),
        _ => Err(StoreError::Invalid(format!(
            "more than one relationship between `{}` and `{target}`: name one with `!`",
            from.name
        ))),
    }
}

/// The row as the planned select list shows it; `rows_of` gives a table's rows.
pub fn apply<'t>(nodes: &[Node], row: &Row, rows_of: &dyn Fn(&str) -> &'t [Row]) -> Row {
    let mut out = Row::new();
    for node in nodes {
        match node {
            Node::Column { alias, column } => {
                out.insert(
                    alias.clone(),
                    row.get(column).cloned().unwrap_or(Value::Null),
                );
            }
            Node::Embed {
                alias,
                table,
                local,
                remote,
                many,
                nodes,
            } => {
                let mut found = related(row.get(local), rows_of(table), remote)
                    .map(|r| Value::Object(apply(nodes, r, rows_of)));
                let value = if *many {
                    Value::Array(found.collect())
                } else {
                    found.next().unwrap_or(Value::Null)
                };
                out.insert(alias.clone(), value);
            }
        }
    }
    out
}

/// The rows whose `column` equals `value` (none for a null value).
fn related<'r>(
    value: Option<&'r Value>,
    rows: &'r [Row],
    column: &'r str,
) -> impl Iterator<Item = &'r Row> {
    let value = value.filter(|v| !v.is_null());
    rows.iter().filter(move |row| {
        value.is_some_and(|v| {
            row.get(column)
                .is_some_and(|c| !c.is_null() && order_values(c, v).is_eq())
        })
    })
}
