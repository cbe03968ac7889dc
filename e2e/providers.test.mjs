// The page assistant's extension with the model people already have (issue 63):
// a provider's key, or a model on this machine, chosen in the extension's options
// (pkg-extension/, scripts/extension.sh), loaded unpacked into headless Chromium.
// Real servers on loopback, started by the test command (scripts/test.sh):
// - LiteLLM (FAMILIAR_LITELLM_URL) stands in for each hosted provider: a recording
//   stand-in in front of it takes /<preset>/v1/… and passes it on, so each preset's
//   headers are recorded on arrival and LiteLLM checks the key for real
//   (tests/servers/litellm/browser_auth.py takes it as a Bearer or X-Proxy-Token);
// - llama.cpp's OpenAI-compatible server (llama-cpp-python with SmolLM2-135M,
//   FAMILIAR_REAL_MODEL_URL) is "a model on this machine", behind the same stand-in.
// Held to:
// - each preset sends the key in its documented header (Bearer; Anthropic's with its
//   browser opt-in; a Familiar proxy's X-Proxy-Token), and "Try it" runs one tool
//   call end to end through it;
// - "Try it" fails with the reason: a wrong key, no such address (404), a model that
//   cannot call tools (and not for a refused tool_choice), a rate limit told apart
//   from an account out of credit, no server at all;
// - the stored key is shown masked, never in full, and one click removes it;
// - the side panel's requests carry the key to the provider's origin and nowhere else
//   (the visited site's server records none), and the engine's config never holds it;
// - a stored key is bound to the provider and origin it was entered for: List the
//   models, Try it and the panel send none to a second stand-in origin, and Save there
//   drops it, saying so; an older version's { token } is kept through Save;
// - with the local model, the panel answers and its requests carry no key.
import { before, after } from 'node:test';
import { test } from './harness.mjs';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const extension = resolve(fileURLToPath(new URL('..', import.meta.url)), 'pkg-extension');
const id = [...createHash('sha256').update(extension).digest('hex').slice(0, 32)]
  .map((c) => String.fromCharCode(97 + parseInt(c, 16)))
  .join('');
const extensionOrigin = `chrome-extension://${id}`;

const LITELLM = process.env.FAMILIAR_LITELLM_URL;
const LLAMA = process.env.FAMILIAR_REAL_MODEL_URL;
// The one token the tests' LiteLLM opens to a browser (tests/servers/litellm/browser_auth.py).
const KEY = 'familiar-proxy-token-7c1d9e2b4a6f8e3d5c0b';

/** Where the stand-in passes a preset's requests on. */
const upstream = (preset) => (preset === 'local' ? LLAMA : LITELLM);

/**
 * The recording stand-in: /<preset>/v1/… passed on to LiteLLM (or, for `local`, to
 * llama.cpp) with every request's method, path and headers recorded; /tools-refused/
 * answers as Ollama does for a model without tools; /scripted/ is a model that
 * answers in words (for the panel); anything else is a 404. Its second port serves
 * the page the panel's tab visits, recording too.
 */
