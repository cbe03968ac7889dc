// The interface end to end, on the release build in headless Chromium: a whole
// conversation with an approval, Stop during a streaming run, a reload that restores
// the conversation, persisted settings, and screenshots in both themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { answer, appReady, artifacts, openDemo, send, useDist } from './harness.mjs';

const env = useDist();

test('a conversation with a multi-step run, an approval, and a reload that restores it', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.locator('.sample-prompt', { hasText: 'Remember that the ale is cold' }).click();
  assert.equal(await answer(page, 1), "I'll remember: the ale is cold.");
  await send(page, 'Forget about the ale');
  const card = page.locator('.approval');
  await card.waitFor();
  assert.match(await card.innerText(), /forget/);
  assert.equal(await page.locator('.composer-send').count(), 1, 'the composer is free while waiting');
  await card.locator('.approve').click();
  assert.match(await answer(page, 2), /^Forgotten \(1\): the ale is cold/);
  const second = page.locator('.turn').nth(1);
  await second.locator('.steps-summary').click();
  await second.locator('.step-list').waitFor();
  const kinds = await second.locator('.step').evaluateAll((steps) => steps.map((s) => s.className));
  const order = kinds.map((c) => c.replace('step ', '').split(' ')[0]);
  assert.deepEqual(order.slice(0, 4), ['step-observe', 'step-reason', 'step-approval', 'step-tool']);
  assert.match(await second.locator('.steps-summary').innerText(), /^6 steps · 1 tool call · iteration 2\/10 · answered$/);
  assert.match(await page.locator('.inspector-world').innerText(), /The player asked about the battle/);

  await page.reload();
  await appReady(page);
  assert.equal(await page.locator('.turn').count(), 2, 'the conversation is restored');
  assert.equal(await answer(page, 1), "I'll remember: the ale is cold.");
  await page.getByRole('button', { name: 'History' }).click();
  assert.match(await page.locator('.conversations').innerText(), /Remember that the ale is cold/);
  await page.getByRole('button', { name: 'New' }).click();
  assert.equal(await page.locator('.turn').count(), 0);
  await page.locator('.open-conversation').first().click();
  assert.equal(await page.locator('.turn').count(), 2, 'the old conversation opens again');
  assert.deepEqual(problems, []);
});

test('settings persist, and Stop ends a streaming run within a frame', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-proxy').check();
  await page.locator('.proxy-url').fill(`${env.server.url}v1`);
  await page.locator('.proxy-model').fill('slow');
  await page.locator('.step-cap').fill('4');
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();

  await page.reload();
  await page.getByRole('button', { name: 'Settings' }).click();
  assert.equal(await page.locator('.proxy-model').inputValue(), 'slow');
  assert.equal(await page.locator('.step-cap').inputValue(), '4');
  assert.match(await page.locator('.familiar-tagline').innerText(), /model proxy/);

  const before = env.server.stats.aborted;
  await send(page, 'Tell me a long story');
  const text = page.locator('.turn .message-assistant .markdown');
  await page.waitForFunction(() => (document.querySelector('.turn .markdown')?.textContent ?? '').includes('word3'));
  const early = await text.innerText();
  await page.waitForFunction((n) => document.querySelector('.turn .markdown').textContent.length > n, early.length);
  // Count animation frames from the click to the turn showing it stopped.
  const frames = await page.evaluate(() => new Promise((done) => {
    let count = 0;
    const tick = () => {
      if (document.querySelector('.turn[data-status="aborted"]')) {
        done(count);
      } else {
        count += 1;
        requestAnimationFrame(tick);
      }
    };
    document.querySelector('.composer-stop').click();
    requestAnimationFrame(tick);
  }));
  assert.ok(frames <= 1, `stopped after ${frames} frames`);
  await page.locator('.composer-send').waitFor();
  await page.waitForFunction(() => true);
  for (let i = 0; i < 50 && env.server.stats.aborted === before; i += 1) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(env.server.stats.aborted, before + 1, 'the request was cancelled');
  assert.match(await page.locator('.turn .steps-summary').innerText(), /stopped/);
  assert.deepEqual(problems, []);
});

for (const scheme of ['light', 'dark']) {
  test(`the ${scheme} theme at 1440 px and 360 px`, async (t) => {
    const { page, problems } = await openDemo(env, t, { viewport: { width: 1440, height: 900 }, colorScheme: scheme });
    await send(page, 'What time is it? **bold** and `code`');
    await answer(page, 1);
    await page.locator('.turn .steps-summary').click();
    await page.screenshot({ path: join(artifacts, `theme-${scheme}-1440.png`), fullPage: true });
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(background, scheme === 'dark' ? 'rgb(21, 21, 26)' : 'rgb(247, 247, 248)');
    await page.setViewportSize({ width: 360, height: 740 });
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
    await page.screenshot({ path: join(artifacts, `theme-${scheme}-360.png`), fullPage: true });
    assert.deepEqual(problems, []);
  });
}
