//! The base layer: pure building blocks every other layer may use, with no agent
//! concept in them — the clock and HTTP seams, retries with backoff, the JSON
//! discipline for model output, markdown parsing, secret detection and one compiled
//! sort.

pub mod clock;
pub mod http;
pub mod json;
#[cfg(feature = "markdown")]
pub mod markdown;
pub mod memo;
pub mod retry;
pub mod secret;
pub mod site;
pub mod small_map;
pub mod sort;
pub mod text;
pub mod words;
