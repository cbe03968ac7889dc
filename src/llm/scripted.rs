//! A scripted [`Llm`] for tests and replays: answers from a queue, records requests.

use std::cell::RefCell;
use std::collections::VecDeque;

use futures::future::LocalBoxFuture;

use crate::llm::message::ToolCall;
use crate::llm::{
    ChatRequest, ChatResponse, DeltaSink, FinishReason, Llm, LlmError, replay_as_deltas,
};

/// Replies in the order they were queued; every request is kept for inspection.
#[derive(Debug, Default)]
pub struct ScriptedModel {
    replies: RefCell<VecDeque<Result<ChatResponse, LlmError>>>,
    requests: RefCell<Vec<ChatRequest>>,
}

impl ScriptedModel {
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a reply (or an error) for the next request.
    pub fn push(&self, reply: Result<ChatResponse, LlmError>) -> &Self {
        self.replies.borrow_mut().push_back(reply);
        self
    }

    /// Queues a plain text answer.
    pub fn push_text(&self, text: impl Into<String>) -> &Self {
        self.push(Ok(ChatResponse {
            text: text.into(),
            reasoning: String::new(),
            tool_calls: Vec::new(),
            finish: FinishReason::Stop,
            usage: None,
            served: Default::default(),
        }))
    }

    /// Queues a turn that calls tools.
    pub fn push_tool_calls(&self, calls: Vec<ToolCall>) -> &Self {
        self.push(Ok(ChatResponse {
            text: String::new(),
            reasoning: String::new(),
            tool_calls: calls,
            finish: FinishReason::ToolCalls,
            usage: None,
            served: Default::default(),
        }))
    }

    /// Every request received so far, oldest first.
    pub fn requests(&self) -> Vec<ChatRequest> {
        self.requests.borrow().clone()
    }

    /// Replies queued but not yet used.
    pub fn remaining(&self) -> usize {
        self.replies.borrow().len()
    }
}

impl Llm for ScriptedModel {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.requests.borrow_mut().push(request.clone());
        let reply = self.replies.borrow_mut().pop_front().unwrap_or_else(|| {
            Err(LlmError::Provider(
                "the scripted model has no reply left for this request".into(),
            ))
        });
        if let Ok(response) = &reply {
            replay_as_deltas(response, sink);
        }
        Box::pin(async move { reply })
    }
}
