//! `registerTool`'s description of a tool (its handler is the caller's business).

use serde_json::Value;

use super::{Fields, Problem};
use crate::app::{HostTool, HostToolError};
use crate::llm::ToolSpec;
use crate::tool::{Approval, Author, Consequential, DEFAULT_TOOL_TIMEOUT_MS, ToolKind};

/// `registerTool`'s description of a tool (its handler is the caller's business).
pub fn tool_from_value(value: &Value) -> Result<HostTool, Vec<Problem>> {
    const KNOWN: [&str; 11] = [
        "name",
        "description",
        "parameters",
        "kind",
        "approval",
        "timeoutMs",
        "handler",
        "origin",
        "author",
        "consequential",
        "batch",
    ];
    let mut problems = Vec::new();
    let Some(mut f) = Fields::new(value, "tool", &mut problems, &KNOWN) else {
        return Err(problems);
    };
    let name = f.string("name").unwrap_or_default();
    let description = f.string("description").unwrap_or_default();
    if description.trim().is_empty() {
        f.problem(
            "description",
            "say what the tool does: the model chooses tools by it",
        );
    }
    let parameters = f
        .get("parameters")
        .cloned()
        .unwrap_or_else(|| serde_json::json!({"type": "object", "properties": {}}));
    let kind = match f.string("kind").as_deref() {
        None | Some("action") => ToolKind::Action,
        Some("data") => ToolKind::Data,
        Some(other) => {
            f.problem(
                "kind",
                format!("expected \"data\" or \"action\", got \"{other}\""),
            );
            ToolKind::Action
        }
    };
    let approval = match f.string("approval").as_deref() {
        // Unsaid: an action asks once the conversation has read another party's
        // text, a look-up runs (`Approval::default_for`).
        None => Approval::default_for(kind),
        Some("auto") => Approval::Auto,
        Some("ask") => Approval::Ask,
        Some("ask_if_untrusted") => Approval::AskIfUntrusted,
        Some("deny") => Approval::Deny,
        Some(other) => {
            f.problem(
                "approval",
                format!(
                    "expected \"auto\", \"ask\", \"ask_if_untrusted\" or \"deny\", got \"{other}\""
                ),
            );
            Approval::Auto
        }
    };
    let timeout_ms = f
        .number("timeoutMs", 1..=600_000)
        .unwrap_or(DEFAULT_TOOL_TIMEOUT_MS);
    if f.get("origin").is_some_and(|o| !o.is_string()) {
        f.problem(
            "origin",
            "expected the origin to post to, e.g. \"https://game.example\"",
        );
    }
    if f.get("batch")
        .is_some_and(|b| !b.is_boolean() && !b.is_null())
    {
        f.problem(
            "batch",
            "expected true (the target gets each step's calls as one message) or false",
        );
    }
    // Unsaid: the registration decides by who answers (`HostTools::register`).
    let author = match f.string("author").as_deref() {
        None => None,
        Some("own") => Some(Author::Own),
        Some("others") => Some(Author::Others),
        Some(other) => {
            f.problem(
                "author",
                format!("expected \"own\" or \"others\", got \"{other}\""),
            );
            None
        }
    };
    let consequential = consequential(f.get("consequential")).unwrap_or_else(|why| {
        f.problem("consequential", why);
        Vec::new()
    });
    let tool = HostTool {
        spec: ToolSpec {
            name,
            description,
            parameters,
        },
        kind,
        approval,
        timeout_ms,
        author,
        consequential,
    };
    if let Err(error) = tool.check() {
        let field = match error {
            HostToolError::BadName(_) => "name",
            HostToolError::BadSchema { .. } => "parameters",
            HostToolError::BadTimeout { .. } => "timeoutMs",
        };
        f.problem(field, error.to_string());
    }
    if problems.is_empty() {
        Ok(tool)
    } else {
        Err(problems)
    }
}

/// `consequential`: the arguments whose values carry consequence, as an object of
/// argument (or JSON pointer) to what the value is (`{"to": "recipient"}`), or a list
/// of arguments (each then said by its name).
fn consequential(value: Option<&Value>) -> Result<Vec<Consequential>, String> {
    let one = |argument: &str, means: &str| Consequential {
        argument: argument.to_owned(),
        means: means.to_owned(),
    };
    let expected = "expected the arguments that carry consequence, e.g. \
                    {\"to\": \"recipient\", \"amount\": \"amount\"} or [\"to\", \"amount\"]";
    match value {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Object(fields)) => fields
            .iter()
            .map(|(argument, means)| match means.as_str() {
                Some(means) if !means.trim().is_empty() => Ok(one(argument, means)),
                _ => Err(format!("`{argument}`: {expected}")),
            })
            .collect(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|item| match item.as_str() {
                Some(argument) if !argument.trim().is_empty() => Ok(one(argument, argument)),
                _ => Err(expected.to_owned()),
            })
            .collect(),
        Some(_) => Err(expected.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn consequential_arguments_are_read_as_an_object_or_a_list_and_bad_ones_said() {
        let base = json!({"name": "give", "description": "Gives gold."});
        let with = |consequential: Value| {
            let mut value = base.clone();
            value["consequential"] = consequential;
            tool_from_value(&value)
        };
        let tool = with(json!({"to": "recipient", "/gift/amount": "amount"})).unwrap();
        let read: Vec<_> = tool
            .consequential
            .iter()
            .map(|c| (c.argument.as_str(), c.means.as_str()))
            .collect();
        assert_eq!(read, [("/gift/amount", "amount"), ("to", "recipient")]);
        let tool = with(json!(["to"])).unwrap();
        assert_eq!(tool.consequential[0].means, "to");
        for bad in [json!({"to": 3}), json!([""]), json!("to")] {
            let problems = with(bad.clone()).unwrap_err();
            assert!(
                problems
                    .iter()
                    .any(|p| p.to_string().contains("consequential")),
                "{bad}: {problems:?}"
            );
        }
    }

    #[test]
    fn a_tool_description_is_checked_whole() {
        let tool = tool_from_value(&json!({
            "name": "spawn", "description": "Spawns a monster.", "kind": "action",
            "approval": "ask", "timeoutMs": 2000, "origin": "https://game.example",
            "parameters": {"type": "object", "properties": {"kind": {"type": "string"}}}
        }))
        .unwrap();
        assert_eq!(tool.approval, Approval::Ask);
        assert_eq!(tool.timeout_ms, 2_000);
        assert_eq!(tool.author, None, "unsaid: who answers decides");
        let own = json!({"name": "spawn", "description": "Spawns.", "author": "own"});
        assert_eq!(tool_from_value(&own).unwrap().author, Some(Author::Own));
        let problems = tool_from_value(&json!({
            "name": "", "kind": "magic", "approval": "maybe", "timeoutMs": -1,
            "parameters": {"type": "array"}, "author": "me"
        }))
        .unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tool.description",
                "tool.kind",
                "tool.approval",
                "tool.timeoutMs",
                "tool.author",
                "tool.name"
            ]
        );
    }
}
