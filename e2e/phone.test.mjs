// The chat pane on a phone (360×740, and 320 px for the approval card), on the release
// build: the first screen shows the title and the suggested prompts; the view follows
// the conversation's own end (the newest answer is in view after each answer); the
// inspector is a panel the person opens, not content under the composer; the approval
// card's buttons are on screen; and "Jump to latest" never shows on an empty
// conversation nor over a message.
import assert from 'node:assert/strict';
import { test, answer, openDemo, send, settled, topBar, useDist } from './harness.mjs';

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

  await topBar(page, 'Inspector');
  const panel = page.getByRole('complementary', { name: 'Inspector' });
  await panel.waitFor();
  assert.ok(await fullyInView(page, '.inspector h2'), 'the panel is on screen');
  assert.equal(await page.evaluate(() => document.activeElement.closest('.inspector') !== null), true, 'the panel takes focus');
  assert.match(await panel.locator('.inspector-iterations').innerText(), /^1 \/ 10$/);
  await page.keyboard.press('Escape');
  assert.equal(await panel.isVisible(), false, 'Escape closes it');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'familiar-menu-button', 'focus is back on the menu that holds its button');
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

/** Each top-bar destination: its button's name and what it opens. */
const DESTINATIONS = [
  ['History', 'section.conversations'],
  ['Guild', 'section.guild'],
  ['World', 'section.world'],
  ['Settings', 'form.settings'],
  ['Inspector', '.inspector.open'],
];

/** Where `locator` is, if a person sees it without scrolling sideways: wholly inside
 * the window, no scroller moved, and the topmost thing at its centre. */
function seen(locator) {
  return locator.evaluate((el) => {
    const box = el.getBoundingClientRect();
    const x = box.left + box.width / 2;
    const y = box.top + box.height / 2;
    let scrolled = window.scrollX !== 0;
    for (let up = el.parentElement; up; up = up.parentElement) scrolled ||= up.scrollLeft !== 0;
    const inside = box.width > 0 && box.left >= 0 && box.right <= window.innerWidth && box.top >= 0 && box.bottom <= window.innerHeight;
    const top = document.elementFromPoint(x, y);
    return inside && !scrolled && (top === el || el.contains(top)) ? { x, y } : null;
  });
}

/** How far the page is wider than its window. */
const overflow = (page) => page.evaluate(() => document.scrollingElement.scrollWidth - window.innerWidth);

/** Waits for focus inside `selector` (a panel takes it once its module has come). */
async function focusInside(page, selector) {
  await page.waitForFunction((s) => document.activeElement?.closest(s) !== null, selector, { timeout: 10_000 });
}

test('at 360 px every top-bar destination is on screen and opens by pointer and by keyboard, with nothing wider than the screen', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: phone });
  await send(page, 'What time is it?');
  await answer(page, 1);
  const bar = page.locator('.familiar-actions');
  const menu = bar.getByRole('button', { name: 'Menu', exact: true });
  assert.ok(await overflow(page) <= 0, `the page is ${await overflow(page)} px wider than the screen`);
  assert.equal(await bar.evaluate((b) => b.scrollWidth - b.clientWidth), 0, 'the top bar does not scroll sideways');
  for (const [name, opened] of DESTINATIONS) {
    // By pointer: each button where a person sees it, pressed where it is.
    const button = bar.getByRole('button', { name, exact: true });
    if (!(await button.isVisible())) {
      assert.ok(await seen(menu), `${name} is in the menu, whose button is on screen`);
      await menu.click();
      assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    }
    const at = await seen(button);
    assert.ok(at, `${name} is on screen`);
    await page.mouse.click(at.x, at.y);
    await page.locator(opened).waitFor();
    assert.equal(await menu.getAttribute('aria-expanded'), 'false', `choosing ${name} closes the menu`);
    await focusInside(page, opened);
    const box = await page.locator(opened).boundingBox();
    assert.ok(box.x >= 0 && box.x + box.width <= phone.width, `${name} spans ${box.x}–${box.x + box.width}`);
    assert.ok(await overflow(page) <= 0, `with ${name} open the page is ${await overflow(page)} px wider than the screen`);
    await page.keyboard.press('Escape');
    await page.locator(opened).waitFor({ state: 'detached' });
    assert.ok(await page.evaluate(() => document.activeElement.id === 'familiar-menu-button'),
      `Escape closes ${name} and gives focus back to the menu holding its button`);

    // By keyboard: from the message box, back to the menu, down its items.
    await page.getByRole('combobox', { name: 'Message' }).focus();
    for (let i = 0; i < 20 && !(await menu.evaluate((m) => m === document.activeElement)); i += 1) {
      await page.keyboard.press('Shift+Tab');
    }
    await page.keyboard.press('Enter');
    assert.equal(await menu.getAttribute('aria-expanded'), 'true', 'Enter opens the menu');
    await page.keyboard.press('ArrowDown');
    for (let i = 0; i < 5 && !(await button.evaluate((b) => b === document.activeElement)); i += 1) {
      await page.keyboard.press('ArrowDown');
    }
    assert.ok(await button.evaluate((b) => b === document.activeElement), `the arrow keys reach ${name}`);
    assert.ok(await seen(button), `${name}, focused, is on screen`);
    await page.keyboard.press('Enter');
    await page.locator(opened).waitFor();
    await focusInside(page, opened);
    await page.keyboard.press('Escape');
    await page.locator(opened).waitFor({ state: 'detached' });
  }
  // Escape in the menu closes it, back on its button; Tab past its last item closes it.
  await menu.focus();
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Inspector', 'End goes to the last item');
  await page.keyboard.press('Escape');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false', 'Escape closes the menu');
  assert.ok(await menu.evaluate((m) => m === document.activeElement), 'and focus is back on its button');
  await page.keyboard.press('Enter');
  await page.keyboard.press('End');
  await page.keyboard.press('Tab');
  assert.equal(await menu.getAttribute('aria-expanded'), 'false', 'Tab out of the menu closes it');
  assert.deepEqual(problems, []);
});

test('at 360 px a menu item that closes its own open panel leaves focus on the menu button, not lost to the page', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: phone });
  const bar = page.locator('.familiar-actions');
  const menu = bar.getByRole('button', { name: 'Menu', exact: true });
  for (const [name, opened] of [['History', 'section.conversations'], ['World', 'section.world']]) {
    const item = bar.getByRole('button', { name, exact: true });
    await menu.click();
    await item.click();
    await page.locator(opened).waitFor();
    // The same item again, from the menu: it closes the panel it opened.
    await menu.click();
    await item.focus();
    await page.keyboard.press('Enter');
    await page.locator(opened).waitFor({ state: 'detached' });
    assert.equal(await menu.getAttribute('aria-expanded'), 'false', `choosing ${name} closes the menu`);
    await page.waitForFunction(() => document.activeElement?.id === 'familiar-menu-button', null, { timeout: 2000 })
      .catch(() => {});
    assert.equal(await page.evaluate(() => document.activeElement?.id || document.activeElement?.tagName), 'familiar-menu-button',
      `closing ${name} from the menu gives focus to the menu's button`);
  }
  assert.deepEqual(problems, []);
});
