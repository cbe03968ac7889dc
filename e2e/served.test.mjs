// What the README's demo command serves, opened as a person would: `scripts/demo.sh`
// on a free port, its page with the headers that stop other sites framing it and
// that isolate it (shared memory for the local model's threads)
// (Trunk.toml's [serve.headers]; a <meta> CSP cannot say frame-ancestors), no script
// injected that its own Content-Security-Policy refuses, its wasm as application/wasm,
// no console error, and an answer to the first suggested question.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { test, appReady, ask, launchChromium, watch } from './harness.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));

function freePort() {
  return new Promise((ok, fail) => {
    const server = createServer().once('error', fail).listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => ok(port));
    });
  });
}

async function served(url, demo, log) {
  for (let i = 0; i < 900; i += 1) {
    if (demo.exitCode !== null) throw new Error(`scripts/demo.sh stopped:\n${log.join('')}`);
    try {
      const response = await fetch(url);
      if (response.ok) return response;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`scripts/demo.sh served nothing at ${url}:\n${log.join('')}`);
}

// scripts/demo.sh builds before it serves: ~90 s alone, more beside other builds.
test('the page scripts/demo.sh serves carries its framing headers, logs no error and answers', { timeout: 900_000 }, async (t) => {
  const port = await freePort();
  const log = [];
  // Its own output directory: the other e2e files read dist/, which a server stopped
  // in the middle of a build must never leave half written.
  const out = mkdtempSync(join(tmpdir(), 'familiar-served-'));
  const demo = spawn('scripts/demo.sh', [], {
    cwd: root,
    detached: true,
    env: { ...process.env, FAMILIAR_DEMO_PORT: String(port), TRUNK_BUILD_DIST: out },
  });
  demo.stdout.on('data', (d) => log.push(String(d)));
  demo.stderr.on('data', (d) => log.push(String(d)));
  t.after(() => {
    try {
      process.kill(-demo.pid, 'SIGTERM');
    } catch {
      // already gone
    }
    rmSync(out, { recursive: true, force: true });
  });
  const url = `http://127.0.0.1:${port}/`;
  const response = await served(url, demo, log);
  assert.equal(response.headers.get('content-security-policy'), "frame-ancestors 'self'");
  assert.equal(response.headers.get('x-frame-options'), 'SAMEORIGIN');
  // Isolated, so the local model's helper threads get shared memory.
  assert.equal(response.headers.get('cross-origin-opener-policy'), 'same-origin');
  assert.equal(response.headers.get('cross-origin-embedder-policy'), 'credentialless');
  const html = await response.text();
  assert.doesNotMatch(html, /<script>(?!\s*<\/script>)/, 'no inline script for the page CSP to refuse');
  // The wasm as application/wasm: the loader compiles it while it downloads
  // (instantiateStreaming) only with that type.
  const wasm = await fetch(`${url}familiar-demo_bg.wasm`);
  assert.equal(wasm.status, 200);
  assert.equal(wasm.headers.get('content-type'), 'application/wasm');
  await wasm.arrayBuffer();

  const browser = await launchChromium();
  t.after(() => browser.close());
  const page = await browser.newPage();
  const problems = await watch(page, { server: { url } });
  await page.goto(url);
  await appReady(page);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true, 'COOP and COEP make the page isolated');
  assert.match(await ask(page, 'What time is it?'), /^It's \d\d:\d\d on /);
  assert.deepEqual(problems, []);
});
