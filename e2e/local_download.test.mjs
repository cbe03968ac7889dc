// The local model's weights download (js/local-weights.js, the worker's module; issue
// 56), run in a page of headless Chromium against a server on loopback that says
// ETags and Last-Modified, answers Range, If-Range, If-None-Match and HEAD as static
// hosts do, and drops, swaps, stalls or oversizes its files on request. A dropped
// download resumes only the same file; a file past the bound is stopped and not kept;
// a copy kept without a hash is asked about again before it is used. Needs no build
// and no model: the module is served from js/.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { after, before } from 'node:test';
import { fileURLToPath } from 'node:url';
import { launchChromium, test, watch } from './harness.mjs';

const module = fileURLToPath(new URL('../js/local-weights.js', import.meta.url));
const SIZE = 256 * 1024;
const sha = (bytes) => createHash('sha256').update(bytes).digest('hex');

// The module's weights() in a page: each load says its bytes' SHA-256 and length,
// whether they came from the cache, and the progress heard; or the error.
const page = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Weights</title><link rel="icon" href="data:,"></head>
<body>
  <script type="module">
    import { weights } from '/weights.js';
    const hex = async (bytes) => Array.from(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)), (b) => b.toString(16).padStart(2, '0')).join('');
    const address = (path) => new URL(path, location.href).href;
    const cache = () => caches.open('familiar-models');
    window.load = async (path, options = {}) => {
      const progress = [];
      try {
        const { bytes, cached } = await weights(address(path), { ...options, progress: (p) => progress.push(p) });
        return { sha256: await hex(bytes), length: bytes.length, cached, progress };
      } catch (error) {
        return { error: String(error?.message ?? error), progress };
      }
    };
    window.kept = async (path) => {
      const hit = await (await cache()).match(address(path));
      if (!hit) return null;
      const bytes = await hit.arrayBuffer();
      return { sha256: await hex(bytes), length: bytes.byteLength, headers: Object.fromEntries(hit.headers) };
    };
    /** Keeps the first n bytes of the copy of path under its old headers: a copy cut short. */
    window.cut = async (path, n) => {
      const hit = await (await cache()).match(address(path));
      const headers = Object.fromEntries(hit.headers);
      await (await cache()).put(address(path), new Response((await hit.arrayBuffer()).slice(0, n), { headers }));
    };
    document.title = 'ready';
  </script>
