//! `prompt`: the transcript and the offered tools as the model reads them: the system
//! prompt describing the tools, earlier calls written the way the model is asked to
//! write them, all rendered by the model's chat template and encoded.

use super::wire::{Message, Request, Tool};
use crate::template::{ChatTemplate, Turn};
use crate::tokenizer::Tokenizer;

/// What opens a tool call in the answer (and in earlier turns of the transcript).
pub const CALL_OPEN: &str = "<tool_call>";
/// What closes it.
pub const CALL_CLOSE: &str = "</tool_call>";

/// The system prompt with the tools described, as small models of the ChatML family
/// were trained to read them.
pub fn system_prompt(system: &str, tools: &[Tool]) -> String {
    if tools.is_empty() {
        return system.to_owned();
    }
    let mut out = String::from(system);
    if !out.is_empty() {
        out.push_str("\n\n");
    }
    out.push_str("You have access to the following tools:\n<tools>\n");
    for tool in tools {
        let line = serde_json::json!({
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        });
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

/// The transcript rendered by the model's template and encoded: the template's markup
/// may hold control tokens, the contents never do (a message cannot close its turn).
pub(super) fn prompt_tokens(
    template: &ChatTemplate,
    tokenizer: &Tokenizer,
    request: &Request,
) -> Vec<u32> {
    let system = system_prompt(&request.system, request.offered());
    let contents: Vec<(String, String)> = std::iter::once(("system".to_owned(), system))
        .filter(|(_, text)| !text.is_empty())
        .chain(
            request
                .messages
                .iter()
                .map(|m| (m.role.clone(), message_text(m))),
        )
        .collect();
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
fn message_text(message: &Message) -> String {
    let mut text = message.content.clone();
    for call in &message.tool_calls {
        if !text.is_empty() {
            text.push('\n');
        }
        let arguments = if call.arguments.trim().is_empty() {
            "{}"
        } else {
            &call.arguments
        };
        text.push_str(&format!(
            "{CALL_OPEN}{{\"name\":\"{}\",\"arguments\":{arguments}}}{CALL_CLOSE}",
            call.name
        ));
    }
    text
}
