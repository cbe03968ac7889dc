//! Asking a model for a typed answer: request JSON by schema, parse it, and re-ask
//! with a short summary of what was wrong, a bounded number of times.

use crate::llm::message::Message;
use crate::llm::{ChatRequest, DeltaSink, Llm, LlmError, ResponseFormat};

use crate::base::json::{Contract, JsonError, parse};

/// Re-asks after the first answer, by default.
pub const DEFAULT_REASKS: u32 = 2;

/// Why no valid typed answer came back.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ContractError {
    #[error(transparent)]
    Model(#[from] LlmError),
    #[error("the model's answer was still invalid after {attempts} attempts: {last}")]
    Rejected { attempts: u32, last: JsonError },
}

/// Asks `llm` for a `T`: the request gains a JSON-Schema response format; each invalid
/// answer is followed by a user message naming the problem, up to `reasks` times.
pub async fn ask<T: Contract>(
    llm: &dyn Llm,
    mut request: ChatRequest,
    reasks: u32,
    sink: &mut DeltaSink<'_>,
) -> Result<T, ContractError> {
    request.response_format = Some(ResponseFormat::for_contract::<T>());
    let mut attempts = 0;
    loop {
        attempts += 1;
        let response = llm.chat(&request, sink).await?;
        let error = match parse::<T>(&response.text) {
            Ok(value) => return Ok(value),
            Err(error) => error,
        };
        if attempts > reasks {
            return Err(ContractError::Rejected {
                attempts,
                last: error,
            });
        }
        let messages = std::rc::Rc::make_mut(&mut request.messages);
        messages.push(Message::assistant(response.text, Vec::new()));
        messages.push(Message::user(reask_prompt(&error)));
    }
}

/// What the model is told after an invalid answer: the problem, briefly.
fn reask_prompt(error: &JsonError) -> String {
    let mut problem = error.to_string();
    if problem.len() > 300 {
        let cut = (0..=300)
            .rev()
            .find(|&i| problem.is_char_boundary(i))
            .unwrap_or(0);
        problem.truncate(cut);
        problem.push('…');
    }
    format!(
        "Your previous reply could not be used: {problem}. Reply again with only one JSON \
         value that matches the schema, and nothing else."
    )
}