</body>
</html>`;

/** The files served at /files/NAME: `{body, etag?, modified?}` and what to do wrong:
 * `cuts` (the next so many whole GETs stop halfway, their connection dropped, calling
 * `onCut`), `ignoresIfRange` (a range of whatever the file is now), `chunked` (no
 * length said, sent in pieces), `declare` (a length said, a piece sent, then nothing),
 * `down` (every connection dropped unanswered). */
const files = {};
/** Every request for a file: what it asked and how it ended. */
const log = [];
const asked = (name) => log.filter((r) => r.name === name);

function serveFile(req, res, name) {
  const file = files[name];
  if (!file) {
    res.writeHead(404).end();
    return;
  }
  const seen = { name, method: req.method, range: req.headers.range, ifRange: req.headers['if-range'], ifNoneMatch: req.headers['if-none-match'], ifModifiedSince: req.headers['if-modified-since'] };
  log.push(seen);
  if (file.down) {
    seen.status = 'dropped';
    req.socket.destroy();
    return;
  }
  // no-store: Chromium's own HTTP cache never answers for the server.
  const headers = { 'content-type': 'application/octet-stream', 'cache-control': 'no-store', 'accept-ranges': 'bytes' };
  if (file.etag) headers.etag = file.etag;
  if (file.modified) headers['last-modified'] = file.modified;
  const names = (v) => v !== undefined && (v === file.etag || v === file.modified);
  if (seen.ifNoneMatch ? seen.ifNoneMatch === file.etag : names(seen.ifModifiedSince)) {
    seen.status = 304;
    res.writeHead(304, headers).end();
    return;
  }
  const { body } = file;
  const from = /^bytes=(\d+)-$/.exec(seen.range ?? '');
  if (from && (seen.ifRange === undefined || names(seen.ifRange) || file.ignoresIfRange)) {
    const start = Number(from[1]);
    seen.status = 206;
    res.writeHead(206, { ...headers, 'content-length': body.length - start, 'content-range': `bytes ${start}-${body.length - 1}/${body.length}` });
    res.end(body.subarray(start));
    return;
  }
  seen.status = 200;
  res.on('close', () => { seen.closedEarly = !res.writableEnded; });
  if (file.chunked) {
    res.writeHead(200, headers);
    let at = 0;
    const more = () => {
      if (res.destroyed) return;
      if (at >= body.length) return res.end();
      res.write(body.subarray(at, at + 16384));
      at += 16384;
      setTimeout(more, 2);
    };
    more();
    return;
  }
  res.writeHead(200, { ...headers, 'content-length': file.declare ?? body.length });
  if (req.method === 'HEAD') {
    res.end();
  } else if (file.declare) {
    res.write(body.subarray(0, 16384));
  } else if (file.cuts > 0) {
    file.cuts -= 1;
    res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => {
      req.socket.destroy();
      file.onCut?.();
    }, 50));
  } else {
    res.end(body);
  }
}

const env = {};
before(async () => {
  env.http = createServer((req, res) => {
    const { pathname } = new URL(req.url, 'http://x');
    if (pathname === '/') res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(page);
    else if (pathname === '/weights.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(readFileSync(module));
    else if (pathname.startsWith('/files/')) serveFile(req, res, pathname.slice('/files/'.length));
    else res.writeHead(404).end();
  });
  await new Promise((ok, fail) => env.http.once('error', fail).listen(0, '127.0.0.1', ok));
  env.server = { url: `http://127.0.0.1:${env.http.address().port}/` };
  env.browser = await launchChromium();
});
after(async () => {
  await env.browser?.close();
  env.http?.closeAllConnections();
  await new Promise((ok) => (env.http ? env.http.close(ok) : ok()));
});

/** A fresh page (its own Cache Storage) and its problems, less the dropped
 * connections' and refused downloads' network errors, which the browser logs. */
async function open(t) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const tab = await context.newPage();
  const problems = await watch(tab, env);
  await tab.goto(env.server.url);
  await tab.waitForFunction(() => document.title === 'ready');
  const load = (name, options) => tab.evaluate(([n, o]) => window.load(`/files/${n}`, o), [name, options]);
  const kept = (name) => tab.evaluate((n) => window.kept(`/files/${n}`), name);
  const unexpected = () => problems.filter((p) => !/ERR_|network|Failed to load resource/i.test(p));
  return { tab, load, kept, unexpected };
}

test('a dropped download resumes with If-Range naming the file it has, and the rest is of that file', async (t) => {
  const { load, kept, unexpected } = await open(t);
  const body = randomBytes(SIZE);
  files.resumed = { body, etag: '"a1"', cuts: 1 };
  const got = await load('resumed');
  assert.equal(got.error, undefined, got.error);
  assert.equal(got.sha256, sha(body));
  assert.equal(got.cached, false);
  const [whole, rest] = asked('resumed');
  assert.deepEqual([whole.status, whole.range], [200, undefined]);
  assert.equal(rest.status, 206);
  assert.match(rest.range, /^bytes=\d+-$/);
  assert.ok(Number(rest.range.slice(6, -1)) > 0, `the rest from where it stopped: ${rest.range}`);
  assert.equal(rest.ifRange, '"a1"', 'the partial named by its ETag');
  assert.equal(asked('resumed').length, 2);
  assert.ok(got.progress.some((p) => p.loaded === SIZE && p.total === SIZE), 'the bar reached the end');
  assert.deepEqual((await kept('resumed')).headers.etag, '"a1"', 'kept with its validator');
  assert.deepEqual(unexpected(), []);
});

