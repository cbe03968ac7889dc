// Shared by the end-to-end tests: a static server for the release build on a free
// loopback port, a headless Chromium that never reaches beyond it, and the steps every
// test takes (open the demo, send a message, read an answer).
import { createServer } from 'node:http';
import { mkdir, readFile, stat } from 'node:fs/promises';
import { after, before, test as nodeTest } from 'node:test';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));

/**
 * How long a test or a fixture's hook may take unless it names its own `timeout`: a
 * stuck test fails within it rather than hanging the test command (the slowest tests
 * take under 5 s alone, ~10 s on a loaded 2-core machine; node 20's --test-timeout
 * would bound a whole file, not each test).
 */
export const TEST_TIMEOUT = 120_000;

/** node:test's `test`, with `TEST_TIMEOUT` as each test's default limit. */
export function test(name, options, fn) {
  if (typeof options === 'function') [options, fn] = [{}, options];
  return nodeTest(name, { timeout: TEST_TIMEOUT, ...options }, fn);
}
export const dist = resolve(root, 'dist');
/** The headless runtime scripts/headless.sh builds, served under /pkg/. */
export const pkg = resolve(root, 'pkg');
/** The page assistant scripts/page-assistant.sh builds, served under /pkg-page/. */
export const pkgPage = resolve(root, 'pkg-page');
export const artifacts = resolve(root, 'e2e', 'artifacts');
/** The bytes a `/stall/` download sends after its first quarter, before it stalls. */
export const STALL_TAIL = 4096;

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript',
  '.wasm': 'application/wasm',
  '.css': 'text/css',
  '.json': 'application/json',
};

/**
 * A slow OpenAI-compatible model on the same origin, for runs that must still be
 * going when a test acts: it streams one word every 200 ms for about 20 s. `stats`
 * counts the requests and those the client gave up on before the end.
 */
function slowModel(req, res, stats) {
  stats.requests += 1;
  let finished = false;
  req.on('close', () => {
    if (!finished) stats.aborted += 1;
  });
  req.resume();
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
  const chunk = (delta, finish = null) =>
    `data: ${JSON.stringify({ id: 'slow', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.write(chunk({ role: 'assistant', content: '' }));
  let n = 0;
  const timer = setInterval(() => {
    n += 1;
    if (n > 100 || res.destroyed) {
      clearInterval(timer);
      if (!res.destroyed) {
        finished = true;
        res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`);
      }
      return;
    }
    res.write(chunk({ content: `word${n} ` }));
  }, 200);
}

/**
 * A scripted OpenAI-compatible model at /script/v1: `reply(body)` gets each chat
 * request's JSON and returns the assistant message to answer with (a tool call or
 * text); the requests are kept in `requests`.
 */
async function scriptedModel(req, res, reply, requests) {
  if (req.method === 'GET') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ object: 'list', data: [{ id: 'scripted', context_length: 32768 }] }));
    return;
  }
  let text = '';
  for await (const chunk of req) text += chunk;
  const body = JSON.parse(text);
  requests.push(body);
  const message = await reply(body);
  const finish = message.tool_calls ? 'tool_calls' : 'stop';
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({
    id: 'scripted', object: 'chat.completion', model: 'scripted',
    choices: [{ index: 0, message, finish_reason: finish }],
  }));
}

/** Serves `dist/`, `pkg/` under /pkg/, `pkg-page/` under /pkg-page/ (and a slow model at /v1, with its models list) on 127.0.0.1 at a free port; resolves to
 * { url, close, stats, requests }. `pages` maps extra paths to HTML bodies (the benchmark's
 * baseline page); `scripted`, a function from a chat request to the reply, serves a
 * scripted model at /script/v1 whose requests land in `requests`. A file is served
 * whole, or from a byte on (`Range: bytes=N-`, 206, unless an `If-Range` names another
 * version), with its ETag and Last-Modified, and 304 to an `If-None-Match` naming it,
 * as static hosts do; the first whole
 * GET of a path under `/cut/` (the file at the rest of the path) stops halfway, its
 * connection dropped, as a bad network would; a GET under `/stall/` sends a quarter of
 * the file, then `STALL_TAIL` more bytes, then nothing more, its connection held open until the client gives up
 * (`stats.closed[path]` counts those the client closed). `mounts` maps more path prefixes to
 * folders (`{ '/wllama/': dir }`); `headers` are sent with every response (the local
 * model's benchmark sends COOP and COEP, for threads). */
