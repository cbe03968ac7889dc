//! A model's context window: how many tokens a request may hold, estimated without a
//! tokenizer, and a server's "this request is too long" read from its error.
//!
//! The estimate counts characters by script (an English word is a token or so, JSON
//! punctuation nearly a token each, a CJK character more than one) and rounds up: it is
//! calibrated to stay at or above a real tokenizer's count (`tests/fixtures/tokens/`),
//! and cheap enough to run before every model call. What to trim when a request does
//! not fit is the run's business (`run::fit`); which window a model has is its
//! client's (configured, told by the server, or [`DEFAULT_CONTEXT_TOKENS`]).

use crate::base::json::Read;
use serde::{Deserialize, Serialize};

use crate::llm::message::Message;
use crate::llm::{ChatRequest, LlmError, ToolSpec};

/// The window assumed when neither the configuration nor the server says: small
/// enough for most local models, and a refusal teaches the client the real one.
pub const DEFAULT_CONTEXT_TOKENS: u32 = 8_192;
/// Tokens kept for the answer when the model's settings set no `max_tokens`.
pub const DEFAULT_ANSWER_TOKENS: u32 = 512;
/// The chat template's cost of one message (role markers, separators), in tokens.
pub const MESSAGE_TOKENS: usize = 6;
/// The template's cost of one offered tool besides its JSON, in tokens.
pub const TOOL_TOKENS: usize = 10;
/// `scale` of an estimate taken as it is.
pub const UNSCALED: u32 = 1_000;

/// Where a window's size came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// `contextTokens` in the configuration or the settings.
    Configured,
    /// The server said so (its model info, or a context-length refusal).
    Server,
    /// Nobody said: [`DEFAULT_CONTEXT_TOKENS`].
    Default,
}

/// The room a model gives one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Read)]
pub struct ContextWindow {
    /// The whole window, prompt and answer, in tokens.
    pub tokens: u32,
    /// Kept for the answer (the request's `max_tokens`).
    pub reserve: u32,
    /// Real tokens per estimated token, in thousandths ([`UNSCALED`]: as estimated);
    /// raised when a server counted more than the estimate.
    pub scale: u32,
    pub source: WindowSource,
}

impl ContextWindow {
    /// A window of `tokens`, keeping `answer` (or [`DEFAULT_ANSWER_TOKENS`], at most a
    /// quarter of the window) for the answer.
    pub fn new(tokens: u32, answer: Option<u32>, source: WindowSource) -> Self {
        let reserve = answer.unwrap_or(DEFAULT_ANSWER_TOKENS.min(tokens / 4));
        Self {
            tokens,
            reserve,
            scale: UNSCALED,
            source,
        }
    }

    /// What the prompt may take: the window less the answer's reserve.
    pub fn prompt_room(&self) -> usize {
        usize::try_from(self.tokens.saturating_sub(self.reserve)).unwrap_or(usize::MAX)
    }

    /// `estimate` (from the functions below) as this model counts.
    pub fn scaled(&self, estimate: usize) -> usize {
        let scale = usize::try_from(self.scale.max(UNSCALED)).unwrap_or(usize::MAX);
        estimate.saturating_mul(scale).div_ceil(1_000)
    }

    /// After a refusal: the server's window if it named a smaller one, and a scale
    /// that would have counted `estimate` as the prompt tokens the server saw (with a
    /// tenth more for safety) if that is more than now, or a quarter more when the
    /// server said nothing at all.
    pub fn learn(&mut self, overflow: &Overflow, estimate: usize) {
        if let Some(window) = overflow.window.filter(|w| *w > 0)
            && (window < self.tokens || self.source != WindowSource::Configured)
        {
            self.tokens = window;
            self.reserve = self.reserve.min(window / 4).max(1);
            self.source = WindowSource::Server;
        }
        let prompt = overflow.prompt_tokens(self.reserve);
        let measured = match (prompt, u64::try_from(estimate)) {
            (Some(real), Ok(estimate)) if estimate > 0 => {
                let ratio = u64::from(real).saturating_mul(1_100) / estimate;
                u32::try_from(ratio).unwrap_or(u32::MAX)
            }
            _ => 0,
        };
        // Counted: take the server's count (never below what is known). Not counted
        // and no window named: count a quarter more.
        self.scale = if measured > 0 {
            self.scale.max(measured)
        } else if overflow.window.is_none() {
            self.scale.saturating_mul(5) / 4
        } else {
            self.scale
        };
    }
}