for (const server of ['honours If-Range (200: the whole new file)', 'ignores If-Range (206: a range of the new file)']) {
  test(`a file replaced at its address while its download was down starts over, not spliced, when the server ${server}`, async (t) => {
    const { load, unexpected } = await open(t);
    const name = server.startsWith('honours') ? 'swapped' : 'swapped-ignored';
    const [before, now] = [randomBytes(SIZE), randomBytes(SIZE)];
    files[name] = { body: before, etag: '"v1"', cuts: 1, ignoresIfRange: server.startsWith('ignores') };
    files[name].onCut = () => Object.assign(files[name], { body: now, etag: '"v2"' });
    const got = await load(name);
    assert.equal(got.error, undefined, got.error);
    assert.equal(got.sha256, sha(now), 'the new file whole, not the old one\'s start and the new one\'s end');
    const requests = asked(name);
    assert.equal(requests[1].ifRange, '"v1"');
    if (server.startsWith('honours')) {
      assert.deepEqual(requests.map((r) => r.status), [200, 200]);
    } else {
      assert.deepEqual(requests.map((r) => r.status), [200, 206, 200], 'the range of another file let go, the file asked again whole');
      assert.equal(requests[2].range, undefined);
    }
    // Back to zero when it started over, then to the end.
    assert.equal(got.progress.filter((p) => p.loaded === 0).length, 2, JSON.stringify(got.progress));
    assert.deepEqual(got.progress.at(-1), { loaded: SIZE, total: SIZE, cached: false });
    assert.deepEqual(unexpected(), []);
  });
}

test('a dropped download whose server named no validator is not resumed but fetched again from its start', async (t) => {
  const { load, kept, unexpected } = await open(t);
  const body = randomBytes(SIZE);
  files.bare = { body, cuts: 1 };
  const got = await load('bare');
  assert.equal(got.sha256, sha(body), got.error);
  assert.deepEqual(asked('bare').map((r) => [r.status, r.range, r.ifRange]), [[200, undefined, undefined], [200, undefined, undefined]]);
  const copy = await kept('bare');
  assert.equal(copy.headers.etag, undefined);
  assert.equal(copy.headers['content-length'], String(SIZE));
  assert.deepEqual(unexpected(), []);
});

