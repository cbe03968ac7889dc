//! [`OpenAiClient`]: streaming chat completions through an OpenAI-compatible proxy,
//! over the [`Http`] seam, with timeouts and bounded retries.
//!
//! Retried: connection failures, timeouts waiting for the response and retryable
//! statuses (see `retry`), with backoff and jitter, honouring the server's requested
//! wait (`Retry-After`, or Gemini's `RetryInfo` in the body) — but never once any
//! output has streamed, never a 400/401, never a refusal of the tools or a 429 from
//! an account with nothing left to spend, and never a response that began and then
//! went silent: a proxy that sent its headers and nothing more within the timeout
//! would make the person wait that long again on every attempt, so they get the
//! error at once (and a Retry of their own). Aborting is dropping the future: the
//! `Http` implementation cancels the request.

use std::cell::Cell;
use std::future::Future;
use std::rc::Rc;

use futures::StreamExt;
use futures::future::LocalBoxFuture;

use super::completion::parse_completion;
use super::models::{info_urls, window_in};
use super::proxy::{ModelSettings, SettingsError};
use super::refusal::{body_wait_ms, out_of_quota, read_refusal};
use super::stream::{ChatStream, MAX_ANSWER_BYTES, too_large};
use super::wire::request_body;
use crate::base::clock::{Clock, within};
use crate::base::http::{Http, HttpError, HttpRequest, HttpResponse};
use crate::base::retry::{RetryPolicy, is_retryable_status, server_wait_ms};
use crate::llm::window::{
    ContextWindow, DEFAULT_CONTEXT_TOKENS, Overflow, WindowSource, estimate_request,
};
use crate::llm::{ChatRequest, ChatResponse, DeltaSink, Llm, LlmError, replay_as_deltas};

/// How long asking the server for its window may take before the default stands.
const ASK_WINDOW_MS: u64 = 5_000;

/// A chat model behind an OpenAI-compatible proxy.
pub struct OpenAiClient {
    settings: ModelSettings,
    http: Rc<dyn Http>,
    clock: Rc<dyn Clock>,
    random: Box<dyn Fn() -> f64>,
    retry: RetryPolicy,
    /// The window the server named (asked, or in a refusal), with the estimate's
    /// scale a refusal taught.
    learned: Cell<Option<ContextWindow>>,
    /// The server was asked for its window (once per client).
    asked: Cell<bool>,
}

/// A failed attempt, and whether (with what server-requested wait) to try again.
struct Failure {
    error: LlmError,
    retry: Option<Option<u64>>,
}

impl Failure {
    fn fatal(error: LlmError) -> Self {
        Self { error, retry: None }
    }

    fn retryable(error: LlmError, server_wait: Option<u64>) -> Self {
        Self {
            error,
            retry: Some(server_wait),
        }
    }

    /// Retryable only while nothing has been delivered to the caller.
    fn unless_output(error: LlmError, had_output: bool) -> Self {
        if had_output {
            Self::fatal(error)
        } else {
            Self::retryable(error, None)
        }
    }
}

impl OpenAiClient {
    /// A client for the proxy in `settings`, which are validated first. `random`
    /// returns uniform numbers in `[0, 1)` for retry jitter.
    pub fn new(
        settings: ModelSettings,
        http: Rc<dyn Http>,
        clock: Rc<dyn Clock>,
        random: Box<dyn Fn() -> f64>,
    ) -> Result<Self, SettingsError> {
        settings.validate()?;
        Ok(Self {
            settings,
            http,
            clock,
            random,
            retry: RetryPolicy::default(),
            learned: Cell::new(None),
            asked: Cell::new(false),
        })
    }

    pub fn with_retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    async fn chat_with_retries(
        &self,
        request: &ChatRequest,
        sink: &mut DeltaSink<'_>,
    ) -> Result<ChatResponse, LlmError> {
        let body = request_body(&self.settings, request).to_string();
        let mut retries = 0;
        loop {
            let failure = match self.attempt(&body, sink).await {
                Ok(response) => return Ok(response),
                Err(failure) => failure,
            };
            let Some(server_wait) = failure.retry else {
                self.learn_from(&failure.error, request);
                return Err(failure.error);
            };
            let Some(wait) = self.retry.delay_ms(retries, (self.random)(), server_wait) else {
                return Err(failure.error);
            };
            self.clock.sleep(wait).await;
            retries += 1;
        }
    }

