// The local model's WebGPU device, for crates/local/src/gpu/device.rs: the adapter, the
// device, buffers, pipelines (one per kernel source, compiled once) and dispatches.
// What the kernels compute and with which buffers is the Rust side's; this file only
// speaks WebGPU. Every failure is a thrown Error with a sentence the Rust side passes on:
// no navigator.gpu, no adapter, a lost device, a validation error.

const STORAGE = 0x80 | 0x08 | 0x04; // STORAGE | COPY_DST | COPY_SRC
const UNIFORM = 0x40 | 0x08; // UNIFORM | COPY_DST
const READBACK = 0x01 | 0x08; // MAP_READ | COPY_DST

export async function open() {
  const gpu = globalThis.navigator && globalThis.navigator.gpu;
  if (!gpu) throw new Error('WebGPU is not available here (no navigator.gpu)');
  const adapter = await gpu.requestAdapter();
  if (!adapter) throw new Error('WebGPU gave no adapter here');
  // The adapter's own ceilings: the defaults (128 MiB a binding) are below a model's
  // embedding table.
  const requiredLimits = {
    maxStorageBufferBindingSize: adapter.limits.maxStorageBufferBindingSize,
    maxBufferSize: adapter.limits.maxBufferSize,
  };
  const device = await adapter.requestDevice({ requiredLimits });
  return new Device(adapter, device);
}

export class Device {
  constructor(adapter, device) {
    const info = adapter.info || {};
    this.description = JSON.stringify({
      vendor: info.vendor || '',
      architecture: info.architecture || '',
      device: info.device || '',
      description: info.description || '',
      fallback: Boolean(adapter.isFallbackAdapter || info.isFallbackAdapter),
    });
    this.device = device;
    this.pipelines = new Map();
    this.encoder = null;
    this.failure = null;
    device.lost.then((lost) => {
      this.failure = this.failure || `the WebGPU device was lost (${lost.reason}: ${lost.message})`;
    });
    device.addEventListener('uncapturederror', (event) => {
      this.failure = this.failure || `WebGPU: ${event.error.message}`;
    });
  }

  info() {
    return this.description;
  }

  check() {
    if (this.failure) throw new Error(this.failure);
  }

  buffer(bytes) {
    this.check();
    const size = Math.max(4, Math.ceil(bytes / 4) * 4);
    return this.device.createBuffer({ size, usage: STORAGE });
  }

  // `data` (a Uint8Array) at `offset` bytes into `buffer`, after the work recorded so far.
  write(buffer, offset, data) {
    this.check();
    this.flush();
    const padded = data.byteLength % 4 === 0 ? data : copyPadded(data);
    this.device.queue.writeBuffer(buffer, offset, padded);
  }

  copy(from, fromOffset, to, toOffset, bytes) {
    this.check();
    this.pending().copyBufferToBuffer(from, fromOffset, to, toOffset, bytes);
  }

  // One dispatch of the kernel `code` (compiled once under `key`) over `buffers`
  // (bindings 0..n-1 in order) with `params` (a Uint32Array) as the uniform after them.
  run(key, code, buffers, params, x, y, z) {
    this.check();
    const pipeline = this.pipeline(key, code);
    const uniform = this.device.createBuffer({ size: Math.max(16, params.byteLength), usage: UNIFORM });
    this.device.queue.writeBuffer(uniform, 0, params);
    const entries = buffers.map((buffer, binding) => ({ binding, resource: { buffer } }));
    entries.push({ binding: buffers.length, resource: { buffer: uniform } });
    const group = this.device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
    const pass = this.pending().beginComputePass();
    pass.setPipeline(pipeline);
    pass.setBindGroup(0, group);
    pass.dispatchWorkgroups(x, y, z);
    pass.end();
  }

  // `bytes` of `buffer` from `offset`, once every recorded dispatch has run.
  async read(buffer, offset, bytes) {
    this.check();
    const size = Math.max(4, Math.ceil(bytes / 4) * 4);
    const staging = this.device.createBuffer({ size, usage: READBACK });
    this.pending().copyBufferToBuffer(buffer, offset, staging, 0, size);
    this.flush();
    try {
      await staging.mapAsync(1);
    } catch (e) {
      this.check();
      throw e;
    }
    this.check();
    const out = new Uint8Array(staging.getMappedRange().slice(0, bytes));
    staging.unmap();
    staging.destroy();
    return out;
  }

  // Errors of everything asked from here to `unguard` (out of memory, validation,
  // internal) are caught where they happen, not left to 'uncapturederror' later.
  guard() {
    this.check();
    for (const filter of ['internal', 'validation', 'out-of-memory']) this.device.pushErrorScope(filter);
  }

  // Runs what was recorded, and throws the first error caught since `guard` (which
  // then fails every later call too, as a lost device does).
  async unguard() {
    this.flush();
    let first = null;
    for (let i = 0; i < 3; i += 1) {
      const error = await this.device.popErrorScope();
      first = first || error;
    }
    if (first) this.failure = this.failure || `WebGPU: ${first.message}`;
    this.check();
  }

  release(buffer) {
    buffer.destroy();
  }

  // Ends this device: every call after it is an error, as after a loss.
  close() {
    this.failure = this.failure || 'the WebGPU device was closed';
    this.device.destroy();
  }

  pipeline(key, code) {
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      const module = this.device.createShaderModule({ code });
      pipeline = this.device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
      this.pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  pending() {
    if (!this.encoder) this.encoder = this.device.createCommandEncoder();
    return this.encoder;
  }

  flush() {
    if (this.encoder) {
      this.device.queue.submit([this.encoder.finish()]);
      this.encoder = null;
    }
  }
}

function copyPadded(data) {
  const out = new Uint8Array(Math.ceil(data.byteLength / 4) * 4);
  out.set(data);
  return out;
}
