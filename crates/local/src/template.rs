//! The chat template: how a transcript becomes the prompt text a model was trained on.
//!
//! GGUF files carry a Jinja template (`tokenizer.chat_template`); this crate does not
//! interpret Jinja. It recognises the template's family by its markers and renders
//! that family itself: ChatML (`<|im_start|>`: SmolLM2, Qwen), Llama 3
//! (`<|start_header_id|>`), Gemma (`<start_of_turn>`, the assistant's role `model`),
//! Phi-3 (`<|end|>`) and Zephyr/TinyLlama (`<|user|>`); any other template is refused,
//! quoting its opening. Rendering yields segments marked as markup or content,
//! so [`ChatTemplate::encode`] reads control tokens only in the markup: a user who
//! types `<|im_end|>` gets plain text, never an end of turn.
//!
//! Tool results (role `tool`) become a turn the family's models were trained on:
//! - ChatML: a `user` turn. SmolLM2's template has no tool role (an unknown role is
//!   text the model never saw after `<|im_start|>`); Qwen's renders tool results as
//!   a user turn wrapping `<tool_response>`, so that wrapping is used when the
//!   template mentions it, else a `Tool result:` line opens the turn.
//! - Llama 3: the `ipython` role when the template has it (Llama 3.1 and later), else
//!   a `user` turn opening with `Tool result:`.
//! - Zephyr, Phi-3 and Gemma: a `user` turn opening with `Tool result:`.
//!
//! Gemma has no system role: its templates put the system message at the head of the
//! first user turn, followed by a blank line, and so does this crate with every system
//! turn (the tools' turn comes just before the latest user message).
//!
//! How the model was trained to call tools is the template's too ([`Dialect`]):
//! SmolLM2's instruct data (Argilla's APIGen sets) lists the tools as a JSON array in
//! `<tools>` and answers `<tool_call>[{"name": …, "arguments": …}]</tool_call>`, or
//! `[]` for no call, with tool results in `<tool_response>`; the other families are
//! asked in the Hermes form Qwen was trained on, one call per `<tool_call>`: JSON in
//! the text, which Gemma and Phi-3, with no tool tokens, read as any other text.

use std::fmt;

use crate::gguf::Gguf;
use crate::tokenizer::Tokenizer;

/// Why a model's chat template cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TemplateError {
    /// The file has no `tokenizer.chat_template`.
    Missing,
    /// The template is of no family this crate renders; its first 80 characters.
    Unsupported(String),
}

impl fmt::Display for TemplateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateError::Missing => write!(f, "the model file has no chat template"),
            TemplateError::Unsupported(start) => write!(
                f,
                "unsupported chat template (not ChatML, Llama 3, Gemma, Phi-3 or Zephyr): {start:?}"
            ),
        }
    }
}

impl std::error::Error for TemplateError {}

/// One message of a transcript. Roles: `system`, `user`, `assistant`, `tool`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Turn<'a> {
    pub role: &'a str,
    pub content: &'a str,
}

/// A piece of the rendered prompt: markup (read with control tokens) or content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    pub text: String,
    pub is_markup: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    ChatMl,
    Llama3,
    Gemma,
    /// Phi-3 and 3.5 end each tag and turn with a newline, Phi-4-mini with none.
    Phi3 {
        newlines: bool,
    },
    Zephyr,
}

/// The form of tool calls a model was trained on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// `<tool_call>{"name": …, "arguments": …}</tool_call>` (Qwen, Hermes).
    Hermes,
    /// `<tool_call>[{"name": …, "arguments": …}]</tool_call>`, `[]` for none (SmolLM2).
    ApiGen,
}

/// A chat template family, with what it needs from the source and the vocabulary.
#[derive(Debug, Clone)]
pub struct ChatTemplate {
    family: Family,
    /// The system message the template adds when a transcript has none.
    default_system: Option<String>,
    /// Text of the BOS token, when the template opens with it.
    bos: Option<String>,
    /// ChatML templates that wrap tool results in `<tool_response>` (Qwen).
    tool_response: bool,
    /// Llama 3.1's `ipython` role for tool results.
    ipython: bool,
    dialect: Dialect,
    /// End of sequence and the family's end of turn, where the vocabulary has them.
    stops: Vec<u32>,
}

