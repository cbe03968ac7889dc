// Each of the World's triggers in Supabase mode, fired from the World view as a player
// would, at a new player's own copies of the starters (migrations/0011_agent_copies.sql,
// 0012_claim_agents.sql) in the throwaway PostgreSQL behind postrust that
// scripts/backend.sh starts: a message received ("Say hi"), a leader's mention ("Call
// to battle"), a battle starting ("A battle starts") and a proposal ("Proposal"). Each
// resident's turn runs in its own conversation, asks its owner on its card once it has
// read a player's words, and leaves the outcome in the view and in the project's rows
// as the page reads them back. The market check's own Supabase test is in
// e2e/world.test.mjs. Each test signs in as a new player, so its agents start as the
// starters are; the battle and the proposal are the world's, read before and after.
// Those copies are newcomers to their communities, and a community's newcomers
// together add at most 3 votes to a proposal and 500 damage a day to a battle's side
// (migrations/0013_abuse_limits.sql): a run spends 1 vote of proposal 1 and 80 and 120
// damage of battle 1's sides, so one backend holds three runs a day (the test command
// starts a fresh one); past that the change log's sentence names the refusing rule.
import assert from 'node:assert/strict';
import { test, appReady, openDemo, settled, useDist, watch } from './harness.mjs';

const env = useDist();
const project = process.env.FAMILIAR_SUPABASE_URL;
const anonKey = process.env.FAMILIAR_ANON_KEY;

/** Points the demo at the project and signs in anonymously as a new player. */
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

/** Rows of a PostgREST GET from the page, as the signed-in player. */
async function rest(page, path) {
  return page.evaluate(async ({ url, key }) => {
    const jwt = JSON.parse(localStorage.getItem('familiar.auth')).access_token;
    const response = await fetch(url, { headers: { apikey: key, authorization: `Bearer ${jwt}` } });
    return response.json();
  }, { url: `${project}/rest/v1/${path}`, key: anonKey });
}

async function waitFor(check, what) {
  for (let i = 0; i < 150; i += 1) {
    if (await check()) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

/**
 * A new player in the project, the World open with its market timer paused (the
 * tests fire by hand): the page, what it reported, the World, the player's world user
 * and their agents' ids by name, each agent's row read into its card.
 */
async function enter(t) {
  assert.ok(project && anonKey, 'FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY come from scripts/backend.sh');
  const { page, problems } = await openDemo(env, t);
  await signInAnonymously(page);
  await page.getByRole('button', { name: 'World', exact: true }).click();
  const world = page.locator('section.world');
  await world.waitFor();
  const pause = world.locator('.pause-market');
  if ((await pause.innerText()) === 'Pause') await pause.click();
  await world.getByText('Market check paused').waitFor();
  const player = await page.evaluate(() => JSON.parse(localStorage.getItem('familiar.player')));
  const names = { 1: 'Dotty', 2: 'Brannoc', 4: 'Mira' };
  const ids = Object.fromEntries(player.agents.map((a) => [names[a.template_id], a.agent_id]));
  assert.deepEqual(Object.keys(ids).sort(), ['Brannoc', 'Dotty', 'Mira']);
  for (const name of Object.keys(ids)) {
    await waitFor(async () => (await stats(world, name)).energy > 0, `${name}'s row read`);
  }
  return { page, problems, world, me: player.id, ids };
}

async function stats(world, name) {
  const card = world.locator(`.world-agent[data-agent="${name}"]`);
  const read = async (stat) => Number(await card.locator(`dd.${stat}`).innerText());
  return { energy: await read('energy'), gold: await read('gold') };
}

/** The turns of `name`'s own conversation as its card lists them (its memory). */
async function memory(world, name) {
  return world.locator(`.world-agent[data-agent="${name}"] .agent-memory li:not(.empty)`)
    .evaluateAll((items) => items.map((li) => li.textContent));
}

/** Whether `name` has answered `n` triggers (a turn with what it did). */
async function answered(world, name, n) {
  return (await memory(world, name)).filter((turn) => turn.includes('→')).length >= n;
}

/** Approves, on the agents' cards, every action asked until `done()` holds; the asks. */
async function approveOnCardsUntil(world, done, what) {
  const asked = [];
  const deadline = Date.now() + 45_000;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `${what} (asked: ${asked})`);
    const ask = world.locator('.agent-asks').first();
    if (await ask.isVisible()) {
      asked.push(await ask.locator('p').first().innerText());
      await ask.locator('.approve').click();
    }
    await new Promise((ok) => setTimeout(ok, 100));
  }
  return asked;
}

