// Characters on the release build with the rules model (offline): Dotty, bundled, through
// a reload mid-transaction; a whole CDL file loaded from a URL (or picked from the disk) in
// the demo's "Talk to" menu and played (an order, "nevermind", a second workflow while the first is pending); a
// broken file's problems shown with their paths; the menu never starting a conversation on
// its own; and the JS API taking a character as an object (the seed's file verbatim) or a URL.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, appReady, artifacts, ask, openDemo, useDist, watch } from './harness.mjs';

const fixture = (name) => readFileSync(new URL(`../tests/fixtures/characters/${name}`, import.meta.url), 'utf8');
const broken = JSON.stringify({
  identity: { name: 'Typo' },
  workflows: { w: { enabled: true, states: [{ name: 'a', triggers: { intent_pattern: ['x'] }, actions: { create_transaction: {} } }] } },
});
const apiPage = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Characters by API</title><link rel="icon" href="data:,"></head>
<body>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    const seed = await (await fetch('/authors/seed.json')).json();
    const dotty = await createAgent({ name: 'dotty', persist: false, namespace: 'api.dotty', character: seed });
    await dotty.send("I'll have a whiskey");
    const ordered = await dotty.transactions();
    await dotty.send('nevermind');
    const afterCancel = await dotty.transactions();
    const marigold = await createAgent({ name: 'marigold', persist: false, namespace: 'api.marigold', character: '/authors/marigold.json' });
    const answer = await marigold.send("I'll have a cider");
    window.result = { ordered, afterCancel, answer: answer.text };
  </script>