impl ChatTemplate {
    /// The template named in a GGUF file.
    pub fn from_gguf(g: &Gguf, tok: &Tokenizer) -> Result<ChatTemplate, TemplateError> {
        let source = g
            .str("tokenizer.chat_template")
            .ok_or(TemplateError::Missing)?;
        ChatTemplate::from_source(source, tok)
    }

    /// The template for a Jinja source, by its family's markers.
    pub fn from_source(src: &str, tok: &Tokenizer) -> Result<ChatTemplate, TemplateError> {
        let (family, end_of_turn) = if src.contains("<|im_start|>") {
            (Family::ChatMl, "<|im_end|>")
        } else if src.contains("<|start_header_id|>") {
            (Family::Llama3, "<|eot_id|>")
        } else if src.contains("<start_of_turn>") {
            (Family::Gemma, "<end_of_turn>")
        } else if src.contains("<|end|>") {
            // `'<|end|>\n'` (3.5) or `'<|end|>' + '\n'` (3), the newline as itself or
            // escaped in the Jinja source.
            let newlines = [
                "<|end|>\n",
                "<|end|>\\n",
                "<|end|>' + '\n",
                "<|end|>' + '\\n",
            ]
            .iter()
            .any(|p| src.contains(p));
            (Family::Phi3 { newlines }, "<|end|>")
        } else if src.contains("<|user|>") {
            (Family::Zephyr, "</s>")
        } else {
            return Err(TemplateError::Unsupported(src.chars().take(80).collect()));
        };
        let mut stops: Vec<u32> = tok.eos().into_iter().collect();
        if let Some(id) = tok.token_id(end_of_turn).filter(|id| !stops.contains(id)) {
            stops.push(id);
        }
        let bos = if src.contains("bos_token") {
            tok.bos().and_then(|id| tok.token_text(id))
        } else {
            None
        };
        // SmolLM2's template names its model in the default system message.
        let dialect = match family == Family::ChatMl && src.contains("named SmolLM") {
            true => Dialect::ApiGen,
            false => Dialect::Hermes,
        };
        Ok(ChatTemplate {
            family,
            dialect,
            default_system: (family == Family::ChatMl)
                .then(|| default_system(src))
                .flatten(),
            bos: bos.map(str::to_string),
            tool_response: src.contains("<tool_response>") || dialect == Dialect::ApiGen,
            ipython: src.contains("ipython"),
            stops,
        })
    }

    /// The prompt as text (markup and content together): for display and tests.
    pub fn render(&self, turns: &[Turn], add_generation_prompt: bool) -> String {
        self.segments(turns, add_generation_prompt)
            .into_iter()
            .map(|s| s.text)
            .collect()
    }

    /// The prompt as segments; adjacent markup is joined.
    pub fn segments(&self, turns: &[Turn], add_generation_prompt: bool) -> Vec<Segment> {
        let mut out = Segments::default();
        if let Some(bos) = &self.bos {
            out.markup(bos);
        }
        if let (Some(system), Some(first)) = (&self.default_system, turns.first())
            && first.role != "system"
        {
            self.turn(&mut out, "system", "", system);
        }
        // Gemma's system text waits for the next user turn.
        let mut held = String::new();
        for t in turns {
            let (role, prefix) = self.role_of(t.role);
            if self.family == Family::Gemma && role == "system" {
                held.push_str(t.content);
                held.push_str("\n\n");
                continue;
            }
            if held.is_empty() {
                self.turn(&mut out, role, prefix, t.content);
            } else {
                self.turn_open(&mut out, role);
                out.content(&std::mem::take(&mut held));
                self.turn_rest(&mut out, prefix, t.content);
            }
        }
        if !held.is_empty() {
            self.turn(&mut out, "user", "", held.trim_end());
        }
        if add_generation_prompt {
            self.turn_open(&mut out, self.role_of("assistant").0);
        }
        out.0
    }

    /// Token ids of the prompt: markup with control tokens, content without, opening
    /// with BOS when the file asks for it (`tokenizer.ggml.add_bos_token`, as llama.cpp
    /// adds it) and the template has not written it.
    pub fn encode(&self, tok: &Tokenizer, turns: &[Turn], add_generation_prompt: bool) -> Vec<u32> {
        let segments = self.segments(turns, add_generation_prompt);
        let ids = tok.encode_parts(segments.iter().map(|s| (s.text.as_str(), s.is_markup)));
        match tok
            .bos()
            .filter(|&bos| tok.add_bos() && ids.first() != Some(&bos))
        {
            Some(bos) => std::iter::once(bos).chain(ids).collect(),
            None => ids,
        }
    }