/** Fires the trigger behind `button` on `name`'s card and approves what it asks until
 * its turn is answered; the asks. */
async function fire(world, name, button) {
  const before = (await memory(world, name)).filter((turn) => turn.includes('→')).length;
  await world.locator(`.world-agent[data-agent="${name}"] .${button}`).click();
  return approveOnCardsUntil(world, () => answered(world, name, before + 1), `${name} answered ${button}`);
}

/** Shows `name`'s own conversation in the chat. */
async function openConversation(page, world, name) {
  await world.locator(`.world-agent[data-agent="${name}"] .open-memory`).click();
  await page.locator('.conversation').waitFor();
}

/** The text of every step of turn `i` (from 1) of the chat shown, its steps opened
 * (again, if the turn was drawn anew as its conversation was saved). */
async function steps(page, i) {
  const turn = page.locator('.turn').nth(i - 1);
  await page.locator('.turn[data-status="completed"]').nth(i - 1).waitFor({ timeout: 15_000 });
  for (let tries = 0; tries < 10; tries += 1) {
    if (!(await turn.locator('details.steps').evaluate((d) => d.open))) {
      await turn.locator('.steps-summary').click();
    }
    try {
      await turn.locator('.step-list').waitFor({ timeout: 1_000 });
      return await turn.locator('.step-list').evaluate((list) => list.textContent);
    } catch {
      // Drawn anew while opening: open it again.
    }
  }
  assert.fail(`the steps of turn ${i} did not open`);
}

/** Asserts `tools` appear in this order in `text`. */
function inOrder(text, tools) {
  let at = 0;
  for (const tool of tools) {
    at = text.indexOf(tool, at);
    assert.ok(at >= 0, `${tool} in order in the steps: ${text}`);
    at += tool.length;
  }
}

/** The change log's sentences, newest first. */
async function changes(world) {
  return world.locator('.world-changes li .change-text').allInnerTexts();
}

/** The ledger of `agent`'s applied actions, oldest first: the tools. */
async function ledger(page, agent) {
  const rows = await rest(page, `applied_actions?select=tool&user_id=eq.agent:${agent}&order=applied_at`);
  return rows.map((r) => r.tool);
}

/** Messages between the player and `agent`, oldest first. */
async function messages(page, me, agent) {
  return rest(page, 'messages?select=id,sender_id,receiver_id,reply_to,content&order=id'
    + `&or=(and(sender_id.eq.${me},receiver_id.eq.${agent}),and(sender_id.eq.${agent},receiver_id.eq.${me}))`);
}

/**
 * What the page reported beyond the project's own requests and the 401 of reading
 * memories before signing in; with `refused`, that many 400s (a rule's refusal is
 * PostgREST's 400) are expected and left out.
 */
function unexpected(problems, refused = 0) {
  const offOrigin = `request off the page's origin: ${project}`;
  const badRequest = /status of 400 \(Bad Request\)/;
  const beforeSignIn = /status of 401 \(Unauthorized\)/;
  const others = problems.filter((p) => !p.startsWith(offOrigin));
  assert.equal(others.filter((p) => badRequest.test(p)).length, refused, `${refused} refused actions: ${others}`);
  return others.filter((p) => !badRequest.test(p) && !beforeSignIn.test(p));
}

