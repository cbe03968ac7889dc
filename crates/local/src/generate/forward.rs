//! `forward`: the seam between a request's phases and the forward pass, so one
//! generation loop drives either backend: the CPU's [`Session`] or, on wasm with
//! feature `gpu`, WebGPU's `GpuSession`, whose logits come back from the device
//! asynchronously. The methods are `async` for the GPU's sake; on the CPU they finish
//! at their first poll, so [`now`] runs them where nothing can wait (native callers,
//! the benches) at the CPU's own speed.

use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
use crate::llama::GpuSession;
use crate::llama::{Model, Session};

use super::GenerateError;
use super::backend::Backend;

/// The forward pass and the KV cache it keeps, on one backend.
pub enum Forward {
    Cpu(Session),
    #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
    Gpu(GpuSession),
}

impl Forward {
    /// Which backend this is.
    pub fn backend(&self) -> Backend {
        match self {
            Forward::Cpu(_) => Backend::Cpu,
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(_) => Backend::WebGpu,
        }
    }

    pub fn model(&self) -> &Model {
        match self {
            Forward::Cpu(s) => s.model(),
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(s) => s.model(),
        }
    }

    /// The tokens the cache holds.
    pub fn tokens(&self) -> &[u32] {
        match self {
            Forward::Cpu(s) => s.tokens(),
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(s) => s.tokens(),
        }
    }

    /// Forgets the cache after `len` tokens.
    pub fn truncate(&mut self, len: usize) {
        match self {
            Forward::Cpu(s) => s.truncate(len),
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(s) => s.truncate(len),
        }
    }

    /// As [`Session::prefill`]: at most `chunk` more tokens of `prompt`, and its last
    /// token's logits once all of it is read.
    pub async fn prefill(
        &mut self,
        prompt: &[u32],
        chunk: usize,
    ) -> Result<Option<Vec<f32>>, GenerateError> {
        match self {
            Forward::Cpu(s) => Ok(s.prefill(prompt, chunk)?),
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(s) => s.prefill(prompt, chunk).await.map_err(gpu_failed),
        }
    }

    /// One token more; the logits for the next.
    pub async fn step(&mut self, token: u32) -> Result<Vec<f32>, GenerateError> {
        match self {
            Forward::Cpu(s) => Ok(s.step(token)?),
            #[cfg(all(target_arch = "wasm32", feature = "gpu"))]
            Forward::Gpu(s) => s.step(token).await.map_err(gpu_failed),
        }
    }
}

#[cfg(all(target_arch = "wasm32", feature = "gpu"))]
fn gpu_failed(e: crate::llama::GpuSessionError) -> GenerateError {
    GenerateError::Model(e.to_string())
}

/// The value of a future that needs no waiting (the CPU's forward pass and all that
/// awaits only it), polled once; `None` if it would have waited.
pub fn now<F: Future>(future: F) -> Option<F::Output> {
    let mut context = Context::from_waker(Waker::noop());
    match pin!(future).poll(&mut context) {
        Poll::Ready(value) => Some(value),
        Poll::Pending => None,
    }
}
