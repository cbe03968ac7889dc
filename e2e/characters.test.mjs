// Dotty, the bartender of public/characters/dotty.json, on the release build with the
// rules model: an order, a reload mid-transaction, the payment — with the transaction
// visible in the inspector throughout.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { appReady, artifacts, ask, openDemo, useDist } from './harness.mjs';

const env = useDist();

test('Dotty takes an order, survives a reload mid-transaction, and serves on payment', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.locator('.character-select').selectOption('dotty');
  await page.locator('.sample-prompt', { hasText: "I'll have a whiskey" }).waitFor();

  assert.equal(await ask(page, "I'll have a whiskey", 1), "One whiskey coming up, love — that'll be 5 coins.");
  const transaction = page.locator('.inspector-transaction');
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await transaction.innerText(), 'drink_order · awaiting_payment · drink=whiskey, price=5');
  assert.match(await page.locator('.inspector-injection').innerText(), /just ordered whiskey.*5 coins/);

  await page.reload();
  await appReady(page);
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await page.locator('.character-select').inputValue(), 'dotty');

  assert.match(await ask(page, 'Here you go', 2), /slides the whiskey across the bar/);
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('completed'));
  assert.match(await transaction.innerText(), /^drink_order · completed · .*payment_received=true/);
  await page.screenshot({ path: join(artifacts, 'dotty.png'), fullPage: true });
  assert.deepEqual(problems, []);
});
