//! The Web Worker's side: the engine behind `wasm-bindgen` exports that the worker's
//! script (`js/local-worker.js`) drives. The script owns the message loop, the weights'
//! download and cache; this module owns the model and the backend it runs on, chosen
//! at load ([`crate::generate::backend`] decides, this module asks WebGPU). Every
//! method returns JSON text so the script needs no knowledge of the shapes beyond
//! `type`.

use std::cell::RefCell;

use wasm_bindgen::prelude::*;

use crate::generate::backend::{self, Chosen, Family, Preference, Probe};
use crate::generate::{Engine, Generation, PREFILL_CHUNK};
use crate::llama::team::{Helpers, Place, Shard, Sizes};

/// One loaded model and the request it is answering.
#[wasm_bindgen]
pub struct Worker {
    /// Empty while a step runs (the script awaits each before the next).
    state: RefCell<Option<State>>,
    chosen: Chosen,
}

struct State {
    engine: Engine,
    current: Option<Generation>,
}

#[wasm_bindgen]
impl Worker {
    /// Loads a GGUF file with a window of `context` tokens (at most the model's own),
    /// on the backend `backend` asks for (`"auto"`, `"webgpu"` or `"cpu"`).
    pub async fn load(bytes: Vec<u8>, context: u32, backend: String) -> Result<Worker, JsError> {
        let preference = Preference::parse(&backend).map_err(|e| JsError::new(&e))?;
        let context = usize::try_from(context).unwrap_or(usize::MAX);
        let mut engine = Engine::load(bytes, context).map_err(|e| JsError::new(&e))?;
        let family = Family::of(engine.model().config().arch);
        let chosen = if backend::ask_gpu(preference, family) {
            let tried = on_gpu::open(&engine).await;
            let probe = match &tried {
                Ok((_, adapter)) => Probe::Loaded(adapter),
                Err(on_gpu::Tried::Unavailable(why)) => Probe::Unavailable(why),
                Err(on_gpu::Tried::Failed(why)) => Probe::Failed(why),
            };
            let chosen = backend::settle(preference, family, probe);
            if let (Ok(_), Ok((forward, _))) = (&chosen, tried) {
                engine.run_on(forward);
            }
            chosen
        } else {
            backend::settle(preference, family, Probe::NotAsked)
        };
        let chosen = chosen.map_err(|e| JsError::new(&e))?;
        Ok(Worker {
            state: RefCell::new(Some(State {
                engine,
                current: None,
            })),
            chosen,
        })
    }

    /// The loaded model and where it runs: `{"context": n, "vocab": n, "backend":
    /// "webgpu" | "cpu", "adapter"?: name, "note"?: why auto runs on the CPU}`.
    pub fn info(&self) -> String {
        let state = self.state.borrow();
        let engine = state.as_ref().map(|s| &s.engine);
        let mut info = serde_json::json!({
            "context": engine.map_or(0, Engine::context),
            "vocab": engine.map_or(0, |e| e.tokenizer.vocab_size()),
            "backend": self.chosen.backend.name(),
        });
        if let Some(adapter) = &self.chosen.adapter {
            info["adapter"] = adapter.as_str().into();
        }
        if let Some(note) = &self.chosen.note {
            info["note"] = note.as_str().into();
        }
        info.to_string()
    }

    /// Begins a request (Familiar's `ChatRequest` JSON), dropping any other.
    pub fn start(&self, request: &str) -> Result<(), JsError> {
        let mut state = self.state.borrow_mut();
        let state = state.as_mut().ok_or_else(busy)?;
        state.current = None;
        let generation = state
            .engine
            .start(request)
            .map_err(|e| JsError::new(&e.to_string()))?;
        state.current = Some(generation);
        Ok(())
    }

