// The guild council of seed 001 in the demo, on the release build: three ticks played
// offline (propose, scry, accept and reject, tick) with the resources and the chart
// changing, the game where it was after a reload, the offline council said and a
// guild's name drafted for, a tab behind another and two tabs
// asking at the same moment applying a tick once, and one tick in Supabase mode
// against the real backend (scripts/backend.sh).
import assert from 'node:assert/strict';
import { test, appReady, openDemo, useDist, watch, watchPolicy } from './harness.mjs';

const env = useDist();
const project = process.env.FAMILIAR_SUPABASE_URL;
const anonKey = process.env.FAMILIAR_ANON_KEY;

/** Opens the Guild panel and waits for the guild to be read. */
async function openGuild(page) {
  await page.getByRole('button', { name: 'Guild', exact: true }).click();
  await page.locator('.guild-resource[data-resource="gold"] dd', { hasText: /\d/ }).waitFor();
}

/** The guild as the page shows it: tick, resources and the chart's lines. */
async function shown(page) {
  return page.evaluate(() => {
    const guild = document.querySelector('.guild');
    const resources = {};
    for (const r of guild.querySelectorAll('.guild-resource')) {
      resources[r.dataset.resource] = Number(r.querySelector('dd').textContent);
    }
    const lines = {};
    for (const l of guild.querySelectorAll('.guild-line')) lines[l.dataset.resource] = l.getAttribute('points');
    return { tick: guild.querySelector('.guild-tick').textContent, resources, lines };
  });
}

/** Waits for the message a move ends with. */
async function said(page, pattern) {
  await page.locator('.guild-message', { hasText: pattern }).waitFor();
  return page.locator('.guild-message').innerText();
}

/** One turn of the council: propose, scry the first draft, accept it, reject the
 * second, tick. */
async function playTick(page, n) {
  await page.locator('.guild-propose').click();
  await said(page, /The council drafted 2 proposals\./);
  const pending = page.locator('.guild-proposal[data-status="pending"]');
  assert.equal(await pending.count(), 2);
  await pending.first().locator('.guild-scry').click();
  await said(page, /The oracle has spoken/);
  assert.match(await pending.first().locator('.guild-risk').innerText(), /\w/);
  await pending.first().locator('.guild-accept').click();
  await said(page, /^Accepted: /);
  await page.locator('.guild-proposal[data-status="pending"] .guild-reject').first().click();
  await said(page, /^Rejected: /);
  assert.equal(await page.locator('.guild-proposal[data-status="pending"]').count(), 0);
  await page.locator('.guild-next-tick').click();
  assert.equal(await said(page, /^Tick \d+/), `Tick ${n}: 1 proposal applied.`);
  await page.locator('.guild-tick', { hasText: `Tick ${n}` }).waitFor();
}

test('three ticks offline change the resources and the chart, and a reload keeps the game', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await openGuild(page);
  let before = await shown(page);
  assert.equal(before.tick, 'Tick 0');
  assert.deepEqual(before.resources, { gold: 100, food: 80, morale: 55, influence: 10 });
  const seen = [before];
  for (const n of [1, 2, 3]) {
    await playTick(page, n);
    const now = await shown(page);
    assert.notDeepEqual(now.resources, before.resources, `tick ${n} changed the resources`);
    assert.notDeepEqual(now.lines, before.lines, `tick ${n} changed the chart`);
    assert.equal(now.lines.gold.split(' ').length, n + 1, 'one point a tick');
    seen.push(now);
    before = now;
  }
  // Offline the council is deterministic: the influence the festival bought, less the
  // pressure of 2 a tick, and gold spent on it and on wages.
  assert.deepEqual(seen[1].resources, { gold: 70, food: 70, morale: 55, influence: 17 });
  await page.reload();
  await appReady(page);
  await openGuild(page);
  assert.deepEqual(await shown(page), before, 'after a reload the game is where it was');
  assert.deepEqual(problems, []);
});

test("offline the view says the council plays by its own rules, and Propose drafts for the guild's name", async (t) => {
  const { page, problems } = await openDemo(env, t);
  await openGuild(page);
  assert.match(await page.locator('.guild-offline').innerText(), /No model is set up, so the council drafts and forecasts by its own rules/);
  await page.getByLabel('Guild name (optional)').fill('Iron Wolves');
  await page.locator('.guild-propose').click();
  assert.equal(await said(page, /The council drafted/),
    'The council drafted 2 proposals. It played by its own rules: no model is set up.');
  const drafts = await page.locator('.guild-proposal[data-status="pending"] p:not([class])').allInnerTexts();
  assert.equal(drafts.length, 2, `two drafts: ${drafts}`);
  for (const description of drafts) assert.match(description, /^Iron Wolves: /, description);
  assert.deepEqual(problems, []);
});

