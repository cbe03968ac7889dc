// The chat pane on a phone (360×740, and 320 px for the approval card), on the release
// build: the first screen shows the title and the suggested prompts; the view follows
// the conversation's own end (the newest answer is in view after each answer); the
// inspector is a panel the person opens, not content under the composer; the approval
// card's buttons are on screen; and "Jump to latest" never shows on an empty
// conversation nor over a message.
import assert from 'node:assert/strict';
import { test, answer, openDemo, send, settled, useDist } from './harness.mjs';

const env = useDist();
const phone = { width: 360, height: 740 };

/** Whether `selector`'s last match lies wholly inside the window, above the dock. */
function fullyInView(page, selector) {
  return page.evaluate((selector) => {
    const all = document.querySelectorAll(selector);
    const box = all[all.length - 1]?.getBoundingClientRect();
    const dock = document.querySelector('.composer-dock').getBoundingClientRect();
    return Boolean(box) && box.top >= 0 && box.left >= 0 && box.right <= window.innerWidth &&
      box.bottom <= Math.min(window.innerHeight, dock.top) + 1;
  }, selector);
}

/** Whether the bottom of `selector`'s last match is in view, above the dock. */
function endInView(page, selector) {
  return page.evaluate((selector) => {
    const all = document.querySelectorAll(selector);
    const box = all[all.length - 1].getBoundingClientRect();
    const dock = document.querySelector('.composer-dock').getBoundingClientRect();
    return box.bottom > 0 && box.bottom <= dock.top + 1 && box.top < dock.top;
  }, selector);
}

test('at 360×740 the first screen shows the title and every suggested prompt, and nothing scrolls', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: phone });
  // Whatever the first screen does by itself (the message box takes focus, the world
  // is read once the first frame is out) has been done and drawn.
  await settled(page);
  assert.equal(await page.evaluate(() => window.scrollY), 0, 'the page is not scrolled');
  assert.ok(await fullyInView(page, 'h1'), 'the title is in view');
  const prompts = await page.locator('.sample-prompt').count();
  assert.ok(prompts >= 4);
  for (let i = 0; i < prompts; i += 1) {
    assert.ok(await page.locator('.sample-prompt').nth(i).isVisible());
    const inView = await page.locator('.sample-prompt').nth(i).evaluate((el) => {
      const box = el.getBoundingClientRect();
      return box.top >= 0 && box.bottom <= document.querySelector('.composer-dock').getBoundingClientRect().top;
    });
    assert.ok(inView, `suggested prompt ${i + 1} is in view`);
  }
  assert.equal(await page.locator('.jump-to-latest').count(), 0, 'no "Jump to latest" on an empty conversation');
  assert.equal(await page.locator('.inspector').isVisible(), false, 'the inspector is not under the composer');
  assert.deepEqual(problems, []);
});

test('at 360×740 each answer ends in view, and the inspector opens as a panel and closes with Escape', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: phone });
  for (let n = 1; n <= 5; n += 1) {
    await send(page, `What time is it? (${n})`);
    await answer(page, n);
    await settled(page);
    assert.ok(await endInView(page, '.turn .message-assistant'), `answer ${n} ends in view, above the composer`);
  }
  assert.ok(await page.evaluate(() => window.scrollY) > 0, 'the conversation outgrew the window');
  assert.equal(await page.locator('.jump-to-latest').count(), 0, 'following: no "Jump to latest"');
  // The page ends with the conversation: nothing below the composer.
  const below = await page.evaluate(() =>
    document.scrollingElement.scrollHeight - document.querySelector('.composer-dock').getBoundingClientRect().bottom - window.scrollY);
  assert.ok(below <= 40, `${below}px of page below the composer`);

  const button = page.getByRole('button', { name: 'Inspector' });
  await button.click();
  const panel = page.getByRole('complementary', { name: 'Inspector' });
  await panel.waitFor();
  assert.ok(await fullyInView(page, '.inspector h2'), 'the panel is on screen');
  assert.equal(await page.evaluate(() => document.activeElement.closest('.inspector') !== null), true, 'the panel takes focus');
  assert.match(await panel.locator('.inspector-iterations').innerText(), /^1 \/ 10$/);
  await page.keyboard.press('Escape');
  assert.equal(await panel.isVisible(), false, 'Escape closes it');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Inspector', 'focus is back on its button');
  assert.deepEqual(problems, []);
});

test('at 360 and 320 px the approval card and its buttons are in view, and a message sent meanwhile shows as queued', async (t) => {
  for (const width of [360, 320]) {
    const { page, problems } = await openDemo(env, t, { viewport: { width, height: 640 } });
    for (let n = 1; n <= 3; n += 1) {
      await send(page, `Remember that the ale is cold (${n})`);
      await answer(page, n);
    }
    await send(page, 'Forget about the ale');
    const card = page.locator('.approval');
    await card.waitFor();
    await settled(page);
    for (const name of ['approve', 'deny', 'approve-always']) {
      assert.ok(await fullyInView(page, `.approval .${name}`), `at ${width} px ${name} is in view`);
    }
    assert.match(await card.innerText(), /forget/i, 'the card says what will happen');
    assert.match(await page.locator('.turn').nth(3).locator('.waiting').innerText(), /waiting for your decision/);
    await send(page, 'What time is it?');
    const queued = page.locator('.turn-queued');
    await queued.waitFor();
    assert.match(await queued.innerText(), /What time is it\?/);
    await card.locator('.approve').click();
    await answer(page, 5);
    assert.equal(await queued.count(), 0, 'the queued message became its turn');
    assert.equal(await page.locator('.turn').nth(4).locator('.message-user p').innerText(), 'What time is it?');
    assert.deepEqual(problems, []);
  }
});

test('scrolled up on a phone, "Jump to latest" sits in the dock, over no message', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: phone });
  for (let n = 1; n <= 5; n += 1) {
    await send(page, `What time is it? (${n})`);
    await answer(page, n);
  }
  await page.mouse.move(180, 300);
  await page.mouse.wheel(0, -500);
  const jump = page.locator('.jump-to-latest');
  await jump.waitFor();
  const overlaps = await page.evaluate(() => {
    const button = document.querySelector('.jump-to-latest').getBoundingClientRect();
    const dock = document.querySelector('.composer-dock').getBoundingClientRect();
    const inside = button.top >= dock.top && button.bottom <= dock.bottom;
    const opaque = getComputedStyle(document.querySelector('.composer-dock')).backgroundColor !== 'rgba(0, 0, 0, 0)';
    return { inside, opaque };
  });
  assert.deepEqual(overlaps, { inside: true, opaque: true });
  await jump.click();
  assert.ok(await endInView(page, '.turn .message-assistant'));
  assert.deepEqual(problems, []);
});
