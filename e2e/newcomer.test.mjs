// What a first visit hit (issue 61), on the release build (dist/, `trunk build --release
// --offline`): leaving a resident's conversation while her request waits leaves the
// message box working and her request waiting on her card; leaving one's own while a
// request waits asks first; residents' requests speak in names and words, not ids; a
// Settings error and "Saved." are scrolled into view; a Supabase URL that 404s is said
// at its field, not "Saved.".
import assert from 'node:assert/strict';
import { test, ask, openDemo, send, topBar, useDist } from './harness.mjs';

const env = useDist();

/** The World panel, opened, its market timer paused (the test fires by hand). */
async function openWorld(page) {
  const world = page.locator('section.world');
  if (!(await world.isVisible())) await page.getByRole('button', { name: 'World', exact: true }).click();
  await world.waitFor();
  const pause = world.locator('.pause-market');
  if ((await pause.innerText()) === 'Pause') await pause.click();
  await world.getByText('Market check paused').waitFor();
  return world;
}

/** Every dialog the page opens: its message, answered `accept` (or dismissed). */
function dialogs(page, accept = false) {
  const seen = [];
  page.on('dialog', async (dialog) => {
    seen.push(dialog.message());
    await (accept ? dialog.accept() : dialog.dismiss());
  });
  return seen;
}

/** Whether `locator`'s box is wholly inside the window. */
async function inWindow(locator) {
  return locator.evaluate((e) => {
    const box = e.getBoundingClientRect();
    return box.top >= 0 && box.bottom <= window.innerHeight && box.height > 0;
  });
}

