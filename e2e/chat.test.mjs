// The release build in headless Chromium: a user asks, the agent answers with its steps.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { artifacts, ask, openDemo, useDist } from './harness.mjs';

const env = useDist();
const small = { viewport: { width: 1024, height: 768 } };

test('asking the time shows the answer and the steps under it', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  const said = await ask(page, 'What time is it?');
  const year = String(new Date().getFullYear());
  assert.match(said, /^It's \d\d:\d\d on \w+day, \d{4}-\d\d-\d\d \(UTC[+-]\d\d:\d\d\)\.$/);
  assert.ok(said.includes(year), said);

  const turn = page.locator('.turn').first();

  await turn.locator('.steps-summary').click();
  const steps = turn.locator('.step');
  assert.ok((await steps.count()) >= 2, 'at least two rendered steps');
  assert.equal(await turn.locator('.step-tool .tool-name').innerText(), 'current_time');
  assert.match(await turn.locator('.step-tool .tool-result').innerText(), /"iso":/);
  assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), '');

  await page.screenshot({ path: join(artifacts, 'chat-time.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('the page title question is answered from the document', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  const said = await ask(page, 'What is this page called?');
  assert.equal(said, `This page is “${await page.title()}”.`);
  assert.deepEqual(problems, []);
});

test('the widget stays usable at 360 px wide', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  await page.setViewportSize({ width: 360, height: 640 });
  await ask(page, 'hello');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
  await page.screenshot({ path: join(artifacts, 'chat-360.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('a memory written in the local store survives a reload', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  assert.equal(await ask(page, 'Remember that the ale is cold'), "I'll remember: the ale is cold.");
  assert.equal(await page.locator('.step-tool .tool-kind').textContent(), 'action');

  await page.reload();
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  const recalled = await ask(page, 'What do you remember?', 2);
  assert.match(recalled, /^I remember 2 thing\(s\): the ale is cold; The player asked about the battle/);
  await page.screenshot({ path: join(artifacts, 'memory-after-reload.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('a loading notice shows until the app is up, then gives way to it', async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  let release;
  const held = new Promise((ok) => { release = ok; });
  // Hold the .wasm back, as a slow network would.
  await page.route('**/*.wasm', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(env.server.url);
  const loading = page.getByRole('status');
  assert.match(await loading.innerText(), /^Familiar\s+Loading the agent…$/);
  assert.equal(await page.getByRole('textbox', { name: 'Message' }).count(), 0);

  release();
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  assert.equal(await page.locator('#familiar-loading').count(), 0);
  assert.equal(await page.locator('h1').count(), 1, 'one heading: the app\'s own');
});

test('if the app cannot start, the notice says so instead of loading forever', async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  await page.route('**/*.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(env.server.url);
  await page.getByText(/^Familiar could not start: /).waitFor();
  assert.equal(await page.getByRole('textbox', { name: 'Message' }).count(), 0);
});
