// The demo's Settings find the model servers on this machine (issue 63), on the full
// build (dist/). "Find servers on this machine" asks Ollama's and LM Studio's usual
// ports and the loopback address typed in the proxy URL field for their models. Real
// servers on loopback:
// - llama.cpp's OpenAI-compatible server with SmolLM2 (llama-cpp-python, which the test
//   command runs: FAMILIAR_REAL_MODEL_URL) is found at the address typed, its model
//   listed and marked as calling tools; chosen, it fills the proxy's address and model
//   with no key, and once saved the real model answers in the demo's chat;
// - a server that refuses this page's origin as Ollama does (HTTP 403, no CORS headers)
//   is told apart from nothing listening (a port closed) and from a server with no
//   model, each in its sentence, the first with the setting that lets the page in;
// - a provider key typed in the extra header is refused, saying why and what to use.
// The usual ports are asked too; what answers there depends on the machine, so only
// that each is said is held. The fetches the probe makes to loopback and the
// console's words for those refused are the only requests and errors allowed.
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { test, appReady, artifacts, topBar, useDist, watch } from './harness.mjs';

const LLAMA = process.env.FAMILIAR_REAL_MODEL_URL;

const env = useDist();

/** A server on a free loopback port answering with `handler`; closed with test `t`. */
async function serve(t, handler) {
  const requests = [];
  const server = createServer((req, res) => {
    requests.push({ method: req.method, url: req.url, origin: req.headers.origin, mode: req.headers['sec-fetch-mode'] });
    handler(req, res);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  t.after(() => new Promise((ok) => { server.closeAllConnections(); server.close(ok); }));
  return { url: `http://127.0.0.1:${server.address().port}`, requests };
}

/** A loopback port nothing listens on (bound, then let go). */
async function closedPort() {
  const server = createServer();
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  await new Promise((ok) => server.close(ok));
  return port;
}

/** The demo with its Settings open on the proxy, and what it is held to. */
async function settings(t) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const all = await watch(page, env);
  await page.goto(env.server.url);
  await appReady(page);
  await topBar(page, 'Settings');
  await page.locator('.use-proxy').check();
  // The probe's own requests to loopback, and Chromium's words for those refused.
  const expected = (p) =>
    /^request off the page's origin: http:\/\/127\.0\.0\.1:\d+\//.test(p) ||
    /^console: (Failed to load resource|Access to fetch at 'http:\/\/127\.0\.0\.1)/.test(p);
  return { page, problems: () => all.filter((p) => !expected(p)) };
}

/**
 * Types `url` in the proxy URL field, presses Find, waits for the row that starts with
 * `last` (the typed address's, or another machine's: none, so two rows), and returns
 * what each row said.
 */
async function find(page, url, last) {
  await page.locator('.proxy-url').fill(url);
  await page.locator('.find-servers').click();
  if (last) {
    await page.locator('.server-said', { hasText: last }).waitFor();
  } else {
    await page.waitForFunction(() => document.querySelectorAll('.server-said').length === 2);
  }
  await page.locator('.find-servers[aria-busy="false"]').waitFor();
  return page.locator('.server-said').allTextContents();
}

test('the real llama.cpp server typed in the URL field is found with its model, which chosen and saved answers in the chat', { skip: LLAMA ? false : 'FAMILIAR_REAL_MODEL_URL is not set (scripts/test.sh runs llama-cpp-python)', timeout: 600_000 }, async (t) => {
  const { page, problems } = await settings(t);
  const base = `${LLAMA}/v1`;
  const said = await find(page, `${base}/chat/completions`, `The server at ${base}`);
  assert.equal(said.length, 3, JSON.stringify(said));
  assert.match(said[0], /^Ollama \(http:\/\/127\.0\.0\.1:11434\/v1\)/);
  assert.match(said[1], /^LM Studio \(http:\/\/127\.0\.0\.1:1234\/v1\)/);
  assert.equal(said[2], `The server at ${base} answers with 1 model: pick it below.`);
  const model = page.locator('.server-model', { hasText: 'smollm2' });
  assert.equal(await model.textContent(), '★ smollm2', 'known to call tools');
  await page.locator('.proxy-header').fill('X-Proxy-Token: for-another-proxy');
  await page.locator('.proxy-window').fill('128000');
  await model.click();
  assert.equal(await page.locator('.proxy-url').inputValue(), base);
  assert.equal(await page.locator('.proxy-model').inputValue(), 'smollm2');
  assert.equal(await page.locator('.proxy-header').inputValue(), '', 'no key for a server on this machine');
  assert.equal(await page.locator('.proxy-window').inputValue(), '', "another model's window does not follow");
  await page.locator('.servers-note', { hasText: `Chosen: smollm2 at ${base}, with no key. Save to use it.` }).waitFor();
  // llama-cpp-python's list names no window, and this one runs SmolLM2 with 2,048
  // tokens, less than the demo's agent asks unfitted: said, each request fits it.
  await page.locator('.proxy-window').fill('2048');
  await page.screenshot({ path: `${artifacts}/local-servers-found.png` });
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.settings-close').click();
  const asked = [];
  page.on('request', (r) => r.url().startsWith(LLAMA) && r.method() === 'POST' && asked.push(r));
  const box = page.getByRole('combobox', { name: 'Message' });
  await box.fill('Say hello.');
  await box.press('Enter');
  const turn = page.locator('.turn').first();
  await page.locator('.turn:is([data-status="completed"], [data-status="failed"], [data-status="aborted"])').first()
    .waitFor({ timeout: 540_000 });
  const answer = (await turn.locator('.message-assistant').last().innerText()).trim();
  assert.equal(await turn.getAttribute('data-status'), 'completed', answer);
  assert.ok(answer.length > 0, 'the real model answered');
  assert.ok(asked.length >= 1, 'through the server found');
  assert.equal(asked[0].url(), `${base}/chat/completions`);
  const headers = await asked[0].allHeaders();
  assert.equal(headers.authorization, undefined);
  assert.equal(headers['x-proxy-token'], undefined);
  assert.deepEqual(problems(), []);
});

test("a server refusing this page's origin, a port where nothing listens and a server with no model are each said, the first with the setting that lets the page in", async (t) => {
  // As Ollama answers an origin it was not told of: 403, no CORS headers.
  const refusing = await serve(t, (req, res) => res.writeHead(req.headers.origin ? 403 : 200).end());
  const empty = await serve(t, (req, res) =>
    res.writeHead(200, { 'content-type': 'application/json', 'access-control-allow-origin': '*' })
      .end(JSON.stringify({ object: 'list', data: [] })));
  const { page, problems } = await settings(t);
  const origin = env.server.url.replace(/\/$/, '');
  let said = await find(page, `${refusing.url}/v1`, `The server at ${refusing.url}/v1`);
  assert.equal(said[2],
    `The server at ${refusing.url}/v1 runs but refuses this page, ${origin} (CORS): let it allow requests from ${origin}: ` +
    `for Ollama, quit Ollama, then start it with “OLLAMA_ORIGINS=${origin} ollama serve” (on macOS, “launchctl setenv ` +
    `OLLAMA_ORIGINS "${origin}"” and restart the app); in LM Studio's Developer tab, turn on “Enable CORS” in the server's ` +
    'settings.');
  // The page's own request, then the no-cors one (which carries no Origin) that tells
  // a refusal from silence.
  assert.deepEqual(refusing.requests.map((r) => [r.url, r.origin, r.mode]),
    [['/v1/models', origin, 'cors'], ['/v1/models', undefined, 'no-cors']]);
  assert.equal(await page.locator('.server-model').count(), 0);
  const port = await closedPort();
  said = await find(page, `http://127.0.0.1:${port}`, `The server at http://127.0.0.1:${port}/v1`);
  assert.equal(said[2], `The server at http://127.0.0.1:${port}/v1: nothing answered.`);
  said = await find(page, `${empty.url}/v1`, `The server at ${empty.url}/v1`);
  assert.equal(said[2], `The server at ${empty.url}/v1 answers but serves no model yet: load one in it, then press Find again.`);
  assert.equal(await page.locator('.server-model').count(), 0);
  // Another machine's address is never asked: only the usual ports are.
  said = await find(page, 'https://llm.example.com/v1', null);
  assert.equal(said.length, 2, JSON.stringify(said));
  await page.screenshot({ path: `${artifacts}/local-servers-refused.png` });
  assert.deepEqual(problems(), []);
});

test('a provider key typed in the extra header is refused on its field, saying why and what to use instead', async (t) => {
  const { page, problems } = await settings(t);
  await page.locator('.proxy-url').fill('https://llm.example.com/v1');
  await page.locator('.proxy-model').fill('gpt-4o-mini');
  await page.locator('.proxy-header').fill('Authorization: Bearer sk-proj-4f9c2d7e8a1b3c5d6e7f8a9b'); // fake-key
  await page.locator('.settings-save').click();
  const error = page.locator('#error-model-header');
  await error.waitFor();
  const words = await error.textContent();
  assert.match(words, /^this looks like a provider API key, which a web page must never hold: any script on the page/);
  assert.match(words, /Use the Familiar extension, which keeps the key in its own storage, or a proxy that keeps the key/);
  assert.equal(await page.locator('.proxy-header').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('.proxy-header').evaluate((e) => e === document.activeElement), true, 'the field to fix has focus');
  assert.equal(await page.locator('.settings-saved').textContent(), '');
  const kept = await page.evaluate(() => JSON.stringify(localStorage));
  assert.ok(!kept.includes('sk-proj-'), 'the key was not kept');
  assert.deepEqual(problems(), []);
});