test('weights past the bound are refused, said, stopped and not kept, whether their size is said or only read', async (t) => {
  const { load, kept, unexpected } = await open(t);
  // Said by the server: past 4 GiB, the bound itself, refused before a byte is read.
  files.huge = { body: randomBytes(SIZE), etag: '"h"', declare: 2 ** 32 + 1 };
  const huge = await load('huge');
  assert.match(huge.error, /^the weights at http:\/\/127\.0\.0\.1:\d+\/files\/huge are 4294967297 bytes, more than the 4294967296 a local model may take; nothing was downloaded or kept$/);
  assert.deepEqual(huge.progress, [], 'no download began');
  // Said, past a lower bound the worker was given.
  files.large = { body: randomBytes(SIZE), etag: '"l"' };
  const large = await load('large', { maxBytes: SIZE - 1 });
  assert.match(large.error, new RegExp(`are ${SIZE} bytes, more than the ${SIZE - 1} a local model`));
  // Not said (sent in pieces): read up to the bound, then stopped.
  files.unsaid = { body: randomBytes(4 * SIZE), etag: '"u"', chunked: true };
  const unsaid = await load('unsaid', { maxBytes: SIZE });
  assert.match(unsaid.error, new RegExp(`went past ${SIZE} bytes, more than a local model may take \\(their server had not said their size\\); the download was stopped and nothing kept`));
  assert.ok(unsaid.progress.every((p) => p.loaded <= SIZE), JSON.stringify(unsaid.progress.at(-1)));
  for (const name of ['huge', 'large', 'unsaid']) {
    assert.equal(await kept(name), null, `${name}: nothing kept`);
    assert.equal(asked(name).length, 1, `${name}: never asked again`);
  }
  // The server saw the connections it had not ended let go.
  const closed = () => ['huge', 'unsaid'].map((n) => asked(n)[0].closedEarly);
  for (let waited = 0; closed().includes(undefined) && waited < 5_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(closed(), [true, true]);
  assert.deepEqual(unexpected(), []);
});

test('a copy kept without a hash is asked about before each use: the same file (304) is read from the cache, a changed one downloaded in its place, and offline the copy serves', async (t) => {
  const { load, kept, unexpected } = await open(t);
  const [first, second] = [randomBytes(SIZE), randomBytes(SIZE)];
  files.kept = { body: first, etag: '"k1"' };
  assert.equal((await load('kept')).cached, false);
  const again = await load('kept');
  assert.deepEqual([again.cached, again.sha256], [true, sha(first)]);
  assert.deepEqual(again.progress, [{ loaded: SIZE, total: SIZE, cached: true }]);
  assert.deepEqual(asked('kept').slice(1).map((r) => [r.ifNoneMatch, r.status]), [['"k1"', 304]]);
  // The file at the address changes: its copy goes, the new file comes in the same request.
  Object.assign(files.kept, { body: second, etag: '"k2"' });
  const changed = await load('kept');
  assert.deepEqual([changed.cached, changed.sha256], [false, sha(second)]);
  assert.deepEqual(asked('kept').slice(2).map((r) => [r.ifNoneMatch, r.status]), [['"k1"', 200]], 'one request');
  assert.deepEqual([(await kept('kept')).sha256, (await kept('kept')).headers.etag], [sha(second), '"k2"']);
  // The server unreachable: the copy is what there is.
  files.kept.down = true;
  const offline = await load('kept');
  assert.deepEqual([offline.cached, offline.sha256], [true, sha(second)]);
  // Only a Last-Modified: asked with If-Modified-Since.
  files.dated = { body: first, modified: 'Tue, 01 Dec 2026 10:00:00 GMT' };
  await load('dated');
  assert.equal((await load('dated')).cached, true);
  assert.deepEqual(asked('dated').slice(1).map((r) => [r.ifModifiedSince, r.status]), [['Tue, 01 Dec 2026 10:00:00 GMT', 304]]);
  assert.deepEqual(unexpected(), []);
});

test('a kept copy cut short is downloaded again, and one kept without a validator is asked its length with HEAD', async (t) => {
  const { tab, load, kept, unexpected } = await open(t);
  const body = randomBytes(SIZE);
  files.short = { body, etag: '"s"' };
  await load('short');
  await tab.evaluate(() => window.cut('/files/short', 1000));
  const whole = await load('short');
  assert.deepEqual([whole.cached, whole.sha256], [false, sha(body)], 'its length is not the one written beside it');
  assert.deepEqual(asked('short').map((r) => [r.ifNoneMatch, r.status]), [[undefined, 200], [undefined, 200]], 'not asked about: downloaded');
  assert.equal((await kept('short')).length, SIZE);
  // No ETag, no Last-Modified: the same length is taken for the same file, another is not.
  files.plain = { body };
  await load('plain');
  assert.equal((await load('plain')).cached, true);
  files.plain.body = randomBytes(SIZE + 1);
  const longer = await load('plain');
  assert.deepEqual([longer.cached, longer.sha256], [false, sha(files.plain.body)]);
  assert.deepEqual(asked('plain').map((r) => [r.method, r.status]), [['GET', 200], ['HEAD', 200], ['HEAD', 200], ['GET', 200]]);
  assert.deepEqual(unexpected(), []);
});

test('a copy with a hash is checked against it, not asked about', async (t) => {
  const { load, unexpected } = await open(t);
  const body = randomBytes(SIZE);
  files.hashed = { body, etag: '"x"' };
  assert.equal((await load('hashed', { sha256: sha(body) })).cached, false);
  assert.equal((await load('hashed', { sha256: sha(body) })).cached, true);
  assert.equal(asked('hashed').length, 1, 'no request: the hash says it is the file');
  // Another hash: the copy is not that file, and neither is the server's.
  const other = await load('hashed', { sha256: '0'.repeat(64) });
  assert.match(other.error, /not the file expected/);
  assert.deepEqual(unexpected(), []);
});
