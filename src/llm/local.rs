//! The local model: a GGUF model run in the page's own Web Worker (`crates/local`),
//! spoken to by messages. No server and no key; the weights come from a URL (kept in
//! the browser's cache after the first download) or a file the person picks.
//!
//! This module is the client's pure half: its settings, and how the worker's replies
//! become deltas and a response. Starting the worker and carrying messages is the
//! browser's business (`web::local_model`), behind [`ModelWorker`].

use crate::base::json::Read;
use futures::StreamExt;
use futures::future::LocalBoxFuture;
use futures::stream::LocalBoxStream;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::llm::window::{ContextWindow, WindowSource};
use crate::llm::{ChatRequest, ChatResponse, Delta, DeltaSink, Llm, LlmError};

/// The window a local model gets when the settings name none: SmolLM2's as llama.cpp
/// serves it, and a KV cache of a few tens of megabytes.
pub const DEFAULT_LOCAL_CONTEXT: u32 = 2_048;
/// The test model, SmolLM2-135M-Instruct (Q4_1), and its size, said before download.
pub const SMOLLM2_NAME: &str = "SmolLM2-135M-Instruct (Q4_1)";
pub const SMOLLM2_BYTES: u64 = 98_362_432;

/// Where the weights are and how much of them to use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Read)]
pub struct LocalSettings {
    /// The GGUF file's address (resolved against the page), or `file:` + its name for
    /// one the person picked (it must be picked again after a reload).
    pub url: String,
    /// The window in tokens (at most the model's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u32>,
    /// The worker's script, when not the build's `local/worker.js`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    /// The file's SHA-256 in hex, when its publisher gives one: a download (or a copy
    /// in the browser's cache) that does not match is refused and not kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Where the model runs: WebGPU where the browser has it, else the CPU (`auto`), or
    /// one of them forced.
    #[serde(default, skip_serializing_if = "LocalBackend::is_auto")]
    pub backend: LocalBackend,
    /// How many threads the CPU runs on: every core the browser reports when unset.
    /// More than one needs a cross-origin-isolated page; a game that keeps a core
    /// for its frames asks for fewer. Only `createAgent` sets it (the demo's Settings
    /// take every core), so the saved settings leave it out.
    #[serde(skip)]
    pub threads: Option<u32>,
}

/// Where the local model runs, as the settings ask (`backend: "auto" | "webgpu" |
/// "cpu"`). The worker chooses at load (crates/local `generate::backend`): `auto`
/// takes WebGPU when the browser gives an adapter and the model's family runs there,
/// falling back to the CPU (and saying why); `webgpu` fails to load where it cannot
/// run; `cpu` never asks for WebGPU.
///
/// Written and read as its word ([`LocalBackend::word`]), through the string's own
/// serde code rather than a derived visitor.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LocalBackend {
    #[default]
    Auto,
    WebGpu,
    Cpu,
}

impl LocalBackend {
    pub const ALL: [LocalBackend; 3] =
        [LocalBackend::Auto, LocalBackend::WebGpu, LocalBackend::Cpu];

    /// The setting's word, as the worker's load message carries it.
    pub fn word(self) -> &'static str {
        match self {
            LocalBackend::Auto => "auto",
            LocalBackend::WebGpu => "webgpu",
            LocalBackend::Cpu => "cpu",
        }
    }

    /// The backend a word names.
    pub fn from_word(word: &str) -> Option<LocalBackend> {
        LocalBackend::ALL.into_iter().find(|b| b.word() == word)
    }

    pub fn is_auto(&self) -> bool {
        *self == LocalBackend::Auto
    }
}

impl Serialize for LocalBackend {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.word())
    }
}

impl<'de> Deserialize<'de> for LocalBackend {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let word = String::deserialize(deserializer)?;
        LocalBackend::from_word(&word).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "the backend must be “auto”, “webgpu” or “cpu”, not “{word}”"
            ))
        })
    }
}

impl LocalSettings {
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            url: url.into(),
            context_tokens: None,
            worker: None,
            sha256: None,
            backend: LocalBackend::Auto,
            threads: None,
        }
    }

    /// What is wrong with these settings, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.url.trim().is_empty() {
            return Some("the local model needs the address of its GGUF file".into());
        }
        if let Some(hash) = &self.sha256
            && !is_sha256(hash)
        {
            return Some(format!(
                "the weights' SHA-256 must be 64 hexadecimal digits, not “{hash}”"
            ));
        }
        match self.context_tokens {
            Some(n) if !(256..=131_072).contains(&n) => {
                Some(format!("the window must be 256 to 131,072 tokens, not {n}"))
            }
            _ => None,
        }
    }

    pub fn context(&self) -> u32 {
        self.context_tokens.unwrap_or(DEFAULT_LOCAL_CONTEXT)
    }
}

