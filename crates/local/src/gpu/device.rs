//! `device`: the WebGPU device as `js/gpu.js` holds it, bound for Rust. Every call that
//! can fail is `catch`: a JS exception (no adapter, a lost or closed device, a
//! validation error) comes back as an `Err`, never a trap.

use wasm_bindgen::prelude::*;

#[wasm_bindgen(module = "/js/gpu.js")]
extern "C" {
    /// A device: its buffers, pipelines and the dispatches recorded but not yet run.
    pub type Device;

    /// A `GPUBuffer`.
    pub type Buffer;

    #[wasm_bindgen(catch, js_name = open)]
    pub async fn open_device() -> Result<JsValue, JsValue>;

    /// The adapter, as JSON: vendor, architecture, device, description, fallback.
    #[wasm_bindgen(method)]
    pub fn info(this: &Device) -> String;

    #[wasm_bindgen(method, catch)]
    pub fn buffer(this: &Device, bytes: f64) -> Result<Buffer, JsValue>;

    #[wasm_bindgen(method, catch)]
    pub fn write(this: &Device, buffer: &Buffer, offset: f64, data: &[u8]) -> Result<(), JsValue>;

    #[wasm_bindgen(method, catch)]
    pub fn copy(
        this: &Device,
        from: &Buffer,
        from_offset: f64,
        to: &Buffer,
        to_offset: f64,
        bytes: f64,
    ) -> Result<(), JsValue>;

    #[wasm_bindgen(method, catch)]
    #[allow(clippy::too_many_arguments)]
    pub fn run(
        this: &Device,
        key: &str,
        code: &str,
        buffers: js_sys::Array,
        params: &[u32],
        x: u32,
        y: u32,
        z: u32,
    ) -> Result<(), JsValue>;

    #[wasm_bindgen(method, catch)]
    pub async fn read(
        this: &Device,
        buffer: &Buffer,
        offset: f64,
        bytes: f64,
    ) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method, catch)]
    pub fn guard(this: &Device) -> Result<(), JsValue>;

    #[wasm_bindgen(method, catch)]
    pub async fn unguard(this: &Device) -> Result<JsValue, JsValue>;

    #[wasm_bindgen(method)]
    pub fn release(this: &Device, buffer: &Buffer);

    #[wasm_bindgen(method)]
    pub fn close(this: &Device);
}

/// A JS exception's message.
pub fn message(e: &JsValue) -> String {
    e.dyn_ref::<js_sys::Error>()
        .map(|e| String::from(e.message()))
        .or_else(|| e.as_string())
        .unwrap_or_else(|| format!("{e:?}"))
}
