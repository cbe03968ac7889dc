// Dotty, the bartender of public/characters/dotty.json, on the release build with the
// rules model: an order, a reload mid-transaction, the payment — with the transaction
// visible in the inspector throughout.
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

async function say(page, text, n) {
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
  await page.locator('.turn[data-status="completed"]').nth(n - 1).waitFor({ timeout: 10_000 });
  return page.locator('.turn').nth(n - 1).locator('.message-assistant .markdown').innerText();
}

test('Dotty takes an order, survives a reload mid-transaction, and serves on payment', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await page.goto(server.url);
  await page.locator('.character-select').selectOption('dotty');
  await page.locator('.sample-prompt', { hasText: "I'll have a whiskey" }).waitFor();

  assert.equal(await say(page, "I'll have a whiskey", 1), "One whiskey coming up, love — that'll be 5 coins.");
  const transaction = page.locator('.inspector-transaction');
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await transaction.innerText(), 'drink_order · awaiting_payment · drink=whiskey, price=5');
  assert.match(await page.locator('.inspector-injection').innerText(), /just ordered whiskey.*5 coins/);

  await page.reload();
  await page.getByRole('textbox', { name: 'Message' }).waitFor();
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await page.locator('.character-select').inputValue(), 'dotty');

  assert.match(await say(page, 'Here you go', 2), /slides the whiskey across the bar/);
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('completed'));
  assert.match(await transaction.innerText(), /^drink_order · completed · .*payment_received=true/);
  await page.screenshot({ path: join(artifacts, 'dotty.png'), fullPage: true });
  assert.deepEqual(problems, []);
});
