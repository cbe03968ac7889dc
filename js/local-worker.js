// The local model's Web Worker (issue 29). The model itself is Rust (crates/local,
// built by scripts/local-model.sh next to this file twice: familiar_local.js/_bg.wasm
// with WebAssembly SIMD, familiar_local_relaxed.js/_bg.wasm with relaxed SIMD too,
// which this script loads where the browser has it);
// this script owns what only a worker script can: the message loop, and the weights
// loaded from a picked file or through weights.js (js/local-weights.js: the download,
// bounded, resumed, checked, and the copy in Cache Storage). Where the model runs,
// WebGPU or the CPU, is the Rust side's choice at load (`backend`: 'auto' takes WebGPU
// where there is an adapter, 'webgpu' fails where there is none, 'cpu' never asks).
//
// Messages in:  {type: 'load', url, context, sha256?, backend?, simd?, threads?, maxBytes?} | {type: 'load', file, context, sha256?, backend?, simd?, threads?, maxBytes?}
//               (maxBytes lowers the weights' bound, MAX_WEIGHTS_BYTES, 4 GiB;
//               simd: 'simd128' loads the plain SIMD build where relaxed SIMD is
//               there too: the tests compare the two; threads: a number, or 'auto'
//               (the default) for every core, on the CPU of a cross-origin-isolated
//               page, team.js's helpers sharing the products)
//               {type: 'help', …}: this worker is another's helper thread (team.js)
//               {type: 'chat', id, request}  | {type: 'abort', id}
// Messages out: {type: 'progress', loaded, total, cached}
//               {type: 'loaded', info, cached, backend: 'webgpu' | 'cpu', simd: 'relaxed' | 'simd128', threads, adapter?, note?}
//               {type: 'load_error', message}
//               {type: 'delta', id, delta} | {type: 'done', id, response}
//               {type: 'error', id, kind, message}
import { help, startTeam, threadsFor } from './team.js';
import { MAX_WEIGHTS_BYTES, refuseLarger, verify, weights } from './weights.js';

let engine = null;
let loading = null;
const queue = [];
const aborted = new Set();
let running = false;

// Lets the worker read its messages (an abort) between two pieces of work, without
// the 4 ms clamp of nested timers.
const channel = new MessageChannel();
const waiting = [];
channel.port1.onmessage = () => waiting.shift()?.();
const breathe = () => new Promise((resolve) => { waiting.push(resolve); channel.port2.postMessage(0); });

// A module whose one function uses relaxed SIMD's instruction the products use,
// i32x4.relaxed_dot_i8x16_i7x16_add_s: a browser that validates it runs the
// relaxed build. (Validating does not run it; the function is never called.)
const RELAXED_PROBE = new Uint8Array([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, // "\0asm", version 1
  0x01, 0x05, 0x01, 0x60, 0x00, 0x01, 0x7b, // type section: one type, () -> v128
  0x03, 0x02, 0x01, 0x00, // function section: one function of type 0
  0x0a, 0x13, 0x01, 0x11, 0x00, // code section: one body of 17 bytes, no locals
  0x41, 0x01, 0xfd, 0x0f, // i32.const 1, i8x16.splat
  0x41, 0x02, 0xfd, 0x0f, // i32.const 2, i8x16.splat
  0x41, 0x03, 0xfd, 0x11, // i32.const 3, i32x4.splat
  0xfd, 0x93, 0x02, // i32x4.relaxed_dot_i8x16_i7x16_add_s (0xfd, LEB128 of 0x113)
  0x0b, // end
]);

/** Which build to run: relaxed SIMD's where the browser has it, unless `asked` is
 * 'simd128'. */
function simdBuild(asked) {
  if (asked === 'simd128') return 'simd128';
  try {
    return WebAssembly.validate(RELAXED_PROBE) ? 'relaxed' : 'simd128';
  } catch {
    return 'simd128';
  }
}

async function load({ url, file, context, sha256, backend, simd: asked, threads: askedThreads, maxBytes }) {
  const simd = simdBuild(asked);
  const { default: init, Worker: Engine } = await import(simd === 'relaxed' ? './familiar_local_relaxed.js' : './familiar_local.js');
  await init();
  let bytes;
  let cached = false;
  const limit = Math.min(maxBytes ?? MAX_WEIGHTS_BYTES, MAX_WEIGHTS_BYTES);
  if (file) {
    refuseLarger(file.name, file.size, limit);
    bytes = new Uint8Array(await file.arrayBuffer());
    postMessage({ type: 'progress', loaded: bytes.length, total: bytes.length, cached: false });
    await verify(file.name, bytes, sha256);
  } else {
    const progress = (p) => postMessage({ type: 'progress', ...p });
    ({ bytes, cached } = await weights(url, { sha256, maxBytes: limit, progress }));
  }
  engine = await Engine.load(bytes, context || 2048, backend || 'auto');
  const info = JSON.parse(engine.info());
  // On the CPU, the other cores help where the page lets workers share memory.
  const team = info.backend === 'cpu' ? await startTeam({ engine, bytes, threads: threadsFor(askedThreads), simd }) : { threads: 1 };
  const { adapter, note } = info;
  if (team.note) console.warn(`familiar: the local model runs on ${team.note}`);
  postMessage({ type: 'loaded', info, cached, backend: info.backend, simd, threads: team.threads, ...(adapter ? { adapter } : {}), ...(note ? { note } : {}) });
}

async function answer({ id, request }) {
  try {
    await loading;
  } catch (error) {
    postMessage({ type: 'error', id, kind: 'unreachable', message: String(error?.message ?? error) });
    return;
  }
  try {
    engine.start(JSON.stringify(request));
    for (;;) {
      if (aborted.delete(id)) {
        engine.abort();
        postMessage({ type: 'error', id, kind: 'aborted', message: 'aborted' });
        return;
      }
      const events = JSON.parse(await engine.step());
      for (const event of events) {
        if (event.type === 'done') {
          const { type: _, ...response } = event;
          postMessage({ type: 'done', id, response });
          return;
        }
        postMessage({ type: 'delta', id, delta: event });
      }
      await breathe();
    }
  } catch (error) {
    postMessage({ type: 'error', id, kind: 'provider', message: String(error?.message ?? error) });
  }
}

async function drain() {
  if (running) return;
  running = true;
  while (queue.length) await answer(queue.shift());
  running = false;
}

onmessage = ({ data }) => {
  switch (data?.type) {
    case 'load':
      loading = load(data);
      loading.catch((error) => postMessage({ type: 'load_error', message: String(error?.message ?? error) }));
      break;
    case 'help':
      // This worker is another's helper thread (team.js).
      help(data);
      break;
    case 'chat':
      queue.push(data);
      drain();
      break;
    case 'abort': {
      const waitingAt = queue.findIndex((r) => r.id === data.id);
      if (waitingAt >= 0) {
        queue.splice(waitingAt, 1);
        postMessage({ type: 'error', id: data.id, kind: 'aborted', message: 'aborted' });
      } else {
        aborted.add(data.id);
      }
      break;
    }
    default:
      break;
  }
};
