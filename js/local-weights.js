// The local model's weights (issues 29, 44 and 56), for its worker (js/local-worker.js,
// which imports this as local/weights.js): downloaded with progress, taken up again
// where a dropped connection stopped but only for the same file, refused past a size
// bound, checked against the SHA-256 the host gave, and kept in Cache Storage
// ("familiar-models", listed by src/web/model_cache.rs) so a second visit, or another
// tab, reads them from disk. A copy kept without a hash is checked again before each
// use. It posts nothing itself: progress goes to the function it is given, so a page
// can run it too (e2e/local_download.test.mjs).

const CACHE = 'familiar-models';

/** The largest weights file taken: 4 GiB. The worker copies the file into its
 * WebAssembly memory, which a 32-bit module cannot grow past 4 GiB, so a larger file
 * could never load; the largest files of the families it runs that fit at all (Llama
 * 3.2 3B in Q8_0, 3.4 GB; Phi-3.5-mini in Q6_K, 3.1 GB) are under it with a fifth to
 * spare, and the test model, SmolLM2-135M, is 98 MB. */
export const MAX_WEIGHTS_BYTES = 2 ** 32;

// How many times a dropped download is taken up again where it stopped.
const RESUMES = 5;

/** A download refused for its size: stopped at once, never resumed, never kept. */
class TooLarge extends Error {}

/** Refuses weights of `bytes` (as their server or file says) past `limit`. */
export function refuseLarger(where, bytes, limit) {
  if (bytes > limit) {
    throw new TooLarge(`the weights at ${where} are ${bytes} bytes, more than the ${limit} a local model may take; nothing was downloaded or kept`);
  }
}

/** The SHA-256 of `bytes`, in lowercase hex. */
async function sha256Of(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', bytes));
  return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
}

/** Refuses `bytes` that are not the file `sha256` names (when it names one). */
export async function verify(url, bytes, sha256) {
  if (!sha256) return;
  const found = await sha256Of(bytes);
  if (found !== sha256) {
    throw new Error(`the weights at ${url} are not the file expected: their SHA-256 is ${found}, not ${sha256}; they were not kept`);
  }
}

/** Whether `bytes` more fit in this origin's storage quota (asking first that what is
 * kept be kept for good); true when the browser does not say. */
async function roomFor(bytes) {
  try {
    await navigator.storage?.persist?.();
    const estimate = await navigator.storage?.estimate?.();
    if (!estimate?.quota) return true;
    return estimate.quota - (estimate.usage ?? 0) > bytes * 1.1;
  } catch {
    return true;
  }
}

/** What names the file a response carries, for asking the rest of that same file
 * (`If-Range`): its ETag, unless weak (a weak one cannot ask for a range), else its
 * Last-Modified; null when it has neither. */
function validatorOf(response) {
  const etag = response.headers.get('etag');
  if (etag && !etag.startsWith('W/')) return etag;
  return response.headers.get('last-modified');
}

/** The length a response says its file has, refused past `limit`; 0 when not said (or
 * said of compressed bytes). The body is let go when refused. */
function sizeOf(url, response, limit) {
  const total = response.headers.get('content-encoding') ? 0 : Number(response.headers.get('content-length')) || 0;
  try {
    refuseLarger(url, total, limit);
  } catch (error) {
    response.body?.cancel().catch(() => {});
    throw error;
  }
  return total;
}

/** The rest of a dropped download from byte `loaded`, when the server still serves
 * the file `validator` names (206); otherwise the whole file (200). A partial without
 * a validator is never resumed: nothing would tell the rest is of the same file. */
async function rest(url, loaded, total, validator) {
  if (validator) {
    const response = await fetch(url, { headers: { Range: `bytes=${loaded}-`, 'If-Range': validator } });
    if (response.status !== 206) return response;
    const range = /^bytes (\d+)-\d+\/(\d+)$/.exec(response.headers.get('content-range') ?? '');
    const same = validatorOf(response) ?? validator;
    if (range && Number(range[1]) === loaded && Number(range[2]) === total && same === validator) return response;
    // A range of another file (a server that ignores If-Range): start over.
    await response.body?.cancel().catch(() => {});
  }
  return fetch(url);
}

/** The weights' bytes over the network, with progress, from `response` when the
 * request was already made; a connection dropped on the way is asked again for the
 * rest (`rest`) up to RESUMES times, or starts over when the server sends a whole file.
 * Past `limit` bytes, said or read, it stops and keeps nothing. Resolves to the bytes
 * and the validators the server gave them, for asking later whether they changed. */
