// The release build in headless Chromium: a user asks, the agent answers with its steps.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { artifacts, launchChromium, serveDist } from './harness.mjs';

let server;
let browser;

before(async () => {
  server = await serveDist();
  browser = await launchChromium();
  await mkdir(artifacts, { recursive: true });
});

after(async () => {
  await browser?.close();
  await server?.close();
});

/** A fresh page that fails the test on any console error or request off loopback. */
async function openDemo(t) {
  const context = await browser.newContext({ viewport: { width: 1024, height: 768 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('request', (r) => {
    if (!r.url().startsWith(server.url) && !r.url().startsWith('data:')) {
      problems.push(`request off the page's origin: ${r.url()}`);
    }
  });
  await page.goto(server.url);
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  return { page, problems };
}

test('asking the time shows the answer and the steps under it', async (t) => {
  const { page, problems } = await openDemo(t);
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('What time is it?');
  await box.press('Enter');

  const turn = page.locator('.turn[data-status="completed"]');
  await turn.waitFor({ timeout: 10_000 });
  const answer = await turn.locator('.message-assistant .markdown').innerText();
  const year = String(new Date().getFullYear());
  assert.match(answer, /^It's \d\d:\d\d on \w+day, \d{4}-\d\d-\d\d \(UTC[+-]\d\d:\d\d\)\.$/);
  assert.ok(answer.includes(year), answer);

  await turn.locator('.steps-summary').click();
  const steps = turn.locator('.step');
  assert.ok((await steps.count()) >= 2, 'at least two rendered steps');
  assert.equal(await turn.locator('.step-tool .tool-name').innerText(), 'current_time');
  assert.match(await turn.locator('.step-tool .tool-result').innerText(), /"iso":/);
  assert.equal(await box.inputValue(), '');

  await page.screenshot({ path: join(artifacts, 'chat-time.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('the page title question is answered from the document', async (t) => {
  const { page, problems } = await openDemo(t);
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('What is this page called?');
  await box.press('Enter');
  const answer = page.locator('.turn[data-status="completed"] .message-assistant .markdown');
  await answer.waitFor({ timeout: 10_000 });
  assert.equal(await answer.innerText(), `This page is “${await page.title()}”.`);
  assert.deepEqual(problems, []);
});

test('the widget stays usable at 360 px wide', async (t) => {
  const { page, problems } = await openDemo(t);
  await page.setViewportSize({ width: 360, height: 640 });
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('hello');
  await box.press('Enter');
  await page.locator('.turn[data-status="completed"]').waitFor({ timeout: 10_000 });
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
  await page.screenshot({ path: join(artifacts, 'chat-360.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

/** Sends `text` and returns the answer of the turn it starts (the `n`th, from 1). */
async function ask(page, text, n = 1) {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  const turn = page.locator('.turn[data-status="completed"]').nth(n - 1);
  await turn.waitFor({ timeout: 10_000 });
  return turn.locator('.message-assistant .markdown').innerText();
}

test('a memory written in the local store survives a reload', async (t) => {
  const { page, problems } = await openDemo(t);
  assert.equal(await ask(page, 'Remember that the ale is cold'), "I'll remember: the ale is cold.");
  assert.equal(await page.locator('.step-tool .tool-kind').textContent(), 'action');

  await page.reload();
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  const answer = await ask(page, 'What do you remember?', 2);
  assert.match(answer, /^I remember 2 thing\(s\): the ale is cold; The player asked about the battle/);
  await page.screenshot({ path: join(artifacts, 'memory-after-reload.png'), fullPage: true });
  assert.deepEqual(problems, []);
});
