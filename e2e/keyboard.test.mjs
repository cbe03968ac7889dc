// The chat pane by keyboard alone, on the release build: every action that removes or
// replaces the control that had focus hands it somewhere sensible (the composer, the
// next item, the control that opened a panel), never to <body>. Each step presses
// keys only (Tab to reach a control, Enter or Escape to act) and asserts where focus
// lands.
import assert from 'node:assert/strict';
import { test, answer, openDemo, useDist } from './harness.mjs';

const env = useDist();

/** Where focus is: a short description of document.activeElement. */
function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 'body';
    const cls = [...el.classList].find((c) => !c.startsWith('current')) ?? '';
    return `${el.tagName.toLowerCase()}${cls ? `.${cls}` : ''}`;
  });
}

/** Presses Tab (Shift+Tab when `back`) until focus is on `selector`; fails after 40. */
async function tabTo(page, selector, { back = false } = {}) {
  for (let i = 0; i < 40; i += 1) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached ${selector}; focus is on ${await focused(page)}`);
}

/** Types a message in the composer (which has focus) and sends it with Enter. */
async function say(page, text) {
  assert.equal(await focused(page), 'textarea.composer-input');
  await page.keyboard.type(text);
  await page.keyboard.press('Enter');
}

/** Waits (up to 5 s) for focus to land on `selector` (a `focused` description), then
 * asserts where it is: an event awaited, not a fixed sleep a loaded machine outruns. */
async function focusLands(page, selector, message) {
  await page.waitForFunction((s) => document.activeElement?.matches(s) ?? false, selector, { timeout: 5_000 })
    .catch(() => {});
  assert.equal(await focused(page), selector, message);
}

/** A model on the page's origin that answers "Done." only when the test calls the
 * returned `release` (once per request, oldest first; a release before the request
 * arrives is kept for it): a run that is still going however slowly Tab walks to
 * Stop on a loaded machine, then ends when the test says. */
async function heldAnswers(page) {
  const held = [];
  let early = 0;
  await page.route('**/v1/chat/completions', async (route) => {
    if (early > 0) early -= 1;
    else await new Promise((ok) => held.push(ok));
    const chunk = (delta, finish = null) =>
      `data: ${JSON.stringify({ id: 'k', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    await route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/event-stream' },
      body: `${chunk({ role: 'assistant', content: 'Done.' })}${chunk({}, 'stop')}data: [DONE]\n\n`,
    }).catch(() => {});
  });
  return () => {
    const next = held.shift();
    if (next) next();
    else early += 1;
  };
}

test('by keyboard: the composer has focus on load, after Send, and when a run ends under Stop', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await focusLands(page, 'textarea.composer-input', 'focused on load');
  assert.equal(await page.locator('.composer-send').isDisabled(), true, 'Send is disabled while the box is empty');
  await page.keyboard.type('What time is it?');
  await tabTo(page, '.composer-send');
  await page.keyboard.press('Enter');
  await answer(page, 1);
  assert.equal(await focused(page), 'textarea.composer-input', 'Send hands focus to the message box');

  // A model that answers when the test lets it: Stop shows, takes focus, and
  // disappears as the run ends.
  await tabTo(page, '.show-settings', { back: true });
  await page.keyboard.press('Enter');
  await tabTo(page, 'input[name="model"]');
  // Rules, then the local model, then the proxy: arrows walk the group.
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.locator('.use-local').isChecked(), true);
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.locator('.use-proxy').isChecked(), true);
  await tabTo(page, '.proxy-url');
  await page.keyboard.type(`${env.server.url}v1`);
  await tabTo(page, '.proxy-model');
  await page.keyboard.type('slow');
  await tabTo(page, '.settings-save');
  await page.keyboard.press('Enter');
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.keyboard.press('Escape');
  assert.equal(await focused(page), 'button.show-settings', 'Escape gives focus back to Settings');
  const release = await heldAnswers(page);
  await page.keyboard.press('Shift+Escape');
  await say(page, 'Take your time');
  await tabTo(page, '.composer-stop');
  const status = await page.locator('.turn').nth(1).getAttribute('data-status');
  assert.doesNotMatch(status, /completed|failed|aborted/, 'Stop was reached while the run went on');
  release();
  await answer(page, 2);
  await focusLands(page, 'textarea.composer-input', 'the run ended under Stop: focus went to the message box');

  // Stop pressed: the message box again.
  await say(page, 'Again, slowly');
  await tabTo(page, '.composer-stop');
  await page.keyboard.press('Enter');
  await page.locator('.turn[data-status="aborted"]').waitFor();
  assert.equal(await focused(page), 'textarea.composer-input', 'after Stop');
  assert.deepEqual(problems, []);
});

