//! The Web Worker's side: the engine behind `wasm-bindgen` exports that the worker's
//! script (`js/local-worker.js`) drives. The script owns the message loop, the weights'
//! download and cache; this module owns the model. Every method returns JSON text so
//! the script needs no knowledge of the shapes beyond `type`.

use wasm_bindgen::prelude::*;

use crate::generate::{Engine, Generation};

/// One loaded model and the request it is answering.
#[wasm_bindgen]
pub struct Worker {
    engine: Engine,
    current: Option<Generation>,
}

#[wasm_bindgen]
impl Worker {
    /// Loads a GGUF file with a window of `context` tokens (at most the model's own).
    #[wasm_bindgen(constructor)]
    pub fn new(bytes: Vec<u8>, context: u32) -> Result<Worker, JsError> {
        let context = usize::try_from(context).unwrap_or(usize::MAX);
        let engine = Engine::load(bytes, context).map_err(|e| JsError::new(&e))?;
        Ok(Worker {
            engine,
            current: None,
        })
    }

    /// The loaded model: `{"context": n, "vocab": n}`.
    pub fn info(&self) -> String {
        serde_json::json!({
            "context": self.engine.context(),
            "vocab": self.engine.tokenizer.vocab_size(),
        })
        .to_string()
    }

    /// Begins a request (Familiar's `ChatRequest` JSON), dropping any other.
    pub fn start(&mut self, request: &str) -> Result<(), JsError> {
        self.current = None;
        let generation = self
            .engine
            .start(request)
            .map_err(|e| JsError::new(&e.to_string()))?;
        self.current = Some(generation);
        Ok(())
    }

    /// Does one piece of the current request's work; returns its events as a JSON
    /// array (empty while the prompt is read), the last being `done`.
    pub fn step(&mut self) -> Result<String, JsError> {
        let Some(generation) = self.current.as_mut() else {
            return Ok("[]".into());
        };
        let events = generation
            .next(&mut self.engine)
            .map_err(|e| JsError::new(&e.to_string()));
        if events.is_err() || generation.is_finished() {
            self.current = None;
        }
        Ok(serde_json::to_string(&events?).unwrap_or_else(|_| "[]".into()))
    }

    /// Stops the current request; the cache keeps what was read, for the next.
    pub fn abort(&mut self) {
        self.current = None;
    }
}