/// Whether `hash` is a SHA-256 written in hex (either case).
pub fn is_sha256(hash: &str) -> bool {
    hash.len() == 64 && hash.bytes().all(|b| b.is_ascii_hexdigit())
}

/// One reply of the worker to a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Reply {
    Delta(Delta),
    Done(ChatResponse),
    Failed(LlmError),
}

/// The worker, as the client needs it.
pub trait ModelWorker {
    /// Sends one request (Familiar's `ChatRequest` JSON) and returns the worker's
    /// replies to it, in order, ending with `Done` or `Failed`. Dropping the stream
    /// before its end asks the worker to stop.
    fn chat(&self, request: Value) -> LocalBoxStream<'static, Reply>;
}

/// A worker's message about a request, as a reply; `None` for messages about other
/// things (progress, loading).
pub fn reply_of(message: &Value) -> Option<Reply> {
    let kind = message.get("type")?.as_str()?;
    let read = |value: Option<&Value>| -> Result<Value, LlmError> {
        value
            .cloned()
            .ok_or_else(|| LlmError::Malformed(format!("the local model's `{kind}` has no body")))
    };
    Some(match kind {
        "delta" => match read(message.get("delta"))
            .and_then(|v| serde_json::from_value(v).map_err(|e| LlmError::Malformed(e.to_string())))
        {
            Ok(delta) => Reply::Delta(delta),
            Err(error) => Reply::Failed(error),
        },
        "done" => match read(message.get("response"))
            .and_then(|v| serde_json::from_value(v).map_err(|e| LlmError::Malformed(e.to_string())))
        {
            Ok(response) => Reply::Done(response),
            Err(error) => Reply::Failed(error),
        },
        "error" => {
            let words = message
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("the local model failed")
                .to_owned();
            Reply::Failed(match message.get("kind").and_then(Value::as_str) {
                Some("aborted") => LlmError::Aborted,
                Some("unreachable") => LlmError::Unreachable(words),
                _ => LlmError::Provider(words),
            })
        }
        _ => return None,
    })
}

/// A model that runs in the page's worker.
pub struct LocalModel<W> {
    settings: LocalSettings,
    worker: W,
}

impl<W: ModelWorker> LocalModel<W> {
    pub fn new(settings: LocalSettings, worker: W) -> Self {
        Self { settings, worker }
    }
}

impl<W: ModelWorker> Llm for LocalModel<W> {
    fn model(&self) -> Option<&str> {
        Some("local")
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(async move {
            let body =
                serde_json::to_value(request).map_err(|e| LlmError::Malformed(e.to_string()))?;
            let mut replies = self.worker.chat(body);
            while let Some(reply) = replies.next().await {
                match reply {
                    Reply::Delta(delta) => sink(delta),
                    Reply::Done(response) => return Ok(response),
                    Reply::Failed(error) => return Err(error),
                }
            }
            Err(LlmError::Incomplete(
                "the local model's worker stopped before the answer's end".into(),
            ))
        })
    }

    fn context_window(&self) -> LocalBoxFuture<'_, Option<ContextWindow>> {
        let window = ContextWindow::new(self.settings.context(), None, WindowSource::Configured);
        Box::pin(async move { Some(window) })
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;

    use futures::executor::block_on;
    use serde_json::json;

    use super::*;
    use crate::llm::FinishReason;
    use crate::llm::message::Message;

    /// A worker that answers with the messages it was given, and keeps the requests.
    struct Replay {
        messages: Vec<Value>,
        asked: RefCell<Vec<Value>>,
    }

