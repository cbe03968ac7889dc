// The one-tag page assistant (pkg-page/, scripts/page-assistant.sh) on a phone-sized
// host page (issue 61): the launcher never covers the page's element that has keyboard
// focus (WCAG 2.4.11, Focus Not Obscured), its conversation log scrolls by keyboard,
// and axe (WCAG 2.0-2.2 A/AA) finds nothing serious or critical with the panel open.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test, settled, useDist } from './harness.mjs';
import { openPage } from './one_tag.mjs';

const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

// An article whose Subscribe button sits where the launcher does, bottom right.
const article = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Owl letter</title><link rel="icon" href="data:,"></head><body>
<main>
  <h1>Owls</h1>
  <p>Barn owls hunt at night over open fields.</p>
  <label>Email <input id="email" type="email"></label>
</main>
<footer style="position: fixed; right: 12px; bottom: 12px;"><button id="subscribe">Subscribe</button></footer>
<script src="/pkg-page/assistant.js" defer></script>
</body></html>`;

// The same article with its Subscribe button in the text, nowhere near the launcher:
// what axe weighs there is the widget's own markup.
const plain = article.replace('<footer style="position: fixed; right: 12px; bottom: 12px;">', '<footer>');

const env = useDist({ pages: { '/article.html': article, '/plain.html': plain } });

/** Whether two boxes overlap. */
const overlap = (a, b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height;

test('at 360 px the launcher moves off the page\'s focused Subscribe button', async (t) => {
  const { tab, problems } = await openPage(env, t, 'article.html', { assistant: false });
  await tab.setViewportSize({ width: 360, height: 640 });
  const launcher = tab.getByRole('button', { name: 'Page assistant' });
  await launcher.waitFor();
  const subscribe = tab.locator('#subscribe');
  assert.ok(overlap(await launcher.boundingBox(), await subscribe.boundingBox()), 'unfocused, the launcher sits on it');
  await tab.locator('#email').focus();
  await tab.keyboard.press('Tab');
  assert.equal(await subscribe.evaluate((b) => b === document.activeElement), true, 'Subscribe has the focus');
  await settled(tab);
  assert.ok(!overlap(await launcher.boundingBox(), await subscribe.boundingBox()),
    'focused, Subscribe is not under the launcher');
  assert.ok(await launcher.isVisible(), 'the launcher is still there');
  assert.deepEqual(problems, []);
});

test('the conversation log is keyboard-scrollable, and axe at 360 px finds nothing serious with the panel open', async (t) => {
  const { tab, problems, panel } = await openPage(env, t, 'plain.html');
  await tab.setViewportSize({ width: 360, height: 640 });
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  for (let i = 0; i < 6; i += 1) {
    await box.fill('/summary');
    await box.press('Enter');
    await panel.locator('.msg.assistant').filter({ hasText: 'in outline' }).nth(i).waitFor({ timeout: 10_000 });
  }
  const log = panel.getByRole('log', { name: 'Conversation' });
  assert.equal(await log.evaluate((l) => l.scrollHeight > l.clientHeight), true, 'the log overflows');
  await log.focus();
  assert.equal(await log.evaluate((l) => l.getRootNode().activeElement === l), true, 'Tab can reach the log');
  await log.evaluate((l) => { l.scrollTop = l.scrollHeight; });
  const before = await log.evaluate((l) => l.scrollTop);
  await tab.keyboard.press('PageUp');
  await settled(tab);
  assert.ok(await log.evaluate((l) => l.scrollTop) < before, 'PageUp scrolls it');

  await tab.evaluate(axeSource);
  const serious = await tab.evaluate(async () => {
    const wcag = new Set(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']);
    const rules = Object.fromEntries(window.axe.getRules()
      .filter((r) => r.tags.some((tag) => wcag.has(tag)))
      .map((r) => [r.ruleId, { enabled: true }]));
    const result = await window.axe.run(document, { rules, resultTypes: ['violations'] });
    return result.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
  assert.deepEqual(serious, []);
  assert.deepEqual(problems, []);
});