async function download(url, limit, progress, response) {
  response ??= await fetch(url);
  if (!response.ok) throw new Error(`the weights at ${url} could not be fetched (HTTP ${response.status})`);
  let total = sizeOf(url, response, limit);
  let validator = validatorOf(response);
  let kept = { etag: response.headers.get('etag'), modified: response.headers.get('last-modified') };
  // The size, said before the first byte comes.
  progress({ loaded: 0, total, cached: false });
  let parts = [];
  let loaded = 0;
  let last = 0;
  let resumes = 0;
  // Progress is said every MiB, and also a moment after the bytes stop coming, so a
  // stalled download shows what did arrive rather than up to a MiB less.
  let trailing = 0;
  const hush = () => {
    clearTimeout(trailing);
    trailing = 0;
  };
  const say = () => {
    hush();
    if (last === loaded) return;
    last = loaded;
    progress({ loaded, total, cached: false });
  };
  for (;;) {
    const reader = response.body.getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        if (loaded + value.length > limit) {
          reader.cancel().catch(() => {});
          throw new TooLarge(`the weights at ${url} went past ${limit} bytes, more than a local model may take (their server had not said their size); the download was stopped and nothing kept`);
        }
        parts.push(value);
        loaded += value.length;
        if (loaded - last > 1 << 20 || loaded === total) say();
        else trailing ||= setTimeout(say, 250);
      }
      if (!total || loaded >= total) break;
      throw new Error(`the connection ended after ${loaded} of ${total} bytes`);
    } catch (error) {
      hush();
      if (error instanceof TooLarge) throw error;
      if (resumes >= RESUMES || !total) {
        throw new Error(`the weights at ${url} stopped coming after ${loaded} of ${total || 'unknown'} bytes (${error?.message ?? error})`);
      }
      resumes += 1;
      response = await rest(url, loaded, total, validator);
      if (response.status === 206) continue;
      if (response.status !== 200) {
        throw new Error(`the weights at ${url} could not be fetched again from byte ${loaded} (HTTP ${response.status})`);
      }
      // A whole file: the same again, or another now at this address. Start over.
      total = sizeOf(url, response, limit);
      validator = validatorOf(response);
      kept = { etag: response.headers.get('etag'), modified: response.headers.get('last-modified') };
      parts = [];
      loaded = 0;
      last = 0;
      progress({ loaded: 0, total, cached: false });
    }
  }
  hush();
  if (last !== loaded || total !== loaded) {
    // The end, said once more when the length was not known (or counted compressed
    // bytes), so a progress bar always reaches it.
    progress({ loaded, total: loaded, cached: false });
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const part of parts) { bytes.set(part, at); at += part.length; }
  return { bytes, ...kept };
}

/** Whether the server serves another file at `url` now than the copy `kept`: asked
 * with the copy's validator (304: the same file; a 200 of another is returned, its
 * body the new file's download), or, for a copy kept without one, with HEAD (another
 * length: true). False when the server cannot be reached or answers anything else:
 * offline, the copy is what there is. */
async function changed(url, kept) {
  const etag = kept.headers.get('etag');
  const modified = kept.headers.get('last-modified');
  try {
    if (!etag && !modified) {
      const head = await fetch(url, { method: 'HEAD', cache: 'no-store' });
      const length = head.headers.get('content-encoding') ? null : head.headers.get('content-length');
      return head.ok && length !== null && length !== kept.headers.get('content-length');
    }
    const ask = etag ? { 'If-None-Match': etag } : { 'If-Modified-Since': modified };
    const response = await fetch(url, { headers: ask, cache: 'no-store' });
    if (response.status !== 200) return false;
    // A server that ignores the question sends the same file whole.
    const same = etag ? response.headers.get('etag') === etag : response.headers.get('last-modified') === modified;
    if (!same) return response;
    await response.body?.cancel().catch(() => {});
    return false;
  } catch {
    return false;
  }
}

/** Whether the copy `hit` of `url` is used: `{bytes}` when so; else `{}`, or
 * `{response}` when the new file's download has begun. A copy with a hash is used when
 * it is that file; one without, when it is whole (its length the one written beside
 * it) and its server, asked, serves no other file there (`changed`). */
async function reuse(url, hit, sha256) {
  const bytes = new Uint8Array(await hit.arrayBuffer());
  if (sha256) return (await sha256Of(bytes)) === sha256 ? { bytes } : {};
  if (String(bytes.length) !== hit.headers.get('content-length')) return {};
  const news = await changed(url, hit);
  if (!news) return { bytes };
  return news === true ? {} : { response: news };
}

/** The weights at `url`: the browser's copy when it is still the file (`reuse`), else
 * downloaded, checked against `sha256` and kept for the next visit (and the page's
 * other tabs), with the validators the server gave. Resolves to `{bytes, cached}`;
 * `progress` hears `{loaded, total, cached}`. `maxBytes` lowers the bound. */
export async function weights(url, { sha256, maxBytes = MAX_WEIGHTS_BYTES, progress = () => {} } = {}) {
  const limit = Math.min(maxBytes, MAX_WEIGHTS_BYTES);
  const cache = typeof caches === 'undefined' ? null : await caches.open(CACHE).catch(() => null);
  const hit = cache && (await cache.match(url));
  let response;
  if (hit) {
    const copy = await reuse(url, hit, sha256);
    if (copy.bytes) {
      progress({ loaded: copy.bytes.length, total: copy.bytes.length, cached: true });
      return { bytes: copy.bytes, cached: true };
    }
    // Not the file asked for, not whole, or no longer the file at that address.
    await cache.delete(url).catch(() => {});
    response = copy.response;
  }
  const { bytes, etag, modified } = await download(url, limit, progress, response);
  await verify(url, bytes, sha256);
  if (cache && (await roomFor(bytes.length))) {
    // Kept for the next visit; a full disk only costs the next download. Its length
    // beside it, so the page lists kept files without reading them and a copy cut
    // short is known; its validators, so the server can be asked whether it changed.
    const headers = { 'content-type': 'application/octet-stream', 'content-length': String(bytes.length) };
    if (etag) headers.etag = etag;
    if (modified) headers['last-modified'] = modified;
    await cache.put(url, new Response(bytes, { headers })).catch(() => {});
  }
  return { bytes, cached: false };
}
