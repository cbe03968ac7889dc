// The page assistant as a Manifest V3 extension (pkg-extension/, scripts/extension.sh),
// loaded unpacked into headless Chromium: its content script adds the widget to a
// served page, which answers /summary offline; the conversation is kept in the
// extension's storage (it is there after a reload), never in the site's localStorage.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
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

let server;
let context;
let profile;
before(async () => {
  server = await serveDist({ pages: { '/tawny.html': article } });
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