/// Estimated tokens of `text`: per character by script (and, for spaces and
/// punctuation, by their neighbours), rounded up. Never below SmolLM2's tokenizer for
/// the texts in `tests/fixtures/tokens/`, and a tenth to a fifth above it overall.
pub fn estimate_tokens(text: &str) -> usize {
    if text.is_ascii() {
        return ascii_tokens(text.as_bytes());
    }
    char_tokens(text)
}

/// [`estimate_tokens`] character by character, for any text.
fn char_tokens(text: &str) -> usize {
    let mut thousandths = 0;
    let mut previous = '\n';
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let next = chars.peek().copied().unwrap_or('\n');
        thousandths += char_cost(previous, c, next);
        previous = c;
    }
    thousandths.div_ceil(1_000)
}

/// [`estimate_tokens`] of ASCII text, byte by byte: the same costs as [`char_cost`]
/// (a test holds them equal) without decoding characters, as most prompts are.
/// A byte's cost is read from a table, as every message is estimated once as it is
/// added, in the loop's step.
fn ascii_tokens(bytes: &[u8]) -> usize {
    let mut thousandths: usize = 0;
    let mut after_punctuation = false;
    for (at, &c) in bytes.iter().enumerate() {
        let cost = ASCII_COSTS.get(usize::from(c)).copied().unwrap_or(1_000);
        thousandths += usize::from(match cost {
            SPACE if bytes.get(at + 1).is_some_and(u8::is_ascii_alphabetic) => 150,
            SPACE => 1_000,
            PUNCTUATION if after_punctuation => 300,
            PUNCTUATION => 900,
            cost => cost,
        });
        after_punctuation = cost == PUNCTUATION;
    }
    thousandths.div_ceil(1_000)
}

/// In [`ASCII_COSTS`]: a cost that depends on the neighbours (never a real cost).
const SPACE: u16 = 1;
const PUNCTUATION: u16 = 2;

/// Each ASCII byte's cost in thousandths of a token, as [`char_cost`] gives it, or
/// what it depends on.
#[allow(clippy::indexing_slicing)] // c < 128, the table's length; `get_mut` is not const
const ASCII_COSTS: [u16; 128] = {
    let mut costs = [1_000; 128];
    let mut c = 0;
    while c < 128 {
        let byte = c as u8;
        costs[c] = match byte {
            b'a'..=b'z' => 270,
            b'A'..=b'Z' => 400,
            b'0'..=b'9' => 1_000,
            b' ' => SPACE,
            b'\n' | b'\t' | b'\r' => 800,
            _ if byte.is_ascii_punctuation() => PUNCTUATION,
            _ => 1_000,
        };
        c += 1;
    }
    costs
};

/// A character's cost in thousandths of a token, after `previous` and before `next`.
fn char_cost(previous: char, c: char, next: char) -> usize {
    match c {
        'a'..='z' => 270,
        'A'..='Z' => 400,
        // Tokenizers of the SmolLM2/Llama-3 kind split numbers digit by digit.
        '0'..='9' => 1_000,
        // A space joins the word after it, but stands alone before anything else.
        ' ' if next.is_ascii_alphabetic() => 150,
        ' ' => 1_000,
        '\n' | '\t' | '\r' => 800,
        // `":"`, `","`, `}}`: runs of punctuation merge.
        c if c.is_ascii_punctuation() && previous.is_ascii_punctuation() => 300,
        c if c.is_ascii_punctuation() => 900,
        c if c.is_ascii() => 1_000,
        // Accented Latin splits the word it is in.
        '\u{c0}'..='\u{24f}' => 2_000,
        // Greek, Cyrillic, Hebrew, Arabic: a token or so each.
        '\u{80}'..='\u{7ff}' => 1_000,
        // CJK, Devanagari, Thai and the rest of the basic plane: often several bytes
        // a token cannot merge.
        '\u{800}'..='\u{ffff}' => 2_000,
        // Emoji and other astral characters: four bytes, rarely merged.
        _ => 4_000,
    }
}

