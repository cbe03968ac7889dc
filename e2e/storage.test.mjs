// A full localStorage: the answer still comes, and the person is told that the
// conversation could not be saved instead of losing it silently on the next reload.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ask, openDemo, useDist } from './harness.mjs';

const env = useDist();

test('a full localStorage is reported to the person and the turn is not lost', async (t) => {
  const { page, problems } = await openDemo(env, t);
  // Fill to the last byte: big pieces first, then smaller ones into what is left.
  const filled = await page.evaluate(() => {
    let error = 'never full';
    let i = 0;
    for (const size of [512 * 1024, 16 * 1024, 256, 1]) {
      const chunk = 'x'.repeat(size);
      try {
        for (; i < 100000; i += 1) localStorage.setItem(`f${i}`, chunk);
      } catch (e) {
        error = e.name;
      }
    }
    return error;
  });
  assert.equal(filled, 'QuotaExceededError');
  assert.match(await ask(page, 'What time is it?'), /^It's \d\d:\d\d on /);
  const notice = page.locator('.familiar-notice');
  await notice.waitFor();
  assert.match(await notice.innerText(), /could not be saved \(localStorage is full\)/);
  await notice.getByRole('button', { name: 'Dismiss' }).click();
  assert.equal(await notice.count(), 0);
  assert.deepEqual(problems, []);
});
