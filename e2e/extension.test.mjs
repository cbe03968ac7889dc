// The page assistant as a Manifest V3 extension (pkg-extension/, scripts/extension.sh),
// loaded unpacked into headless Chromium: its content script adds the widget to a
// served page, which answers /summary offline; the conversation is kept in the
// extension's storage (it is there after a reload), never in the site's localStorage.
// Its options page points it at a model (a scripted one, over loopback): a form on the
// page is filled and sent only after each Allow.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { serveDist } from './harness.mjs';

const extension = resolve(fileURLToPath(new URL('..', import.meta.url)), 'pkg-extension');

const article = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Tawny owls</title><link rel="icon" href="data:,"></head>
<body>
  <nav><a href="/">Home</a></nav>
  <main>
    <h1>Tawny owls</h1>
    <p>Tawny owls live in woods. They call at night.</p>
    <h2>Voice</h2>
    <p>The female calls “ke-wick”. The male answers “hoo”.</p>
  </main>
</body></html>`;

const form = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Owl letter</title><link rel="icon" href="data:,"></head>
<body><main>
  <h1>The owl letter</h1>
  <form id="letter"><label>Email <input id="email" type="email"></label><button>Subscribe</button></form>
  <p id="status">Not subscribed</p>
</main>
<script>
  window.sent = [];
  document.getElementById('letter').addEventListener('submit', (e) => {
    e.preventDefault();
    window.sent.push(document.getElementById('email').value);
    document.getElementById('status').textContent = 'Subscribed';
  });
</script></body></html>`;

/** A model that subscribes the person: the form, then fill, then click, then done. */
function scripted(body) {
  const results = body.messages.filter((m) => m.role === 'tool');
  const call = (name, args) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${results.length + 1}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });
  if (results.length === 0) return call('page_forms', {});
  const fields = JSON.parse(results[0].content).forms[0].fields;
  const number = (name) => Number(/\[(\d+)\]/.exec(fields.find((l) => l.includes(name)))[1]);
  if (results.length === 1) return call('fill', { element: number('"Email"'), text: 'ada@example.com' });
  if (results.length === 2) return call('click', { element: number('"Subscribe"') });
  return { role: 'assistant', content: 'Subscribed you.' };
}

/** Chromium's id for an unpacked extension: its absolute path's SHA-256, a–p for 0–f. */
const id = [...createHash('sha256').update(extension).digest('hex').slice(0, 32)]
  .map((c) => String.fromCharCode(97 + parseInt(c, 16)))
  .join('');

let server;
let context;
let profile;
before(async () => {
  server = await serveDist({ pages: { '/tawny.html': article, '/letter.html': form }, scripted });
  profile = await mkdtemp(join(tmpdir(), 'familiar-extension-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    ignoreDefaultArgs: ['--disable-extensions'],
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      `--disable-extensions-except=${extension}`,
      `--load-extension=${extension}`,
    ],
  });
});
after(async () => {
  await context?.close();
  await server?.close();
  if (profile) await rm(profile, { recursive: true, force: true });
});

test('the unpacked extension puts the assistant on a served page, and it answers', async () => {
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(e.message));
  tab.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await tab.goto(`${server.url}tawny.html`);
  await tab.getByRole('button', { name: 'Page assistant' }).click({ timeout: 20_000 });
  const panel = tab.getByRole('dialog', { name: 'Page assistant' });
  await panel.getByText(/actions on the page ask you first/).waitFor({ timeout: 20_000 });
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  await box.fill('/summary');
  await box.press('Enter');
  const answer = panel.locator('.msg.assistant').filter({ hasText: 'in outline' });
  await answer.waitFor({ timeout: 10_000 });
  assert.equal(await answer.innerText(),
    '“Tawny owls”, in outline:\nTawny owls: Tawny owls live in woods.\n  Voice: The female calls “ke-wick”.');
  assert.deepEqual(await tab.evaluate(() => Object.keys(localStorage)), [], "nothing in the site's localStorage");
  assert.deepEqual(errors, []);

  // The conversation came back from the extension's storage.
  await tab.reload();
  const again = tab.getByRole('dialog', { name: 'Page assistant', includeHidden: true });
  await again.locator('.msg.user').filter({ hasText: 'summary' }).waitFor({ state: 'attached', timeout: 20_000 });
  await tab.close();
});

test('pointed at a model from its options page, it fills and sends a form only after each Allow', async () => {
  const options = await context.newPage();
  await options.goto(`chrome-extension://${id}/options.html`);
  await options.getByLabel(/Model address/).fill(`${server.url}script/v1`);
  await options.getByLabel('Model name').fill('scripted');
  await options.getByLabel('Stream answers').uncheck();
  await options.getByRole('button', { name: 'Save' }).click();
  await options.getByRole('status').filter({ hasText: 'Saved: pages opened from now on' }).waitFor();
  await options.close();

  const tab = await context.newPage();
  await tab.goto(`${server.url}letter.html`);
  await tab.getByRole('button', { name: 'Page assistant' }).click({ timeout: 20_000 });
  const panel = tab.getByRole('dialog', { name: 'Page assistant' });
  await panel.getByText(/actions on the page ask you first/).waitFor({ timeout: 20_000 });
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  await box.fill('Subscribe me with ada@example.com');
  await box.press('Enter');
  const card = panel.getByRole('group', { name: 'Approval' });
  await card.filter({ hasText: /Type "ada@example.com" into the textbox "Email" \[\d+\]/ }).waitFor();
  assert.equal(await tab.locator('#email').inputValue(), '', 'nothing before Allow');
  await card.getByRole('button', { name: 'Allow' }).click();
  await card.filter({ hasText: /Click the button "Subscribe" \[\d+\]/ }).waitFor();
  assert.deepEqual(await tab.evaluate(() => window.sent), [], 'not sent before the second Allow');
  await card.getByRole('button', { name: 'Allow' }).click();
  await panel.getByText('Subscribed you.').waitFor();
  assert.deepEqual(await tab.evaluate(() => window.sent), ['ada@example.com']);
  assert.ok(server.requests.length >= 4, 'the extension asked the scripted model');
  await tab.close();
});