export async function serveDist({ pages = {}, scripted, mounts = {}, headers = {} } = {}) {
  // `served`: how many times each file was read (GET), by path (the local model's
  // weights must be downloaded once, then read from the browser's cache; Settings'
  // address check asks with HEAD, which reads nothing).
  const stats = { requests: 0, aborted: 0, served: {}, ranges: {}, closed: {} };
  const requests = [];
  const roots = { '/pkg/': pkg, '/pkg-page/': pkgPage, ...mounts };
  const server = createServer(async (req, res) => {
    for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
    if (scripted && req.url.startsWith('/script/v1/')) {
      await scriptedModel(req, res, scripted, requests);
      return;
    }
    if (req.method === 'POST' && req.url.startsWith('/v1/chat/completions')) {
      slowModel(req, res, stats);
      return;
    }
    // The client asks for the model's context window once, as vLLM answers it.
    if (req.method === 'GET' && req.url === '/v1/models') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: [{ id: 'slow', context_length: 8192 }] }));
      return;
    }
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (Object.hasOwn(pages, path)) {
      res.writeHead(200, { 'content-type': types['.html'] }).end(pages[path]);
      return;
    }
    const prefix = [...Object.keys(roots), '/cut/', '/stall/'].find((p) => path.startsWith(p));
    const base = roots[prefix] ?? dist;
    const relative = prefix ? path.slice(prefix.length - 1) : path;
    const file = join(base, relative.endsWith('/') ? `${relative}index.html` : relative);
    if (!file.startsWith(base)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      const type = types[extname(file)] ?? 'application/octet-stream';
      // The validators a static host sends (nginx's ETag: mtime and size in hex), and
      // the conditional requests it answers with them; no-cache, so Chromium still asks
      // each time rather than guessing the file fresh from its age.
      const { mtime } = await stat(file);
      const validators = {
        etag: `"${Math.floor(mtime.getTime() / 1000).toString(16)}-${body.length.toString(16)}"`,
        'last-modified': mtime.toUTCString(),
        'cache-control': 'no-cache',
      };
      if (req.headers['if-none-match'] === validators.etag) {
        res.writeHead(304, validators).end();
        return;
      }
      const from = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
      const sameFile = [undefined, validators.etag, validators['last-modified']].includes(req.headers['if-range']);
      if (from && Number(from[1]) < body.length && sameFile) {
        const start = Number(from[1]);
        stats.ranges[path] = [...(stats.ranges[path] ?? []), start];
        res.writeHead(206, {
          'content-type': type,
          'content-length': body.length - start,
          'content-range': `bytes ${start}-${body.length - 1}/${body.length}`,
          ...validators,
        });
        res.end(body.subarray(start));
        return;
      }
      if (req.method === 'GET') stats.served[path] = (stats.served[path] ?? 0) + 1;
      res.writeHead(200, {
        'content-type': type,
        // As a static host sends it (writeHead alone would make Node send chunks).
        'content-length': body.length,
        'accept-ranges': 'bytes',
        ...validators,
      });
      if (prefix === '/stall/' && req.method === 'GET') {
        // A quarter of the file, 4 KiB more a moment later (too little to cross a
        // progress step), then a connection that neither sends nor ends.
        res.on('close', () => { if (!res.writableEnded) stats.closed[path] = (stats.closed[path] ?? 0) + 1; });
        const quarter = body.length >> 2;
        res.write(body.subarray(0, quarter));
        setTimeout(() => res.writableEnded || res.destroyed || res.write(body.subarray(quarter, quarter + STALL_TAIL)), 300);
        return;
      }
      if (prefix === '/cut/' && req.method === 'GET' && stats.served[path] === 1) {
        // Half the file, then the connection drops.
        res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => req.socket.destroy(), 50));
        return;
      }
      res.end(body);
    } catch {
      res.writeHead(404).end('not found');
    }
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(0, '127.0.0.1', ok));
  const { port } = server.address();
  return {
    url: `http://127.0.0.1:${port}/`,
    stats,
    requests,
    close: () => new Promise((ok) => {
      server.closeAllConnections();
      server.close(ok);
    }),
  };
}

/** Headless Debian Chromium with the flags this sandboxed, offline machine needs. */
export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/**
 * The usual fixture of a test file: the release build served and one Chromium,
 * started before its tests and stopped after them. Read `.server` and `.browser`
 * inside tests. `options` go to `serveDist`.
 */
export function useDist(options) {
  const env = {};
  before(async () => {
    env.server = await serveDist(options);
    env.browser = await launchChromium();
    await mkdir(artifacts, { recursive: true });
  }, { timeout: TEST_TIMEOUT });
  after(async () => {
    await env.browser?.close();
    await env.server?.close();
  }, { timeout: TEST_TIMEOUT });
  return env;
}

