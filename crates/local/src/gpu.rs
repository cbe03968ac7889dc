//! The forward pass's kernels on WebGPU (issue 44): weight products reading the GGUF
//! block layouts as they are in the file (the tensor's bytes uploaded once, each block
//! decoded inside the kernel), RMSNorm, RoPE, attention against a KV cache, the SwiGLU
//! gate, biases and the residual add. The CPU path ([`crate::quant`],
//! [`crate::llama::ops`]) stays the default; this one is used only where
//! `navigator.gpu` gives an adapter.
//!
//! Activations stay f32 here, where the CPU's products quantize them to 8 bits as
//! ggml's CPU backend does: the two agree to the activations' rounding (a few tenths of
//! a percent of a product's magnitude), and the GPU's f32 sums to the CPU's decoded
//! f32 weights far closer (the equality tests, `tests/gpu.rs`, state both bounds).
//!
//! The parts: [`device`] binds `js/gpu.js`, which owns the `GPUDevice`, its buffers and
//! pipelines; [`kernels`] holds the WGSL (`gpu/wgsl/`). This module checks every
//! shape before it dispatches, so a wrong size is a [`GpuError`], and a missing
//! adapter, a lost device or a validation error is one too — never a panic.
//!
//! Work is recorded and runs when something is read back ([`Gpu::read`]), so a
//! forward pass is one submission and one read of its logits.

mod device;
mod kernels;

use crate::gguf::TensorKind;
use crate::llama::ops::Attention;
use crate::quant;
use device::{Buffer, Device};
use std::fmt;
use wasm_bindgen::{JsCast, JsValue};

/// Why the GPU path cannot run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GpuError {
    /// No WebGPU here: no `navigator.gpu`, or no adapter (the CPU path runs instead).
    Unavailable(String),
    /// The device refused or lost the work: lost, closed, or a validation error.
    Device(String),
    /// Operands that do not fit together.
    Shape(String),
}

impl fmt::Display for GpuError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GpuError::Unavailable(why) => write!(f, "no WebGPU: {why}"),
            GpuError::Device(why) => write!(f, "WebGPU: {why}"),
            GpuError::Shape(why) => write!(f, "GPU shape mismatch: {why}"),
        }
    }
}

impl std::error::Error for GpuError {}

fn failed(e: JsValue) -> GpuError {
    GpuError::Device(device::message(&e))
}

fn shape<T>(why: String) -> Result<T, GpuError> {
    Err(GpuError::Shape(why))
}

/// f32 values on the device.
pub struct Tensor {
    buffer: Buffer,
    len: usize,
}

impl Tensor {
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// A weight matrix on the device: `rows` rows of `cols`, the file's bytes as they are.
pub struct Matrix {
    buffer: Buffer,
    kind: TensorKind,
    rows: usize,
    cols: usize,
}

/// A WebGPU device and the kernels run on it.
pub struct Gpu {
    device: Device,
}

impl Gpu {
    /// The adapter `navigator.gpu` gives and a device on it, with the adapter's own
    /// buffer limits (a model's tables pass WebGPU's default 128 MiB).
    pub async fn open() -> Result<Gpu, GpuError> {
        let device = device::open_device()
            .await
            .map_err(|e| GpuError::Unavailable(device::message(&e)))?;
        Ok(Gpu {
            device: device.unchecked_into(),
        })
    }

    /// The adapter, as JSON: `{vendor, architecture, device, description, fallback}`.
    pub fn adapter(&self) -> String {
        self.device.info()
    }

    /// Catches the device's errors from here to [`Gpu::unguard`] where they happen (an
    /// upload out of memory, a validation error), rather than some time later.
    pub fn guard(&self) -> Result<(), GpuError> {
        self.device.guard().map_err(failed)
    }

    /// Runs the work recorded and fails with the first error caught since
    /// [`Gpu::guard`]; after one, every call fails, as on a lost device.
    pub async fn unguard(&self) -> Result<(), GpuError> {
        self.device.unguard().await.map(|_| ()).map_err(failed)
    }

    /// Ends the device; every later call is a [`GpuError::Device`].
    pub fn close(&self) {
        self.device.close();
    }

    fn buffer(&self, bytes: usize) -> Result<Buffer, GpuError> {
        self.device.buffer(bytes as f64).map_err(failed)
    }

    /// A weight matrix's bytes, uploaded once.
    pub fn matrix(
        &self,
        bytes: &[u8],
        kind: TensorKind,
        rows: usize,
        cols: usize,
    ) -> Result<Matrix, GpuError> {
        let row = quant::row_bytes(kind, cols).map_err(|e| GpuError::Shape(e.0))?;
        if cols == 0 || bytes.len() != row * rows {
            return shape(format!("{} bytes as {rows}×{cols} {kind:?}", bytes.len()));
        }
        let buffer = self.buffer(bytes.len())?;
        self.device.write(&buffer, 0.0, bytes).map_err(failed)?;
        Ok(Matrix {
            buffer,
            kind,
            rows,
            cols,
        })
    }