async function standIn() {
  const requests = [];
  // A wildcard never covers Authorization: each header a preset sends is named.
  const cors = { 'access-control-allow-origin': '*',
    'access-control-allow-headers': 'authorization, x-proxy-token, anthropic-dangerous-direct-browser-access, content-type, accept',
    'access-control-allow-methods': 'GET, POST' };
  const server = createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const [, preset, rest] = /^\/([\w-]+)(\/.*)$/.exec(req.url) ?? [];
    requests.push({ port: 'provider', method: req.method, preset, path: rest, headers: req.headers, body });
    if (req.method === 'OPTIONS') return res.writeHead(204, cors).end();
    if (preset === 'tools-refused') {
      return res.writeHead(400, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(
        { error: { message: 'registry.ollama.ai/library/gemma:2b does not support tools', type: 'api_error' } }));
    }
    if (preset === 'choice-refused') {
      return res.writeHead(400, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(
        { error: { message: "tool_choice 'required' is not supported by this model", type: 'invalid_request_error' } }));
    }
    if (preset === 'rate-limited') {
      // Gemini's ordinary rate limit (RESOURCE_EXHAUSTED), as its OpenAI endpoint says it.
      return res.writeHead(429, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify([{ error: {
        code: 429, status: 'RESOURCE_EXHAUSTED',
        message: 'You exceeded your current quota, please check your plan and billing details. Please retry in 20.5s.',
      } }]));
    }
    if (preset === 'out-of-credit') {
      return res.writeHead(429, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify(
        { error: { message: 'You exceeded your current quota, please check your plan and billing details.',
          type: 'insufficient_quota', code: 'insufficient_quota' } }));
    }
    if (preset === 'scripted' && rest.endsWith('/chat/completions')) {
      return res.writeHead(200, { ...cors, 'content-type': 'application/json' }).end(JSON.stringify({
        id: 'scripted', object: 'chat.completion', model: 'scripted',
        choices: [{ index: 0, message: { role: 'assistant', content: 'Tawny owls call at night.' }, finish_reason: 'stop' }],
      }));
    }
    const known = [...PRESETS.map(([name]) => name), 'local'];
    if (!known.includes(preset) || !rest.startsWith('/v1/')) return res.writeHead(404, cors).end('not found');
    const headers = Object.fromEntries(Object.entries(req.headers)
      .filter(([name]) => ['authorization', 'x-proxy-token', 'content-type', 'accept'].includes(name)));
    const answer = await fetch(`${upstream(preset)}${rest}`, { method: req.method, headers, body: req.method === 'POST' ? body : undefined });
    const type = answer.headers.get('content-type') ?? 'application/json';
    res.writeHead(answer.status, { ...cors, 'content-type': type });
    for await (const chunk of answer.body) res.write(chunk);
    res.end();
  });
  const site = createServer((req, res) => {
    requests.push({ port: 'site', method: req.method, path: req.url, headers: req.headers, body: '' });
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tawny owls</title><link rel="icon" href="data:,"></head>
<body><main><h1>Tawny owls</h1><p>Tawny owls live in woods. They call at night.</p></main></body></html>`);
  });
  const listen = (s) => new Promise((ok, fail) => s.once('error', fail).listen(0, '127.0.0.1', ok));
  await listen(server);
  await listen(site);
  const stop = (s) => new Promise((ok) => { s.closeAllConnections(); s.close(ok); });
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    siteUrl: `http://127.0.0.1:${site.address().port}/`,
    requests,
    close: () => Promise.all([stop(server), stop(site)]),
  };
}

