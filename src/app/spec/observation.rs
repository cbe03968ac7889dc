//! `trigger`'s game event: `{kind, event, timestamp?, actor, subject, allowedActions,
//! dataScopes}`, read as the run's `Observation`.

use serde_json::Value;

use super::{Fields, Problem, kind};
use crate::run::{Actor, Boundaries, Observation, Subject, Trigger};

/// `trigger`'s game event: `{kind, event, actor, subject, allowedActions, dataScopes}`.
pub fn observation_from_value(value: &Value) -> Result<Observation, Vec<Problem>> {
    const KNOWN: [&str; 7] = [
        "kind",
        "event",
        "timestamp",
        "actor",
        "subject",
        "allowedActions",
        "dataScopes",
    ];
    let mut problems = Vec::new();
    let Some(mut f) = Fields::new(value, "event", &mut problems, &KNOWN) else {
        return Err(problems);
    };
    let trigger_kind = f.string("kind").unwrap_or_default();
    let event = f.string("event").unwrap_or_default();
    let timestamp = f.string("timestamp").filter(|t| !t.trim().is_empty());
    if trigger_kind.trim().is_empty() {
        f.problem("kind", "name the family of event, e.g. \"battle\"");
    }
    if event.trim().is_empty() {
        f.problem("event", "name the event, e.g. \"battle.started\"");
    }
    let actor = match f.get("actor") {
        None => Actor::default(),
        Some(Value::String(name)) => Actor {
            name: name.clone(),
            ..Actor::default()
        },
        Some(actor) => {
            read(&mut f, "actor", actor.clone(), "{id?, name?, state?}").unwrap_or_default()
        }
    };
    let subject = match f.get("subject") {
        Some(Value::String(content)) => Some(Subject {
            content: content.clone(),
            ..Subject::default()
        }),
        Some(subject) => {
            let subject = subject.clone();
            let renamed = match subject {
                Value::Object(mut fields) => {
                    if let Some(id) = fields.remove("messageId") {
                        fields.insert("message_id".into(), id);
                    }
                    Value::Object(fields)
                }
                other => other,
            };
            let shape = "a description or {kind?, id?, content, messageId?, author?}";
            read(&mut f, "subject", renamed, shape)
        }
        None => {
            f.problem(
                "subject",
                "say what happened: the model reads it as its first message",
            );
            Some(Subject::default())
        }
    };
    // A subject that could not be read is reported once, where it went wrong.
    if subject
        .as_ref()
        .is_some_and(|s| s.content.trim().is_empty())
        && f.get("subject").is_some()
    {
        f.problem("subject", "the description is empty");
    }
    let subject = subject.unwrap_or_default();
    let allowed_actions = tool_names(&mut f, "allowedActions");
    let data_scopes = tool_names(&mut f, "dataScopes");
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(Observation {
        trigger: Trigger {
            kind: trigger_kind,
            event,
            timestamp,
        },
        actor,
        subject,
        boundaries: Boundaries {
            allowed_actions,
            data_scopes,
        },
        environment: None,
    })
}

/// The list of tool names in `field`, if there is one; a problem for each entry that
/// is not a name.
fn tool_names(f: &mut Fields<'_>, field: &str) -> Option<Vec<String>> {
    match f.get(field) {
        None => None,
        Some(Value::Array(list)) => {
            for (i, item) in list.iter().enumerate().filter(|(_, v)| !v.is_string()) {
                let message = format!("expected a tool name, got {}", kind(item));
                f.problem(&format!("{field}[{i}]"), message);
            }
            Some(
                list.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            )
        }
        Some(other) => {
            let message = format!("expected a list of tool names, got {}", kind(other));
            f.problem(field, message);
            None
        }
    }
}

/// `value` read as a `T`, a problem named by the deepest path (`actor.name`).
fn read<T: serde::de::DeserializeOwned>(
    f: &mut Fields<'_>,
    field: &str,
    value: Value,
    shape: &str,
) -> Option<T> {
    crate::base::json::from_value(value)
        .map_err(|error| {
            let inner = error.path().to_string();
            let path = match inner.as_str() {
                "." => field.to_owned(),
                rest if rest.starts_with('[') => format!("{field}{rest}"),
                rest => format!("{field}.{rest}"),
            };
            let message = format!("expected {shape}: {}", error.into_inner());
            f.problem(&path, message);
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_game_event_becomes_an_observation_with_its_boundaries() {
        let observation = observation_from_value(&json!({
            "kind": "battle", "event": "battle.started",
            "actor": {"id": 7, "name": "Grunt", "state": {"hp": 12}},
            "subject": {"kind": "battle", "id": 3, "content": "Goblins attack", "messageId": 9},
            "allowedActions": ["join_battle"], "dataScopes": ["get_battle_details"]
        }))
        .unwrap();
        assert_eq!(observation.actor.name, "Grunt");
        assert!(observation.boundaries.may_read("get_battle_details"));
        assert!(!observation.boundaries.may_read("get_market_items"));
        assert_eq!(observation.subject.message_id, Some(json!(9)));
        assert!(observation.boundaries.allows("join_battle"));
        assert!(!observation.boundaries.allows("flee"));
        let short = observation_from_value(&json!({
            "kind": "chat", "event": "npc.greeted", "actor": "Grunt", "subject": "Hello"
        }))
        .unwrap();
        assert_eq!(short.subject.content, "Hello");
        let problems = observation_from_value(&json!({"allowedActions": "all", "dataScopes": [1]}))
            .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "event.kind",
                "event.event",
                "event.subject",
                "event.allowedActions",
                "event.dataScopes[0]"
            ]
        );
    }

    #[test]
    fn a_nested_problem_is_named_by_its_deepest_path() {
        let problems = observation_from_value(&json!({
            "kind": "battle", "event": "battle.started",
            "actor": {"name": 7},
            "subject": {"content": ["not", "text"]},
            "allowedActions": ["join_battle", 3]
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "event.actor.name",
                "event.subject.content",
                "event.allowedActions[1]"
            ]
        );
    }
}
