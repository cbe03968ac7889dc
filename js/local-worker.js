// The local model's Web Worker (issue 29). The model itself is Rust (crates/local,
// built by scripts/local-model.sh next to this file twice: familiar_local.js/_bg.wasm
// with WebAssembly SIMD, familiar_local_relaxed.js/_bg.wasm with relaxed SIMD too,
// which this script loads where the browser has it);
// this script owns what only a worker script can: the message loop, the weights'
// download with its progress (taken up again where it stopped when the connection
// drops), its check against the SHA-256 the host gave, and the copy in Cache Storage
// so a second visit, or another tab, reads them from disk. Where the model runs,
// WebGPU or the CPU, is the Rust side's choice at load (`backend`: 'auto' takes WebGPU
// where there is an adapter, 'webgpu' fails where there is none, 'cpu' never asks).
//
// Messages in:  {type: 'load', url, context, sha256?, backend?, simd?, threads?} | {type: 'load', file, context, sha256?, backend?, simd?, threads?}
//               (simd: 'simd128' loads the plain SIMD build where relaxed SIMD is
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

const CACHE = 'familiar-models';
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

// How many times a dropped download is taken up again where it stopped.
const RESUMES = 5;

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

/** The SHA-256 of `bytes`, in lowercase hex. */
async function sha256Of(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Refuses `bytes` that are not the file `sha256` names (when it names one). */
async function verify(url, bytes, sha256) {
  if (!sha256) return;
  const found = await sha256Of(bytes);
  if (found !== sha256) {
    throw new Error(`the weights at ${url} are not the file expected: their SHA-256 is ${found}, not ${sha256}; they were not kept`);
  }
}

/** Whether `bytes` more fit in this origin's storage quota (asking first that what is
 * kept be kept for good); true when the browser does not say. */
async function roomFor(bytes) {
  try {
    await navigator.storage?.persist?.();
    const estimate = await navigator.storage?.estimate?.();
    if (!estimate?.quota) return true;
    return estimate.quota - (estimate.usage ?? 0) > bytes * 1.1;
  } catch {
    return true;
  }
}

/** The weights' bytes over the network, with progress; a connection dropped on the way
 * is asked again for the rest (`Range`) up to RESUMES times, or from the start when the
 * server sends the whole file again. */
async function download(url) {
  let response = await fetch(url);
  if (!response.ok) throw new Error(`the weights at ${url} could not be fetched (HTTP ${response.status})`);
  const encoded = response.headers.get('content-encoding');
  let total = encoded ? 0 : Number(response.headers.get('content-length')) || 0;
  // The size, said before the first byte comes.
  postMessage({ type: 'progress', loaded: 0, total, cached: false });
  let parts = [];
  let loaded = 0;
  let last = 0;
  let resumes = 0;
  // Progress is said every MiB, and also a moment after the bytes stop coming, so a
  // stalled download shows what did arrive rather than up to a MiB less.
  let trailing = 0;
  const hush = () => {
    clearTimeout(trailing);
    trailing = 0;
  };
  const say = () => {
    hush();
    if (last === loaded) return;
    last = loaded;
    postMessage({ type: 'progress', loaded, total, cached: false });
  };
  for (;;) {
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        parts.push(value);
        loaded += value.length;
        if (loaded - last > 1 << 20 || loaded === total) say();
        else trailing ||= setTimeout(say, 250);
      }
      if (!total || loaded >= total) break;
      throw new Error(`the connection ended after ${loaded} of ${total} bytes`);
    } catch (error) {
      hush();
      if (resumes >= RESUMES || !total) {
        throw new Error(`the weights at ${url} stopped coming after ${loaded} of ${total || 'unknown'} bytes (${error?.message ?? error})`);
      }
      resumes += 1;
      response = await fetch(url, { headers: { Range: `bytes=${loaded}-` } });
      const range = /^bytes (\d+)-\d+\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
      if (response.status === 206 && range && Number(range[1]) === loaded && Number(range[2]) === total) continue;
      if (response.status === 200) {
        // The server sends the whole file again: start over.
        parts = [];
        loaded = 0;
        last = 0;
        continue;
      }
      throw new Error(`the weights at ${url} could not be fetched again from byte ${loaded} (HTTP ${response.status})`);
    }
  }
  hush();
  if (last !== loaded || total !== loaded) {
    // The end, said once more when the length was not known (or counted compressed
    // bytes), so a progress bar always reaches it.
    postMessage({ type: 'progress', loaded, total: loaded, cached: false });
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  return bytes;
}

/** The weights: the browser's copy when it has one that matches, else downloaded,
 * checked against `sha256` and kept for the next visit (and the page's other tabs). */
async function weights(url, sha256) {
  const cache = typeof caches === 'undefined' ? null : await caches.open(CACHE).catch(() => null);
  const hit = cache && (await cache.match(url));
  if (hit) {
    const bytes = new Uint8Array(await hit.arrayBuffer());
    if (!sha256 || (await sha256Of(bytes)) === sha256) {
      postMessage({ type: 'progress', loaded: bytes.length, total: bytes.length, cached: true });
      return { bytes, cached: true };
    }
    // A copy that is not the file asked for (another file at the same address).
    await cache.delete(url).catch(() => {});
  }
  const bytes = await download(url);
  await verify(url, bytes, sha256);
  if (cache && (await roomFor(bytes.length))) {
    // Kept for the next visit; a full disk only costs the next download.
    // Its length in a header, so the page can list kept files without reading them.
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) };
    await cache.put(url, new Response(bytes, { headers })).catch(() => {});
  }
  return { bytes, cached: false };
}

async function load({ url, file, context, sha256, backend, simd: asked, threads: askedThreads }) {
  const simd = simdBuild(asked);
  const { default: init, Worker: Engine } = await import(simd === 'relaxed' ? './familiar_local_relaxed.js' : './familiar_local.js');
  await init();
  let bytes;
  let cached = false;
  if (file) {
    bytes = new Uint8Array(await file.arrayBuffer());
    postMessage({ type: 'progress', loaded: bytes.length, total: bytes.length, cached: false });
    await verify(file.name, bytes, sha256);
  } else {
    ({ bytes, cached } = await weights(url, sha256));
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