    /// The form of tool calls the model was trained on.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Tokens that end the assistant's turn.
    pub fn stop_tokens(&self) -> &[u32] {
        &self.stops
    }

    /// The role a turn is rendered as, and the line that opens its content.
    fn role_of<'r>(&self, role: &'r str) -> (&'r str, &'static str) {
        match (role, self.family) {
            ("tool", Family::ChatMl) if self.tool_response => ("user", "<tool_response>\n"),
            ("tool", Family::Llama3) if self.ipython => ("ipython", ""),
            ("tool", _) => ("user", "Tool result:\n"),
            ("system", Family::Gemma) => ("system", ""),
            ("assistant", Family::Gemma) => ("model", ""),
            (other, _) => (other, ""),
        }
    }

    fn turn_open(&self, out: &mut Segments, role: &str) {
        match self.family {
            Family::ChatMl => out.markup(&format!("<|im_start|>{role}\n")),
            Family::Llama3 => {
                out.markup(&format!("<|start_header_id|>{role}<|end_header_id|>\n\n"))
            }
            Family::Gemma => out.markup(&format!("<start_of_turn>{role}\n")),
            Family::Phi3 { newlines: false } => out.markup(&format!("<|{role}|>")),
            Family::Phi3 { newlines: true } | Family::Zephyr => {
                out.markup(&format!("<|{role}|>\n"))
            }
        }
    }

    fn turn(&self, out: &mut Segments, role: &str, prefix: &str, content: &str) {
        self.turn_open(out, role);
        self.turn_rest(out, prefix, content);
    }

    /// A turn after its opening: the content and the close.
    fn turn_rest(&self, out: &mut Segments, prefix: &str, content: &str) {
        out.markup(prefix);
        // Llama 3's and Gemma's templates trim each message.
        out.content(match self.family {
            Family::Llama3 | Family::Gemma => content.trim(),
            _ => content,
        });
        if prefix.starts_with("<tool_response>") {
            out.markup("\n</tool_response>");
        }
        match self.family {
            Family::ChatMl => out.markup("<|im_end|>\n"),
            Family::Llama3 => out.markup("<|eot_id|>"),
            Family::Gemma => out.markup("<end_of_turn>\n"),
            Family::Phi3 { newlines: false } => out.markup("<|end|>"),
            Family::Phi3 { newlines: true } => out.markup("<|end|>\n"),
            Family::Zephyr => out.markup("</s>\n"),
        }
    }
}

/// The system message a ChatML template adds when the transcript opens without one:
/// the literal after `<|im_start|>system\n` in the branch taken when the first role
/// is not `system` (SmolLM2's "You are a helpful AI assistant named SmolLM…").
fn default_system(src: &str) -> Option<String> {
    let guard = src
        .find("!= 'system'")
        .or_else(|| src.find("!= \"system\""))?;
    let after = src.get(guard..)?;
    let open = "<|im_start|>system";
    let start = after.find(open)? + open.len();
    let body = after.get(start..)?;
    let body = body
        .strip_prefix("\\n")
        .or_else(|| body.strip_prefix('\n'))?;
    let end = body.find("<|im_end|>")?;
    let text = body.get(..end)?;
    // Jinja expressions inside would need evaluating: take only a plain literal.
    if text.contains("{{") || text.contains("{%") || text.contains('\'') || text.contains('"') {
        return None;
    }
    Some(text.replace("\\n", "\n"))
}

#[derive(Default)]
struct Segments(Vec<Segment>);

impl Segments {
    fn markup(&mut self, text: &str) {
        self.push(text, true);
    }

    fn content(&mut self, text: &str) {
        self.push(text, false);
    }

    fn push(&mut self, text: &str, is_markup: bool) {
        if text.is_empty() {
            return;
        }
        match self.0.last_mut() {
            Some(last) if last.is_markup == is_markup => last.text.push_str(text),
            _ => self.0.push(Segment {
                text: text.to_string(),
                is_markup,
            }),
        }
    }
}

#[cfg(test)]
mod tests;