</body>
</html>`;

const env = useDist({
  pages: {
    '/authors/marigold.json': fixture('marigold.json'),
    '/authors/seed.json': fixture('seed_002_schema.json'),
    '/authors/broken.json': broken,
    '/api-characters.html': apiPage,
  },
});

/** Opens the loader from the "Talk to" menu and loads `url`. */
async function loadFromUrl(page, url) {
  await page.locator('.character-select').selectOption('load-character');
  const loader = page.getByRole('region', { name: 'Load a character' });
  await loader.getByLabel('Character file URL').fill(url);
  await loader.getByRole('button', { name: 'Load', exact: true }).click();
  return loader;
}

const inspector = (page, name) => page.locator(`.inspector-${name}`);

test('Dotty takes an order, survives a reload mid-transaction, and serves on payment', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.locator('.character-select').selectOption('dotty');
  await page.locator('.sample-prompt', { hasText: "I'll have a whiskey" }).waitFor();

  assert.equal(await ask(page, "I'll have a whiskey", 1), "One whiskey coming up, love — that'll be 5 coins.");
  const transaction = inspector(page, 'transaction');
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await transaction.innerText(), 'drink_order · awaiting_payment · drink=whiskey, price=5');
  assert.match(await inspector(page, 'injection').innerText(), /just ordered whiskey.*5 coins/);

  await page.reload();
  await appReady(page);
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await page.locator('.character-select').inputValue(), 'dotty');

  assert.match(await ask(page, 'Here you go', 2), /slides the whiskey across the bar/);
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('completed'));
  assert.match(await transaction.innerText(), /^drink_order · completed · .*payment_received=true/);
  await page.screenshot({ path: join(artifacts, 'dotty.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('a character file loaded from a URL plays offline: an order, "nevermind", and a second workflow while the first is pending', async (t) => {
  const { page, problems } = await openDemo(env, t);
  const loader = await loadFromUrl(page, '/authors/marigold.json');
  await loader.getByRole('status').getByText('Loaded Marigold from /authors/marigold.json.').waitFor();
  await loader.getByText('Kept, not used by the workflows').click();
  assert.ok((await loader.locator('.character-notes li').allTextContents()).includes('backstory: a section the workflows do not use; kept as written'));
  assert.equal(await page.locator('.character-select').inputValue(), 'loaded:/authors/marigold.json', 'the empty conversation is now with Marigold');
  await loader.getByRole('button', { name: 'Close' }).click();

  assert.equal(await ask(page, "I'll have a cider", 1), "One cider, that's 3 pennies.");
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.equal(await inspector(page, 'transaction').innerText(), 'drink_order · awaiting_payment · drink=cider, price=3');

  assert.equal(await ask(page, 'nevermind', 2), 'Right you are, no cider.');
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('cancelled'));
  await page.waitForFunction(() => document.querySelector('.inspector-pending').textContent === 'none');

  assert.equal(await ask(page, "I'll have an ale", 3), "One ale, that's 2 pennies.");
  assert.equal(await ask(page, 'and the attic room', 4), 'The attic room is 6 pennies a night. Shall I hold it?');
  await page.waitForFunction(() => document.querySelector('.inspector-pending').textContent.includes('drink_order'));
  assert.equal(
    await inspector(page, 'pending').innerText(),
    'room_booking · held · price=6, room=attic; drink_order · awaiting_payment · drink=ale, price=2',
  );
  assert.equal(await ask(page, 'here you go', 5), "There's your ale. Mind the step.");
  await page.waitForFunction(() => document.querySelector('.inspector-pending').textContent.startsWith('room_booking') && !document.querySelector('.inspector-pending').textContent.includes('drink'));

  // The loaded character is kept in the page: after a reload it is still the one played.
  await page.reload();
  await appReady(page);
  assert.equal(await page.locator('.character-select').inputValue(), 'loaded:/authors/marigold.json');
  await page.screenshot({ path: join(artifacts, 'marigold.png'), fullPage: true });
  assert.deepEqual(problems, []);
});

test('a character file picked from the disk plays as one loaded from a URL; a broken one shows its problems', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.locator('.character-select').selectOption('load-character');
  const loader = page.getByRole('region', { name: 'Load a character' });
  const file = loader.locator('.character-file input[type=file]');
  await file.setInputFiles({ name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from(broken) });
  await loader.getByText('broken.json was not loaded; fix these and load it again:').waitFor();
  assert.equal((await loader.locator('.character-problems li').allInnerTexts()).length, 1);
  assert.equal(await page.locator('.character-select').inputValue(), '', 'nothing changed');

  await file.setInputFiles({ name: 'marigold.json', mimeType: 'application/json', buffer: Buffer.from(fixture('marigold.json')) });
  await loader.getByRole('status').getByText('Loaded Marigold from marigold.json.').waitFor();
  assert.match(await page.locator('.character-select').inputValue(), /^loaded:marigold\.json$/);
  await loader.getByRole('button', { name: 'Close' }).click();
  assert.equal(await ask(page, "I'll have a cider", 1), "One cider, that's 3 pennies.");
  assert.deepEqual(problems, []);
});

test("a broken character file's problems are shown with their paths, and nothing changes", async (t) => {
  const { page, problems } = await openDemo(env, t);
  const loader = await loadFromUrl(page, '/authors/broken.json');
  await loader.getByText('/authors/broken.json was not loaded; fix these and load it again:').waitFor();
  assert.deepEqual(await loader.locator('.character-problems li').allInnerTexts(), [
    'workflows.w.states[0].triggers.intent_pattern: unknown field `intent_pattern`, expected one of `intent_patterns`, `keywords`, `llm_classification`',
  ]);
  assert.equal(await page.locator('.character-select').inputValue(), '');
  assert.equal(await page.locator('.character-select option', { hasText: 'Typo' }).count(), 0);
  await page.screenshot({ path: join(artifacts, 'character-problems.png') });
  assert.deepEqual(problems, []);
});

test('"Talk to" never starts a conversation by itself: arrowing only proposes, a button commits', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await ask(page, 'What time is it?', 1);
  const select = page.locator('.character-select');
  const conversation = await page.evaluate(() => localStorage.getItem('familiar.current'));
  await select.focus();
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  const confirm = page.getByRole('group', { name: 'Change whom you talk to' });
  await confirm.waitFor();
  assert.equal(await page.locator('.turn').count(), 1, 'the conversation is still on screen');
  assert.equal(await page.evaluate(() => localStorage.getItem('familiar.current')), conversation);
  await confirm.getByRole('button', { name: 'Keep this conversation' }).click();
  assert.equal(await select.inputValue(), '', 'back to Familiar');
  assert.equal(await confirm.count(), 0);

  await select.selectOption('brannoc');
  await confirm.getByRole('button', { name: 'Start a new conversation with Brannoc' }).click();
  await page.locator('.sample-prompt', { hasText: 'Any work for me?' }).waitFor();
  assert.equal(await page.locator('.turn').count(), 0);
  assert.equal(await select.inputValue(), 'brannoc');
  assert.notEqual(await page.evaluate(() => localStorage.getItem('familiar.current')), conversation);
  assert.deepEqual(problems, []);
});

test('the JS API plays a character given as an object (the seed file verbatim) or by URL', async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}api-characters.html`);
  await page.waitForFunction(() => window.result !== undefined, null, { timeout: 20_000 });
  const result = await page.evaluate(() => window.result);
  assert.equal(result.ordered.length, 1);
  assert.deepEqual(
    [result.ordered[0].transaction_type, result.ordered[0].state, result.ordered[0].context],
    ['drink_order', 'awaiting_payment', { drink: 'whiskey', price: 5 }],
  );
  assert.deepEqual(result.afterCancel, [], '"nevermind", a keyword, cancels offline');
  assert.equal(result.answer, "One cider, that's 3 pennies.");
  assert.deepEqual(problems, []);
});
