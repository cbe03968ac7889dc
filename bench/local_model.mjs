// The local model's speed in headless Chromium (issue 29): crates/local's wasm in a
// Web Worker (dist/local/, built by scripts/local-model.sh through `trunk build`) on
// the test model, SmolLM2-135M-Instruct, beside llama.cpp on the same machine
// (llama-cpp-python, one thread, the venv scripts/setup.sh test installs) reading the
// same prompt. Prints prompt tokens/s, generation tokens/s, time to first token, and
// a follow-up turn's prompt time with the KV cache warm; and the ratios.
//
//   node bench/local_model.mjs         (after `trunk build --release --offline`)
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { dist, launchChromium, serveDist } from '../e2e/harness.mjs';

const models = join(dist, 'models');
const weights = existsSync(models) ? readdirSync(models).find((f) => f.endsWith('.gguf')) : undefined;
if (!weights) {
  console.error('no GGUF in dist/models: run scripts/setup.sh test, then trunk build --release --offline');
  process.exit(1);
}
const GENERATE = 64;
// About 300 tokens of system prompt, then a question: a short agent's first turn.
const system = `You are a helpful assistant in a small fantasy town. ${'The market opens at dawn and the baker sells bread, the smith mends tools, and the innkeeper keeps the ale cold. '.repeat(9)}`;
const first = { system, messages: [{ role: 'user', content: 'Tell me a story about the market.' }], tools: [], tool_choice: 'auto', temperature: 0, max_tokens: GENERATE };

const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>local model</title><link rel="icon" href="data:,"></head>
<body><script type="module">
  const worker = new Worker('/local/worker.js', { type: 'module' });
  const loaded = new Promise((ok, fail) => worker.addEventListener('message', ({ data }) => {
    if (data.type === 'loaded') ok(data);
    if (data.type === 'load_error') fail(new Error(data.message));
  }));
  worker.postMessage({ type: 'load', url: '/models/${weights}', context: 2048 });
  let next = 1;
  window.ask = (request) => new Promise((ok, fail) => {
    const id = next++;
    const start = performance.now();
    let firstToken = null;
    const on = ({ data }) => {
      if (data.id !== id) return;
      if (data.type === 'delta' && firstToken === null) firstToken = performance.now() - start;
      if (data.type === 'done') { worker.removeEventListener('message', on); ok({ firstToken, total: performance.now() - start, usage: data.response.usage, text: data.response.text }); }
      if (data.type === 'error') { worker.removeEventListener('message', on); fail(new Error(data.message)); }
    };
    worker.addEventListener('message', on);
    worker.postMessage({ type: 'chat', id, request });
  });
  const t0 = performance.now();
  window.ready = loaded.then(() => performance.now() - t0);
</script></body></html>`;

const server = await serveDist({ pages: { '/local.html': page } });
const browser = await launchChromium();
try {
  const tab = await (await browser.newContext()).newPage();
  await tab.goto(`${server.url}local.html`);
  const loadMs = await tab.evaluate(() => window.ready);
  // Warm-up: the first request pays for compiling the hot paths.
  await tab.evaluate((r) => window.ask({ ...r, max_tokens: 1, system: 'Hi.' }), first);
  const cold = await tab.evaluate((r) => window.ask(r), first);
  // The follow-up: the same transcript plus the answer and a new question.
  const follow = { ...first, messages: [...first.messages, { role: 'assistant', content: cold.text }, { role: 'user', content: 'And the smith?' }], max_tokens: 1 };
  const warm = await tab.evaluate((r) => window.ask(r), follow);
  // Prompt speed: time to the first token is the prompt read plus one step.
  const stepMs = (cold.total - cold.firstToken) / Math.max(1, cold.usage.completion_tokens - 1);
  const promptMs = cold.firstToken - stepMs;
  const wasm = {
    prompt: cold.usage.prompt_tokens / (promptMs / 1000),
    generate: 1000 / stepMs,
    ttft: cold.firstToken,
    warm: warm.firstToken ?? warm.total,
  };
  const venv = join(homedir(), '.cache/familiar');
  const python = existsSync(venv)
    ? readdirSync(venv).filter((d) => d.startsWith('llama-cpp-')).map((d) => join(venv, d, 'bin/python')).find((p) => existsSync(p))
    : undefined;
  let native;
  if (python) {
    // As bench/local_model.sh measures it: eval and argmax, no sampler in Python.
    const script = `
import json, sys, time
import numpy as np
from llama_cpp import Llama
m = Llama(model_path=sys.argv[1], n_ctx=2048, n_threads=1, n_threads_batch=1, n_batch=64, verbose=False)
r = json.loads(sys.argv[2])
prompt = "<|im_start|>system\\n" + r["system"] + "<|im_end|>\\n<|im_start|>user\\n" + r["messages"][0]["content"] + "<|im_end|>\\n<|im_start|>assistant\\n"
toks = m.tokenize(prompt.encode(), add_bos=False, special=True)
logits = lambda: np.ctypeslib.as_array(m._ctx.get_logits(), shape=(m.n_vocab(),))
t = time.perf_counter(); m.eval(toks); nxt = int(np.argmax(logits())); p = time.perf_counter() - t
t = time.perf_counter()
for _ in range(${GENERATE}):
    m.eval([nxt]); nxt = int(np.argmax(logits()))
g = time.perf_counter() - t
print(json.dumps({"prompt": len(toks) / p, "generate": ${GENERATE} / g}))`;
    native = JSON.parse(execFileSync(python, ['-c', script, join(models, weights), JSON.stringify(first)]).toString());
  }
  const f = (n) => n.toFixed(1);
  console.log(`local model in headless Chromium (wasm SIMD, one worker thread), ${weights}`);
  console.log(`  weights loaded in ${f(loadMs)} ms`);
  console.log(`  prompt: ${cold.usage.prompt_tokens} tokens at ${f(wasm.prompt)} tokens/s; time to first token ${f(wasm.ttft)} ms`);
  console.log(`  generation: ${f(wasm.generate)} tokens/s (${cold.usage.completion_tokens} tokens)`);
  console.log(`  follow-up turn, cache warm: first token after ${f(wasm.warm)} ms`);
  if (native) {
    console.log(`llama.cpp (llama-cpp-python, n_threads=1): prompt ${f(native.prompt)} tokens/s, generation ${f(native.generate)} tokens/s`);
    console.log(`  ratio llama.cpp / ours: prompt ${f(native.prompt / wasm.prompt)}×, generation ${f(native.generate / wasm.generate)}× (goal: generation within 3×)`);
  } else {
    console.log('llama.cpp: no llama-cpp-python venv (scripts/setup.sh test installs it)');
  }
} finally {
  await browser.close();
  await server.close();
}
