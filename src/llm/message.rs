//! Chat messages: the transcript an agent and its model share.
//!
//! Shapes follow the OpenAI chat-completions vocabulary so that the wire client, the
//! rules model and persistence all speak the same language. Turning these into wire
//! JSON is the model clients' business, not this module's.

use crate::base::json::Read;
use crate::base::memo::Memo;
use crate::base::text::Text;
use serde::{Deserialize, Serialize};

/// Who wrote a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

/// A model's request to run one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct ToolCall {
    /// Correlates the call with its result message.
    pub id: Text,
    pub name: Text,
    /// The arguments as the model wrote them: JSON text, possibly invalid. The tool
    /// registry parses and validates them, so a bad call becomes a tool error.
    pub arguments: Text,
}

/// One message of a transcript.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// Tools the assistant asked for in this message.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    /// For a tool message: the call it answers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<Text>,
    /// Its estimated prompt tokens once worked out (`llm::window::estimate_message`):
    /// a message kept in a conversation is estimated once, not at every step of every
    /// run that reads it. Change its text with [`Message::set_content`].
    #[serde(skip)]
    pub(crate) tokens: Memo<usize>,
}

impl Message {
    fn new(role: Role, content: impl Into<String>) -> Self {
        Self {
            role,
            content: content.into(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            tokens: Memo::default(),
        }
    }

    /// Replaces its text (and forgets its estimate).
    pub fn set_content(&mut self, content: impl Into<String>) {
        self.content = content.into();
        self.tokens.clear();
    }

    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }

    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }

    /// An assistant message, with the tool calls it made (possibly none).
    pub fn assistant(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self {
            tool_calls,
            ..Self::new(Role::Assistant, content)
        }
    }

    /// The result (or error text) of one tool call, as the model will read it.
    pub fn tool(call_id: impl Into<Text>, content: impl Into<String>) -> Self {
        Self {
            tool_call_id: Some(call_id.into()),
            ..Self::new(Role::Tool, content)
        }
    }
}
