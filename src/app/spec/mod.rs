//! What a host page hands the JS API, read from JSON with every problem named by its
//! path: the agent's configuration (`createAgent`, `agent`), a tool's description
//! (`registerTool`, `tool`) and a game event (`trigger`, `event`). Pure, so the same
//! checks run natively; the browser layer only turns JavaScript values into JSON first.
//! This module holds what they share: the problem list and a reader that fills it.

mod agent;
mod composition;
mod model;
mod observation;
mod tool;

use serde_json::{Map, Value};

use crate::base::json::schema::describe as kind;

pub use agent::{AgentSpec, Builtin, CharacterSpec};
pub use composition::{Offer, SubAgentSpec};
pub use model::ModelSpec;
pub use observation::observation_from_value;
pub use tool::tool_from_value;

/// One problem with what the host gave, at a path such as `model.url`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub path: String,
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.message)
    }
}

/// Every problem as one message: a line each.
pub fn describe(what: &str, problems: &[Problem]) -> String {
    let lines: Vec<String> = problems.iter().map(|p| format!("  {p}")).collect();
    format!("{what}:\n{}", lines.join("\n"))
}

/// A reader of one JSON object that collects problems instead of stopping.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    path: String,
    problems: &'a mut Vec<Problem>,
}

impl<'a> Fields<'a> {
    fn new(
        value: &'a Value,
        path: &str,
        problems: &'a mut Vec<Problem>,
        known: &[&str],
    ) -> Option<Self> {
        let Some(object) = value.as_object() else {
            problems.push(Problem {
                path: path.to_owned(),
                message: format!("expected an object, got {}", kind(value)),
            });
            return None;
        };
        for key in object.keys().filter(|k| !known.contains(&k.as_str())) {
            problems.push(Problem {
                path: join(path, key),
                message: format!("unknown field; known fields: {}", known.join(", ")),
            });
        }
        Some(Self {
            object,
            path: path.to_owned(),
            problems,
        })
    }

    fn problem(&mut self, field: &str, message: impl Into<String>) {
        self.problems.push(Problem {
            path: join(&self.path, field),
            message: message.into(),
        });
    }

    fn get(&self, field: &str) -> Option<&'a Value> {
        self.object.get(field).filter(|v| !v.is_null())
    }

    fn string(&mut self, field: &str) -> Option<String> {
        match self.get(field)? {
            Value::String(s) => Some(s.clone()),
            other => {
                let message = format!("expected a string, got {}", kind(other));
                self.problem(field, message);
                None
            }
        }
    }

    fn boolean(&mut self, field: &str) -> Option<bool> {
        match self.get(field)? {
            Value::Bool(b) => Some(*b),
            other => {
                let message = format!("expected true or false, got {}", kind(other));
                self.problem(field, message);
                None
            }
        }
    }

    fn number(&mut self, field: &str, range: std::ops::RangeInclusive<u64>) -> Option<u64> {
        let value = self.get(field)?;
        match value.as_u64().filter(|n| range.contains(n)) {
            Some(n) => Some(n),
            None => {
                let message = format!(
                    "expected a whole number from {} to {}, got {value}",
                    range.start(),
                    range.end()
                );
                self.problem(field, message);
                None
            }
        }
    }
}

fn join(path: &str, field: &str) -> String {
    if field.is_empty() {
        path.to_owned()
    } else if path.is_empty() {
        field.to_owned()
    } else {
        format!("{path}.{field}")
    }
}
