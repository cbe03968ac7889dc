//! `prompt`: the transcript and the offered tools as the model reads them, in the
//! form of tool calls its template says it was trained on ([`Dialect`]): the tools
//! described in a system turn just before the latest user message, earlier calls
//! written the way the model is asked to write them, all rendered by the model's chat
//! template and encoded.
//!
//! The tools' turn comes late, not in the opening system prompt: the tools on offer
//! change with each message (the shortlist), and what precedes them stays in the KV
//! cache from turn to turn; a small model also reads best what it read last. A text
//! answer is written from the same transcript without that turn, so a model that
//! chose no tool is not drawn to write one.

use super::wire::{Message, Request, Tool};
use crate::template::{ChatTemplate, Dialect, Turn};
use crate::tokenizer::Tokenizer;

/// What opens a tool call in the answer (and in earlier turns of the transcript).
pub const CALL_OPEN: &str = "<tool_call>";
/// What closes it.
pub const CALL_CLOSE: &str = "</tool_call>";

/// The tools described as a model of `dialect` was trained to read them: the system
/// turn that offers them.
pub fn tools_prompt(dialect: Dialect, tools: &[Tool]) -> String {
    let described: Vec<serde_json::Value> = tools
        .iter()
        .map(|tool| {
            serde_json::json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
            })
        })
        .collect();
    match dialect {
        Dialect::Hermes => {
            let mut out = String::from("You have access to the following tools:\n<tools>\n");
            for line in &described {
                out.push_str(&line.to_string());
                out.push('\n');
            }
            out.push_str("</tools>\nIf a tool helps, call it with ");
            out.push_str(CALL_OPEN);
            out.push_str("{\"name\":…,\"arguments\":{…}}");
            out.push_str(CALL_CLOSE);
            out.push_str("; if none does, the name is \"none\" and you answer in text.");
            out
        }
        Dialect::ApiGen => {
            let list = serde_json::Value::Array(described).to_string();
            format!(
                "You are an expert in composing functions. You are given a question and a set \
                 of possible functions. Based on the question, you will need to make one or \
                 more function/tool calls to achieve the purpose. If none of the functions \
                 can be used, make no call.\nYou have access to the following tools:\n\
                 <tools>{list}</tools>\nAnswer in this format, with the parameters of the right \
                 types; if no function call is needed, make the tool calls an empty list '[]'.\n\
                 {CALL_OPEN}[\n{{\"name\": \"func_name1\", \"arguments\": {{\"argument1\": \
                 \"value1\", \"argument2\": \"value2\"}}}}\n]{CALL_CLOSE}"
            )
        }
    }
}

/// The placeholders of the format's example, which no argument is (a small model
/// copies them).
pub(super) const EXAMPLE_VALUES: [&str; 5] =
    ["func_name1", "argument1", "argument2", "value1", "value2"];

/// What the answer opens with, forced, before the model chooses a tool or none.
pub(super) fn call_opening(dialect: Dialect) -> String {
    match dialect {
        Dialect::Hermes => format!("{CALL_OPEN}{{\"name\":\""),
        Dialect::ApiGen => format!("{CALL_OPEN}["),
    }
}

/// The text after the opening that chooses `tool` (`None`: no tool).
pub(super) fn call_choice(dialect: Dialect, tool: Option<&str>) -> String {
    match (dialect, tool) {
        (Dialect::Hermes, Some(name)) => format!("{name}\""),
        (Dialect::Hermes, None) => "none\"".into(),
        (Dialect::ApiGen, Some(name)) => format!("\n{{\"name\": \"{name}\""),
        (Dialect::ApiGen, None) => "]".into(),
    }
}

/// What follows the chosen name, before the arguments.
pub(super) fn arguments_key(dialect: Dialect) -> &'static str {
    match dialect {
        Dialect::Hermes => ",\"arguments\":",
        Dialect::ApiGen => ", \"arguments\": ",
    }
}

/// A call as the model writes it.
fn call_text(dialect: Dialect, name: &str, arguments: &str) -> String {
    let arguments = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    match dialect {
        Dialect::Hermes => {
            format!("{CALL_OPEN}{{\"name\":\"{name}\",\"arguments\":{arguments}}}{CALL_CLOSE}")
        }
        Dialect::ApiGen => format!(
            "{CALL_OPEN}[\n{{\"name\": \"{name}\", \"arguments\": {arguments}}}\n]{CALL_CLOSE}"
        ),
    }
}

/// The transcript rendered by the model's template and encoded, with `tools` (those
/// the model may choose) described in a turn before the latest user message (none:
/// no such turn): the template's markup may hold control tokens, the contents never
/// do (a message cannot close its turn).
pub(super) fn prompt_tokens(
    template: &ChatTemplate,
    tokenizer: &Tokenizer,
    request: &Request,
    tools: &[Tool],
) -> Vec<u32> {
    let dialect = template.dialect();
    let mut contents: Vec<(String, String)> = std::iter::once(("system", &request.system))
        .filter(|(_, text)| !text.is_empty())
        .map(|(role, text)| (role.to_owned(), text.clone()))
        .chain(
            request
                .messages
                .iter()
                .map(|m| (m.role.clone(), message_text(dialect, m))),
        )
        .collect();
    if !tools.is_empty() {
        let at = contents
            .iter()
            .rposition(|(role, _)| role == "user")
            .unwrap_or(contents.len());
        contents.insert(at, ("system".into(), tools_prompt(dialect, tools)));
    }
    let turns: Vec<Turn> = contents
        .iter()
        .map(|(role, content)| Turn {
            role: role.as_str(),
            content: content.as_str(),
        })
        .collect();
    template.encode(tokenizer, &turns, true)
}

/// A message's text as the model reads it: an assistant's calls written the way it
/// is asked to write them.
fn message_text(dialect: Dialect, message: &Message) -> String {
    let mut text = message.content.clone();
    for call in &message.tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        text.push_str(&call_text(dialect, &call.name, &call.arguments));
    }
    text
}
