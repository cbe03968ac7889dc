//! Filters and ordering evaluated in memory with PostgreSQL's semantics: three-valued
//! logic (a comparison with `null` is unknown, and unknown rows are not returned),
//! values compared as their column's type, `LIKE` patterns, nulls last ascending.

use std::cmp::Ordering;

use serde_json::Value;

use super::query::{Filter, Op, Order};
use super::table::{ColumnType, TableSchema, coerce};
use super::{Row, StoreError};

/// Filters checked against a table's schema once, their operands read as the columns'
/// types: a bad column or value is an error even on an empty table, and testing a row
/// cannot fail.
pub struct Compiled(Vec<Node>);

enum Node {
    Compare {
        column: String,
        test: Test,
        not: bool,
    },
    Or(Vec<Node>),
    And(Vec<Node>),
}

enum Test {
    /// `IS NULL` (`None`) or `IS TRUE/FALSE`.
    Is(Option<bool>),
    /// Membership; `has_null` makes a miss unknown rather than false.
    In { items: Vec<Value>, has_null: bool },
    Like {
        pattern: Vec<Token>,
        fold_case: bool,
    },
    /// `eq`..`lte` against an operand (null makes every row unknown).
    Cmp(Op, Value),
}

/// Compiles `filters` for rows of `schema`.
pub fn compile(schema: &TableSchema, filters: &[Filter]) -> Result<Compiled, StoreError> {
    Ok(Compiled(
        filters
            .iter()
            .map(|f| node(schema, f))
            .collect::<Result<_, _>>()?,
    ))
}

fn node(schema: &TableSchema, filter: &Filter) -> Result<Node, StoreError> {
    Ok(match filter {
        Filter::Compare {
            column,
            op,
            value,
            not,
        } => Node::Compare {
            column: column.clone(),
            test: test(schema.column(column)?.kind, *op, value)?,
            not: *not,
        },
        Filter::Or(any) => Node::Or(
            any.iter()
                .map(|f| node(schema, f))
                .collect::<Result<_, _>>()?,
        ),
        Filter::And(all) => Node::And(
            all.iter()
                .map(|f| node(schema, f))
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn test(kind: ColumnType, op: Op, value: &Value) -> Result<Test, StoreError> {
    Ok(match (op, value) {
        (Op::Is, Value::Null) => Test::Is(None),
        (Op::Is, Value::Bool(b)) => Test::Is(Some(*b)),
        (Op::Is, Value::String(s)) if s == "null" => Test::Is(None),
        (Op::Is, Value::String(s)) if s == "true" || s == "false" => Test::Is(Some(s == "true")),
        (Op::Is, other) => {
            return Err(StoreError::Invalid(format!(
                "`is` takes null, true or false, not {other}"
            )));
        }
        (Op::In, Value::Array(items)) => {
            let items = items
                .iter()
                .map(|v| coerce(kind, v))
                .collect::<Result<Vec<_>, _>>()?;
            let has_null = items.iter().any(Value::is_null);
            Test::In { items, has_null }
        }
        (Op::In, _) => return Err(StoreError::Invalid("`in` takes a list".into())),
        (Op::Like | Op::Ilike, Value::String(pattern)) => {
            let fold_case = op == Op::Ilike;
            let pattern = if fold_case {
                pattern.to_lowercase()
            } else {
                pattern.clone()
            };
            Test::Like {
                pattern: tokens(&pattern),
                fold_case,
            }
        }
        (Op::Like | Op::Ilike, other) => {
            return Err(StoreError::Invalid(format!(
                "`like` takes a text pattern, not {other}"
            )));
        }
        (op, value) => Test::Cmp(op, coerce(kind, value)?),
    })
}

impl Compiled {
    /// Whether `row` passes every filter (unknown counts as not passing).
    pub fn matches(&self, row: &Row) -> bool {
        self.0.iter().all(|node| truth(node, row) == Some(true))
    }
}

/// A filter's SQL truth value: `None` is unknown.
fn truth(node: &Node, row: &Row) -> Option<bool> {
    match node {
        Node::Compare { column, test, not } => {
            let result = check(test, row.get(column).unwrap_or(&Value::Null));
            if *not { result.map(|b| !b) } else { result }
        }
        Node::Or(any) => {
            let mut unknown = false;
            for node in any {
                match truth(node, row) {
                    Some(true) => return Some(true),
                    None => unknown = true,
                    Some(false) => {}
                }
            }
            if unknown { None } else { Some(false) }
        }
        Node::And(all) => {
            let mut unknown = false;
            for node in all {
                match truth(node, row) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            if unknown { None } else { Some(true) }
        }
    }
}

fn check(test: &Test, cell: &Value) -> Option<bool> {
    match test {
        Test::Is(None) => Some(cell.is_null()),
        Test::Is(Some(b)) => Some(cell.as_bool() == Some(*b)),
        _ if cell.is_null() => None,
        Test::In { items, has_null } => {
            let found = items
                .iter()
                .any(|item| !item.is_null() && order_values(cell, item) == Ordering::Equal);
            if found {
                Some(true)
            } else if *has_null {
                None
            } else {
                Some(false)
            }
        }
        Test::Like { pattern, fold_case } => {
            let Value::String(text) = cell else {
                return Some(false);
            };
            Some(if *fold_case {
                like(&text.to_lowercase(), pattern)
            } else {
                like(text, pattern)
            })
        }
        Test::Cmp(_, operand) if operand.is_null() => None,
        Test::Cmp(op, operand) => {
            let ordering = order_values(cell, operand);
            Some(match op {
                Op::Eq => ordering == Ordering::Equal,
                Op::Neq => ordering != Ordering::Equal,
                Op::Gt => ordering == Ordering::Greater,
                Op::Gte => ordering != Ordering::Less,
                Op::Lt => ordering == Ordering::Less,
                Op::Lte => ordering != Ordering::Greater,
                Op::Like | Op::Ilike | Op::In | Op::Is => false,
            })
        }
    }
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
pub fn sort(rows: &mut [&Row], order: &[Order]) {
    crate::base::sort::sort_by(rows, |a, b| {
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

/// A `LIKE` pattern: `%` matches any run, `_` one character, `\\` escapes. PostgREST's
/// `*` stands for `%` too.
fn tokens(pattern: &str) -> Vec<Token> {
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
    tokens
}

/// Whether `text` matches the pattern's tokens.
fn like(text: &str, tokens: &[Token]) -> bool {
    let text: Vec<char> = text.chars().collect();
    // Which text positions the pattern so far can reach: linear space, no recursion.
    let mut reachable = vec![false; text.len() + 1];
    mark(&mut reachable, 0);
    for token in tokens {
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
