// The local model's speed (issues 29 and 44): crates/local's wasm in a Web Worker
// (dist/local/, built by scripts/local-model.sh through `trunk build`) on the test
// model, SmolLM2-135M-Instruct, in both its builds (relaxed SIMD, which Chromium gets,
// and plain SIMD, which browsers without relaxed SIMD get), beside its peers on the
// same machine, file and prompt:
// wllama (llama.cpp's own wasm build) in the same headless Chromium on one thread and
// on all cores, and llama.cpp natively on one thread and on all cores
// (bench/local_model_peers.mjs drives both). Prints one table: prompt tokens/s,
// generation tokens/s, time to first token, a follow-up turn's first token with the
// cache warm, peak memory; then the ratios issue 44's goals name.
//
// Every browser row runs in a Chromium of its own, so its renderer's peak is its own;
// the page is cross-origin isolated (COOP and COEP), which wllama's threads need.
//
//   node bench/local_model.mjs         (after `npm ci` and `trunk build --release --offline`)
import { availableParallelism } from 'node:os';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { dist, launchChromium, serveDist } from '../e2e/harness.mjs';
import { llamaCpp, llamaCppPython, rendererPeak, wllamaDir, wllamaPage } from './local_model_peers.mjs';

const models = join(dist, 'models');
const weights = existsSync(models) ? readdirSync(models).find((f) => f.endsWith('.gguf')) : undefined;
if (!weights) {
  console.error('no GGUF in dist/models: run scripts/setup.sh test, then trunk build --release --offline');
  process.exit(1);
}
// GENERATE: fewer tokens for a short run (bench/short.sh); the figures cited are 64's.
const GENERATE = Number(process.env.GENERATE ?? 64);
const CORES = availableParallelism();
// About 300 tokens of system prompt, then a question: a short agent's first turn.
// PARAGRAPHS: fewer of the prompt's nine paragraphs for a short run (bench/short.sh: 1,
// about 60 tokens; reading the prompt is most of a row's time); the figures cited are 9's.
const PARAGRAPHS = Number(process.env.PARAGRAPHS ?? 9);
const system = `You are a helpful assistant in a small fantasy town. ${'The market opens at dawn and the baker sells bread, the smith mends tools, and the innkeeper keeps the ale cold. '.repeat(PARAGRAPHS)}`;
const first = { system, messages: [{ role: 'user', content: 'Tell me a story about the market.' }], tools: [], tool_choice: 'auto', temperature: 0, max_tokens: GENERATE };
const warmUp = { ...first, system: 'Hi.', max_tokens: 1 };
/** The follow-up turn: the same transcript plus the answer and a new question. */
const followUp = (answer) => ({ ...first, messages: [...first.messages, { role: 'assistant', content: answer }, { role: 'user', content: 'And the smith?' }], max_tokens: 1 });

/** The request as SmolLM2's ChatML text, for the peers that take a raw prompt (ours
 * reads the template from the file's metadata; the table's token counts must agree). */
function chatml({ system: sys, messages }) {
  const turn = (role, text) => `<|im_start|>${role}\n${text}<|im_end|>\n`;
  return turn('system', sys) + messages.map((m) => turn(m.role, m.content)).join('') + '<|im_start|>assistant\n';
}

const oursPage = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>local model</title><link rel="icon" href="data:,"></head>
<body><script type="module">
  const worker = new Worker('/local/worker.js', { type: 'module' });
  window.load = ({ simd, threads }) => new Promise((ok, fail) => {
    const t0 = performance.now();
    worker.addEventListener('message', ({ data }) => {
      if (data.type === 'loaded') ok({ loadMs: performance.now() - t0, isolated: crossOriginIsolated, threads: data.threads, simd: data.simd, note: data.note });
      if (data.type === 'load_error') fail(new Error(data.message));
    });
    worker.postMessage({ type: 'load', url: '/models/${weights}', context: 2048, threads, ...(simd ? { simd } : {}) });
  });
  let next = 1;
  window.ask = ({ request }) => new Promise((ok, fail) => {
    const id = next++;
    const start = performance.now();
    let firstToken = null;
    const on = ({ data }) => {
      if (data.id !== id) return;
      if (data.type === 'delta' && firstToken === null) firstToken = performance.now() - start;
      if (data.type === 'done') {
        worker.removeEventListener('message', on);
        const { usage, text } = data.response;
        ok({ firstToken, total: performance.now() - start, text, promptTokens: usage.prompt_tokens, completionTokens: usage.completion_tokens });
      }
      if (data.type === 'error') { worker.removeEventListener('message', on); fail(new Error(data.message)); }
    };
    worker.addEventListener('message', on);
    worker.postMessage({ type: 'chat', id, request });
  });