/// Estimated tokens of one message: its text, its tool calls, the template around it.
pub fn estimate_message(message: &Message) -> usize {
    message.tokens.get_or(|| {
        let calls: usize = message
            .tool_calls
            .iter()
            .map(|c| estimate_tokens(&c.name) + estimate_tokens(&c.arguments) + MESSAGE_TOKENS)
            .sum();
        estimate_tokens(&message.content) + calls + MESSAGE_TOKENS
    })
}

/// Estimated tokens of one offered tool: its name, description and schema.
pub fn estimate_tool(tool: &ToolSpec) -> usize {
    estimate_tokens(&tool.name)
        + estimate_tokens(&tool.description)
        + estimate_tokens(&tool.parameters.to_string())
        + TOOL_TOKENS
}

/// Estimated prompt tokens of a whole request: system prompt, messages, offered tools.
pub fn estimate_request(request: &ChatRequest) -> usize {
    let system = if request.system.is_empty() {
        0
    } else {
        estimate_tokens(&request.system) + MESSAGE_TOKENS
    };
    let messages: usize = request.messages.iter().map(estimate_message).sum();
    let tools: usize = request.offered_tools().iter().map(estimate_tool).sum();
    system + messages + tools
}

/// A server's refusal of a request longer than its window, with the numbers it gave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Overflow {
    /// The model's window, when the server named it.
    pub window: Option<u32>,
    /// The tokens the request came to (prompt and, for some servers, the answer's
    /// `max_tokens`), when the server counted them.
    pub requested: Option<u32>,
    /// Of which the prompt, when the server said.
    pub prompt: Option<u32>,
}

impl Overflow {
    /// The refusal in `error`, if it is one: HTTP 400/413 (or an error in the stream)
    /// with OpenAI's `context_length_exceeded` or the words llama.cpp, vLLM and
    /// LiteLLM use.
    pub fn read(error: &LlmError) -> Option<Self> {
        let message = match error {
            LlmError::Status {
                status: 400 | 413 | 422,
                message,
            }
            | LlmError::Provider(message) => message,
            _ => return None,
        };
        let lower = message.to_lowercase();
        const SIGNS: [&str; 9] = [
            "context_length_exceeded",
            "maximum context length",
            "context length",
            "context window",
            "context size",
            "exceed_context_size",
            "contextwindowexceeded",
            "prompt is too long",
            "too many tokens",
        ];
        if !SIGNS.iter().any(|sign| lower.contains(sign)) {
            return None;
        }
        let window = number_after(&lower, &["maximum context length is", "context window of"])
            .or_else(|| number_after(&lower, &["n_ctx", "context size of", "> "]));
        let requested = number_after(
            &lower,
            &[
                "you requested",
                "resulted in",
                "requested tokens (",
                "prompt is too long:",
            ],
        );
        // "(2049 in the messages, 96 in the completion)"
        let prompt = lower
            .find(" in the messages")
            .and_then(|end| lower.get(..end))
            .and_then(|head| head.rsplit(['(', ' ']).next())
            .and_then(|n| n.replace(',', "").parse().ok());
        Some(Self {
            window,
            requested,
            prompt,
        })
    }

    /// The prompt's real tokens: as the server said, or what it requested less the
    /// answer's `reserve` it counted in.
    fn prompt_tokens(&self, reserve: u32) -> Option<u32> {
        self.prompt.or_else(|| {
            let requested = self.requested?;
            match self.window {
                Some(_) => Some(requested.saturating_sub(reserve)),
                None => Some(requested),
            }
        })
    }
}

