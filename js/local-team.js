// The local model's helper threads (issue 44): more Web Workers, each holding a share
// of every weight matrix's rows, that multiply their share while the model's own
// worker multiplies its own (crates/local/src/llama/team.rs says who has which rows).
// A product is a post into shared memory and a wait under `Atomics`, about four a
// layer: `Atomics.wait` is allowed in workers, and a round trip costs microseconds
// where `postMessage` costs tens. Shared memory needs a cross-origin-isolated page
// (COOP and COEP): elsewhere the model runs on its worker's one thread, as before.
//
// The model's worker calls `startTeam` after its engine loaded; the engine then calls
// `globalThis.familiarTeam.post` and `.collect` from Rust. A helper runs `help`, the
// same script loaded again (worker.js, `{type: 'help'}`).

// The control words, in an Int32Array over shared memory.
const SEQ = 0; // the post's number: a helper wakes when it changes
const JOB = 1; // which job (the products that read the same input)
const LEN = 2; // how many input floats
const STOP = 3; // non-zero: helpers close
const DONE = 16; // + helper: the last post it finished
const WROTE = 16 + 64; // + helper: the floats it wrote, or -1 when it failed
const CONTROL_WORDS = 16 + 2 * 64;
// The most helpers one model gets: what its control words hold, and more than any
// memory-bound product gains from.
export const MAX_HELPERS = 63;
// How long the model's worker waits for a helper's share before letting the helpers
// go and going on alone (a share of one product takes milliseconds).
const PATIENCE_MS = 30_000;
// How long a waiting side keeps reading a word before it sleeps: posts come back to
// back within a token, and waking from `Atomics.wait` costs more than a short spin
// (longer spins measured slower on 2 cores: they take the core the other side needs).
const SPIN_MS = 0.05;

/** How many threads to run on: the `asked` number, or (`'auto'`, undefined) every
 * core the browser reports; 1 where shared memory is not there. */
export function threadsFor(asked) {
  if (typeof SharedArrayBuffer === 'undefined' || !globalThis.crossOriginIsolated) return 1;
  const cores = navigator.hardwareConcurrency || 1;
  const wanted = asked === undefined || asked === 'auto' ? cores : Math.floor(Number(asked));
  return Number.isFinite(wanted) ? Math.max(1, Math.min(wanted, MAX_HELPERS + 1)) : 1;
}

/** Reads `words[at]` until it is `value` (or, with `not`, until it is not) for at
 * most SPIN_MS; returns what it read last. */
function spin(words, at, value, not = false) {
  const until = performance.now() + SPIN_MS;
  for (;;) {
    const now = Atomics.load(words, at);
    if ((now === value) !== not || performance.now() > until) return now;
  }
}

/** Waits until `words[at]` is `value`, spinning a little and then sleeping; false
 * when `deadline` (performance.now()) passes first. */
function waitFor(words, at, value, deadline) {
  if (spin(words, at, value) === value) return true;
  for (;;) {
    const now = Atomics.load(words, at);
    if (now === value) return true;
    const left = deadline - performance.now();
    if (left <= 0) return false;
    Atomics.wait(words, at, now, left);
  }
}

/**
 * Starts `threads - 1` helpers for `engine` (the loaded wasm `Worker`), each sent
 * its share of the file's `bytes`, and hands them the engine's products.
 * Resolves to the threads the model runs on: `threads`, or 1 with `note` saying why
 * when a helper could not start.
 */
/** The places `team_places` gives, six numbers each, as objects. */
function placesOf(words) {
  const places = [];
  for (let i = 0; i + 6 <= words.length; i += 6) {
    const [job, kind, rows, cols, start, end] = words.subarray(i, i + 6);
    places.push({ job, kind, rows, cols, start, end });
  }
  return places;
}

/** One helper's `places` of the file's `bytes`, copied one after another into a new
 * buffer, with the places where they now are in it. */
function shareOf(bytes, places) {
  const size = places.reduce((sum, p) => sum + (p.end - p.start), 0);
  const share = new Uint8Array(size);
  let at = 0;
  const local = places.map((p) => {
    share.set(bytes.subarray(p.start, p.end), at);
    at += p.end - p.start;
    return { ...p, start: at - (p.end - p.start), end: at };
  });
  return { bytes: share.buffer, places: local };
}

