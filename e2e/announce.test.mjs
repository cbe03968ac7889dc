// What a screen reader hears of finished answers, on the release build: the polite
// live region's every new text is recorded from the page's start. Each answer is said
// once, even when it repeats the one before (Retry); as plain words (no markdown
// marks); and a long one is cut, with a shortcut to the whole answer that works.
import assert from 'node:assert/strict';
import { test, answer, openDemo, send, settled, useDist } from './harness.mjs';

const env = useDist();

/** Opens the demo with a recorder of what the answers' live region says. */
async function openListening(t, options) {
  const opened = await openDemo(env, t, options);
  await opened.page.evaluate(() => {
    window.said = [];
    let last = '';
    new MutationObserver(() => {
      const region = document.querySelector('p.sr-only[aria-live="polite"]');
      const text = region?.textContent ?? '';
      if (text !== last) {
        if (text) window.said.push(text);
        last = text;
      }
    }).observe(document.body, { subtree: true, childList: true, characterData: true });
  });
  return opened;
}

/**
 * What was said, once `count` things have been and the page has settled after them
 * (anything more it was going to say about that answer, it has said).
 */
async function said(page, count) {
  await page.waitForFunction((n) => window.said.length >= n, count);
  await settled(page);
  return page.evaluate(() => window.said);
}

test('an answer identical to the one before (Retry) is announced again, once', async (t) => {
  const { page, problems } = await openListening(t);
  await send(page, 'Remember that the ale is cold');
  await answer(page, 1);
  assert.deepEqual(await said(page, 1), ["Familiar answered: I'll remember: the ale is cold."]);
  await page.getByRole('button', { name: /^Retry/ }).click();
  await answer(page, 2);
  assert.deepEqual(await said(page, 2), [
    "Familiar answered: I'll remember: the ale is cold.",
    "Familiar answered: I'll remember: the ale is cold.",
  ]);
  assert.deepEqual(problems, []);
});

test('a character\'s markdown is announced as plain words', async (t) => {
  const { page, problems } = await openListening(t);
  await page.locator('.character-select').selectOption('dotty');
  await send(page, "I'll have a whiskey");
  await answer(page, 1);
  await send(page, 'Here you go');
  await answer(page, 2);
  const marked = await page.locator('.turn').nth(1).locator('.markdown').evaluate((el) => el.querySelector('em, strong') !== null);
  assert.ok(marked, 'the answer has emphasis, shown as such');
  const heard = (await said(page, 2))[1];
  assert.match(heard, /^Dotty answered: slides the whiskey across the bar/);
  assert.doesNotMatch(heard, /[*_#`]/, `no markdown marks in “${heard}”`);
  assert.deepEqual(problems, []);
});

test('a long answer is announced cut, and Alt+Shift+A goes to the whole of it', async (t) => {
  const { page, problems } = await openListening(t);
  const long = Array.from({ length: 80 }, (_, i) => `barrel${i}`).join(' ');
  await send(page, `Remember that ${long}`);
  await answer(page, 1);
  const [heard] = await said(page, 1);
  const cut = heard.indexOf('… ') - 'Familiar answered: '.length;
  assert.ok(cut > 0 && cut <= 280, `cut at ${cut}: ${heard}`);
  assert.match(heard, /Alt\+Shift\+A goes to it\.$/);
  assert.ok(!heard.includes('barrel79'), 'the end is not read out');
  await page.keyboard.press('Alt+Shift+KeyA');
  const focus = await page.evaluate(() => document.activeElement.matches('.turn:last-child .message-assistant'));
  assert.ok(focus, 'the whole answer has focus');
  assert.match(await page.evaluate(() => document.activeElement.textContent), /barrel79/);
  assert.deepEqual(problems, []);
});
