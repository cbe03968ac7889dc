// Start-up of each build (issue 26), in headless Chromium: the time from navigation to
// an agent that answers — `createAgent` resolved for the lean runtime (pkg/) and the
// page assistant (pkg-page/), the demo's app mounted (`familiar:mounted`) for the full
// build (dist/) — cold (a fresh browser context: new renderer, empty caches) and warm
// (a reload), beside the floor: a static page with no script, served the same way.
// Then the same cold, over a throttled link (1.6 Mbit/s down, 150 ms round trip, set
// through the DevTools protocol), files served gzip-compressed as a static host would.
// The wasm is served as application/wasm, so wasm-bindgen's loader compiles it while
// it downloads (instantiateStreaming). Then the demo's parts (issue 45: the World, the
// Guild and Settings, each its own module fetched when first opened): over the same
// throttled link, from a click on each one's button to its heading on screen, with the
// modules the click fetched and their weight, beside the first load's.
// Run through `bench/ui` (which builds dist/), or
// alone once pkg/, pkg-page/ and dist/ are built:
//
//   node bench/startup.mjs          RUNS=9 by default (the median is printed)
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';
import { gzipSync } from 'node:zlib';
import { dist, launchChromium, pkg, pkgPage } from '../e2e/harness.mjs';

const RUNS = Number(process.env.RUNS ?? 9);
const types = {
  '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.wasm': 'application/wasm',
  '.css': 'text/css', '.json': 'application/json', '.svg': 'image/svg+xml',
};

// A page that makes one agent and marks when it is ready.
const agentPage = (base, config) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>start-up</title><link rel="icon" href="data:,"></head>
<body><p>A page with an agent.</p><script type="module">
  import init, { createAgent } from '${base}familiar.js';
  await init({ module_or_path: '${base}familiar_bg.wasm' });
  window.agent = await createAgent(${JSON.stringify(config)});
  performance.mark('bench:ready');
</script></body></html>`;
const pages = {
  '/floor.html': `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>floor</title>
<link rel="icon" href="data:,"></head><body><p>A page with no script.</p>
<script>performance.mark('bench:ready')</script></body></html>`,
  '/lean.html': agentPage('/pkg/', { name: 'npc', persist: false }),
  '/page.html': agentPage('/pkg-page/', { name: 'assistant', persist: false, builtins: ['page'] }),
};

// A static host: each file gzip-compressed once (level 6, nginx's and most CDNs'
// default) when the browser accepts it.
const compressed = new Map();
const server = createServer(async (req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
  let body;
  let type = types['.html'];
  if (Object.hasOwn(pages, path)) {
    body = Buffer.from(pages[path]);
  } else {
    const [base, rest] = path.startsWith('/pkg-page/') ? [pkgPage, path.slice(9)]
      : path.startsWith('/pkg/') ? [pkg, path.slice(4)] : [dist, path];
    const file = join(base, rest === '/' ? '/index.html' : rest);
    if (!file.startsWith(base)) return res.writeHead(403).end();
    try {
      body = await readFile(file);
    } catch {
      return res.writeHead(404).end();
    }
    type = types[extname(file)] ?? 'application/octet-stream';
  }
  const headers = { 'content-type': type, 'cache-control': 'no-cache' };
  if (/\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
    if (!compressed.has(path)) compressed.set(path, gzipSync(body, { level: 6 }));
    body = compressed.get(path);
    headers['content-encoding'] = 'gzip';
  }
  res.writeHead(200, headers).end(body);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const origin = `http://127.0.0.1:${server.address().port}`;

const builds = [
  ['floor: a static page, no script', '/floor.html', 'bench:ready'],
  ['lean runtime (pkg/): createAgent resolved', '/lean.html', 'bench:ready'],
  ['page assistant (pkg-page/): createAgent resolved', '/page.html', 'bench:ready'],
  ['full demo (dist/): the app mounted', '/', 'familiar:mounted'],
];

