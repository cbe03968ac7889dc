// The release build in headless Chromium: a user asks, the agent answers with its steps.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, answer, appReady, artifacts, ask, openDemo, openHeld, send, useDist, watchPolicy } from './harness.mjs';

const env = useDist();
const small = { viewport: { width: 1024, height: 768 } };

test('asking the time shows the answer and the steps under it', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  const said = await ask(page, 'What time is it?');
  const year = String(new Date().getFullYear());
  assert.match(said, /^It's \d\d:\d\d on \w+day, \d{4}-\d\d-\d\d \(UTC[+-]\d\d:\d\d\)\.$/);
  assert.ok(said.includes(year), said);

  const turn = page.locator('.turn').first();

  assert.equal(await turn.locator('.step').count(), 0, 'the steps are folded into their summary');
  await turn.locator('.steps-summary').click();
  await turn.locator('.step-list').waitFor();
  const steps = turn.locator('.step');
  assert.ok((await steps.count()) >= 2, 'at least two rendered steps');
  assert.equal(await turn.locator('.step-tool .tool-name').innerText(), 'current_time');
  assert.match(await turn.locator('.step-tool .tool-result').innerText(), /"iso":/);
  assert.equal(await page.getByRole('combobox', { name: 'Message' }).inputValue(), '');

  await page.screenshot({ path: join(artifacts, 'chat-time.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('the page title question is answered from the document', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  const said = await ask(page, 'What is this page called?');
  assert.equal(said, `This page is “${await page.title()}”.`);
  assert.deepEqual(problems, []);
});

test('the widget stays usable at 360 px wide', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  await page.setViewportSize({ width: 360, height: 640 });
  assert.match(await ask(page, 'hello'), /^I'm Familiar, running entirely in this tab/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `horizontal overflow of ${overflow}px`);
  await page.screenshot({ path: join(artifacts, 'chat-360.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test("the README's path: remembered, forgotten, reloaded, and nothing is remembered (no seeded memory either)", async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  assert.equal(await page.locator('.inspector-world li').count(), 0, 'a fresh profile remembers nothing');
  assert.equal(await ask(page, 'Remember that the ale is cold'), "I'll remember: the ale is cold.");
  await send(page, 'Forget about the ale');
  await page.locator('.approval .approve').click();
  assert.equal(await answer(page, 2), 'Forgotten (1): the ale is cold');
  await page.reload();
  await appReady(page);
  assert.equal(await ask(page, 'What do you remember?', 3), 'I remember 0 things');
  assert.deepEqual(problems, []);
});

test('a memory written in the local store survives a reload', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  assert.equal(await ask(page, 'Remember that the ale is cold'), "I'll remember: the ale is cold.");
  await page.locator('.steps-summary').click();
  assert.equal(await page.locator('.step-tool .tool-kind').textContent(), 'action');

  await page.reload();
  await appReady(page);
  const recalled = await ask(page, 'What do you remember?', 2);
  assert.equal(recalled, 'I remember 1 thing: the ale is cold');
  await page.screenshot({ path: join(artifacts, 'memory-after-reload.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('with review and goal-guessing turned on, the rules model answers five questions with a goal and a review each, and no error step', async (t) => {
  const { page, problems } = await openDemo(env, t, small);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.reflection').check();
  await page.locator('.goal-guess').check();
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.settings-close').click();
  // The page's title last: once the conversation has read the page, actions ask first.
  const questions = [
    ['Remember that the ale is cold', /^I'll remember: the ale is cold\.$/, 'remember'],
    ['What do you remember?', /^I remember 1 thing: the ale is cold$/, 'recall'],
    ['What time is it?', /^It's \d\d:\d\d on \w+day/, 'current_time'],
    ['hello', /^I'm Familiar, running entirely in this tab/, null],
    ['What is this page called?', /^This page is “/, 'page_title'],
  ];
  for (const [n, [question, expected, tool]] of questions.entries()) {
    assert.match(await ask(page, question, n + 1), expected);
    const turn = page.locator('.turn').nth(n);
    await turn.locator('.steps-summary').click();
    await turn.locator('.step-list').waitFor();
    assert.equal(await turn.locator('.step-error').count(), 0, `${question}: no error step`);
    const labels = await turn.locator('.step-reason .step-label').allInnerTexts();
    assert.equal(labels[0], 'Goal', `${question}: the goal is guessed first (${labels})`);
    assert.equal(labels.filter((l) => l === 'Goal').length, 1, `${question}: in one call (${labels})`);
    assert.equal(labels.at(-1), 'Reflection #1', `${question}: then reviewed once (${labels})`);
    assert.equal(await turn.locator('.step-reflection .step-verdict').innerText(), 'finished');
    const feedback = await turn.locator('.step-reflection .step-text').innerText();
    assert.equal(feedback, tool ? `The answer rests on the results of ${tool}.`
      : "No tool was called: the answer is the rules' reply to the request's words.");
  }
  assert.deepEqual(problems, []);
});

test('while the app loads, its first screen shows, then gives way to the app', async (t) => {
  const { page, release } = await openHeld(env, t);
  assert.equal(await page.getByRole('status').innerText(), 'Loading the agent…');
  assert.equal(await page.locator('h1').innerText(), 'Familiar');
  assert.ok(await page.getByRole('combobox', { name: 'Message' }).isEditable(), 'the composer takes input already');

  release();
  await appReady(page);
  assert.equal(await page.locator('#familiar-loading').count(), 0);
  assert.equal(await page.locator('h1').count(), 1, 'one heading: the app\'s own');
  assert.equal(await page.getByRole('combobox', { name: 'Message' }).count(), 1, 'one composer: the app\'s own');
});

test('a draft typed while the app loads moves into the app with its caret and focus', async (t) => {
  const { page, release } = await openHeld(env, t);
  const box = page.getByRole('combobox', { name: 'Message' });
  await box.fill('What time is it in Lisbon?');
  await box.evaluate((input) => input.setSelectionRange(5, 9));

  release();
  await appReady(page);
  assert.equal(await page.locator('#familiar-loading').count(), 0);
  assert.equal(await box.inputValue(), 'What time is it in Lisbon?');
  const caret = await box.evaluate((input) => [document.activeElement === input, input.selectionStart, input.selectionEnd]);
  assert.deepEqual(caret, [true, 5, 9]);
  await box.press('End');
  await box.pressSequentially(' Roughly.');
  assert.equal(await box.inputValue(), 'What time is it in Lisbon? Roughly.', 'typing goes on in the app');
  assert.equal(await page.locator('.turn').count(), 0, 'a draft is not sent');
});

test('a message sent while the app loads is sent by the app when it starts', async (t) => {
  const { page, release } = await openHeld(env, t);
  const box = page.getByRole('combobox', { name: 'Message' });
  await box.fill('What time is it?');
  await box.press('Enter');
  assert.match(await page.getByRole('status').innerText(), /your message goes out as soon as it is ready/);
  assert.equal(await box.inputValue(), 'What time is it?', 'the queued message stays in view');

  release();
  assert.match(await answer(page, 1), /^It's \d\d:\d\d on \w+day/);
  assert.equal(await page.locator('.turn').count(), 1, 'sent once');
  assert.equal(await page.locator('.turn .message-user p').innerText(), 'What time is it?');
  assert.equal(await box.inputValue(), '', 'the composer is empty once it is sent');
});

test('if the app cannot start, the shell says so instead of loading forever', async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const violations = [];
  await watchPolicy(page, violations);
  await page.route('**/*.wasm', (route) => route.fulfill({ status: 404, body: 'gone' }));
  await page.goto(env.server.url);
  await page.getByText(/^Familiar could not start: /).waitFor();
  assert.ok(await page.getByRole('combobox', { name: 'Message' }).isDisabled(), 'nothing can be sent');
  assert.ok(await page.getByRole('button', { name: 'Send' }).isDisabled());
  assert.deepEqual(violations, [], 'the shell says it under the page\'s policy');
});

test('without JavaScript the page says what it needs and offers nothing that cannot work', async (t) => {
  const context = await env.browser.newContext({ javaScriptEnabled: false });
  t.after(() => context.close());
  const page = await context.newPage();
  await page.goto(env.server.url);
  // (Chromium's script switch leaves the parser's scripting flag on, so <noscript> is
  // not rendered here; a browser with scripts off shows its text.)
  assert.equal(await page.locator('noscript').textContent(), 'Familiar runs in this tab: it needs JavaScript and WebAssembly.');
  assert.ok(await page.getByRole('combobox', { name: 'Message' }).isDisabled());
  assert.ok(await page.getByRole('button', { name: 'Send' }).isDisabled());
});