export async function startTeam({ engine, bytes, threads, simd }) {
  const helpers = threads - 1;
  if (helpers < 1) return { threads: 1 };
  const [inputs, outputsEach] = engine.team_sizes(threads);
  const control = new SharedArrayBuffer(CONTROL_WORDS * 4);
  const input = new SharedArrayBuffer(Math.max(1, inputs) * 4);
  const outputs = Array.from({ length: helpers }, () => new SharedArrayBuffer(Math.max(1, outputsEach) * 4));
  // Each helper's share, copied out of the file into a buffer of its own that moves
  // to the helper: the whole file is never copied again.
  const shares = outputs.map((_, h) => shareOf(bytes, placesOf(engine.team_places(h + 1, threads))));
  const workers = [];
  const words = new Int32Array(control);
  const stop = () => {
    Atomics.store(words, STOP, 1);
    Atomics.add(words, SEQ, 1);
    Atomics.notify(words, SEQ);
    for (const w of workers) w.terminate();
    workers.length = 0;
  };
  let late;
  try {
    const starting = Promise.all(shares.map((_, h) => new Promise((ready, failed) => {
      const worker = new Worker(new URL(import.meta.url).href.replace(/team\.js$/, 'worker.js'), { type: 'module' });
      workers.push(worker);
      worker.onmessage = ({ data }) => {
        if (data?.type === 'helping') ready();
        if (data?.type === 'help_error') failed(new Error(data.message));
      };
      worker.onerror = (event) => failed(new Error(event.message || 'the helper script failed to load'));
      const { bytes: share, places: local } = shares[h];
      worker.postMessage({ type: 'help', helper: h, places: local, share, control, input, output: outputs[h], simd }, [share]);
    })));
    const timeout = new Promise((_, failed) => {
      late = setTimeout(() => failed(new Error(`not ready within ${PATIENCE_MS / 1000} s`)), PATIENCE_MS);
    });
    await Promise.race([starting, timeout]);
  } catch (error) {
    stop();
    return { threads: 1, note: `one thread: a helper did not start (${error?.message ?? error})` };
  } finally {
    clearTimeout(late);
  }
  const x = new Float32Array(input);
  const outs = outputs.map((o) => new Float32Array(o));
  let seq = 0;
  // An input past the shared buffer (never, for batches of the sizes asked): said at
  // the collect, which Rust reads as an error, rather than thrown here, where it
  // would unwind through the engine.
  let tooLong = 0;
  globalThis.familiarTeam = {
    post(job, values) {
      if (values.length > x.length) {
        tooLong = values.length;
        return;
      }
      x.set(values);
      Atomics.store(words, JOB, job);
      Atomics.store(words, LEN, values.length);
      seq = (seq + 1) & 0x3fffffff;
      Atomics.store(words, SEQ, seq);
      Atomics.notify(words, SEQ);
    },
    collect(out) {
      if (tooLong) {
        stop();
        throw new Error(`an input of ${tooLong} values is past the helpers' ${x.length}`);
      }
      const deadline = performance.now() + PATIENCE_MS;
      let at = 0;
      for (let h = 0; h < helpers; h++) {
        if (!waitFor(words, DONE + h, seq, deadline)) {
          stop();
          throw new Error(`helper ${h + 1} did not answer within ${PATIENCE_MS / 1000} s`);
        }
        const wrote = Atomics.load(words, WROTE + h);
        if (wrote < 0 || at + wrote > out.length) {
          stop();
          throw new Error(`helper ${h + 1} failed (its worker's console says why)`);
        }
        out.set(outs[h].subarray(0, wrote), at);
        at += wrote;
      }
      if (at !== out.length) {
        stop();
        throw new Error(`the helpers wrote ${at} values, not ${out.length}`);
      }
    },
  };
  if (!engine.share_with(helpers)) {
    stop();
    return { threads: 1 };
  }
  return { threads };
}

/** A helper's share of the weights, in its wasm. */
async function shardOf({ places, share, simd }) {
  const { default: init, Helper } = await import(simd === 'relaxed' ? './familiar_local_relaxed.js' : './familiar_local.js');
  await init();
  const shard = new Helper();
  const bytes = new Uint8Array(share);
  for (const p of places) shard.add(p.job, p.kind, p.rows, p.cols, bytes.subarray(p.start, p.end));
  return shard;
}

/** A helper's life: its share of the weights, then one job after another until told
 * to stop. */
export async function help(message) {
  const { helper, control, input, output } = message;
  let shard;
  try {
    shard = await shardOf(message);
  } catch (error) {
    postMessage({ type: 'help_error', message: String(error?.message ?? error) });
    return;
  } finally {
    // Copied into the wasm: the message's copy can go.
    message.share = null;
  }
  postMessage({ type: 'helping' });
  const words = new Int32Array(control);
  const x = new Float32Array(input);
  const out = new Float32Array(output);
  let seen = Atomics.load(words, SEQ);
  for (;;) {
    const seq = spin(words, SEQ, seen, true);
    if (seq === seen) {
      Atomics.wait(words, SEQ, seen);
      continue;
    }
    seen = seq;
    if (Atomics.load(words, STOP)) {
      close();
      return;
    }
    let wrote;
    try {
      const values = shard.run(Atomics.load(words, JOB), x.subarray(0, Atomics.load(words, LEN)));
      out.set(values);
      wrote = values.length;
    } catch (error) {
      console.error('familiar helper', helper + 1, error);
      wrote = -1;
    }
    Atomics.store(words, WROTE + helper, wrote);
    Atomics.store(words, DONE + helper, seq);
    Atomics.notify(words, DONE + helper);
  }
}