test("New from a resident's conversation while her request waits: the box sends again, her request still waits on her card, named in words", async (t) => {
  const { page, problems } = await openDemo(env, t);
  const asked = dialogs(page);
  const world = await openWorld(page);
  const dotty = world.locator('.world-agent[data-agent="Dotty"]');
  await dotty.locator('.say-hi').click();
  const ask1 = dotty.locator('.agent-asks p').first();
  await ask1.waitFor({ timeout: 20_000 });
  const card = await ask1.innerText();
  assert.match(card, /^Dotty asks to send a message to [A-Za-z]+: “/, `her card says whom and what: ${card}`);
  assert.doesNotMatch(card, /_|user id|\{/, `no tool ids or raw arguments: ${card}`);

  await dotty.locator('.open-memory').click();
  const approval = page.locator('.approval .approval-text');
  await approval.waitFor();
  const said = await approval.innerText();
  assert.match(said, /^Dotty asks before acting: send a message to [A-Za-z]+: “/, `the chat's card speaks as her: ${said}`);
  assert.doesNotMatch(said, /_|user id|\{/, `no tool ids or raw arguments: ${said}`);

  await page.getByRole('button', { name: 'New', exact: true }).click();
  assert.equal(await page.locator('.turn').count(), 0, 'a new conversation');
  assert.match(await ask(page, 'What time is it?'), /^It's \d\d:\d\d/, 'the message box sends');
  assert.equal(await dotty.locator('.agent-asks').count(), 1, 'her request still waits on her card');
  assert.deepEqual(asked, [], 'leaving her conversation cancels nothing, so it asks nothing');
  assert.deepEqual(problems, []);
});

test("a conversation from History, opened from a resident's while her request waits: the box sends, her request still waits", async (t) => {
  const { page, problems } = await openDemo(env, t);
  const asked = dialogs(page);
  assert.match(await ask(page, 'hello'), /^I'm Familiar/);
  const world = await openWorld(page);
  const dotty = world.locator('.world-agent[data-agent="Dotty"]');
  await dotty.locator('.say-hi').click();
  await dotty.locator('.agent-asks').waitFor({ timeout: 20_000 });
  await dotty.locator('.open-memory').click();
  await page.locator('.approval').waitFor();
  await page.getByRole('button', { name: 'History' }).click();
  const hello = page.locator('.open-conversation', { hasText: 'hello' });
  await hello.first().click();
  await page.locator('.turn').first().waitFor();
  assert.equal(await page.locator('.turn').count(), 1, 'the first conversation, with its one turn');
  assert.match(await ask(page, 'What time is it?', 2), /^It's \d\d:\d\d/, 'the message box sends');
  assert.equal(await dotty.locator('.agent-asks').count(), 1, 'her request still waits on her card');
  assert.deepEqual(asked, []);
  assert.deepEqual(problems, []);
});

test('New while your own request waits asks first: Cancel keeps it waiting, OK leaves it and the box sends', async (t) => {
  const { page, problems } = await openDemo(env, t);
  assert.match(await ask(page, 'What is this page called?'), /^This page is/);
  await send(page, 'Remember that the ale is cold');
  await page.locator('.approval').waitFor();
  const asked = [];
  page.once('dialog', async (d) => { asked.push(d.message()); await d.dismiss(); });
  await page.getByRole('button', { name: 'New', exact: true }).click();
  await page.waitForTimeout(200);
  assert.equal(asked.length, 1, 'New asked first');
  assert.match(asked[0], /waits for your approval here \(remember\)/);
  assert.equal(await page.locator('.approval').count(), 1, 'Cancel: the request still waits');
  assert.equal(await page.locator('.turn').count(), 2, 'in the same conversation');

  page.once('dialog', async (d) => { asked.push(d.message()); await d.accept(); });
  await page.getByRole('button', { name: 'New', exact: true }).click();
  await page.locator('.turn').first().waitFor({ state: 'detached' });
  assert.equal(asked.length, 2);
  assert.match(await ask(page, 'What time is it?'), /^It's \d\d:\d\d/, 'the message box sends');
  assert.deepEqual(problems, []);
});

test('Settings at 1280 with a chat on screen: a bad proxy URL saved by Enter is focused and in view; "Saved." is in view', async (t) => {
  const { page, problems } = await openDemo(env, t);
  for (const [n, question] of ['hello', 'What time is it?', 'What is this page called?'].entries()) {
    await ask(page, question, n + 1);
  }
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-proxy').check();
  const url = page.locator('.proxy-url');
  await url.fill('not an address');
  await page.locator('.proxy-model').fill('small');
  await page.locator('.settings-save').scrollIntoViewIfNeeded();
  await url.press('Enter');
  const error = page.locator('.field-error').first();
  await error.waitFor();
  await page.waitForTimeout(200);
  assert.equal(await url.evaluate((e) => e === document.activeElement), true, 'the field has focus');
  assert.ok(await inWindow(url), 'the field is in the window');

  await page.locator('input[name="model"]').first().check();
  await page.locator('.settings-save').click();
  const saved = page.locator('.settings-saved', { hasText: 'Saved.' });
  await saved.waitFor();
  await page.waitForTimeout(200);
  assert.ok(await inWindow(saved), '"Saved." is in the window');
  assert.deepEqual(problems, []);
});

test('a Supabase project URL that 404s is not "Saved.": the URL field says so', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-supabase').check();
  await page.locator('.supabase-url').fill(`${env.server.url}no-project`);
  await page.locator('.anon-key').fill(`sb_publishable_${'x'.repeat(31)}`);
  await page.locator('.settings-save').click();
  const error = page.locator('.field-error', { hasText: 'HTTP 404' });
  await error.waitFor();
  assert.equal(await page.locator('.supabase-url').getAttribute('aria-invalid'), 'true');
  assert.equal(await page.locator('.settings-saved').innerText(), '', 'not "Saved."');
  // The browser logs the 404 it was asked to fetch; that is the check, not a fault.
  assert.deepEqual(problems.filter((p) => !/404/.test(p)), []);
});

test('at 360 px Settings → Local model fits the screen, and choosing a character mid-conversation asks in view', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: { width: 360, height: 740 } });
  assert.match(await ask(page, 'hello'), /^I'm Familiar/);
  await page.locator('.character-select').selectOption('dotty');
  const start = page.locator('.start-with');
  await start.waitFor();
  assert.ok(await inWindow(start), '"Start a new conversation with Dotty" is in the window');
  assert.ok(await inWindow(page.locator('.keep-talking')), '"Keep this conversation" is in the window');
  const wide = (e) => e.getBoundingClientRect().right - window.innerWidth;
  assert.ok(await start.evaluate(wide) <= 0, 'and not past its right edge');
  await page.locator('.keep-talking').click();

  await topBar(page, 'Settings');
  await page.locator('.use-local').check();
  await page.locator('.local-backend').waitFor();
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than the screen`);
  assert.ok(await page.locator('.local-backend').evaluate(wide) <= 0, 'the "Runs on" menu ends inside the screen');
  assert.deepEqual(problems, []);
});

test("Settings → World → Supabase: the email sign-in's summary is a touch target of 44 px", async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: { width: 360, height: 740 } });
  await topBar(page, 'Settings');
  await page.locator('.use-supabase').check();
  const summary = page.locator('.account-email summary');
  await summary.waitFor();
  const { height } = await summary.boundingBox();
  assert.ok(height >= 44, `${height} px high`);
  assert.deepEqual(problems, []);
});