    /// `len` zeros.
    pub fn zeros(&self, len: usize) -> Result<Tensor, GpuError> {
        let buffer = self.buffer(len * 4)?;
        Ok(Tensor { buffer, len })
    }

    /// A tensor holding `values`.
    pub fn tensor(&self, values: &[f32]) -> Result<Tensor, GpuError> {
        let t = self.zeros(values.len())?;
        self.write(&t, 0, values)?;
        Ok(t)
    }

    /// Writes `values` into `t` from element `at`, after the work recorded so far.
    pub fn write(&self, t: &Tensor, at: usize, values: &[f32]) -> Result<(), GpuError> {
        if at + values.len() > t.len {
            return shape(format!(
                "{} values at {at} of a tensor of {}",
                values.len(),
                t.len
            ));
        }
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.device
            .write(&t.buffer, (at * 4) as f64, &bytes)
            .map_err(failed)
    }

    /// Copies `len` values of `from` (from element `from_at`) into `to` at `to_at`.
    pub fn copy(
        &self,
        from: &Tensor,
        from_at: usize,
        to: &Tensor,
        to_at: usize,
        len: usize,
    ) -> Result<(), GpuError> {
        if from_at + len > from.len || to_at + len > to.len {
            return shape(format!(
                "{len} values from {from_at} of {} to {to_at} of {}",
                from.len, to.len
            ));
        }
        let b = |n: usize| (n * 4) as f64;
        self.device
            .copy(&from.buffer, b(from_at), &to.buffer, b(to_at), b(len))
            .map_err(failed)
    }

    /// Runs the work recorded so far and reads `t` back.
    pub async fn read(&self, t: &Tensor) -> Result<Vec<f32>, GpuError> {
        let bytes = self
            .device
            .read(&t.buffer, 0.0, (t.len * 4) as f64)
            .await
            .map_err(failed)?;
        let bytes = js_sys::Uint8Array::new(&bytes).to_vec();
        Ok(bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .collect())
    }

    fn run(
        &self,
        key: &str,
        code: &str,
        buffers: &[&Buffer],
        params: &[u32],
        groups: [usize; 3],
    ) -> Result<(), GpuError> {
        let list = js_sys::Array::new();
        for b in buffers {
            list.push(b);
        }
        // Uniforms in whole 16-byte rows.
        let mut params = params.to_vec();
        params.resize(params.len().div_ceil(4).max(1) * 4, 0);
        let [x, y, z] = groups.map(|g| u32::try_from(g).unwrap_or(u32::MAX));
        self.device
            .run(key, code, list, &params, x, y, z)
            .map_err(failed)
    }

    /// `out[t·rows + r] = W[r] · x[t]` for every token of `x` (`x.len() / cols` of them).
    pub fn matmul(&self, w: &Matrix, x: &Tensor, out: &Tensor) -> Result<(), GpuError> {
        let n = x.len / w.cols;
        if n == 0 || !x.len.is_multiple_of(w.cols) || out.len < n * w.rows {
            return shape(format!(
                "{} activations and {} outputs for {}×{}",
                x.len, out.len, w.rows, w.cols
            ));
        }
        let row = quant::row_bytes(w.kind, w.cols).map_err(|e| GpuError::Shape(e.0))?;
        let (key, code) = kernels::matmul(w.kind);
        let params = [w.rows, w.cols, n, row].map(|v| v as u32);
        let groups = [
            w.rows.min(kernels::ROWS_PER_Y),
            w.rows.div_ceil(kernels::ROWS_PER_Y),
            n.div_ceil(kernels::TILE),
        ];
        self.run(
            &key,
            &code,
            &[&w.buffer, &x.buffer, &out.buffer],
            &params,
            groups,
        )
    }

    /// Each row of `x` (rows of `weight.len()`) scaled to unit root-mean-square, times
    /// `weight`, into `out`.
    pub fn rms_norm(
        &self,
        x: &Tensor,
        weight: &Tensor,
        eps: f32,
        out: &Tensor,
    ) -> Result<(), GpuError> {
        let width = weight.len;
        if width == 0 || !x.len.is_multiple_of(width) || out.len < x.len {
            return shape(format!(
                "rows of {width} in {} values, out {}",
                x.len, out.len
            ));
        }
        let rows = x.len / width;
        let params = [width as u32, eps.to_bits()];
        let groups = [
            rows.min(kernels::ROWS_PER_Y),
            rows.div_ceil(kernels::ROWS_PER_Y),
            1,
        ];
        let buffers = [&x.buffer, &weight.buffer, &out.buffer];
        self.run("rms_norm", kernels::RMS_NORM, &buffers, &params, groups)
    }

