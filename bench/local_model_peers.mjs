// The peers bench/local_model.mjs measures ours against (issue 44): wllama
// (npm @wllama/wllama, llama.cpp's own wasm build) in the same headless Chromium, and
// llama.cpp natively (llama-cpp-python, the venv scripts/setup.sh test installs). Each
// reads the same ChatML prompt greedily; this file owns how each is driven and how its
// peak memory is read, bench/local_model.mjs the prompt, our own row and the table.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** The wllama build the bench serves under /wllama/ (its wasm ships in the package). */
export const wllamaDir = join(import.meta.dirname, '..', 'node_modules', '@wllama', 'wllama', 'esm');

/**
 * The page that runs wllama on `weights` (a path on the bench's server). It exposes
 * `load({threads})` and `ask({prompt, max_tokens})`, as our own page does: `ask` times
 * the first streamed token and the whole answer, and returns wllama's own timings.
 */
export function wllamaPage(weights) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>wllama</title><link rel="icon" href="data:,"></head>
<body><script type="module">
  import { Wllama } from '/wllama/index.js';
  const logs = [];
  const keep = (...args) => logs.push(args.map(String).join(' '));
  let wllama;
  window.load = async ({ threads }) => {
    const t0 = performance.now();
    const blob = await (await fetch('${weights}')).blob();
    wllama = new Wllama({ default: '/wllama/wasm/wllama.wasm' }, { logger: { debug: keep, log: keep, warn: keep, error: keep } });
    // n_gpu_layers 0: the CPU backend (this Chromium has no WebGPU in any case).
    await wllama.loadModel([blob], { n_ctx: 2048, n_threads: threads, n_gpu_layers: 0 });
    return {
      loadMs: performance.now() - t0,
      isolated: crossOriginIsolated,
      threads: wllama.getNumThreads(),
      multithread: wllama.isMultithread(),
      says: logs.filter((l) => /n_threads|Multithread enabled/.test(l)),
    };
  };
  window.ask = async ({ prompt, max_tokens }) => {
    const start = performance.now();
    let firstToken = null;
    let last = null;
    let text = '';
    await wllama.createCompletion({ prompt, max_tokens, temperature: 0, stream: true, onData: (chunk) => {
      const piece = chunk.choices?.[0]?.text ?? '';
      if (piece && firstToken === null) firstToken = performance.now() - start;
      text += piece;
      last = chunk;
    } });
    const t = last?.timings ?? {};
    return {
      firstToken, total: performance.now() - start, text,
      promptTokens: (t.prompt_n ?? 0) + (t.cache_n ?? 0), completionTokens: t.predicted_n,
      own: { prompt: t.prompt_per_second, generate: t.predicted_per_second, cached: t.cache_n },
    };
  };
</script></body></html>`;
}

/**
 * The peak resident memory (MiB) of `browser`'s renderer processes: the tab and its
 * workers (ours, or wllama's and its threads) run in one; the largest is the tab's.
 * Read from Linux's VmHWM (the high-water mark of the resident set), each process
 * found through CDP. Undefined where /proc does not say.
 */
export async function rendererPeak(browser) {
  const cdp = await browser.newBrowserCDPSession();
  const { processInfo } = await cdp.send('SystemInfo.getProcessInfo');
  await cdp.detach();
  const peaks = processInfo.filter((p) => p.type === 'renderer').map((p) => {
    try {
      const kib = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${p.id}/status`, 'utf8'));
      return kib ? Number(kib[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  });
  return peaks.length && Math.max(...peaks) > 0 ? Math.max(...peaks) : undefined;
}

/** llama-cpp-python's interpreter, if scripts/setup.sh test installed it. */
export function llamaCppPython() {
  const venv = join(homedir(), '.cache/familiar');
  if (!existsSync(venv)) return undefined;
  return readdirSync(venv)
    .filter((d) => d.startsWith('llama-cpp-'))
    .map((d) => join(venv, d, 'bin/python'))
    .find((p) => existsSync(p));
}

// As bench/local_model.sh measures it: eval and argmax, no sampler in Python. The
// peak is the process's (ru_maxrss: the interpreter, numpy and the mapped weights it
// touched); `base` is what the interpreter held before the model was loaded.
const NATIVE = `
import json, resource, sys, time
import numpy as np
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
from llama_cpp import Llama
a = json.loads(sys.argv[2])
n = a["threads"]
m = Llama(model_path=sys.argv[1], n_ctx=2048, n_threads=n, n_threads_batch=n, n_batch=64, verbose=False)
toks = m.tokenize(a["prompt"].encode(), add_bos=False, special=True)
logits = lambda: np.ctypeslib.as_array(m._ctx.get_logits(), shape=(m.n_vocab(),))
t = time.perf_counter(); m.eval(toks); nxt = int(np.argmax(logits())); p = time.perf_counter() - t
out = [nxt]
t = time.perf_counter()
for _ in range(a["generate"]):
    m.eval([nxt]); nxt = int(np.argmax(logits())); out.append(nxt)
g = time.perf_counter() - t
print(json.dumps({"promptTokens": len(toks), "prompt": len(toks) / p, "generate": a["generate"] / g,
  "ttft": p * 1000, "peak": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "base": base,
  "text": m.detokenize(out[:a["generate"]]).decode(errors="replace")}))`;

/**
 * llama.cpp natively on `threads` threads, reading `prompt` (ChatML text) from the
 * GGUF at `file` and generating `generate` tokens greedily, in a process of its own.
 */
export function llamaCpp(python, file, prompt, generate, threads) {
  const args = JSON.stringify({ prompt, generate, threads });
  return JSON.parse(execFileSync(python, ['-c', NATIVE, file, args]).toString());
}
