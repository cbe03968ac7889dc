//! The OpenAI-compatible chat-completions client: settings, the wire format, stream
//! assembly, and the client that sends requests over the `Http` seam.

mod client;
mod completion;
mod models;
mod proxy;
mod refusal;
pub mod sse;
mod stream;
mod think;
mod wire;

pub use client::OpenAiClient;
pub use completion::parse_completion;
pub use models::model_ids;
pub(crate) use proxy::is_web_url;
pub use proxy::{ModelSettings, SettingsError, temperature_text};
pub(crate) use refusal::out_of_quota;
pub use stream::ChatStream;
pub use think::ThinkSplitter;
pub use wire::request_body;
