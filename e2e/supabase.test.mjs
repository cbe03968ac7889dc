// The demo in Supabase mode on the release build, against PostgreSQL + postrust + the
// Supabase Auth stand-in (scripts/backend.sh; its gateway serves /auth/v1 and /rest/v1
// on one project URL): an anonymous sign-in, memories that outlive a reload, a
// character's order, a world action through its database function, no player's
// sign-in id readable by anon or by another player — and a second user who sees none
// of the first's memories and cannot change them; and an email and password account,
// signed up, out and in again in another browser.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test, answer, appReady, artifacts, ask, send, useDist, watchPolicy } from './harness.mjs';

const env = useDist();
const project = process.env.FAMILIAR_SUPABASE_URL;
const anonKey = process.env.FAMILIAR_ANON_KEY;

/** A fresh person (their own storage) on the demo; console errors, policy violations
 * and requests beyond the page and the project are collected in `problems`. */
async function person(t) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('console', (m) => {
    // The one request the test has refused on purpose (postrust answers 401).
    const expected = /status of 401 \(Unauthorized\)/;
    if (m.type() === 'error' && !expected.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  await watchPolicy(page, problems);
  page.on('request', (r) => {
    const url = r.url();
    if (!url.startsWith(env.server.url) && !url.startsWith(project) && !url.startsWith('data:')) {
      problems.push(`request off the page's origin: ${url}`);
    }
  });
  await page.goto(env.server.url);
  await appReady(page);
  return { page, problems };
}

/** Points the demo at the project and signs in anonymously, in the settings. */
async function signInAnonymously(page) {
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-supabase').check();
  await page.locator('.supabase-url').fill(project);
  await page.locator('.anon-key').fill(anonKey);
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.sign-in-anonymously').click();
  await page.locator('.account-status', { hasText: 'Signed in anonymously.' }).waitFor();
  assert.equal(await page.locator('.account-error').innerText(), '');
  await page.getByRole('button', { name: 'Settings' }).click();
}

/** The signed-in user's access token, as the page keeps it. */
function token(page) {
  return page.evaluate(() => JSON.parse(localStorage.getItem('familiar.auth')).access_token);
}

/** A PostgREST request from the page, as the signed-in user; the rows it answers. */
async function rest(page, method, path, body) {
  return page.evaluate(async ({ url, key, jwt, method, body }) => {
    const response = await fetch(url, {
      method,
      headers: {
        apikey: key,
        authorization: `Bearer ${jwt}`,
        'content-type': 'application/json',
        prefer: 'return=representation',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, rows: await response.json().catch(() => null) };
  }, { url: `${project}/rest/v1/${path}`, key: anonKey, jwt: await token(page), method, body });
}

/** Asks the project over HTTP, from outside any page, as anon and as `jwt`, for the
 * sign-in ids of `users` — by column, by filter, by `*` — and finds none, while the
 * public columns (a leaderboard) and the player's own row by id (`me`) still read.
 * PostgREST refuses a column the role may not read with PostgreSQL's 42501, and `*`
 * with it; postrust answers `PGRST204` for the column by name and leaves it out of
 * `*` (README, *PostgREST compatibility notes*). */
async function authIdsAreRefused(jwt, me) {
  const get = async (path, bearer) => {
    const response = await fetch(`${project}/rest/v1/${path}`, {
      headers: { apikey: anonKey, authorization: `Bearer ${bearer}` },
    });
    return { status: response.status, body: await response.json() };
  };
  for (const bearer of [anonKey, jwt]) {
    for (const path of ['users?select=auth_id', 'users?select=id&auth_id=not.is.null', 'users?select=id&order=auth_id']) {
      const { status, body } = await get(path, bearer);
      assert.ok([400, 401, 403].includes(status), `${path}: status ${status}`);
      assert.ok(['42501', 'PGRST204'].includes(body.code), `${path}: ${JSON.stringify(body)}`);
    }
    const all = await get('users', bearer);
    if (all.status === 200) {
      assert.ok(all.body.length >= 5, 'the seed and this player');
      assert.ok(all.body.every((row) => !('auth_id' in row)), JSON.stringify(all.body));
    } else {
      assert.equal(all.body.code, '42501', JSON.stringify(all.body));
    }
    const board = await get('users?select=username,gold&is_agent=is.true&order=gold.desc,id.asc&limit=1', bearer);
    assert.equal(board.status, 200);
    assert.equal(board.body.length, 1);
    assert.deepEqual(Object.keys(board.body[0]).sort(), ['gold', 'username']);
    const own = await get(`users?select=id&id=eq.${me}`, bearer);
    assert.deepEqual(own.body, [{ id: me }]);
  }
}

test('a signed-in player remembers across a reload, orders, works, and is walled off from another', async (t) => {
  assert.ok(project && anonKey, 'FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY come from scripts/backend.sh');
  const first = await person(t);
  const { page } = first;
  await signInAnonymously(page);

  const fact = `the ale is cold ${Date.now()}`;
  assert.equal(await ask(page, `Remember that ${fact}`, 1), `I'll remember: ${fact}.`);
  await page.reload();
  await appReady(page);
  assert.match(await ask(page, 'What do you remember?', 2), new RegExp(`I remember 1 thing: .*${fact}`));
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.account-status', { hasText: 'Signed in anonymously.' }).waitFor();
  await page.getByRole('button', { name: 'Settings' }).click();

  // A world action through its function: a new player has 25 gold and 100 energy. The
  // conversation has read remembered text, which the person may not have written, so
  // the action asks first (README, *What others can make the agent do*).
  await send(page, 'Work a shift at mining');
  await page.locator('.approval').waitFor();
  assert.match(await page.locator('.approval').innerText(), /do_work/);
  await page.click('.approval .approve');
  assert.equal(
    await answer(page, 3),
    'A shift of mining done: 50 gold earned, 20 energy spent. You have 75 gold and 80 energy now.',
  );
  // The player's own row, sign-in id included, comes from `enter_world()`; no one
  // lists the sign-in ids of others (migrations/0020_private_auth_id.sql).
  const sub = await page.evaluate(() => JSON.parse(localStorage.getItem('familiar.auth')).user.id);
  const me = await rest(page, 'POST', 'rpc/enter_world', {});
  assert.equal(me.status, 200);
  assert.deepEqual([me.rows.auth_id, me.rows.gold, me.rows.energy], [sub, 75, 80]);
  const mine = await rest(page, 'GET', `users?select=username,gold,energy&id=eq.${me.rows.id}`);
  assert.deepEqual(mine.rows, [{ username: me.rows.username, gold: 75, energy: 80 }]);
  await authIdsAreRefused(await token(page), me.rows.id);

  // A character's order, kept as this user's transaction in the database.
  // The conversation has turns: choosing Dotty is proposed, and committed by its button.
  await page.locator('.character-select').selectOption('dotty');
  await page.getByRole('button', { name: 'Start a new conversation with Dotty' }).click();
  await page.locator('.sample-prompt', { hasText: "I'll have a whiskey" }).waitFor();
  assert.equal(await ask(page, "I'll have a whiskey", 1), "One whiskey coming up, love — that'll be 5 coins.");
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('awaiting_payment'));
  assert.match(await ask(page, 'Here you go', 2), /slides the whiskey across the bar/);
  await page.waitForFunction(() => document.querySelector('.inspector-transaction').textContent.includes('completed'));
  const orders = await rest(page, 'GET', 'transactions?select=state,status&character=eq.Dotty');
  assert.deepEqual(orders.rows, [{ state: 'completed', status: 'completed' }]);
  await page.screenshot({ path: join(artifacts, 'supabase.png'), fullPage: true });

  // A second person: none of the first's memories, and no way to change them.
  const second = await person(t);
  await signInAnonymously(second.page);
  assert.match(await ask(second.page, 'What do you remember?', 1), /^I remember 0 things/);
  const filter = `memories?content=eq.${encodeURIComponent(fact)}`;
  assert.deepEqual((await rest(second.page, 'GET', filter)).rows, []);
  assert.deepEqual((await rest(second.page, 'PATCH', filter, { content: 'forged' })).rows, []);
  assert.deepEqual((await rest(second.page, 'DELETE', filter)).rows, []);
  const squat = await rest(second.page, 'POST', 'inventory', { user_id: 1, item_name: 'ale', quantity: 999 });
  // PostgREST answers 403 (postrust 401) with PostgreSQL's row-level security refusal.
  assert.ok([401, 403].includes(squat.status), `status ${squat.status}`);
  assert.equal(squat.rows.code, '42501');
  assert.equal((await rest(page, 'GET', filter)).rows.length, 1, "the first's memory is untouched");
  assert.deepEqual((await rest(page, 'GET', 'transactions?select=status')).rows.length, 1);
  assert.deepEqual((await rest(second.page, 'GET', 'transactions?select=status')).rows, []);

  assert.deepEqual(first.problems, []);
  assert.deepEqual(second.problems, []);
});

test('a player signs up with an email and password, signs out, signs in again in a new browser, and a wrong password is refused in words', async (t) => {
  assert.ok(project && anonKey, 'FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY come from scripts/backend.sh');
  const email = `ann${Date.now()}@example.com`;
  const password = 'correct horse battery staple';
  const settings = async (page) => {
    await page.getByRole('button', { name: 'Settings' }).click();
    await page.locator('.use-supabase').check();
    await page.locator('.supabase-url').fill(project);
    await page.locator('.anon-key').fill(anonKey);
    await page.locator('.settings-save').click();
    await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
    await page.locator('.account-email summary').click();
  };
  const credentials = async (page, secret) => {
    await page.locator('.auth-email').fill(email);
    await page.locator('.auth-password').fill(secret);
  };

  const first = await person(t);
  await settings(first.page);
  await credentials(first.page, password);
  await first.page.locator('.auth-sign-up').click();
  await first.page.locator('.account-status', { hasText: `Signed in as ${email}.` }).waitFor();
  const fact = `the cellar key is under the mat ${Date.now()}`;
  await first.page.getByRole('button', { name: 'Settings' }).click();
  assert.equal(await ask(first.page, `Remember that ${fact}`, 1), `I'll remember: ${fact}.`);
  await first.page.getByRole('button', { name: 'Settings' }).click();
  await first.page.locator('.auth-sign-out').click();
  await first.page.locator('.account-status', { hasText: 'Not signed in' }).waitFor();
  assert.deepEqual(first.problems, []);

  // Another browser: the wrong password first, said in words; then the right one, and
  // what the player remembered is theirs there too.
  const second = await person(t);
  await settings(second.page);
  await credentials(second.page, 'not the password');
  await second.page.locator('.auth-sign-in').click();
  await second.page.locator('.account-error').filter({ hasText: /\S/ }).waitFor();
  // The words: the product's and Supabase Auth's own reason (its `msg`), nothing else.
  assert.equal(await second.page.locator('.account-error').innerText(), 'sign-in refused: Invalid login credentials');
  assert.match(await second.page.locator('.account-status').innerText(), /Not signed in/);
  await credentials(second.page, password);
  await second.page.locator('.auth-sign-in').click();
  await second.page.locator('.account-status', { hasText: `Signed in as ${email}.` }).waitFor();
  assert.equal(await second.page.locator('.account-error').innerText(), '');
  await second.page.getByRole('button', { name: 'Settings' }).click();
  assert.match(await ask(second.page, 'What do you remember?', 1), new RegExp(`I remember 1 thing: .*${fact}`));
  // The refused password is the one 400 the page saw.
  const refused = (p) => /status of 400 \(Bad Request\)/.test(p);
  assert.equal(second.problems.filter(refused).length, 1, second.problems.join('\n'));
  assert.deepEqual(second.problems.filter((p) => !refused(p)), []);
});

test('on a project that confirms emails first, as a hosted one does by default, sign-up says to confirm, sign-in waits for the link, and signing up again tells no one the address is taken', async (t) => {
  assert.ok(project && anonKey, 'FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY come from scripts/backend.sh');
  // The stand-in's switch for Supabase's "Confirm email" setting, and its mailbox
  // (routes no Supabase project has: tests/servers/auth_server.py).
  const standIn = (path, body) => fetch(`${project}/__stand-in/${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { apikey: anonKey, 'content-type': 'application/json' },
    body: body && JSON.stringify(body),
  }).then((r) => r.json());
  assert.deepEqual(await standIn('settings', { mailer_autoconfirm: false }), { mailer_autoconfirm: false });
  t.after(() => standIn('settings', { mailer_autoconfirm: true }));
  const email = `cora${Date.now()}@example.com`;
  const password = 'correct horse battery staple';
  const { page, problems } = await person(t);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-supabase').check();
  await page.locator('.supabase-url').fill(project);
  await page.locator('.anon-key').fill(anonKey);
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.account-email summary').click();
  await page.locator('.auth-email').fill(email);
  await page.locator('.auth-password').fill(password);
  // A press clears the words before the answer comes (ui/account.rs), so the words
  // that follow are this press's.
  const says = async (button, words) => {
    await page.locator(button).click();
    await page.locator('.account-error').filter({ hasText: /\S/ }).waitFor();
    assert.equal(await page.locator('.account-error').innerText(), words);
  };

  // Signed up, not signed in: the person is told to confirm.
  await says('.auth-sign-up', `check your email to confirm ${email}, then sign in`);
  assert.match(await page.locator('.account-status').innerText(), /Not signed in/);
  // Signing in before the link is followed is refused in Supabase's words.
  await says('.auth-sign-in', 'sign-in refused: Email not confirmed');
  // Signing up again with the same address says the same, as for a new one.
  await says('.auth-sign-up', `check your email to confirm ${email}, then sign in`);
  // The link in the mail confirms the address; then the sign-in goes through.
  const { link } = await standIn(`mail?email=${encodeURIComponent(email)}`);
  assert.equal((await fetch(`${project}${link}`)).status, 200);
  await page.locator('.auth-sign-in').click();
  await page.locator('.account-status', { hasText: `Signed in as ${email}.` }).waitFor();
  assert.equal(await page.locator('.account-error').innerText(), '');
  // The refused sign-in is the one 400 the page saw.
  const refused = (p) => /status of 400 \(Bad Request\)/.test(p);
  assert.equal(problems.filter(refused).length, 1, problems.join('\n'));
  assert.deepEqual(problems.filter((p) => !refused(p)), []);
});