let stand;
let context;
let profile;
before(async () => {
  assert.ok(LITELLM && LLAMA, 'FAMILIAR_LITELLM_URL and FAMILIAR_REAL_MODEL_URL name the servers (scripts/test.sh starts them)');
  stand = await standIn();
  profile = await mkdtemp(join(tmpdir(), 'familiar-providers-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    ignoreDefaultArgs: ['--disable-extensions'],
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
      `--disable-extensions-except=${extension}`, `--load-extension=${extension}`],
  });
});
after(async () => {
  await context?.close();
  await stand?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

/** The options page, with `preset` chosen and its address on the stand-in (`path`). */
async function options(preset, path, { key, model = 'scripted', stream = true } = {}) {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${extensionOrigin}/options.html`);
  await page.getByLabel('Provider').selectOption(preset);
  await page.getByLabel(/Model address/).fill(path.startsWith('http') ? path : `${stand.url}${path}`);
  if (key !== undefined) await page.getByLabel(/API key/).fill(key);
  await page.getByLabel('Model name').fill(model);
  await page.getByLabel('Stream answers').setChecked(stream);
  return { page, errors };
}

/** Clicks Try it; the check's sentence once it has one. */
async function tryIt(page) {
  await page.getByRole('button', { name: 'Try it' }).click();
  const check = page.getByRole('status', { name: 'Check' });
  await check.filter({ hasText: /^(It works|Try it failed)/ }).waitFor({ timeout: 90_000 });
  return check.innerText();
}

/** The requests the stand-in recorded for `preset` since `from`. */
const recorded = (preset, from) => stand.requests.slice(from).filter((r) => r.preset === preset);

const PRESETS = [
  ['openai', { authorization: `Bearer ${KEY}` }],
  ['anthropic', { authorization: `Bearer ${KEY}`, 'anthropic-dangerous-direct-browser-access': 'true' }],
  ['gemini', { authorization: `Bearer ${KEY}` }],
  ['openrouter', { authorization: `Bearer ${KEY}` }],
  ['groq', { authorization: `Bearer ${KEY}` }],
  ['custom', { authorization: `Bearer ${KEY}` }],
  ['proxy', { 'x-proxy-token': KEY }],
];

test("each provider's preset sends the key in its own header, and Try it runs one tool call through LiteLLM", { timeout: 300_000 }, async () => {
  for (const [preset, expected] of PRESETS) {
    const from = stand.requests.length;
    const { page, errors } = await options(preset, `/${preset}/v1`, { key: KEY });
    assert.equal(await tryIt(page), 'It works: scripted called get_weather({"city":"Paris"}).', preset);
    const [sent] = recorded(preset, from).filter((r) => r.method === 'POST');
    assert.ok(sent, `${preset}: the chat request arrived`);
    assert.equal(sent.path, '/v1/chat/completions');
    for (const [name, value] of Object.entries(expected)) assert.equal(sent.headers[name], value, `${preset}: ${name}`);
    const other = preset === 'proxy' ? 'authorization' : 'x-proxy-token';
    assert.equal(sent.headers[other], undefined, `${preset}: the key travels in its own header only`);
    assert.equal(sent.headers.origin, extensionOrigin, `${preset}: from the extension's origin`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('Try it says what failed: the key, the address, a model without tool calls (not a refused tool_choice), a rate limit, no credit, no server', { timeout: 120_000 }, async () => {
  const cases = [
    ['openai', '/openai/v1', 'not-the-key', /^Try it failed: The key was refused \(HTTP 401\)/],
    ['openai', '/nowhere/v1', KEY, /^Try it failed: Nothing at that address or no such model \(HTTP 404\)/],
    ['custom', '/tools-refused/v1', KEY, /^Try it failed: This model cannot call tools, which the assistant needs \(registry\.ollama\.ai\/library\/gemma:2b does not support tools\)/],
    ['custom', '/choice-refused/v1', KEY, /^Try it failed: The server answered HTTP 400 \(tool_choice 'required' is not supported by this model\)\.$/],
    ['gemini', '/rate-limited/v1', KEY, /^Try it failed: Rate limited \(HTTP 429\) \(You exceeded your current quota, .*\): try again in a moment\.$/],
    ['openai', '/out-of-credit/v1', KEY, /^Try it failed: The account behind the key has no quota or credit left \(HTTP 429\)/],
    ['ollama', 'http://127.0.0.1:9/v1', undefined, /^Try it failed: No answer from http:\/\/127\.0\.0\.1:9: check the address, that the server is running, and that the extension may reach it \(allow it when the browser asks, then try again\)\. Ollama refuses origins it was not told of: quit it, then start it with OLLAMA_ORIGINS=chrome-extension:\/\//],
  ];
  for (const [preset, path, key, expected] of cases) {
    const { page, errors } = await options(preset, path, { key });
    assert.match(await tryIt(page), expected, `${preset} at ${path}`);
    assert.deepEqual(errors, []);
    await page.close();
  }
});

test('the stored key is shown masked, never in full, and one click removes it', async () => {
  const { page, errors } = await options('openai', '/openai/v1', { key: KEY });
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved: the panel uses this model' }).waitFor();
  await page.reload();
  await page.getByText('Stored key:').waitFor();
  assert.equal(await page.locator('#key-masked').innerText(), 'fam…5c0b');
  assert.equal(await page.getByLabel(/API key/).inputValue(), '', 'the key field stays empty');
  assert.ok(!(await page.content()).includes(KEY), 'the whole key is nowhere in the page');
  assert.equal(await page.evaluate(async () => (await chrome.storage.local.get('key')).key !== undefined), true);
  await page.getByRole('button', { name: 'Remove the key' }).click();
  await page.getByRole('status').filter({ hasText: 'The key is removed from this browser.' }).waitFor();
  assert.deepEqual(await page.evaluate(() => chrome.storage.local.get(['key', 'token'])), {});
  assert.deepEqual(errors, []);
  await page.close();
});

/** Saves `preset` at `path`, then opens the site's page and the panel pinned to its tab. */
async function panelWith(preset, path, key) {
  const { page } = await options(preset, path, { key, stream: false, model: preset === 'local' ? 'smollm2' : 'scripted' });
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved: the panel uses this model' }).waitFor();
  return panelOn(page);
}

/** Opens the site's page and the panel pinned to its tab (closing `page`, an extension page). */
async function panelOn(page) {
  const tab = await context.newPage();
  await tab.goto(stand.siteUrl);
  const tabId = await page.evaluate(async (url) => {
    for (const t of await chrome.tabs.query({})) {
      const top = await chrome.webNavigation.getFrame({ tabId: t.id, frameId: 0 }).catch(() => null);
      if (top?.url === url) return t.id;
    }
    return null;
  }, stand.siteUrl);
  await page.close();
  const panel = await context.newPage();
  const errors = [];
  panel.on('pageerror', (e) => errors.push(`panel: ${e.message}`));
  await panel.goto(`${extensionOrigin}/panel.html?tab=${tabId}`);
  await panel.getByRole('status').filter({ hasText: 'Acting on:' }).waitFor({ timeout: 20_000 });
  // The chat is mounted, the site's conversation restored, once its intro shows: a
  // count of answers taken before it would count the intro as a new answer.
  await panel.locator('.msg.assistant').filter({ hasText: /^Ask about / }).waitFor({ timeout: 20_000 });
  return { tab, panel, errors };
}

async function ask(panel, text) {
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  await box.fill(text);
  await box.press('Enter');
}

test("the panel's requests carry the key to the provider's origin only, and the engine never holds it", async () => {
  const from = stand.requests.length;
  const { tab, panel, errors } = await panelWith('openai', '/scripted/v1', KEY);
  await ask(panel, 'Do tawny owls call?');
  await panel.locator('.msg.assistant').filter({ hasText: 'Tawny owls call at night.' }).waitFor({ timeout: 20_000 });
  const chats = recorded('scripted', from).filter((r) => r.method === 'POST');
  assert.ok(chats.length >= 1, 'the panel asked the provider');
  for (const chat of chats) {
    assert.equal(chat.headers.authorization, `Bearer ${KEY}`);
    assert.equal(chat.headers.origin, extensionOrigin);
  }
  const elsewhere = stand.requests.slice(from).filter((r) => r.port === 'site');
  assert.ok(elsewhere.length >= 1, "the site's page was loaded");
  for (const request of elsewhere) {
    assert.ok(!JSON.stringify(request).includes(KEY), `the key never reaches the site: ${request.path}`);
  }
  assert.equal(await tab.evaluate(() => JSON.stringify({ ...localStorage }).includes('familiar-proxy-token')), false);
  // What the engine was given: the saved state names the model, never the key.
  const kept = await panel.evaluate(() => chrome.storage.local.get(null));
  const conversations = Object.entries(kept).filter(([k]) => k.startsWith('conversations:'));
  assert.ok(conversations.length >= 1);
  assert.ok(!JSON.stringify(conversations).includes(KEY), 'no conversation holds the key');
  assert.deepEqual(errors, []);
  await panel.close();
  await tab.close();
});

/** The requests `server` recorded since `from` that carry a key header. */
const keyed = (server, from) => server.requests.slice(from)
  .filter((r) => r.headers.authorization !== undefined || r.headers['x-proxy-token'] !== undefined);

/** Clicks "List the models"; the check's sentence once the answer is in. */
async function listModels(page) {
  await page.getByRole('button', { name: 'List the models' }).click();
  const check = page.getByRole('status', { name: 'Check' });
  await check.filter({ hasNotText: /^Asking / }).filter({ hasText: /\S/ }).waitFor({ timeout: 30_000 });
  return check.innerText();
}

test('a key stored for one origin is not sent to another: List the models, Try it and the panel send none, and Save drops it', { timeout: 120_000 }, async () => {
  const other = await standIn();
  try {
    const { page, errors } = await options('openai', '/openai/v1', { key: KEY });
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: the panel uses this model' }).waitFor();
    await page.reload();
    await page.getByText('Stored key:').waitFor();
    assert.equal(await page.locator('#key-origin').innerText(), `OpenAI at ${stand.url}`);
    const otherOrigin = other.url;
    const notSent = `The stored key is for OpenAI at ${stand.url}: it was not sent to ${otherOrigin}.`;

    // Another provider at another origin, and the key field left empty.
    await page.getByLabel('Provider').selectOption('openrouter');
    await page.getByLabel(/Model address/).fill(`${otherOrigin}/openrouter/v1`);
    await page.getByLabel('Model name').fill('scripted');
    let from = other.requests.length;
    const listed = await listModels(page);
    assert.ok(listed.endsWith(notSent), listed);
    assert.ok(other.requests.slice(from).some((r) => r.path === '/v1/models'), 'the list was asked of the second origin');
    assert.deepEqual(keyed(other, from), [], 'List the models sent no key there');
    from = other.requests.length;
    const tried = await tryIt(page);
    assert.match(tried, /^Try it failed: The key was refused \(HTTP 401\)/);
    assert.ok(tried.endsWith(notSent), tried);
    assert.ok(other.requests.slice(from).some((r) => r.method === 'POST'), 'Try it asked the second origin');
    assert.deepEqual(keyed(other, from), [], 'Try it sent no key there');

    // "Any address" at the same origin as the key's: another provider, so no key either.
    await page.getByLabel('Provider').selectOption('custom');
    await page.getByLabel(/Model address/).fill(`${stand.url}/custom/v1`);
    from = stand.requests.length;
    assert.match(await tryIt(page), /^Try it failed: The key was refused \(HTTP 401\)/);
    assert.deepEqual(keyed(stand, from), [], 'a key for OpenAI is not sent as another provider\'s');

    // Save at the second origin with no key typed: the old key is dropped, and said so.
    await page.getByLabel('Provider').selectOption('openai');
    await page.getByLabel(/Model address/).fill(`${otherOrigin}/scripted/v1`);
    await page.getByLabel('Stream answers').setChecked(false);
    from = other.requests.length;
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: the panel uses this model' }).first().waitFor();
    const status = await page.locator('#status').innerText();
    assert.ok(status.includes(`The stored key was for OpenAI at ${stand.url}: it is removed, not sent to ${otherOrigin}`), status);
    assert.deepEqual(await page.evaluate(() => chrome.storage.local.get(['key', 'token'])), {});
    assert.equal(await page.getByText('Stored key:').isHidden(), true);
    assert.deepEqual(errors, []);

    // The panel, given a key stored for the first origin and a model at the second
    // (as a changed or tampered store would hold them), sends the key nowhere.
    await page.evaluate(({ key, origin }) => chrome.storage.local.set({ key: { key, provider: 'openai', origin } }),
      { key: KEY, origin: stand.url });
    const { tab, panel, errors: panelErrors } = await panelOn(page);
    const before = await panel.locator('.msg.assistant').count();
    await ask(panel, 'Do tawny owls call?');
    await panel.locator('.msg.assistant').nth(before).filter({ hasText: 'Tawny owls call at night.' }).waitFor({ timeout: 20_000 });
    assert.ok(other.requests.slice(from).some((r) => r.preset === 'scripted' && r.method === 'POST'), 'the panel asked the second origin');
    assert.deepEqual(keyed(other, from), [], 'the panel sent no key to an origin it was not stored for');
    assert.deepEqual(panelErrors, []);
    await panel.close();
    await tab.close();
  } finally {
    await other.close();
  }
});

test("an older version's proxy token ({ model, token }) is kept through Save, bound to its proxy, and still reaches it", { timeout: 120_000 }, async () => {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(`${extensionOrigin}/options.html`);
  await page.evaluate(async (old) => {
    await chrome.storage.local.remove(['model', 'key', 'token']);
    await chrome.storage.local.set(old);
  }, { model: { url: `${stand.url}/proxy/v1`, model: 'scripted', stream: true }, token: KEY });
  await page.reload();
  await page.getByText('Stored key:').waitFor();
  assert.equal(await page.locator('#key-masked').innerText(), 'fam…5c0b');
  assert.equal(await page.getByLabel('Provider').inputValue(), 'proxy');
  await page.getByRole('button', { name: 'Save' }).click();
  await page.getByRole('status').filter({ hasText: 'Saved: the panel uses this model' }).first().waitFor();
  assert.deepEqual(await page.evaluate(() => chrome.storage.local.get(['key', 'token'])),
    { key: { key: KEY, provider: 'proxy', origin: stand.url } });
  await page.reload();
  await page.getByText('Stored key:').waitFor();
  const from = stand.requests.length;
  assert.equal(await tryIt(page), 'It works: scripted called get_weather({"city":"Paris"}).');
  const [sent] = recorded('proxy', from).filter((r) => r.method === 'POST');
  assert.equal(sent?.headers['x-proxy-token'], KEY, 'the migrated token reaches its proxy');
  assert.deepEqual(errors, []);
  await page.close();
});

test('a model on this machine (llama.cpp): Try it calls the tool, and the panel answers with no key sent', { timeout: 300_000 }, async () => {
  const { page, errors } = await options('custom', '/local/v1', { model: 'smollm2', stream: false });
  // SmolLM2-135M picks the city as it samples; the call's shape is the schema's.
  assert.match(await tryIt(page), /^It works: smollm2 called get_weather\(\{"city":".*"\}\)\.$/);
  await page.close();
  const from = stand.requests.length;
  const { tab, panel, errors: panelErrors } = await panelWith('lmstudio', `${stand.url}/local/v1`);
  // The site's conversation goes on from the test before: a new answer is waited for.
  const before = await panel.locator('.msg.assistant').count();
  await ask(panel, 'Say hello.');
  await panel.locator('.msg.assistant').nth(before).waitFor({ timeout: 240_000 });
  // The answer shows (empty, then "…") before its request leaves: that is waited for.
  for (let i = 0; i < 600 && !recorded('local', from).some((r) => r.method === 'POST'); i++) {
    await new Promise((ok) => setTimeout(ok, 100));
  }
  assert.match(await panel.locator('.msg.assistant').nth(before).innerText(), /\S/, 'the local model answered');
  const chats = recorded('local', from).filter((r) => r.method === 'POST');
  assert.ok(chats.length >= 1, 'the panel asked the local model');
  for (const chat of chats) {
    assert.equal(chat.headers.authorization, undefined, 'no key to a local server');
    assert.equal(chat.headers['x-proxy-token'], undefined);
  }
  assert.deepEqual([...errors, ...panelErrors], []);
  await panel.close();
  await tab.close();
});