    impl ModelWorker for Replay {
        fn chat(&self, request: Value) -> LocalBoxStream<'static, Reply> {
            self.asked.borrow_mut().push(request);
            let replies: Vec<Reply> = self.messages.iter().filter_map(reply_of).collect();
            futures::stream::iter(replies).boxed_local()
        }
    }

    fn model(messages: Vec<Value>) -> LocalModel<Replay> {
        LocalModel::new(
            LocalSettings::new("models/smollm2.gguf"),
            Replay {
                messages,
                asked: RefCell::new(Vec::new()),
            },
        )
    }

    fn request() -> ChatRequest {
        ChatRequest {
            system: "Be brief.".into(),
            messages: std::rc::Rc::new(vec![Message::user("What time is it?")]),
            ..ChatRequest::default()
        }
    }

    #[test]
    fn the_workers_deltas_reach_the_sink_and_its_response_is_the_answer() {
        let model = model(vec![
            json!({"type": "progress", "loaded": 1, "total": 2}),
            json!({"type": "delta", "id": 1, "delta": {"type": "text", "text": "It is "}}),
            json!({"type": "delta", "id": 1, "delta": {"type": "tool_call", "index": 0, "id": "call_1", "name": "current_time", "arguments": "{}"}}),
            json!({"type": "done", "id": 1, "response": {"text": "It is ", "reasoning": "", "tool_calls": [{"id": "call_1", "name": "current_time", "arguments": "{}"}], "finish": "tool_calls", "usage": {"prompt_tokens": 40, "completion_tokens": 5}}}),
        ]);
        let mut deltas = Vec::new();
        let response = block_on(model.chat(&request(), &mut |d| deltas.push(d)));
        let response = response.unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(response.finish, FinishReason::ToolCalls);
        assert_eq!(response.tool_calls.len(), 1);
        assert_eq!(deltas.len(), 2);
        assert_eq!(
            deltas.first(),
            Some(&Delta::Text {
                text: "It is ".into()
            })
        );
        let asked = model.worker.asked.borrow();
        let asked = asked.first().cloned().unwrap_or_default();
        assert_eq!(asked["system"], "Be brief.");
        assert_eq!(asked["messages"][0]["content"], "What time is it?");
        assert_eq!(asked["tool_choice"], "auto");
    }

    #[test]
    fn a_refusal_of_length_reads_as_the_window_it_names() {
        let model = model(vec![json!({"type": "error", "id": 1, "kind": "provider",
            "message": "the prompt is too long: 2300 tokens in a context window of 2048"})]);
        let error = block_on(model.chat(&request(), &mut |_| {})).err();
        let overflow = error.as_ref().and_then(crate::llm::window::Overflow::read);
        assert_eq!(overflow.and_then(|o| o.window), Some(2048));
        assert_eq!(overflow.and_then(|o| o.requested), Some(2300));
    }

    #[test]
    fn an_abort_a_lost_worker_and_a_garbled_reply_are_errors_that_say_so() {
        let aborted = model(vec![json!({"type": "error", "id": 1, "kind": "aborted"})]);
        assert_eq!(
            block_on(aborted.chat(&request(), &mut |_| {})).err(),
            Some(LlmError::Aborted)
        );
        let lost = model(vec![
            json!({"type": "delta", "id": 1, "delta": {"type": "text", "text": "It"}}),
        ]);
        assert!(matches!(
            block_on(lost.chat(&request(), &mut |_| {})),
            Err(LlmError::Incomplete(_))
        ));
        let garbled = model(vec![
            json!({"type": "done", "id": 1, "response": {"text": 3}}),
        ]);
        assert!(matches!(
            block_on(garbled.chat(&request(), &mut |_| {})),
            Err(LlmError::Malformed(_))
        ));
    }

    #[test]
    fn the_backend_is_auto_unless_set_and_reads_and_writes_its_word() {
        let settings: LocalSettings = serde_json::from_value(json!({"url": "m.gguf"}))
            .unwrap_or_else(|e| unreachable!("{e}"));
        assert_eq!(settings.backend, LocalBackend::Auto);
        assert_eq!(
            serde_json::to_value(&settings).ok(),
            Some(json!({"url": "m.gguf"})),
            "auto is not written"
        );
        for backend in LocalBackend::ALL {
            let mut forced = LocalSettings::new("m.gguf");
            forced.backend = backend;
            let written = serde_json::to_value(&forced).unwrap_or_default();
            let read: LocalSettings =
                serde_json::from_value(written.clone()).unwrap_or_else(|e| unreachable!("{e}"));
            assert_eq!(read, forced, "{written}");
            assert_eq!(LocalBackend::from_word(backend.word()), Some(backend));
        }
        let webgpu = serde_json::to_value(LocalBackend::WebGpu).unwrap_or_default();
        assert_eq!(webgpu, "webgpu");
        assert_eq!(LocalBackend::from_word("gpu"), None);
    }

    #[test]
    fn settings_need_an_address_and_a_sane_window() {
        assert!(LocalSettings::new(" ").problem().is_some());
        assert_eq!(LocalSettings::new("m.gguf").problem(), None);
        assert_eq!(
            LocalSettings::new("m.gguf").context(),
            DEFAULT_LOCAL_CONTEXT
        );
        let mut huge = LocalSettings::new("m.gguf");
        huge.context_tokens = Some(10);
        assert!(huge.problem().is_some_and(|p| p.contains("256")));
    }

    #[test]
    fn a_sha256_is_64_hex_digits_or_the_settings_say_what_is_wrong() {
        let mut settings = LocalSettings::new("m.gguf");
        settings.sha256 = Some("ab".repeat(32));
        assert_eq!(settings.problem(), None);
        settings.sha256 = Some("AB".repeat(32));
        assert_eq!(settings.problem(), None);
        for wrong in [
            "ab".repeat(31),
            "zz".repeat(32),
            format!("{} ", "ab".repeat(32)),
        ] {
            settings.sha256 = Some(wrong.clone());
            let problem = settings.problem().unwrap_or_default();
            assert!(
                problem.contains("SHA-256") && problem.contains(&wrong),
                "{problem}"
            );
        }
    }
}
