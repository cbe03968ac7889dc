//! A paid model for the usage suites (`usage`, `sub_agents`): scripted replies from a
//! model named `paid-model`, each with the tokens its provider counted, priced by the
//! session at $2 / $8 per million tokens, and the session's updates heard.

use super::*;
use familiar::llm::message::ToolCall;
use familiar::llm::scripted::ScriptedModel;
use familiar::llm::usage::{Price, Prices};
use familiar::llm::{ChatRequest, ChatResponse, DeltaSink, LlmError, Usage};

/// A scripted model that says it is `paid-model`, so the session's price applies to it.
pub struct Paid(pub ScriptedModel);

impl Llm for Paid {
    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        self.0.chat(request, sink)
    }

    fn model(&self) -> Option<&str> {
        Some("paid-model")
    }
}

/// The paid model, answering `replies` in order.
pub fn scripted(replies: Vec<ChatResponse>) -> Rc<Paid> {
    let model = Rc::new(Paid(ScriptedModel::new()));
    for reply in replies {
        model.0.push(Ok(reply));
    }
    model
}

/// A reply that calls `calls` (or answers `text`), its provider having counted `tokens`
/// (prompt, completion).
pub fn counted(text: &str, calls: Vec<ToolCall>, tokens: (u32, u32)) -> ChatResponse {
    ChatResponse {
        usage: Some(Usage {
            prompt_tokens: tokens.0,
            completion_tokens: tokens.1,
        }),
        ..ChatResponse::from_calls(text.into(), calls)
    }
}

/// Prices `paid-model` at $2 / $8 per million tokens in `session`, and keeps every
/// update it tells.
pub fn priced_and_heard(session: &Session) -> Rc<RefCell<Vec<Update>>> {
    session.set_prices(Prices(vec![(
        "paid-model".into(),
        Price {
            input: 2.0,
            output: 8.0,
        },
    )]));
    let updates = Rc::new(RefCell::new(Vec::new()));
    let log = Rc::clone(&updates);
    session.on(move |u| log.borrow_mut().push(u.clone()));
    updates
}

/// Sends `text` and runs the turn to its end.
pub fn send(session: &Session, text: &str) -> Outcome {
    LocalPool::new().run_until(session.send(text)).unwrap()
}
