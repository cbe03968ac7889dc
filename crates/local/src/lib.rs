//! Familiar's local model: a GGUF model of the llama family (Llama 2/3.x, SmolLM2,
//! Qwen2/2.5, Qwen3, Gemma 2 and 3, Phi-3) run on the CPU, built to run inside a Web
//! Worker (its own wasm, apart from the page's builds and their byte budgets) and
//! natively for tests and benchmarks.
//!
//! The pieces, in the order a request meets them:
//! - [`gguf`]: the file: metadata and tensors, read in place (and written, for tests);
//! - [`tokenizer`]: byte-level BPE from the file's vocabulary and merges, or
//!   SentencePiece from its pieces and scores;
//! - [`template`]: the chat template the file names, rendered for a transcript;
//! - [`quant`]: the weight formats (F32, F16, Q8_0, Q4_0, Q4_1, Q4_K, Q5_K, Q6_K) and
//!   their dot products;
//! - [`llama`]: the forward pass, with a KV cache that keeps a shared prompt prefix;
//! - `gpu` (wasm, feature `gpu`): the forward pass's kernels on WebGPU;
//! - [`constraint`]: a JSON-Schema-subset grammar over the vocabulary, so a tool call
//!   always parses and validates;
//! - [`shortlist`]: which tools the model may choose, by the latest message's words;
//! - [`grounding`]: a chosen tool's arguments held to what the conversation offers;
//! - [`sample`]: picking the next token under the constraint;
//! - [`generate`]: one chat request from prompt to finished answer, a token at a time;
//! - `task_set` (native only): requests with the calls a person expects, and their score;
//! - `worker` (wasm only): the Web Worker's entry points.

pub mod constraint;
pub mod generate;
pub mod gguf;
#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
pub mod gpu;
pub mod grounding;
pub mod llama;
pub mod quant;
pub mod sample;
pub mod shortlist;
#[cfg(not(target_arch = "wasm32"))]
pub mod task_set;
pub mod template;
pub mod tokenizer;
#[cfg(target_arch = "wasm32")]
pub mod worker;

#[cfg(test)]
mod testing;