</script></body></html>`;

// The question in both forms: ours takes the chat request, wllama the ChatML text.
const asked = (request) => ({ request, prompt: chatml(request), max_tokens: request.max_tokens });

/**
 * One browser row: the page at `path` in a Chromium of its own, loaded with `options`,
 * warmed up (the first request pays for compiling the hot paths), then the first turn
 * and its follow-up; with the renderer's peak memory and any request off the server.
 */
async function inBrowser(server, path, options) {
  const browser = await launchChromium();
  try {
    const context = await browser.newContext();
    const offsite = [];
    context.on('request', (r) => r.url().startsWith(server.url) || r.url().startsWith('blob:') || r.url().startsWith('data:') || offsite.push(r.url()));
    const tab = await context.newPage();
    await tab.goto(server.url + path.slice(1));
    const info = await tab.evaluate((o) => window.load(o), options);
    await tab.evaluate((q) => window.ask(q), asked(warmUp));
    const cold = await tab.evaluate((q) => window.ask(q), asked(first));
    const warm = await tab.evaluate((q) => window.ask(q), asked(followUp(cold.text)));
    // Time to the first token is the prompt read plus one step.
    const stepMs = (cold.total - cold.firstToken) / Math.max(1, cold.completionTokens - 1);
    return {
      ...info, offsite, text: cold.text, own: cold.own, warmCached: warm.own?.cached,
      promptTokens: cold.promptTokens, completionTokens: cold.completionTokens,
      prompt: cold.promptTokens / ((cold.firstToken - stepMs) / 1000),
      generate: 1000 / stepMs,
      ttft: cold.firstToken,
      warm: warm.firstToken ?? warm.total,
      peak: await rendererPeak(browser),
    };
  } finally {
    await browser.close();
  }
}

const isolation = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const server = await serveDist({
  pages: { '/local.html': oursPage, '/wllama.html': wllamaPage(`/models/${weights}`) },
  mounts: { '/wllama/': wllamaDir },
  headers: isolation,
});
const rows = [];
const notBuilt = (name) => rows.push({ name, missing: 'not built' });
try {
  rows.push({ name: 'ours, CPU, 1 thread', ...(await inBrowser(server, '/local.html', { threads: 1 })) });
  rows.push({ name: 'ours, CPU, 1 thread, plain SIMD', ...(await inBrowser(server, '/local.html', { simd: 'simd128', threads: 1 })) });
  rows.push({ name: `ours, CPU, ${CORES} threads`, ...(await inBrowser(server, '/local.html', { threads: CORES })) });
  notBuilt('ours, WebGPU');
  for (const threads of [1, CORES]) {
    const name = `wllama, ${threads} thread${threads > 1 ? 's' : ''}`;
    if (existsSync(wllamaDir)) rows.push({ name, ...(await inBrowser(server, '/wllama.html', { threads })) });
    else rows.push({ name, missing: 'no node_modules/@wllama/wllama (npm ci installs it)' });
  }
} finally {
  await server.close();
}
const python = llamaCppPython();
for (const threads of [1, CORES]) {
  const name = `llama.cpp native, ${threads} thread${threads > 1 ? 's' : ''}`;
  if (python) rows.push({ name, ...llamaCpp(python, join(models, weights), chatml(first), GENERATE, threads) });
  else rows.push({ name, missing: 'no llama-cpp-python venv (scripts/setup.sh test installs it)' });
}
report(rows);

/** The table (Markdown, as README takes it), then what each row said of itself and
 * the ratios of issue 44's goals. */
function report(all) {
  const f = (n, digits = 1) => (n === undefined || Number.isNaN(n) ? '—' : n.toFixed(digits));
  console.log(`${weights}, ${all[0].promptTokens}-token prompt, ${GENERATE} tokens generated greedily; ${CORES} cores`);
  console.log('');
  console.log('| backend | prompt tok/s | generation tok/s | first token (ms) | follow-up first token (ms) | peak memory (MiB) |');
  console.log('|---|---:|---:|---:|---:|---:|');
  for (const r of all) {
    if (r.missing) console.log(`| ${r.name} | ${r.missing} | | | | |`);
    else console.log(`| ${r.name} | ${f(r.prompt)} | ${f(r.generate)} | ${f(r.ttft, 0)} | ${f(r.warm, 0)} | ${f(r.peak, 0)} |`);
  }
  console.log('');
  const interpreter = all.find((r) => r.base)?.base;
  console.log('Peak memory: for the browser rows, the renderer process (the tab and its workers) at its');
  console.log(`highest resident size (Linux's VmHWM); for llama.cpp, its Python process's (ru_maxrss), Python alone ${f(interpreter, 0)} MiB.`);
  for (const r of all.filter((x) => !x.missing)) {
    const said = [`${r.promptTokens} prompt tokens`, `${r.completionTokens ?? GENERATE} generated`];
    if (r.loadMs) said.push(`loaded in ${f(r.loadMs, 0)} ms`);
    if (r.simd) said.push(`build: ${r.simd === 'relaxed' ? 'relaxed SIMD' : 'plain SIMD'}`);
    if (r.isolated !== undefined) said.push(`crossOriginIsolated ${r.isolated}`);
    if (r.multithread !== undefined) said.push(`threads used ${r.threads} (multithread build: ${r.multithread})`);
    else if (r.threads !== undefined) said.push(`threads used ${r.threads}`);
    if (r.note) said.push(`note "${r.note}"`);
    if (r.says?.length) said.push(`it says "${r.says.join('; ')}"`);
    if (r.own) said.push(`its own timings: prompt ${f(r.own.prompt)}, generation ${f(r.own.generate)} tok/s`);
    if (r.warmCached !== undefined) said.push(`follow-up: ${r.warmCached} tokens from its cache`);
    if (r.offsite?.length) said.push(`REQUESTS OFF THE SERVER: ${r.offsite.join(', ')}`);
    console.log(`  ${r.name}: ${said.join(', ')}`);
    console.log(`    answer: ${JSON.stringify(r.text.slice(0, 70))}…`);
  }
  const by = (name) => all.find((r) => r.name === name && !r.missing);
  const ours = by('ours, CPU, 1 thread');
  const ratio = (peer, goal, mine = ours) => {
    if (!mine || !peer) return `${goal}: — (a row is missing)`;
    return `${goal}: prompt ${f(mine.prompt / peer.prompt, 2)}×, generation ${f(mine.generate / peer.generate, 2)}×`;
  };
  console.log('');
  console.log('Ours ÷ peer, tokens/s (above 1: ours is faster):');
  console.log(`  ${ratio(by('wllama, 1 thread'), 'vs wllama, 1 thread (goal: above 1)')}`);
  const spread = by(`ours, CPU, ${CORES} threads`);
  console.log(`  ${ratio(by(`wllama, ${CORES} threads`), `vs wllama, ${CORES} threads, ours on ${CORES} (goal: above 1)`, spread)}`);
  console.log(`  ${ratio(by('llama.cpp native, 1 thread'), 'vs llama.cpp native, 1 thread (goal: 0.67 or above, within 1.5×)')}`);
  console.log(`  ${ratio(by('llama.cpp native, 1 thread'), `ours on ${CORES} threads vs llama.cpp native, 1 thread (goal: above 1)`, spread)}`);
}