    /// Does one piece of the current request's work; returns its events as a JSON
    /// array (empty while the prompt is read), the last being `done`. On WebGPU it
    /// waits for the device's logits; on the CPU it has its answer at once.
    pub async fn step(&self) -> Result<String, JsError> {
        let taken = self.state.borrow_mut().take();
        let Some(mut state) = taken else {
            return Err(busy());
        };
        let events = match state.current.as_mut() {
            Some(generation) => generation.advance(&mut state.engine).await,
            None => Ok(Vec::new()),
        };
        if events.is_err() || state.current.as_ref().is_some_and(Generation::is_finished) {
            state.current = None;
        }
        *self.state.borrow_mut() = Some(state);
        let events = events.map_err(|e| JsError::new(&e.to_string()))?;
        Ok(serde_json::to_string(&events).unwrap_or_else(|_| "[]".into()))
    }

    /// What helper `part` (of `parts`, from 1) holds (`llama::team`): its share of
    /// each matrix as six numbers, `job, kind, rows, cols, start, end`, the last two a
    /// byte range of the file this worker loaded.
    pub fn team_places(&self, part: u32, parts: u32) -> Vec<u32> {
        let state = self.state.borrow();
        let Some(model) = state.as_ref().map(|s| s.engine.model()) else {
            return Vec::new();
        };
        let size = |n: u32| usize::try_from(n).unwrap_or(1);
        let word = |n: usize| u32::try_from(n).unwrap_or(u32::MAX);
        let places = model.places(size(part), size(parts).max(1));
        places
            .iter()
            .flat_map(|p| {
                let Place { job, kind, .. } = *p;
                [
                    job,
                    kind,
                    word(p.rows),
                    word(p.cols),
                    word(p.start),
                    word(p.end),
                ]
            })
            .collect()
    }

    /// The floats the helpers' shared buffers hold, `[input, output]`, when the rows
    /// are shared `parts` ways.
    pub fn team_sizes(&self, parts: u32) -> Vec<u32> {
        let state = self.state.borrow();
        let Some(model) = state.as_ref().map(|s| s.engine.model()) else {
            return vec![0, 0];
        };
        let parts = usize::try_from(parts).unwrap_or(1).max(1);
        let Sizes { input, output } = model.team_sizes(parts, PREFILL_CHUNK);
        [input, output]
            .map(|n| u32::try_from(n).unwrap_or(u32::MAX))
            .to_vec()
    }

    /// Shares the products with `helpers` threads from now on, which the script has
    /// started on [`Worker::team_places`] and reaches through
    /// `globalThis.familiarTeam`. False on WebGPU, which needs none.
    pub fn share_with(&self, helpers: u32) -> bool {
        let mut state = self.state.borrow_mut();
        let Some(state) = state.as_mut() else {
            return false;
        };
        let count = usize::try_from(helpers).unwrap_or(0);
        count > 0
            && state.engine.share_with(Box::new(Threads {
                count,
                failed: None,
            }))
    }

    /// How many threads the forward pass runs on (fewer than shared with once a
    /// helper failed).
    pub fn threads(&self) -> u32 {
        let state = self.state.borrow();
        let threads = state.as_ref().map_or(1, |s| s.engine.threads());
        u32::try_from(threads).unwrap_or(1)
    }

    /// Stops the current request; the cache keeps what was read, for the next.
    pub fn abort(&self) {
        if let Some(state) = self.state.borrow_mut().as_mut() {
            state.current = None;
        }
    }
}

/// A helper thread's share of the model's rows (`llama::team`), in another worker.
#[wasm_bindgen]
#[derive(Default)]
pub struct Helper {
    shard: Shard,
}

#[wasm_bindgen]
impl Helper {
    #[wasm_bindgen(constructor)]
    pub fn new() -> Helper {
        Helper::default()
    }

    /// One matrix's share: `rows` of `cols` in ggml type `kind`, for `job`.
    pub fn add(
        &mut self,
        job: u32,
        kind: u32,
        rows: u32,
        cols: u32,
        bytes: Vec<u8>,
    ) -> Result<(), JsError> {
        let size = |n: u32| usize::try_from(n).unwrap_or(usize::MAX);
        self.shard
            .add(job, kind, size(rows), size(cols), bytes)
            .map_err(|e| JsError::new(&e.to_string()))
    }

