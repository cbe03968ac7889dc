// A full localStorage: the answer still comes, and the person is told that the
// conversation could not be saved instead of losing it silently on the next reload.
import assert from 'node:assert/strict';
import { test, answer, appReady, ask, openDemo, send, useDist } from './harness.mjs';

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

test('a reload while a run waits for approval offers to resume it, and the resumed run finishes once', async (t) => {
  const { page, problems } = await openDemo(env, t);
  assert.equal(await ask(page, 'Remember that the ale is cold'), "I'll remember: the ale is cold.");
  await send(page, 'Forget about the ale');
  await page.locator('.approval').waitFor();
  await page.reload();
  await appReady(page);
  const banner = page.locator('.familiar-notice', { hasText: 'A reply was cut off when the page closed.' });
  await banner.waitFor();
  await banner.getByRole('button', { name: 'Resume' }).click();
  // The resumed run asks the person again, then finishes in the same turn.
  await page.locator('.approval .approve').click();
  assert.match(await answer(page, 2), /^Forgotten \(1\): the ale is cold/);
  assert.equal(await page.locator('.turn').count(), 2, 'one turn, resumed, not a new one');
  assert.equal(await banner.count(), 0);
  await page.reload();
  await appReady(page);
  assert.equal(await page.locator('.familiar-notice').count(), 0, 'nothing left to resume');
  const recalled = await ask(page, 'What do you remember?', 3);
  assert.match(recalled, /^I remember/);
  assert.doesNotMatch(recalled, /the ale is cold/, 'forgotten once, by the resumed run');
  assert.deepEqual(problems, []);
});

test('a message queued behind an approval survives a reload and goes after the resumed run, once', async (t) => {
  const { page, problems } = await openDemo(env, t);
  assert.equal(await ask(page, 'Remember that the ale is cold'), "I'll remember: the ale is cold.");
  await send(page, 'Forget about the ale');
  await page.locator('.approval').waitFor();
  await send(page, 'What time is it?');
  const queued = page.locator('.turn-queued');
  await queued.waitFor();
  await page.reload();
  await appReady(page);
  // Still there after the reload, still waiting behind the cut-off run.
  assert.equal(await queued.innerText().then((text) => text.includes('What time is it?')), true);
  assert.equal(await page.locator('.turn:not(.turn-queued)').count(), 2, 'not sent before the run in its way is dealt with');
  const banner = page.locator('.familiar-notice', { hasText: 'A reply was cut off when the page closed.' });
  await banner.getByRole('button', { name: 'Resume' }).click();
  await page.locator('.approval .approve').click();
  assert.match(await answer(page, 2), /^Forgotten \(1\): the ale is cold/);
  assert.match(await answer(page, 3), /^It's \d\d:\d\d on /);
  assert.equal(await queued.count(), 0);
  await page.reload();
  await appReady(page);
  assert.equal(await page.locator('.turn').count(), 3, 'sent once, and nothing waits any more');
  assert.equal(await queued.count(), 0);
  assert.deepEqual(problems, []);
});

test('a message queued behind an approval goes at once when the cut-off run is discarded', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await send(page, 'Forget about the ale');
  await page.locator('.approval').waitFor();
  await send(page, 'What time is it?');
  await page.locator('.turn-queued').waitFor();
  await page.reload();
  await appReady(page);
  const banner = page.locator('.familiar-notice', { hasText: 'A reply was cut off when the page closed.' });
  await banner.getByRole('button', { name: 'Discard' }).click();
  // The discarded turn stays stopped; the queued one is the first to complete.
  await page.locator('.turn[data-status="completed"]').first().waitFor();
  const second = page.locator('.turn:not(.turn-queued)').nth(1);
  assert.match(await second.locator('.message-assistant .markdown').innerText(), /^It's \d\d:\d\d on /);
  assert.equal(await page.locator('.turn:not(.turn-queued)').count(), 2);
  assert.equal(await page.locator('.turn-queued').count(), 0);
  assert.deepEqual(problems, []);
});
