// The local model's Web Worker (issue 29). The model itself is Rust (crates/local,
// built by scripts/local-model.sh next to this file as familiar_local.js/_bg.wasm);
// this script owns what only a worker script can: the message loop, the weights'
// download with its progress, and their copy in Cache Storage so a second visit reads
// them from disk.
//
// Messages in:  {type: 'load', url, context} | {type: 'load', file, context}
//               {type: 'chat', id, request}  | {type: 'abort', id}
// Messages out: {type: 'progress', loaded, total, cached}
//               {type: 'loaded', info, cached} | {type: 'load_error', message}
//               {type: 'delta', id, delta} | {type: 'done', id, response}
//               {type: 'error', id, kind, message}
import init, { Worker as Engine } from './familiar_local.js';

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

async function weights(url) {
  const cache = typeof caches === 'undefined' ? null : await caches.open(CACHE).catch(() => null);
  const hit = cache && (await cache.match(url));
  if (hit) {
    const bytes = new Uint8Array(await hit.arrayBuffer());
    postMessage({ type: 'progress', loaded: bytes.length, total: bytes.length, cached: true });
    return { bytes, cached: true };
  }
  const response = await fetch(url);
  if (!response.ok) throw new Error(`the weights at ${url} could not be fetched (HTTP ${response.status})`);
  const total = Number(response.headers.get('content-length')) || 0;
  const parts = [];
  let loaded = 0;
  let last = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    loaded += value.length;
    if (loaded - last > 1 << 20 || loaded === total) {
      last = loaded;
      postMessage({ type: 'progress', loaded, total, cached: false });
    }
  }
  if (last !== loaded || total !== loaded) {
    // The end, said once more when the length was not known (or counted compressed
    // bytes), so a progress bar always reaches it.
    postMessage({ type: 'progress', loaded, total: loaded, cached: false });
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  if (cache) {
    // Kept for the next visit; a full disk only costs the next download.
    await cache.put(url, new Response(bytes, { headers: { 'content-type': 'application/octet-stream' } })).catch(() => {});
  }
  return { bytes, cached: false };
}

async function load({ url, file, context }) {
  await init();
  let bytes;
  let cached = false;
  if (file) {
    bytes = new Uint8Array(await file.arrayBuffer());
    postMessage({ type: 'progress', loaded: bytes.length, total: bytes.length, cached: false });
  } else {
    ({ bytes, cached } = await weights(url));
  }
  engine = new Engine(bytes, context || 2048);
  postMessage({ type: 'loaded', info: JSON.parse(engine.info()), cached });
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
      const events = JSON.parse(engine.step());
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