    /// Rotates the first `2·half` values of every head of every row of `x` (rows of
    /// `width`, heads of `head_dim`) by `table`'s (cos, sin) pairs, `half` per row, as
    /// [`crate::llama::ops::rope_table`] computes them.
    pub fn rope(
        &self,
        x: &Tensor,
        width: usize,
        head_dim: usize,
        half: usize,
        neox: bool,
        table: &Tensor,
    ) -> Result<(), GpuError> {
        if half == 0 {
            return Ok(());
        }
        let rows = x.len / width.max(1);
        if head_dim == 0
            || !width.is_multiple_of(head_dim)
            || !x.len.is_multiple_of(width.max(1))
            || 2 * half > head_dim
            || table.len < 2 * half * rows
        {
            return shape(format!(
                "rope of {half} pairs on heads of {head_dim} in rows of {width} ({} values, {} angles)",
                x.len, table.len
            ));
        }
        let pairs = rows * (width / head_dim) * half;
        let params = [rows, width, head_dim, half, usize::from(neox)].map(|v| v as u32);
        let buffers = [&x.buffer, &table.buffer];
        self.run("rope", kernels::ROPE, &buffers, &params, spread(pairs))
    }

    /// `out` (`n × q_dim`) = attention of the `n` queries in `q` against the first
    /// `start + t + 1` positions of `keys` and `values` (positions × `kv_dim`), as
    /// [`crate::llama::ops::attend`]. `scores` is scratch of at least
    /// `n × heads × (start + n)`.
    pub fn attention(
        &self,
        shape_of: Attention,
        q: &Tensor,
        keys: &Tensor,
        values: &Tensor,
        scores: &Tensor,
        out: &Tensor,
    ) -> Result<(), GpuError> {
        let a = shape_of;
        let positions = a.start + a.n;
        if a.n == 0
            || a.kv_heads == 0
            || !a.heads.is_multiple_of(a.kv_heads)
            || q.len < a.n * a.q_dim()
            || keys.len < positions * a.kv_dim()
            || values.len < positions * a.kv_dim()
            || scores.len < a.n * a.heads * positions
            || out.len < a.n * a.q_dim()
        {
            return shape(format!(
                "attention {a:?}: q {}, keys {}, values {}, scores {}, out {}",
                q.len, keys.len, values.len, scores.len, out.len
            ));
        }
        let scale = 1.0 / (a.head_dim as f32).sqrt();
        let params = [
            a.start as u32,
            a.heads as u32,
            a.kv_heads as u32,
            a.head_dim as u32,
            positions as u32,
            scale.to_bits(),
        ];
        let buffers = [
            &q.buffer,
            &keys.buffer,
            &values.buffer,
            &scores.buffer,
            &out.buffer,
        ];
        let groups = [a.heads, a.n, 1];
        self.run("attention", kernels::ATTENTION, &buffers, &params, groups)
    }

    fn elementwise(&self, op: u32, x: &Tensor, y: &Tensor, width: usize) -> Result<(), GpuError> {
        let params = [x.len as u32, op, width as u32];
        let buffers = [&x.buffer, &y.buffer];
        let groups = spread(x.len);
        self.run(
            "elementwise",
            kernels::ELEMENTWISE,
            &buffers,
            &params,
            groups,
        )
    }

    /// The residual add, `x += y`.
    pub fn add(&self, x: &Tensor, y: &Tensor) -> Result<(), GpuError> {
        if y.len < x.len {
            return shape(format!("adding {} values to {}", y.len, x.len));
        }
        self.elementwise(0, x, y, 0)
    }

    /// SwiGLU's product, `gate = silu(gate) ⊙ up`.
    pub fn silu_gate(&self, gate: &Tensor, up: &Tensor) -> Result<(), GpuError> {
        if up.len < gate.len {
            return shape(format!("{} gates and {} ups", gate.len, up.len));
        }
        self.elementwise(1, gate, up, 0)
    }

    /// Adds `bias` to every row of `x` (rows of the bias's length).
    pub fn add_bias(&self, x: &Tensor, bias: &Tensor) -> Result<(), GpuError> {
        if bias.len == 0 || !x.len.is_multiple_of(bias.len) {
            return shape(format!("a bias of {} on {} values", bias.len, x.len));
        }
        self.elementwise(2, x, bias, bias.len)
    }
}

/// Workgroups for one invocation per value (`THREADS` a workgroup), spread over two
/// dimensions past WebGPU's 65,535 a dimension.
fn spread(len: usize) -> [usize; 3] {
    let groups = len.div_ceil(kernels::THREADS).max(1);
    let x = groups.min(65_535);
    [x, groups.div_ceil(x), 1]
}