    async fn attempt(&self, body: &str, sink: &mut DeltaSink<'_>) -> Result<ChatResponse, Failure> {
        let request = HttpRequest {
            method: "POST",
            url: self.settings.endpoint(),
            headers: self.headers(),
            body: Some(body.to_owned()),
        };
        let response = match self.within_timeout(self.http.send(request)).await {
            None => return Err(Failure::retryable(self.timeout(), None)),
            Some(Err(HttpError::Network(why))) => {
                return Err(Failure::retryable(LlmError::Unreachable(why), None));
            }
            Some(Err(HttpError::Invalid(why))) => {
                return Err(Failure::fatal(LlmError::Unreachable(why)));
            }
            Some(Ok(response)) => response,
        };
        if !(200..300).contains(&response.status) {
            return Err(self.status_failure(response).await);
        }
        let is_json = response
            .header("content-type")
            .is_some_and(|t| t.starts_with("application/json"));
        if is_json {
            return self.read_whole(response, sink).await;
        }
        self.read_stream(response, sink).await
    }

    /// A server that answered with one JSON completion instead of a stream.
    async fn read_whole(
        &self,
        response: HttpResponse,
        sink: &mut DeltaSink<'_>,
    ) -> Result<ChatResponse, Failure> {
        let mut body = response.body;
        let mut bytes = Vec::new();
        loop {
            match self.within_timeout(body.next()).await {
                None => return Err(Failure::fatal(self.timeout())),
                Some(None) => break,
                Some(Some(Err(error))) => {
                    return Err(Failure::retryable(
                        LlmError::Unreachable(error.to_string()),
                        None,
                    ));
                }
                Some(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
            }
            if bytes.len() > MAX_ANSWER_BYTES {
                return Err(Failure::fatal(too_large()));
            }
        }
        let response = parse_completion(&bytes).map_err(Failure::fatal)?;
        replay_as_deltas(&response, sink);
        Ok(response)
    }

    async fn read_stream(
        &self,
        response: HttpResponse,
        sink: &mut DeltaSink<'_>,
    ) -> Result<ChatResponse, Failure> {
        let mut body = response.body;
        let mut stream = ChatStream::new();
        loop {
            let had_output = stream.has_output();
            match self.within_timeout(body.next()).await {
                None => return Err(Failure::fatal(self.timeout())),
                Some(None) => break,
                Some(Some(Err(error))) => {
                    return Err(Failure::unless_output(
                        LlmError::Unreachable(error.to_string()),
                        had_output,
                    ));
                }
                Some(Some(Ok(bytes))) => {
                    if let Err(error) = stream.feed(&bytes, sink) {
                        let had_output = stream.has_output();
                        return Err(match error {
                            LlmError::Provider(_) => Failure::unless_output(error, had_output),
                            _ => Failure::fatal(error),
                        });
                    }
                }
            }
        }
        let had_output = stream.has_output();
        stream.finish(sink).map_err(|error| match error {
            LlmError::Incomplete(_) => Failure::unless_output(error, had_output),
            _ => Failure::fatal(error),
        })
    }

    /// Turns an error status into a failure, reading the server's message and wait
    /// (its headers', else its body's).
    async fn status_failure(&self, response: HttpResponse) -> Failure {
        let status = response.status;
        let wait = server_wait_ms(
            response.header("retry-after-ms"),
            response.header("retry-after"),
            self.clock.now().epoch_ms,
        );
        let text = self.read_text(response).await;
        let wait = wait.or_else(|| body_wait_ms(&text));
        let error = read_refusal(status, &text);
        // Neither a model without tools nor an empty account answers otherwise later;
        // any other 429 (Gemini's RESOURCE_EXHAUSTED too) is a rate limit, waited out.
        let hopeless = match &error {
            LlmError::NoTools(_) => true,
            LlmError::Status { message, .. } => status == 429 && out_of_quota(message),
            _ => false,
        };
        if is_retryable_status(status) && !hopeless {
            Failure::retryable(error, wait)
        } else {
            Failure::fatal(error)
        }
    }

    /// The body as text, as much as arrives within the timeout (at most 64 KB).
    async fn read_text(&self, response: HttpResponse) -> String {
        let mut body = response.body;
        let mut bytes = Vec::new();
        while bytes.len() < 65_536 {
            match self.within_timeout(body.next()).await {
                Some(Some(Ok(chunk))) => bytes.extend_from_slice(&chunk),
                _ => break,
            }
        }
        String::from_utf8_lossy(&bytes).into_owned()
    }

    fn headers(&self) -> Vec<(String, String)> {
        let mut headers = vec![
            ("content-type".to_owned(), "application/json".to_owned()),
            ("accept".to_owned(), "text/event-stream".to_owned()),
        ];
        headers.extend(self.settings.extra_header.clone());
        headers
    }

    fn timeout(&self) -> LlmError {
        LlmError::Timeout {
            after_ms: self.settings.timeout_ms,
        }
    }

    /// The window as far as this client knows: learned from the server, else
    /// configured, else the default.
    fn known_window(&self) -> ContextWindow {
        if let Some(window) = self.learned.get() {
            return window;
        }
        let answer = self.settings.max_tokens;
        match self.settings.context_tokens {
            Some(tokens) => ContextWindow::new(tokens, answer, WindowSource::Configured),
            None => ContextWindow::new(DEFAULT_CONTEXT_TOKENS, answer, WindowSource::Default),
        }
    }

    /// The window, asking the server first (once) when none is configured.
    async fn window(&self) -> ContextWindow {
        if self.settings.context_tokens.is_none()
            && !self.asked.replace(true)
            && let Some(tokens) = self.ask_window().await
            && self.learned.get().is_none()
        {
            let window = ContextWindow::new(tokens, self.settings.max_tokens, WindowSource::Server);
            self.learned.set(Some(window));
        }
        self.known_window()
    }

    /// The window the server's model list (or LiteLLM's model info) names, if any.
    async fn ask_window(&self) -> Option<u32> {
        for url in info_urls(&self.settings.base_url) {
            let request = HttpRequest {
                method: "GET",
                url,
                headers: self.settings.extra_header.clone().into_iter().collect(),
                body: None,
            };
            let sent = within(&*self.clock, ASK_WINDOW_MS, self.http.send(request)).await;
            let Some(Ok(response)) = sent else {
                continue;
            };
            if !(200..300).contains(&response.status) {
                continue;
            }
            let text = self.read_text(response).await;
            let answer = serde_json::from_str(&text).ok();
            if let Some(tokens) = answer.and_then(|a| window_in(&a, &self.settings.model)) {
                return Some(tokens);
            }
        }
        None
    }

    /// A refusal for length teaches this client the model's window and how it counts.
    fn learn_from(&self, error: &LlmError, request: &ChatRequest) {
        if let Some(overflow) = Overflow::read(error) {
            let mut window = self.known_window();
            window.learn(&overflow, estimate_request(request));
            self.learned.set(Some(window));
        }
    }

    /// `work`'s output, or `None` if the timeout passes first (dropping `work`).
    async fn within_timeout<T>(&self, work: impl Future<Output = T>) -> Option<T> {
        within(&*self.clock, self.settings.timeout_ms, work).await
    }
}

impl Llm for OpenAiClient {
    fn model(&self) -> Option<&str> {
        Some(&self.settings.model)
    }

    fn chat<'a>(
        &'a self,
        request: &'a ChatRequest,
        sink: &'a mut DeltaSink<'_>,
    ) -> LocalBoxFuture<'a, Result<ChatResponse, LlmError>> {
        Box::pin(self.chat_with_retries(request, sink))
    }

    fn context_window(&self) -> LocalBoxFuture<'_, Option<ContextWindow>> {
        Box::pin(async { Some(self.window().await) })
    }
}
