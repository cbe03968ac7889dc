// The interface end to end, on the release build in headless Chromium: a whole
// conversation with an approval, Stop during a streaming run, a reload that restores
// the conversation, persisted settings, and screenshots in both themes.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, answer, appReady, artifacts, openDemo, send, settled, useDist } from './harness.mjs';

const env = useDist();

test('a conversation with a multi-step run, an approval, and a reload that restores it', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.locator('.sample-prompt', { hasText: 'Remember that the ale is cold' }).click();
  assert.equal(await answer(page, 1), "I'll remember: the ale is cold.");
  await send(page, 'Forget about the ale');
  const card = page.locator('.approval');
  await card.waitFor();
  assert.match(await card.innerText(), /forget/);
  // The tool's own words for what it does, not the raw call alone.
  assert.equal(await card.locator('.approval-about').innerText(), 'Forget the memories that mention these words.');
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
  // The ale was remembered, then forgotten; a fresh profile has no other memory.
  await page.waitForFunction(() => document.querySelectorAll('.inspector-world li').length === 0);
  await page.locator('.inspector-none').waitFor();

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
  await page.locator('.turn .steps-summary', { hasText: 'stopped' }).waitFor();
  // The server hears the connection close when it does; the test's own limit bounds the wait.
  while (env.server.stats.aborted === before) await new Promise((r) => setTimeout(r, 20));
  assert.equal(env.server.stats.aborted, before + 1, 'the request was cancelled');
  assert.match(await page.locator('.turn .steps-summary').innerText(), /stopped/);
  const kept = await text.innerText();
  assert.ok(kept.startsWith(early.trim()) && kept.length >= early.length, `the streamed text stays: ${kept}`);
  assert.match(await page.locator(".turn .answer-stopped").innerText(), /^Stopped\.$/);
  assert.deepEqual(problems, []);
});

test('the conversation follows the newest answer, and stops following when the reader scrolls up', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: { width: 1280, height: 800 } });
  for (let n = 1; n <= 6; n += 1) {
    await send(page, `What time is it? (${n})`);
    await answer(page, n);
  }
  const inView = () => page.evaluate(() => {
    const turns = document.querySelectorAll('.turn');
    const last = turns[turns.length - 1].querySelector('.message-assistant').getBoundingClientRect();
    const composer = document.querySelector('.composer').getBoundingClientRect();
    return last.bottom <= composer.top + 1 && last.top >= 0;
  });
  assert.ok(await page.evaluate(() => window.scrollY) > 0, 'the page scrolled');
  assert.ok(await inView(), 'the newest answer is in view, above the composer');
  assert.equal(await page.locator('.jump-to-latest').count(), 0);

  await page.mouse.wheel(0, -600);
  await page.locator('.jump-to-latest').waitFor();
  await send(page, 'What time is it? (7)');
  await answer(page, 7);
  // Sending jumps back to the bottom: a person who sends wants to see the answer.
  assert.ok(await inView(), 'sending followed again');
  await page.mouse.wheel(0, -600);
  await page.locator('.jump-to-latest').waitFor();
  const before = await page.evaluate(() => window.scrollY);
  await page.evaluate(() => {
    const filler = document.createElement('p');
    filler.style.height = '400px';
    document.querySelector('.turn:last-child .message-assistant').append(filler);
  });
  await settled(page);
  assert.equal(await page.evaluate(() => window.scrollY), before, 'scrolled up, the reader keeps their place');
  await page.locator('.jump-to-latest').click();
  assert.ok(await inView(), 'Jump to latest goes to the end');
  assert.equal(await page.locator('.jump-to-latest').count(), 0);
  assert.deepEqual(problems, []);
});

/** A saved conversation of `turns` answered turns, in the format the bench also writes. */
function savedConversation(turns) {
  const interactions = [];
  for (let id = 1; id <= turns; id += 1) {
    const text = `It is 09:00 (turn ${id}).`;
    interactions.push({
      id,
      input: `Question ${id}: what time is it?`,
      status: 'Completed',
      draft: '',
      started_ms: 1795338000000 + id * 1000,
      steps: [{ type: 'answer', text, outcome: { type: 'answered', text } }],
    });
  }
  return { interactions };
}

