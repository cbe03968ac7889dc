//! Filters and ordering evaluated in memory with PostgreSQL's semantics: three-valued
//! logic (a comparison with `null` is unknown, and unknown rows are not returned),
//! values compared as their column's type, `LIKE` patterns, nulls last ascending.

use std::cmp::Ordering;

use serde_json::Value;

use super::query::{Filter, Op, Order};
use super::schema::{TableSchema, coerce};
use super::{Row, StoreError};

/// Whether `row` passes every filter (unknown counts as not passing).
pub fn matches(schema: &TableSchema, row: &Row, filters: &[Filter]) -> Result<bool, StoreError> {
    for filter in filters {
        if truth(schema, row, filter)? != Some(true) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// A filter's SQL truth value: `None` is unknown.
fn truth(schema: &TableSchema, row: &Row, filter: &Filter) -> Result<Option<bool>, StoreError> {
    match filter {
        Filter::Compare {
            column,
            op,
            value,
            not,
        } => {
            let result = compare(schema, row, column, *op, value)?;
            Ok(if *not { result.map(|b| !b) } else { result })
        }
        Filter::Or(any) => {
            let mut unknown = false;
            for f in any {
                match truth(schema, row, f)? {
                    Some(true) => return Ok(Some(true)),
                    None => unknown = true,
                    Some(false) => {}
                }
            }
            Ok(if unknown { None } else { Some(false) })
        }
        Filter::And(all) => {
            let mut unknown = false;
            for f in all {
                match truth(schema, row, f)? {
                    Some(false) => return Ok(Some(false)),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            Ok(if unknown { None } else { Some(true) })
        }
    }
}

fn compare(
    schema: &TableSchema,
    row: &Row,
    column: &str,
    op: Op,
    value: &Value,
) -> Result<Option<bool>, StoreError> {
    let kind = schema.column(column)?.kind;
    let cell = row.get(column).unwrap_or(&Value::Null);
    if op == Op::Is {
        return match value {
            Value::Null => Ok(Some(cell.is_null())),
            Value::Bool(b) => Ok(Some(cell.as_bool() == Some(*b))),
            Value::String(s) if s == "null" => Ok(Some(cell.is_null())),
            Value::String(s) if s == "true" || s == "false" => {
                Ok(Some(cell.as_bool() == Some(s == "true")))
            }
            other => Err(StoreError::Invalid(format!(
                "`is` takes null, true or false, not {other}"
            ))),
        };
    }
    if op == Op::In {
        let Value::Array(items) = value else {
            return Err(StoreError::Invalid("`in` takes a list".into()));
        };
        if cell.is_null() {
            return Ok(None);
        }
        let mut unknown = false;
        for item in items {
            let item = coerce(kind, item)?;
            if item.is_null() {
                unknown = true;
            } else if order_values(cell, &item) == Ordering::Equal {
                return Ok(Some(true));
            }
        }
        return Ok(if unknown { None } else { Some(false) });
    }
    if matches!(op, Op::Like | Op::Ilike) {
        let (Value::String(text), Value::String(pattern)) = (cell, value) else {
            return Ok(if cell.is_null() { None } else { Some(false) });
        };
        return Ok(Some(if op == Op::Ilike {
            like(&text.to_lowercase(), &pattern.to_lowercase())
        } else {
            like(text, pattern)
        }));
    }
    let operand = coerce(kind, value)?;
    if cell.is_null() || operand.is_null() {
        return Ok(None);
    }
    let ordering = order_values(cell, &operand);
    Ok(Some(match op {
        Op::Eq => ordering == Ordering::Equal,
        Op::Neq => ordering != Ordering::Equal,
        Op::Gt => ordering == Ordering::Greater,
        Op::Gte => ordering != Ordering::Less,
        Op::Lt => ordering == Ordering::Less,
        Op::Lte => ordering != Ordering::Greater,
        Op::Like | Op::Ilike | Op::In | Op::Is => false,
    }))
}

/// Orders two non-null values of one column: numbers numerically, text by bytes (the
/// C collation), false before true, JSON by its text.
pub fn order_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(x), Some(y)) => x.cmp(&y),
            _ => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(Ordering::Equal),
        },
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (x, y) => x.to_string().cmp(&y.to_string()),
    }
}

/// Sorts rows by the orderings, PostgreSQL's way with nulls.
pub fn sort(rows: &mut [Row], order: &[Order]) {
    rows.sort_by(|a, b| {
        for o in order {
            let (x, y) = (
                a.get(&o.column).unwrap_or(&Value::Null),
                b.get(&o.column).unwrap_or(&Value::Null),
            );
            let nulls_first = o.nulls_first.unwrap_or(!o.ascending);
            let ordering = match (x.is_null(), y.is_null()) {
                (true, true) => Ordering::Equal,
                (true, false) => {
                    if nulls_first {
                        Ordering::Less
                    } else {
                        Ordering::Greater
                    }
                }
                (false, true) => {
                    if nulls_first {
                        Ordering::Greater
                    } else {
                        Ordering::Less
                    }
                }
                (false, false) if o.ascending => order_values(x, y),
                (false, false) => order_values(y, x),
            };
            if ordering != Ordering::Equal {
                return ordering;
            }
        }
        Ordering::Equal
    });
}

/// SQL `LIKE`: `%` matches any run, `_` one character, `\` escapes. PostgREST's `*`
/// stands for `%` too.
pub fn like(text: &str, pattern: &str) -> bool {
    let text: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        tokens.push(match c {
            '%' | '*' => Token::Any,
            '_' => Token::One,
            '\\' => Token::Char(chars.next().unwrap_or('\\')),
            c => Token::Char(c),
        });
    }
    // Which text positions the pattern so far can reach: linear space, no recursion.
    let mut reachable = vec![false; text.len() + 1];
    mark(&mut reachable, 0);
    for token in &tokens {
        let mut next = vec![false; text.len() + 1];
        for (i, _) in reachable.iter().enumerate().filter(|(_, r)| **r) {
            match token {
                Token::Any => next.iter_mut().skip(i).for_each(|r| *r = true),
                Token::One if i < text.len() => mark(&mut next, i + 1),
                Token::Char(c) if text.get(i) == Some(c) => mark(&mut next, i + 1),
                _ => {}
            }
        }
        reachable = next;
    }
    reachable.last().copied().unwrap_or(false)
}

fn mark(positions: &mut [bool], at: usize) {
    if let Some(p) = positions.get_mut(at) {
        *p = true;
    }
}

enum Token {
    Any,
    One,
    Char(char),
}
