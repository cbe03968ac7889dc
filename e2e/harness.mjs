// Shared by the end-to-end tests: a static server for the release build on a free
// loopback port, and a headless Chromium that never reaches beyond it.
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = fileURLToPath(new URL('..', import.meta.url));
export const dist = resolve(root, 'dist');
export const artifacts = resolve(root, 'e2e', 'artifacts');

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

/** Serves `dist/` (and a slow model at /v1) on 127.0.0.1 at a free port; resolves to
 * { url, close, stats }. */
export async function serveDist() {
  const stats = { requests: 0, aborted: 0 };
  const server = createServer(async (req, res) => {
    if (req.method === 'POST' && req.url.startsWith('/v1/chat/completions')) {
      slowModel(req, res, stats);
      return;
    }
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    const file = join(dist, path.endsWith('/') ? `${path}index.html` : path);
    if (!file.startsWith(dist)) {
      res.writeHead(403).end();
      return;
    }
    try {
      const body = await readFile(file);
      res.writeHead(200, { 'content-type': types[extname(file)] ?? 'application/octet-stream' });
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