test('in Supabase mode a message received: each resident answers the player in its own conversation and voice, and the messages are the project\'s rows', async (t) => {
  const { page, problems, world, me, ids } = await enter(t);

  await openConversation(page, world, 'Dotty');
  const dottyAsked = await fire(world, 'Dotty', 'say-hi');
  assert.deepEqual(dottyAsked.map((a) => /asks to send a message to /.test(a)), [true], `Dotty asked to send: ${dottyAsked}`);
  assert.equal(await page.locator('.turn').count(), 1, "Dotty's conversation holds her turn alone");
  inOrder(await steps(page, 1), ['send_message']);
  const brannocAsked = await fire(world, 'Brannoc', 'say-hi');
  assert.equal(brannocAsked.length, 1, `Brannoc asked once: ${brannocAsked}`);
  await openConversation(page, world, 'Brannoc');
  assert.equal(await page.locator('.turn').count(), 1, "Brannoc's conversation holds his turn alone");
  inOrder(await steps(page, 1), ['send_message']);

  // Warm Dotty and gruff Brannoc answer each their own "Hi", as rows of the project.
  const strip = (rows) => rows.map(({ sender_id, receiver_id, content }) => ({ sender_id, receiver_id, content }));
  assert.deepEqual(strip(await messages(page, me, ids.Dotty)), [
    { sender_id: me, receiver_id: ids.Dotty, content: 'Hi' },
    { sender_id: ids.Dotty, receiver_id: me, content: "Hey! What's up?" },
  ]);
  assert.deepEqual(strip(await messages(page, me, ids.Brannoc)), [
    { sender_id: me, receiver_id: ids.Brannoc, content: 'Hi' },
    { sender_id: ids.Brannoc, receiver_id: me, content: 'What do you want?' },
  ]);
  assert.deepEqual(await ledger(page, ids.Dotty), ['send_message']);
  assert.deepEqual(await ledger(page, ids.Brannoc), ['send_message']);
  assert.deepEqual(await ledger(page, ids.Mira), [], 'Mira was not messaged and did nothing');

  // The view: each answer in the feed and the change log, and in the agent's memory.
  const feed = world.locator('.messages');
  await waitFor(async () => /Brannoc-\d+ → you: “What do you want\?”/.test(await feed.innerText()), 'the answers in the feed');
  const read = await feed.innerText();
  assert.match(read, /Dotty-\d+ → you: “Hey! What's up\?”/);
  assert.match(read, /You → Brannoc-\d+: “Hi”/);
  assert.deepEqual(await changes(world), [
    'Answering a message, Brannoc sent a message: “What do you want?”',
    "Answering a message, Dotty sent a message: “Hey! What's up?”",
  ]);
  assert.match((await memory(world, 'Dotty'))[0], /→ .*Hey! What's up\?/);
  assert.deepEqual(unexpected(problems), []);
});

test('in Supabase mode a leader\'s call to battle: loyal Brannoc fights with his energy and reports back on the call; disloyal Mira refuses in words', async (t) => {
  const { page, problems, world, me, ids } = await enter(t);
  const [battle] = await rest(page, 'battles?select=status,community1_damage,community2_damage&id=eq.1');
  assert.equal(battle.status, 'active', 'the call names battle 1, active');
  const brannoc = await stats(world, 'Brannoc');
  const mira = await stats(world, 'Mira');
  assert.ok(brannoc.energy >= 30, `Brannoc is fit to fight at once: ${brannoc.energy}`);

  await openConversation(page, world, 'Brannoc');
  const asked = await fire(world, 'Brannoc', 'leaders-call');
  assert.deepEqual(asked.map((a) => /fight in Battle|reply:/.exec(a)?.[0]), ['fight in Battle', 'reply:'],
    `Brannoc asked for each action: ${asked}`);
  // What he did, as the change log tells it (a refusal would say which rule refused).
  assert.deepEqual(await changes(world), [
    "At a leader's call, Brannoc replied: “DONE! Crushed them for you.”",
    `At a leader's call, Brannoc fought in Battle 1, spending ${brannoc.energy} energy.`,
  ]);
  inOrder(await steps(page, 1), ['get_battle_details', 'join_battle', 'reply_to_message']);

  // He spent all his energy on his side (2), and answered the call itself.
  await waitFor(async () => (await stats(world, 'Brannoc')).energy === 0, "Brannoc's energy spent");
  assert.deepEqual(await rest(page, `users?select=energy&id=eq.${ids.Brannoc}`), [{ energy: 0 }]);
  assert.deepEqual(await rest(page, `battle_participants?select=side,damage_dealt&battle_id=eq.1&user_id=eq.${ids.Brannoc}`),
    [{ side: 2, damage_dealt: brannoc.energy }]);
  const [after] = await rest(page, 'battles?select=community1_damage,community2_damage&id=eq.1');
  assert.deepEqual(after, {
    community1_damage: battle.community1_damage,
    community2_damage: battle.community2_damage + brannoc.energy,
  });
  const toBrannoc = await messages(page, me, ids.Brannoc);
  assert.equal(toBrannoc.length, 2, `the call and Brannoc's report: ${JSON.stringify(toBrannoc)}`);
  const [call, report] = toBrannoc;
  assert.deepEqual([call.sender_id, call.receiver_id, call.content], [me, ids.Brannoc, 'Everyone fight in battle 1!']);
  assert.deepEqual([report.sender_id, report.receiver_id, report.reply_to, report.content],
    [ids.Brannoc, me, call.id, 'DONE! Crushed them for you.']);
  assert.deepEqual(await ledger(page, ids.Brannoc), ['join_battle', 'reply_to_message']);

  // Mira, loyal to no one, answers the call with a refusal and spends nothing.
  await openConversation(page, world, 'Mira');
  const miraAsked = await fire(world, 'Mira', 'leaders-call');
  assert.deepEqual(miraAsked.map((a) => /fight in Battle|reply:/.exec(a)?.[0]), ['reply:']);
  const miras = await steps(page, 1);
  assert.doesNotMatch(miras, /join_battle/);
  const toMira = await messages(page, me, ids.Mira);
  assert.equal(toMira.length, 2, `the call and Mira's answer: ${JSON.stringify(toMira)}`);
  const [miraCall, refusal] = toMira;
  assert.deepEqual([miraCall.sender_id, miraCall.content], [me, 'Everyone fight in battle 1!']);
  assert.deepEqual([refusal.sender_id, refusal.receiver_id, refusal.reply_to, refusal.content],
    [ids.Mira, me, miraCall.id, 'You are not my leader. Fight your own battles.']);
  assert.deepEqual(await ledger(page, ids.Mira), ['reply_to_message']);
  assert.deepEqual(await rest(page, `users?select=energy&id=eq.${ids.Mira}`), [{ energy: mira.energy }]);
  await settled(page);
  assert.deepEqual(await stats(world, 'Mira'), mira);

  // The view: the battle's damage, the deeds in the change log, the feed.
  await waitFor(async () => (await world.locator('.battles').innerText())
    .includes(`Battle 1 (active): ${after.community1_damage} – ${after.community2_damage}`), 'the damage dealt, in the view');
  assert.deepEqual(await changes(world), [
    "At a leader's call, Mira replied: “You are not my leader. Fight your own battles.”",
    "At a leader's call, Brannoc replied: “DONE! Crushed them for you.”",
    `At a leader's call, Brannoc fought in Battle 1, spending ${brannoc.energy} energy.`,
  ]);
  await waitFor(async () => /Brannoc-\d+ → you: “DONE! Crushed them for you\.”/.test(await world.locator('.messages').innerText()),
    'the report in the feed');
  assert.deepEqual(unexpected(problems), []);
});

test('in Supabase mode a battle starts: the loyal join with their energy on their side, disloyal Mira stays out, each in its own conversation', async (t) => {
  const { page, problems, world, ids } = await enter(t);
  // The view fires the first active battle it shows.
  const [battle] = await rest(page, 'battles?select=id,community1_id,community2_id,community1_damage,community2_damage&status=eq.active&order=id&limit=1');
  assert.deepEqual([battle.community1_id, battle.community2_id], [1, 2], 'the Lantern Guild against the Ashen Circle');
  const before = {};
  for (const name of ['Dotty', 'Brannoc', 'Mira']) before[name] = await stats(world, name);

  await world.locator('.battle-starts').click();
  const asked = await approveOnCardsUntil(world, async () => (await answered(world, 'Dotty', 1))
    && (await answered(world, 'Brannoc', 1)) && (await answered(world, 'Mira', 1)), 'each agent answered the battle');
  assert.deepEqual(asked.map((card) => /fight in Battle 1|stay out of Battle 1/.exec(card)?.[0]).sort(),
    ['fight in Battle 1', 'fight in Battle 1', 'stay out of Battle 1'], `the owner was asked for each action: ${asked}`);
  // What each did, as the change log tells it (a refusal would say which rule refused).
  assert.deepEqual((await changes(world)).sort(), [
    `When a battle started, Brannoc fought in Battle ${battle.id}, spending ${before.Brannoc.energy} energy.`,
    `When a battle started, Dotty fought in Battle ${battle.id}, spending ${before.Dotty.energy} energy.`,
    `When a battle started, Mira stayed out of Battle ${battle.id}.`,
  ]);
  for (const [name, action] of [['Dotty', 'join_battle'], ['Brannoc', 'join_battle'], ['Mira', 'ignore_battle']]) {
    await openConversation(page, world, name);
    assert.equal(await page.locator('.turn').count(), 1, `${name}'s conversation is her own`);
    const own = await steps(page, 1);
    inOrder(own, ['get_battle_details', 'get_faction_relationship', action]);
    assert.deepEqual(await ledger(page, ids[name]), [action]);
  }

  // Dotty (Lantern Guild, side 1) and Brannoc (Ashen Circle, side 2) spent their energy.
  const fought = { Dotty: [1, before.Dotty.energy], Brannoc: [2, before.Brannoc.energy] };
  for (const [name, [side, energy]] of Object.entries(fought)) {
    assert.deepEqual(await rest(page, `battle_participants?select=side,damage_dealt&battle_id=eq.${battle.id}&user_id=eq.${ids[name]}`),
      [{ side, damage_dealt: energy }], `${name}'s blow`);
    assert.deepEqual(await rest(page, `users?select=energy&id=eq.${ids[name]}`), [{ energy: 0 }]);
  }
  assert.deepEqual(await rest(page, `battle_participants?select=side&battle_id=eq.${battle.id}&user_id=eq.${ids.Mira}`), []);
  assert.deepEqual(await rest(page, `users?select=energy&id=eq.${ids.Mira}`), [{ energy: before.Mira.energy }]);
  const damage = [battle.community1_damage + before.Dotty.energy, battle.community2_damage + before.Brannoc.energy];
  const [after] = await rest(page, `battles?select=community1_damage,community2_damage&id=eq.${battle.id}`);
  assert.deepEqual([after.community1_damage, after.community2_damage], damage);

  // The view: the stats, the battle's damage and the deeds.
  await waitFor(async () => (await stats(world, 'Dotty')).energy === 0 && (await stats(world, 'Brannoc')).energy === 0,
    'the energy spent, in the view');
  await settled(page);
  assert.deepEqual(await stats(world, 'Mira'), before.Mira);
  await waitFor(async () => (await world.locator('.battles').innerText())
    .includes(`Battle ${battle.id} (active): ${damage[0]} – ${damage[1]}`), 'the damage dealt, in the view');
  assert.deepEqual(unexpected(problems), []);
});

test('in Supabase mode a proposal: the loyal member votes for it in its own conversation; another of the player\'s agents is refused, one vote per account', async (t) => {
  const { page, problems, world, ids } = await enter(t);
  // The view fires the newest proposal it shows, at a loyal member of its community.
  const [proposal] = await rest(page, 'proposals?select=id,community_id,title,status&order=id.desc&limit=1');
  assert.equal(proposal.status, 'open');
  await waitFor(async () => (await world.locator('.proposals li').first().innerText())
    .startsWith(proposal.title), 'the newest proposal, in the view');
  const voter = { 1: 'Dotty', 2: 'Brannoc' }[proposal.community_id];
  assert.ok(voter, `a proposal of the Lantern Guild or the Ashen Circle: ${proposal.community_id}`);

  await openConversation(page, world, voter);
  const asked = await fire(world, voter, 'proposal');
  assert.deepEqual(asked.map((a) => /asks to (vote|abstain)/.exec(a)?.[1]), ['vote'],
    `${voter} asked to vote: ${asked}`);
  // What it did, as the change log tells it (a refusal would say which rule refused).
  assert.deepEqual(await changes(world), [`On a proposal, ${voter} voted for proposal ${proposal.id}.`]);
  assert.equal(await page.locator('.turn').count(), 1, `${voter}'s conversation holds the turn alone`);
  inOrder(await steps(page, 1), ['get_user_community', 'get_faction_relationship', 'vote_on_proposal']);
  assert.deepEqual(await rest(page, `votes?select=proposal_id,in_favour&user_id=eq.${ids[voter]}`),
    [{ proposal_id: proposal.id, in_favour: true }]);
  assert.deepEqual(await ledger(page, ids[voter]), ['vote_on_proposal']);

  // Mira, a member of both communities and loyal to neither, would vote against: the
  // player's agents share the player's one vote, so the project refuses it.
  await openConversation(page, world, 'Mira');
  const miraAsked = await fire(world, 'Mira', 'proposal');
  assert.deepEqual(miraAsked.map((a) => /asks to (vote|abstain)/.exec(a)?.[1]), ['vote']);
  assert.match(await steps(page, 1), /vote_on_proposal/);
  assert.deepEqual(await rest(page, `votes?select=proposal_id&user_id=eq.${ids.Mira}`), []);
  assert.deepEqual(await ledger(page, ids.Mira), []);

  await waitFor(async () => (await changes(world)).length === 2, 'both deeds in the change log');
  const [refused, voted] = await changes(world);
  assert.equal(voted, `On a proposal, ${voter} voted for proposal ${proposal.id}.`);
  assert.match(refused, new RegExp(`^On a proposal, Mira tried to vote against proposal ${proposal.id} but could not: `
    + 'you and your agents share one vote'));
  assert.equal((await memory(world, voter))[0],
    `A proposal was put to your community: ${proposal.title} → Voted for proposal ${proposal.id}.`);
  assert.deepEqual(unexpected(problems, 1), []);
});

test("in Supabase mode the market check is each of the player's agents' schedule: it fires on time, Mira works, buys and eats on her copy's row, the fit see nothing to do", async (t) => {
  assert.ok(project && anonKey, 'FAMILIAR_SUPABASE_URL and FAMILIAR_ANON_KEY come from scripts/backend.sh');
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  await context.clock.install();
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(env.server.url);
  await appReady(page);
  await signInAnonymously(page);
  // The World opened once signed in: the schedules are the player's session's.
  await page.getByRole('button', { name: 'World', exact: true }).click();
  const world = page.locator('section.world');
  await world.locator('.market-timer').getByText(/Next market check in \d+ s/).waitFor();
  const player = await page.evaluate(() => JSON.parse(localStorage.getItem('familiar.player')));
  const mira = player.agents.find((a) => a.template_id === 4).agent_id;
  const before = {};
  for (const name of ['Dotty', 'Brannoc', 'Mira']) {
    await waitFor(async () => (await stats(world, name)).energy > 0, `${name}'s row read`);
    before[name] = await stats(world, name);
  }
  assert.deepEqual(before.Mira, { energy: 45, gold: 0 }, "Mira's copy starts as the starter");
  const checked = async (name) => (await memory(world, name))
    .filter((turn) => turn.startsWith('Scheduled market check') && turn.includes('→')).length;
  for (const name of ['Dotty', 'Brannoc', 'Mira']) assert.equal(await checked(name), 0);

  // A minute on the page's clock: each agent's check fires, in its own conversation.
  await page.clock.runFor(62_000);
  for (const name of ['Dotty', 'Brannoc', 'Mira']) {
    await waitFor(async () => (await checked(name)) === 1, `${name}'s scheduled market check`);
  }
  assert.equal(await page.locator('.turn').count(), 0, 'the open chat is not theirs');
  // Mining: −20 energy, +50 gold; the seed's food: −10 gold, +50 energy; on the copy's row.
  await waitFor(async () => (await stats(world, 'Mira')).energy === 75, "Mira's energy after eating");
  assert.deepEqual(await stats(world, 'Mira'), { energy: 75, gold: 40 });
  assert.deepEqual(await rest(page, `users?select=gold,energy&id=eq.${mira}`), [{ gold: 40, energy: 75 }]);
  assert.deepEqual(await ledger(page, mira), ['do_work', 'buy_item', 'consume_item']);
  for (const name of ['Dotty', 'Brannoc']) {
    const id = player.agents.find((a) => a.template_id === { Dotty: 1, Brannoc: 2 }[name]).agent_id;
    assert.deepEqual(await ledger(page, id), [], `${name}, fit, did nothing`);
    assert.deepEqual(await stats(world, name), before[name]);
    assert.match((await memory(world, name))[0], /→ .*All is well/, `${name}'s own answer`);
  }
  await openConversation(page, world, 'Mira');
  inOrder(await steps(page, 1), ['buy_item', 'do_work', 'buy_item', 'consume_item']);
  // The one refused buy (no gold yet) is PostgREST's 400.
  assert.deepEqual(unexpected(problems, 1), []);
});
