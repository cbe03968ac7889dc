//! The run's room in its model's context window: what it keeps between calls (the
//! window as it now knows it, where its own messages begin, the last estimate, a
//! refusal to retry), and how it fits each model call's request into it before it is
//! sent, through [`fit`](super::fit::fit), learning from a refusal for length.

use crate::base::json::Read;

use serde::Serialize;

use super::fit::{Fitting, Trim, fit};
use super::kept::Kept;
use super::{AgentRun, ModelCall, Outcome};
use crate::llm::window::{
    ContextWindow, DEFAULT_CONTEXT_TOKENS, Overflow, WindowSource, estimate_message,
    estimate_request, estimate_tokens, estimate_tool,
};
use crate::llm::{ChatRequest, LlmError, ToolSpec};
use crate::run::event::Event;
use crate::tool::ToolKind;

/// What a run keeps about its model's window between calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Read)]
pub(super) struct Room {
    /// `None`: the model has no window to fit (the rules model, scripts) until a
    /// refusal says otherwise.
    window: Option<ContextWindow>,
    /// Where this run's own messages begin in the transcript; before it, the history.
    turn_start: usize,
    /// The last request's estimate, as sent (unscaled).
    last_estimate: usize,
    /// The trim a refusal left for the retry to report.
    refused: Option<Trim>,
    /// A refused call is being retried: a second refusal ends the run.
    retrying: bool,
    /// The offered tools' estimate, while the same tools are offered.
    #[serde(skip)]
    tools: Kept<[ToolSpec]>,
    /// The system prompt's estimate, while the same prompt is sent.
    #[serde(skip)]
    system: Kept<str>,
}

/// Of two windows, the smaller, counting with the larger scale.
fn narrower(a: Option<ContextWindow>, b: Option<ContextWindow>) -> Option<ContextWindow> {
    match (a, b) {
        (Some(a), Some(b)) => {
            let mut window = if a.tokens <= b.tokens { a } else { b };
            window.scale = a.scale.max(b.scale);
            Some(window)
        }
        (a, b) => a.or(b),
    }
}

impl Room {
    /// A run's room, its own messages beginning at `turn_start` in the transcript.
    pub(super) fn starting_at(turn_start: usize) -> Self {
        Self {
            turn_start,
            ..Self::default()
        }
    }

    /// The run's own messages begin at `turn_start` now (its history was given back).
    pub(super) fn turn_starts_at(&mut self, turn_start: usize) {
        self.turn_start = turn_start;
    }
}

impl AgentRun {
    /// Fits every request into `window` before it is sent.
    pub fn with_context_window(mut self, window: ContextWindow) -> Self {
        self.room.window = Some(window);
        self
    }

    /// The window the run fits its requests into, as it now knows it.
    pub fn context_window(&self) -> Option<&ContextWindow> {
        self.room.window.as_ref()
    }

    /// Fits a model call's request into the window (the narrower of the run's own and
    /// the `model`'s, as its client knows it now), reporting any trim as an
    /// [`Event::Fitted`]; `None` when even trimmed it cannot fit (the run fails,
    /// naming the window and what would not fit).
    pub fn fit(&mut self, call: ModelCall, model: Option<ContextWindow>) -> Option<ModelCall> {
        let ModelCall { purpose, request } = call;
        let estimate = self.estimate(&request);
        // Every test run holds the running count to the full one, up to a history of
        // a few hundred messages: past that the check alone would make a debug build's
        // step grow with the history (tests/loop_cost.rs times one at 1,000).
        debug_assert!(
            request.messages.len() > 256 || estimate == estimate_request(&request),
            "the running estimate"
        );
        let Some(window) = narrower(self.room.window, model) else {
            self.room.last_estimate = estimate;
            return Some(ModelCall { purpose, request });
        };
        // The narrowest window seen stands: a refusal corrects it from there.
        self.room.window = Some(window);
        let boundaries = &self.observation.boundaries;
        let not_offered = self
            .catalogue
            .iter()
            .filter(|t| t.kind == ToolKind::Action && !boundaries.allows(&t.spec.name))
            .count();
        let fitting = Fitting {
            request,
            estimate,
            turn_start: self.room.turn_start,
            not_offered,
            window: &window,
            refused: self.room.refused.take(),
        };
        match fit(fitting) {
            Ok((request, report)) => {
                self.room.last_estimate = match report {
                    Some(report) => {
                        self.events.push(Event::Fitted(report));
                        estimate_request(&request)
                    }
                    None => estimate,
                };
                Some(ModelCall { purpose, request })
            }
            Err(error) => {
                self.finish(Outcome::Failed {
                    error: error.to_string(),
                });
                None
            }
        }
    }

    /// [`estimate_request`] of `request`, a request of this run: its messages are the
    /// transcript's (and what a purpose appends after them), counted as they were
    /// added; its tools are estimated once while the same ones are offered.
    fn estimate(&self, request: &ChatRequest) -> usize {
        let transcript = self.transcript.len();
        let messages = match request.messages.get(transcript..) {
            Some(appended) => {
                let appended: usize = appended.iter().map(estimate_message).sum();
                self.transcript.estimated_tokens() + appended
            }
            None => request.messages.iter().map(estimate_message).sum(),
        };
        let system = if request.system.is_empty() {
            0
        } else {
            self.room.system.of(&request.system, estimate_tokens)
                + crate::llm::window::MESSAGE_TOKENS
        };
        let tools = if request.offered_tools().is_empty() {
            0
        } else {
            self.room.tools.of(&request.tools, |tools| {
                tools.iter().map(estimate_tool).sum()
            })
        };
        system + messages + tools
    }

    /// A refusal for length, the first for this call: the window and the estimate are
    /// corrected from what the server said and the call is made again, trimmed
    /// (`true`). A second refusal, or any other error, is not retried.
    pub(super) fn retry_when_too_long(&mut self, error: &LlmError) -> bool {
        let Some(overflow) = Overflow::read(error) else {
            return false;
        };
        if self.room.retrying {
            return false;
        }
        let window = self.room.window.get_or_insert_with(|| {
            let tokens = overflow.window.unwrap_or(DEFAULT_CONTEXT_TOKENS);
            ContextWindow::new(tokens, None, WindowSource::Server)
        });
        window.learn(&overflow, self.room.last_estimate);
        self.room.refused = Some(Trim::Refused {
            window: overflow.window,
            scale: window.scale,
        });
        self.room.retrying = true;
        true
    }

    /// A model answered: the next refusal may be retried again.
    pub(super) fn answered_within_window(&mut self) {
        self.room.retrying = false;
    }
}