test('by keyboard: an approval, a new conversation with a character, the loader, History and its deletions', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await focusLands(page, 'textarea.composer-input', 'focused on load');
  await say(page, 'Remember that the ale is cold');
  await answer(page, 1);
  await say(page, 'Forget about the ale');
  await page.locator('.approval').waitFor();
  assert.equal(await focused(page), 'div.approval', 'the card takes focus');
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'button.approve');
  await page.keyboard.press('Enter');
  await answer(page, 2);
  assert.equal(await focused(page), 'textarea.composer-input', 'after a decision');

  // ↑ in the empty box brings the last message back; Escape-free: the box keeps focus.
  await page.keyboard.press('ArrowUp');
  assert.equal(await page.locator('.composer-input').inputValue(), 'Forget about the ale');
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');

  // The menu proposes; "Start a new conversation with Dotty" commits and hands focus on.
  await tabTo(page, '.character-select', { back: true });
  await page.locator('.character-select').selectOption('dotty');
  await tabTo(page, '.start-with');
  assert.match(await page.locator('.start-with').innerText(), /Dotty/);
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('.turn').count(), 0);
  assert.equal(await focused(page), 'textarea.composer-input', 'after starting a new conversation');
  await say(page, "I'll have a whiskey");
  await answer(page, 1);

  // The loader: takes focus, stays on screen, Escape closes it and focus returns.
  await tabTo(page, '.character-select', { back: true });
  await page.locator('.character-select').selectOption('load-character');
  await page.locator('.character-loader').waitFor();
  assert.equal(await focused(page), 'input', 'the loader takes focus in its URL field');
  const box = await page.locator('.character-loader').boundingBox();
  const aside = await page.locator('.inspector').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 1280, 'on screen');
  assert.ok(box.x + box.width <= aside.x || box.y >= aside.y + aside.height, 'clear of the inspector');
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.character-loader').count(), 0, 'Escape closes the loader');
  assert.equal(await focused(page), 'select.character-select');

  // History: opens with focus, deletes hand focus to the next item, then the composer.
  await tabTo(page, '.show-conversations');
  await page.keyboard.press('Enter');
  assert.equal(await focused(page), 'section.conversations', 'History takes focus');
  assert.equal(await page.locator('.open-conversation').count(), 2);
  await tabTo(page, '.delete-conversation');
  await page.keyboard.press('Enter');
  await page.locator('.open-conversation').nth(1).waitFor({ state: 'detached' });
  assert.equal(await page.locator('.open-conversation').count(), 1);
  await focusLands(page, 'button.open-conversation', 'after a deletion, the next conversation');
  await tabTo(page, '.delete-conversation');
  await page.keyboard.press('Enter');
  await focusLands(page, 'textarea.composer-input', 'none left: the composer');
  await tabTo(page, '.show-conversations', { back: true });
  await page.keyboard.press('Enter');
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.conversations').count(), 0, 'Escape closes History');
  assert.equal(await focused(page), 'button.show-conversations');

  // Shortcuts: Alt+Shift+N a new conversation, Shift+Escape the message box.
  await page.keyboard.press('Shift+Escape');
  assert.equal(await focused(page), 'textarea.composer-input');
  await say(page, 'Here you go');
  await answer(page, 1);
  await tabTo(page, '.show-settings', { back: true });
  await page.keyboard.press('Alt+Shift+KeyN');
  assert.equal(await page.locator('.turn').count(), 0, 'Alt+Shift+N starts a new conversation');
  assert.equal(await focused(page), 'textarea.composer-input');
  assert.deepEqual(problems, []);
});

test('by keyboard on a phone: the loader is on screen at 360 px and takes focus', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: { width: 360, height: 740 } });
  await page.locator('.character-select').selectOption('load-character');
  await page.locator('.character-loader').waitFor();
  const box = await page.locator('.character-loader').boundingBox();
  assert.ok(box.x >= 0 && box.x + box.width <= 360, `the loader spans ${box.x}–${box.x + box.width}`);
  assert.equal(await focused(page), 'input');
  await page.keyboard.press('Escape');
  assert.equal(await focused(page), 'select.character-select');
  assert.deepEqual(problems, []);
});