test('a tab behind another asks for the tick the other took, and it is applied once', async (t) => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const tabs = [];
  for (let i = 0; i < 2; i += 1) {
    const page = await context.newPage();
    const problems = await watch(page, env);
    await page.goto(env.server.url);
    await appReady(page);
    await openGuild(page);
    tabs.push({ page, problems });
  }
  const [first, second] = tabs.map((tab) => tab.page);
  assert.equal((await shown(second)).tick, 'Tick 0');
  await playTick(first, 1);
  const ticked = await shown(first);
  // The second tab still shows tick 0, and asks for tick 1 from there.
  assert.equal((await shown(second)).tick, 'Tick 0');
  await second.locator('.guild-next-tick').click();
  assert.match(await said(second, /^Tick 1 had already been taken/), /nothing changed/);
  await second.locator('.guild-tick', { hasText: 'Tick 1' }).waitFor();
  assert.deepEqual((await shown(second)).resources, ticked.resources, 'applied once');
  await first.reload();
  await appReady(first);
  await openGuild(first);
  assert.deepEqual(await shown(first), ticked);
  assert.deepEqual(tabs.flatMap((tab) => tab.problems), []);
});

test('two tabs asking for the same tick at the same moment apply it once: one ticks, the other is told it was taken', async (t) => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const tabs = [];
  for (let i = 0; i < 2; i += 1) {
    const page = await context.newPage();
    const problems = await watch(page, env);
    await page.goto(env.server.url);
    await appReady(page);
    await openGuild(page);
    tabs.push({ page, problems });
  }
  const pages = tabs.map((tab) => tab.page);
  for (const page of pages) assert.equal((await shown(page)).tick, 'Tick 0');
  // Both buttons pressed in the same turn of the test's event loop: the two ticks
  // contend for the guild's lock rather than following one another.
  await Promise.all(pages.map((page) => page.locator('.guild-next-tick').click()));
  const messages = await Promise.all(pages.map((page) => said(page, /^Tick 1/)));
  const applied = messages.filter((m) => /^Tick 1: \d+ proposals? applied\.$/.test(m));
  const taken = messages.filter((m) => /^Tick 1 had already been taken/.test(m));
  assert.equal(applied.length, 1, `one tab ticked: ${messages.join(' | ')}`);
  assert.equal(taken.length, 1, `the other was told: ${messages.join(' | ')}`);
  assert.match(taken[0], /nothing changed/);
  for (const page of pages) await page.locator('.guild-tick', { hasText: 'Tick 1' }).waitFor();
  const [one, two] = await Promise.all(pages.map((page) => shown(page)));
  assert.deepEqual(two, one, 'both tabs show the one tick');
  await pages[0].reload();
  await appReady(pages[0]);
  await openGuild(pages[0]);
  assert.deepEqual(await shown(pages[0]), one, 'and the store holds it once');
  assert.deepEqual(tabs.flatMap((tab) => tab.problems), []);
});

test('one tick in Supabase mode, as the signed-in player, kept across a reload', async (t) => {
  assert.ok(project && anonKey, 'FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY come from scripts/backend.sh');
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  // Before signing in, the chat reads the memories of no one and postrust answers 401
  // (the chat's, as in supabase.test.mjs); every other refusal is a problem.
  const chatBeforeSignIn = (url) => /\/rest\/v1\/memories\?.*user_id=eq\.0/.test(url);
  const refused = /status of 401 \(Unauthorized\)/;
  page.on('console', (m) => m.type() === 'error' && !refused.test(m.text()) && problems.push(`console: ${m.text()}`));
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await watchPolicy(page, problems);
  page.on('response', (r) => {
    if (r.status() >= 400 && !chatBeforeSignIn(r.url())) problems.push(`${r.status()} ${r.request().method()} ${r.url()}`);
  });
  await page.goto(env.server.url);
  await appReady(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-supabase').check();
  await page.locator('.supabase-url').fill(project);
  await page.locator('.anon-key').fill(anonKey);
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.sign-in-anonymously').click();
  await page.locator('.account-status', { hasText: 'Signed in anonymously.' }).waitFor();
  await page.getByRole('button', { name: 'Settings' }).click();
  await openGuild(page);
  const before = await shown(page);
  assert.equal(before.tick, 'Tick 0', 'a new player founds a new guild');
  await playTick(page, 1);
  const after = await shown(page);
  assert.notDeepEqual(after.resources, before.resources);
  // The guild is in the database: the page's own storage holds none of it.
  assert.equal(await page.evaluate(() => localStorage.getItem('familiar.guild')), null);
  await page.reload();
  await appReady(page);
  await openGuild(page);
  assert.deepEqual(await shown(page), after);
  assert.deepEqual(problems, []);
});
