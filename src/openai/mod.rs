//! The OpenAI-compatible chat-completions client: the wire format, streaming, and
//! (over the `Http` seam) the requests themselves.

mod stream;
mod think;

pub use stream::ChatStream;
pub use think::ThinkSplitter;