/**
 * A fresh page of the demo, closed with test `t`. `problems` collects console errors,
 * page errors and any request off the page's origin; tests end by asserting it empty.
 */
export async function openDemo(env, t, { viewport = { width: 1280, height: 900 }, colorScheme = 'light' } = {}) {
  const context = await env.browser.newContext({ viewport, colorScheme });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(env.server.url);
  await appReady(page);
  return { page, problems };
}

/**
 * What every test page is held to, before it loads: the list it returns collects
 * console errors, page errors, Content-Security-Policy violations (a page's policy must
 * hold for everything the app does, whatever the console makes of it) and any request
 * off the page's origin. Tests end by asserting it empty.
 */
export async function watch(page, env) {
  const problems = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await watchPolicy(page, problems);
  page.on('request', (r) => {
    if (!r.url().startsWith(env.server.url) && !r.url().startsWith('data:')) {
      problems.push(`request off the page's origin: ${r.url()}`);
    }
  });
  return problems;
}

/**
 * Adds every Content-Security-Policy violation in `page` (any document it loads, from
 * before its first script) to `problems`, for tests that collect the rest themselves.
 */
export async function watchPolicy(page, problems) {
  await page.exposeFunction('__familiarCspViolation', (what) => problems.push(`CSP violation: ${what}`));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__familiarCspViolation(`${e.effectiveDirective} blocked ${e.blockedURI || 'inline'}`));
  });
}

/**
 * A page of `path` whose .wasm is held back, as a slow network would, until `release()`:
 * what a user sees and can do before the app runs. Closed with test `t`.
 */
export async function openHeld(env, t, { path = '', viewport } = {}) {
  const context = await env.browser.newContext(viewport ? { viewport } : {});
  t.after(() => context.close());
  const page = await context.newPage();
  let release;
  const held = new Promise((ok) => { release = ok; });
  await page.route('**/*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(env.server.url + path);
  return { page, release };
}

/**
 * Resolves once `page` (a page or a frame) has drawn two more frames, then found its
 * main thread idle, then drawn once more: whatever a change set off in it (a
 * ResizeObserver's scroll, an effect, its own requestAnimationFrame or zero-delay timer)
 * has run and been drawn by then. A check that something did not happen is made after
 * this, the page's own events, rather than after a guessed number of milliseconds.
 */
export function settled(page) {
  return page.evaluate(() => new Promise((done) => {
    const frame = (next) => requestAnimationFrame(() => next());
    frame(() => frame(() => requestIdleCallback(() => frame(done))));
  }));
}

/** Waits for the app itself, not index.html's shell, whose composer is there first. */
export async function appReady(page) {
  await page.getByRole('button', { name: 'New', exact: true }).waitFor();
}

/** Types `text` into the composer and sends it. */
export async function send(page, text) {
  const box = page.getByRole('combobox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
}

/** The answer of the `n`th turn (from 1), once that turn has completed. */
export async function answer(page, n) {
  await page.locator('.turn[data-status="completed"]').nth(n - 1).waitFor({ timeout: 10_000 });
  return page.locator('.turn').nth(n - 1).locator('.message-assistant .markdown').innerText();
}

/** Sends `text` and returns the answer of the turn it starts, the `n`th. */
export async function ask(page, text, n = 1) {
  await send(page, text);
  return answer(page, n);
}

/** Presses Tab (Shift+Tab when `back`) until `locator` has focus; fails after 80. */
async function tabToLocator(page, locator, back) {
  for (let i = 0; i < 80; i += 1) {
    if (await locator.evaluate((el) => el === document.activeElement)) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached ${locator}`);
}

/**
 * Presses the top bar's `name` button (History, Guild, World, Settings, Inspector) as
 * a person would at the page's width: wide, it is in the bar; narrow (900 px and
 * less, src/ui/top_bar.rs) it is in the menu that the bar's Menu button opens. By
 * pointer, or with `{ keyboard: true }` by keys: Shift+Tab back to the bar's button
 * (or to Menu, Enter, then Tab to the item), then Enter.
 */
export async function topBar(page, name, { keyboard = false } = {}) {
  const item = page.locator('.familiar-actions').getByRole('button', { name, exact: true });
  const menu = page.locator('.familiar-actions').getByRole('button', { name: 'Menu', exact: true });
  const inMenu = !(await item.isVisible()) && await menu.isVisible();
  if (!keyboard) {
    if (inMenu) await menu.click();
    await item.click();
    return;
  }
  if (inMenu) {
    await tabToLocator(page, menu, true);
    await page.keyboard.press('Enter');
    await item.waitFor();
    await tabToLocator(page, item, false);
  } else {
    await tabToLocator(page, item, true);
  }
  await page.keyboard.press('Enter');
}