/** ms from navigation start to `mark` on a page just loaded (or reloaded). */
async function readyAt(page, mark) {
  await page.waitForFunction((m) => performance.getEntriesByName(m).length > 0, mark, { timeout: 120_000 });
  return page.evaluate((m) => performance.getEntriesByName(m)[0].startTime, mark);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const browser = await launchChromium();
const link = { offline: false, latency: 150, downloadThroughput: 1.6e6 / 8, uploadThroughput: 0.75e6 / 8 };

/** Median cold and warm ms, and cold over the throttled link (fewer runs: it is slow). */
async function measure(path, mark) {
  const cold = [];
  const warm = [];
  const slow = [];
  for (let run = 0; run < RUNS; run += 1) {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.on('pageerror', (e) => console.error(`page error on ${path}: ${e.message}`));
    await page.goto(origin + path);
    cold.push(await readyAt(page, mark));
    await page.reload();
    warm.push(await readyAt(page, mark));
    await context.close();
  }
  for (let run = 0; run < Math.max(1, Math.ceil(RUNS / 3)); run += 1) {
    const context = await browser.newContext();
    const page = await context.newPage();
    const cdp = await context.newCDPSession(page);
    await cdp.send('Network.enable');
    await cdp.send('Network.emulateNetworkConditions', link);
    await page.goto(origin + path, { timeout: 120_000 });
    slow.push(await readyAt(page, mark));
    await context.close();
  }
  return { cold: median(cold), warm: median(warm), slow: median(slow) };
}

// The demo's parts: a button, and the heading that says the part is open.
const parts = [
  ['World', 'button.show-world', 'section.world h2'],
  ['Guild', 'button.show-guild', 'section.guild h2'],
  ['Settings', 'button.show-settings', '#settings-heading'],
];

/** The scripts and modules the page has fetched since `since` (ms), each with its
 * bytes as sent (gzip, level 6). */
const fetched = (page, since) => page.evaluate((t) => performance.getEntriesByType('resource')
  .filter((e) => e.startTime >= t && /\.(wasm|js)$/.test(new URL(e.name).pathname))
  .map((e) => ({ file: new URL(e.name).pathname, bytes: e.encodedBodySize })), since);
const sum = (files) => files.reduce((n, f) => n + f.bytes, 0);
const names = (files) => files.map((f) => f.file.slice(1)).join(' ') || 'nothing (preloaded or in the first load)';

/** Over the throttled link: the demo's first load, then each part from its click to
 * its heading (each in a fresh context, so nothing is cached), median of the runs. */
async function measureParts() {
  const first = [];
  const opened = parts.map(() => []);
  let modules = parts.map(() => []);
  let firstFiles = [];
  for (let run = 0; run < Math.max(1, Math.ceil(RUNS / 3)); run += 1) {
    for (const [n, [, button, heading]] of parts.entries()) {
      const context = await browser.newContext();
      const page = await context.newPage();
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.emulateNetworkConditions', link);
      await page.goto(origin + '/', { timeout: 120_000 });
      await readyAt(page, 'familiar:mounted');
      if (n === 0) {
        firstFiles = await fetched(page, 0);
        first.push(sum(firstFiles));
      }
      const clicked = await page.evaluate(() => performance.now());
      await page.click(button);
      await page.waitForSelector(heading, { timeout: 120_000 });
      opened[n].push(await page.evaluate((t) => performance.now() - t, clicked));
      modules[n] = await fetched(page, clicked);
      await context.close();
    }
  }
  return { first: median(first), firstFiles, opened: opened.map(median), modules };
}

try {
  const rows = [];
  for (const [name, path, mark] of builds) rows.push([name, await measure(path, mark)]);
  const ms = (x) => `${Math.round(x)} ms`.padStart(9);
  console.log(`start-up: navigation → an agent that answers, median of ${RUNS} (throttled: of ${Math.ceil(RUNS / 3)})`);
  console.log(`${'build'.padEnd(50)} ${'cold'.padStart(9)} ${'warm'.padStart(9)} ${'1.6 Mbit/s, 150 ms RTT'.padStart(24)}`);
  for (const [name, m] of rows) console.log(`${name.padEnd(50)} ${ms(m.cold)} ${ms(m.warm)} ${ms(m.slow).padStart(24)}`);
  console.log('(the demo\'s composer takes input before its agent is ready: bench/ui.mjs times that against the floor)');
  const p = await measureParts();
  const kb = (b) => `${(b / 1000).toFixed(1)} KB`;
  console.log(`\nthe demo's parts over 1.6 Mbit/s, 150 ms RTT (median of ${Math.ceil(RUNS / 3)}; bytes as sent, gzip level 6)`);
  console.log(`first load: ${kb(p.first)} (${names(p.firstFiles)})`);
  for (const [n, [name]] of parts.entries()) {
    console.log(`${name.padEnd(9)} click → heading on screen ${ms(p.opened[n])}, fetched ${kb(sum(p.modules[n]))}: ${names(p.modules[n])}`);
  }
} finally {
  await browser.close();
  server.close();
}