/// The first number after any of `marks` in `text` (digits and thousands commas).
fn number_after(text: &str, marks: &[&str]) -> Option<u32> {
    marks.iter().find_map(|mark| {
        let start = text.find(mark)? + mark.len();
        let rest = text.get(start..)?.trim_start_matches([' ', ':', '=', '"']);
        let digits: String = rest
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == ',')
            .filter(char::is_ascii_digit)
            .collect();
        digits.parse().ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The character-by-character estimate, as for any text.
    fn by_chars(text: &str) -> usize {
        char_tokens(text)
    }

    #[cfg(not(target_arch = "wasm32"))]
    proptest::proptest! {
        #[test]
        fn ascii_text_is_estimated_byte_by_byte_as_by_characters(text in "[ -~\t\n\r]{0,200}") {
            proptest::prop_assert_eq!(estimate_tokens(&text), by_chars(&text));
        }
    }

    #[test]
    fn every_ascii_neighbourhood_costs_the_same_either_way() {
        for a in 0u8..128 {
            for b in 0u8..128 {
                let text = String::from_utf8(vec![a, b, a]).unwrap();
                assert_eq!(estimate_tokens(&text), by_chars(&text), "{:?}", text);
            }
        }
    }

    fn status(message: &str) -> LlmError {
        LlmError::Status {
            status: 400,
            message: message.into(),
        }
    }

    #[test]
    fn llama_cpp_pythons_refusal_gives_the_window_and_the_prompt() {
        let error = status(
            "This model's maximum context length is 2048 tokens. However, you requested \
             2145 tokens (2049 in the messages, 96 in the completion). Please reduce the \
             length of the messages or completion.",
        );
        assert_eq!(
            Overflow::read(&error),
            Some(Overflow {
                window: Some(2048),
                requested: Some(2145),
                prompt: Some(2049),
            })
        );
    }

    #[test]
    fn openai_litellm_and_llama_server_refusals_are_read() {
        let openai = status(
            "This model's maximum context length is 8,192 tokens. However, your messages \
             resulted in 9,001 tokens. Please reduce the length of the messages. \
             [context_length_exceeded]",
        );
        let read = Overflow::read(&openai).unwrap();
        assert_eq!((read.window, read.requested), (Some(8192), Some(9001)));
        let litellm = status(
            "litellm.ContextWindowExceededError: litellm.BadRequestError: prompt is too long",
        );
        assert!(Overflow::read(&litellm).is_some());
        let llama_server = status(
            "the request exceeds the available context size, try increasing it \
             [exceed_context_size_error]",
        );
        assert_eq!(Overflow::read(&llama_server), Some(Overflow::default()));
    }

    #[test]
    fn other_errors_are_not_refusals_of_length() {
        assert_eq!(Overflow::read(&status("the model name is unknown")), None);
        let server = LlmError::Status {
            status: 500,
            message: "maximum context length is 10 tokens".into(),
        };
        assert_eq!(Overflow::read(&server), None);
        assert_eq!(Overflow::read(&LlmError::Aborted), None);
    }

    #[test]
    fn a_refusal_teaches_the_window_and_a_scale_that_would_have_counted_right() {
        let mut window = ContextWindow::new(8_192, Some(96), WindowSource::Default);
        let overflow = Overflow {
            window: Some(2048),
            requested: Some(2145),
            prompt: Some(2049),
        };
        window.learn(&overflow, 1_000);
        assert_eq!((window.tokens, window.reserve), (2048, 96));
        assert_eq!(window.source, WindowSource::Server);
        // 2,049 real tokens for 1,000 estimated, a tenth more for safety.
        assert_eq!(window.scale, 2_253);
        assert_eq!(window.scaled(1_000), 2_253);
        // With no numbers, a quarter more each time.
        window.learn(&Overflow::default(), 1_000);
        assert_eq!(window.scale, 2_816);
        // A count below the estimate leaves the scale as it is.
        let mut window = ContextWindow::new(8_192, Some(96), WindowSource::Default);
        window.learn(&overflow, 2_500);
        assert_eq!((window.tokens, window.scale), (2048, UNSCALED));
    }

    #[test]
    fn a_configured_window_is_only_ever_lowered() {
        let mut window = ContextWindow::new(4_096, None, WindowSource::Configured);
        assert_eq!(window.reserve, 512);
        let bigger = Overflow {
            window: Some(32_768),
            ..Overflow::default()
        };
        window.learn(&bigger, 100);
        assert_eq!(window.tokens, 4_096);
        assert_eq!(window.prompt_room(), 4_096 - 512);
    }

    #[test]
    fn scripts_cost_more_per_character_where_tokenizers_merge_less() {
        assert_eq!(estimate_tokens(""), 0);
        assert!(estimate_tokens("hello world") <= 4);
        assert!(estimate_tokens("{\"type\":\"object\"}") >= 6);
        assert!(estimate_tokens("東京は晴れ") >= 10);
        assert!(estimate_tokens("🎉🎉") >= 8);
    }
}