    /// This share of `job`'s products of `x`, one matrix's after another's.
    pub fn run(&self, job: u32, x: &[f32]) -> Result<Vec<f32>, JsError> {
        let mut out = vec![0f32; self.shard.output_len(job, x.len())];
        self.shard
            .run(job, x, &mut out)
            .map_err(|e| JsError::new(&e.to_string()))?;
        Ok(out)
    }
}

/// The helpers as the worker's script reaches them: `globalThis.familiarTeam`, which
/// posts a job into shared memory and waits under `Atomics` (js/local-team.js).
struct Threads {
    count: usize,
    /// Why the last post failed, said at its collect (a throw would unwind through
    /// the engine and leave it taken).
    failed: Option<String>,
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = familiarTeam, js_name = post, catch)]
    fn team_post(job: u32, x: &[f32]) -> Result<(), JsValue>;
    #[wasm_bindgen(js_namespace = familiarTeam, js_name = collect, catch)]
    fn team_collect(out: &mut [f32]) -> Result<(), JsValue>;
}

impl Helpers for Threads {
    fn count(&self) -> usize {
        self.count
    }

    fn post(&mut self, job: u32, x: &[f32]) {
        self.failed = team_post(job, x).err().map(said);
    }

    fn collect(&mut self, out: &mut [f32]) -> Result<(), String> {
        if let Some(why) = self.failed.take() {
            return Err(why);
        }
        team_collect(out).map_err(said)
    }
}

/// A JS exception's message.
fn said(e: JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map_or_else(|| format!("{e:?}"), |e| String::from(e.message()))
}

fn busy() -> JsError {
    JsError::new("the local model is still working on the last step")
}

/// The model on WebGPU: a device on the adapter `navigator.gpu` gives, and the
/// weights and cache on it.
mod on_gpu {
    use crate::generate::Engine;
    use crate::generate::forward::Forward;

    /// Why the model is not on the GPU.
    pub enum Tried {
        /// No adapter or device here.
        Unavailable(String),
        /// An adapter, but the model did not load on it.
        #[cfg_attr(not(feature = "gpu"), allow(dead_code))]
        Failed(String),
    }

    /// The engine's model on a new device, and the adapter's name.
    #[cfg(feature = "gpu")]
    pub async fn open(engine: &Engine) -> Result<(Forward, String), Tried> {
        use crate::gpu::{Gpu, GpuError};
        use crate::llama::{GpuSession, GpuSessionError};
        let gpu = Gpu::open().await.map_err(|e| match e {
            GpuError::Unavailable(why) => Tried::Unavailable(why),
            other => Tried::Unavailable(other.to_string()),
        })?;
        let adapter = name(&gpu.adapter());
        match GpuSession::load(gpu, engine.shared_model()).await {
            Ok(session) => Ok((Forward::Gpu(session), adapter)),
            Err(GpuSessionError::Gpu(e)) => Err(Tried::Failed(e.to_string())),
            Err(GpuSessionError::Model(e)) => Err(Tried::Failed(e.to_string())),
        }
    }

    /// A build without the GPU pass has no WebGPU to offer.
    #[cfg(not(feature = "gpu"))]
    pub async fn open(_engine: &Engine) -> Result<(Forward, String), Tried> {
        Err(Tried::Unavailable(
            "this build of the worker has no WebGPU pass (cargo feature gpu)".into(),
        ))
    }

    /// The adapter as a person reads it, from [`crate::gpu::Gpu::adapter`]'s JSON: its
    /// description, else its vendor and architecture.
    #[cfg(feature = "gpu")]
    fn name(info: &str) -> String {
        let info: serde_json::Value = serde_json::from_str(info).unwrap_or_default();
        let field = |key: &str| info.get(key).and_then(|v| v.as_str()).unwrap_or("").trim();
        let named = match field("description") {
            "" => format!("{} {}", field("vendor"), field("architecture")),
            description => description.to_owned(),
        };
        match named.trim() {
            "" => "a WebGPU adapter".into(),
            named => named.to_owned(),
        }
    }
}