test('a long conversation opens on its newest turns; "Show earlier" draws the rest by keyboard, keeping the place', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: { width: 1280, height: 800 } });
  await page.evaluate((saved) => {
    localStorage.setItem('familiar.conversation.long', JSON.stringify(saved));
    localStorage.setItem('familiar.current', JSON.stringify('long'));
  }, savedConversation(50));
  await page.reload();
  await appReady(page);
  const button = page.getByRole('button', { name: /^Show \d+ earlier messages$/ });
  assert.equal(await button.innerText(), 'Show 60 earlier messages', '30 of 50 turns held back');
  assert.equal(await page.locator('.message').count(), 40, 'the newest 20 turns are drawn');
  assert.match(await page.locator('.turn').first().innerText(), /Question 31:/);

  await button.focus();
  const first = page.locator('.turn', { hasText: 'Question 31:' });
  const before = await first.evaluate((e) => e.getBoundingClientRect().top);
  await page.keyboard.press('Enter');
  await page.locator('.turn').nth(39).waitFor();
  await settled(page);
  assert.equal(await page.locator('.message').count(), 80);
  assert.equal(await button.innerText(), 'Show 20 earlier messages');
  const after = await first.evaluate((e) => e.getBoundingClientRect().top);
  assert.ok(Math.abs(after - before) <= 2, `the turn read before stays in place (${before} → ${after})`);
  assert.ok(await button.evaluate((b) => b === document.activeElement), 'focus stays on the button');

  await page.keyboard.press('Enter');
  await page.locator('.turn').nth(49).waitFor();
  await settled(page);
  assert.equal(await page.locator('.message').count(), 100, 'every message is drawn');
  assert.equal(await button.count(), 0, 'nothing is left to show');
  assert.match(await page.locator('.turn').first().innerText(), /Question 1:/);
  assert.equal(await page.evaluate(() => document.activeElement?.className), 'conversation', 'focus goes to the list, not <body>');
  assert.deepEqual(problems, []);
});

test('a sent message is edited and asked again in its place: ↑ edits the last, Edit an earlier one after a second Send, and a reload keeps the edit', async (t) => {
  const { page, problems } = await openDemo(env, t);
  const box = page.locator('.composer-input');
  const inputs = () => page.locator('.turn .message-user p').allInnerTexts();
  await send(page, 'What time is it?');
  await answer(page, 1);
  await send(page, 'Remember that the ale is cold');
  await answer(page, 2);
  await send(page, 'Hello');
  await answer(page, 3);

  // ↑ in the empty box edits the last message: sent, it replaces that turn.
  await box.focus();
  await page.keyboard.press('ArrowUp');
  assert.equal(await box.inputValue(), 'Hello');
  assert.match(await page.locator('.editing-note').innerText(), /Editing your message: sending it asks again in its place\./);
  await box.fill('What do you remember?');
  await page.keyboard.press('Enter');
  assert.match(await answer(page, 3), /the ale is cold/);
  assert.deepEqual(await inputs(), ['What time is it?', 'Remember that the ale is cold', 'What do you remember?']);
  assert.equal(await page.locator('.editing-note').count(), 0, 'the edit is over');

  // Edit on the first answer: the later turns go only after a second Send.
  await page.locator('.turn').first().locator('.answer-edit').click();
  assert.equal(await box.inputValue(), 'What time is it?');
  assert.ok(await box.evaluate((b) => b === document.activeElement), 'the caret is in the message box');
  await box.fill('Remember that the wine is warm');
  await page.keyboard.press('Enter');
  assert.match(await page.locator('.editing-note').innerText(), /Send again to drop the 2 turns after it and ask again/);
  assert.equal(await page.locator('.turn').count(), 3, 'nothing dropped yet');
  assert.equal(await box.inputValue(), 'Remember that the wine is warm', 'the text stays');
  await page.keyboard.press('Enter');
  // The conversation read the seeded memory, another party's text: remembering asks.
  await page.locator('.approval .approve').click();
  assert.equal(await answer(page, 1), "I'll remember: the wine is warm.");
  assert.deepEqual(await inputs(), ['Remember that the wine is warm']);

  // Escape leaves an edit untouched.
  await box.focus();
  await page.keyboard.press('ArrowUp');
  await page.locator('.editing-note').waitFor();
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('.editing-note').count(), 0);
  assert.equal(await box.inputValue(), '');

  await page.reload();
  await appReady(page);
  assert.deepEqual(await inputs(), ['Remember that the wine is warm'], 'the edited conversation is what was saved');
  assert.deepEqual(problems, []);
});

test('the page runs under a strict Content-Security-Policy with no inline script', async (t) => {
  const html = await (await fetch(env.server.url)).text();
  const policy = html.match(/http-equiv="Content-Security-Policy" content="([^"]+)"/)?.[1] ?? '';
  for (const directive of ["script-src 'self' 'wasm-unsafe-eval'", "object-src 'none'", "base-uri 'none'"]) {
    assert.ok(policy.includes(directive), `${directive} in ${policy}`);
  }
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
  assert.ok(scripts.length >= 2);
  for (const [, attributes, body] of scripts) {
    assert.match(attributes, /\ssrc="/, 'every script is a file');
    assert.equal(body.trim(), '', 'no inline code');
  }
  assert.doesNotMatch(html, /<style[\s>]|\sstyle="/, 'no inline style');
  // A whole conversation, an approval and a reload break no rule of the policy
  // (openDemo counts any violation as a problem).
  const { page, problems } = await openDemo(env, t);
  await send(page, 'Remember that the ale is cold');
  await answer(page, 1);
  await send(page, 'Forget about the ale');
  await page.locator('.approval .approve').click();
  await answer(page, 2);
  await page.reload();
  await appReady(page);
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
