// The local model on every core (issue 44): on a cross-origin-isolated page (COOP and
// COEP, as scripts/demo.sh serves the demo) the worker starts helper workers that hold
// a share of each weight matrix's rows and multiply it beside the worker's own share
// (js/local-team.js, crates/local/src/llama/team.rs). A row's product is the same code
// on any thread, so the answer is the same token for token as on one thread; the
// worker says how many threads it runs on. (On a page that is not isolated it runs on
// one: e2e/local.test.mjs checks that.) Skipped, saying why, when the model is not
// installed.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, dist, useDist, watch } from './harness.mjs';

const models = join(dist, 'models');
const weights = existsSync(models) ? readdirSync(models).find((f) => f.endsWith('.gguf')) : undefined;
const skip = weights ? false : 'no GGUF in dist/models (scripts/setup.sh test installs SmolLM2)';
const SLOW = 240_000;

const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Threads</title><link rel="icon" href="data:,"></head>
<body>
  <script type="module">
    /** A worker loaded with the model on \`threads\`, asked \`request\`: what it said
     * when loaded, and its answer. */
    window.answer = (url, threads, request) => new Promise((ok, fail) => {
      const worker = new Worker('/local/worker.js', { type: 'module' });
      let loaded;
      worker.onmessage = ({ data }) => {
        if (data.type === 'loaded') {
          loaded = { threads: data.threads, backend: data.backend, note: data.note };
          worker.postMessage({ type: 'chat', id: 1, request });
        }
        if (data.type === 'done') {
          worker.terminate();
          ok({ ...loaded, ...data.response });
        }
        if (data.type === 'load_error' || data.type === 'error') fail(new Error(data.message));
      };
      worker.postMessage({ type: 'load', url, context: 1024, backend: 'cpu', threads });
    });
  </script>
</body>
</html>`;

// A host page's own agent on the local model, through createAgent, on 2 threads.
const host = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Local host</title><link rel="icon" href="data:,"></head>
<body>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    window.progress = [];
    window.hermit = (url, threads) => createAgent({
      name: 'hermit', persist: false, instructions: 'You are a hermit. Answer in one short sentence.',
      model: { local: { url, threads, backend: 'cpu', onProgress: (p) => window.progress.push(p) } },
    });
  </script>
</body>
</html>`;

const isolation = { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' };
const env = useDist({ pages: { '/threads.html': page, '/threads-host.html': host }, headers: isolation });

test('on an isolated page the model runs on several threads and answers token for token as on one', { skip, timeout: 3 * SLOW }, async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const tab = await context.newPage();
  const problems = await watch(tab, env);
  await tab.goto(`${env.server.url}threads.html`);
  assert.equal(await tab.evaluate(() => crossOriginIsolated), true);
  // A prompt read in chunks of many tokens, then greedy tokens one at a time: both
  // shapes of product, shared.
  const request = {
    system: `You keep the town's records. ${'The mill grinds wheat on Mondays and rye on Thursdays; the well by the chapel runs dry in August. '.repeat(8)}`,
    messages: [{ role: 'user', content: 'Describe the town in a few sentences.' }],
    tools: [], tool_choice: 'auto', temperature: 0, max_tokens: 40,
  };
  const url = `/models/${weights}`;
  const answers = {};
  // 3 threads on this 2-core machine too: shares of unequal rows, and a helper more.
  for (const threads of [1, 2, 3]) {
    answers[threads] = await tab.evaluate(([u, n, r]) => window.answer(u, n, r), [url, threads, request]);
    assert.equal(answers[threads].threads, threads, JSON.stringify(answers[threads]));
    assert.equal(answers[threads].backend, 'cpu');
  }
  assert.ok(answers[1].usage.completion_tokens >= 24, JSON.stringify(answers[1].usage));
  for (const threads of [2, 3]) {
    assert.deepEqual(answers[threads].usage, answers[1].usage, `${threads} threads`);
    assert.equal(answers[threads].text, answers[1].text, `${threads} threads`);
  }
  // 'auto': every core the browser reports.
  const cores = await tab.evaluate(() => navigator.hardwareConcurrency);
  const auto = await tab.evaluate(([u, r]) => window.answer(u, 'auto', r), [url, { ...request, max_tokens: 4 }]);
  assert.equal(auto.threads, Math.min(cores, 64));
  t.diagnostic(`${answers[1].usage.completion_tokens} tokens the same on 1, 2 and 3 threads: ${JSON.stringify(answers[1].text.slice(0, 60))}…`);
  assert.deepEqual(problems, []);
});

test('a host page asks createAgent for 2 threads, is told it runs on them, and gets its answer', { skip, timeout: 3 * SLOW }, async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const tab = await context.newPage();
  const problems = await watch(tab, env);
  await tab.goto(`${env.server.url}threads-host.html`);
  await tab.waitForFunction(() => typeof window.hermit === 'function');
  const outcome = await tab.evaluate(async (url) => (await window.hermit(url, 2)).send('Say hello.'), `/models/${weights}`);
  assert.equal(outcome.type, 'answered', JSON.stringify(outcome));
  const said = (await tab.evaluate(() => window.progress)).find((p) => p.ready === true);
  assert.equal(said?.threads, 2, JSON.stringify(said));
  assert.equal(said.backend, 'cpu');
  // Out of range: refused by name before any worker starts.
  const refused = await tab.evaluate(async (url) => {
    try {
      await window.hermit(url, 0);
      return 'created';
    } catch (error) {
      return String(error?.message ?? error);
    }
  }, `/models/${weights}`);
  assert.match(refused, /config\.model\.local\.threads/);
  assert.deepEqual(problems, []);
});
