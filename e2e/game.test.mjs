// The example game, public/examples/market.html, as a player meets it in headless
// Chromium on the release build: three NPCs, each a Familiar agent acting through the
// game's host tools on game events. It is driven with the keyboard and read from the
// screen; `window.market` (the game's own handles) only sends extra events and reads
// the game's state.
import assert from 'node:assert/strict';
import { test, artifacts, useDist, watch } from './harness.mjs';

const env = useDist();
const GAME = 'public/examples/market.html';

async function openGame(t, query = '') {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}${GAME}${query}`);
  await page.getByRole('status').filter({ hasText: 'Ready' }).waitFor();
  return { page, problems, context };
}

const at = (page, name) => page.locator(`.piece[data-name="${name}"]`).getAttribute('data-at');
const log = (page) => page.locator('#log li').allTextContents();
const press = async (page, ...keys) => {
  for (const key of keys) await page.keyboard.press(key);
};

test('a theft makes the merchant shout; the guard hears it through his own trigger, walks over and strikes', async (t) => {
  const { page, problems } = await openGame(t);
  // Up to Mira's stall: coming near her is a game event, and she calls out her wares.
  await press(page, 'ArrowLeft', 'ArrowLeft', 'ArrowUp', 'ArrowUp', 'ArrowUp');
  assert.equal(await at(page, 'player'), '2,2');
  await page.locator('#log li', { hasText: 'Mira says: “Fresh apples' }).waitFor();
  await page.locator('.piece[data-name="mira"] .bubble').waitFor();

  // Buying is a trade: the game's rule approves it (she has bread, the player can pay).
  await press(page, 'b');
  await page.locator('#log li', { hasText: 'Mira sells you bread for 2 gold.' }).waitFor();
  assert.equal(await page.locator('#gold').textContent(), '4');

  // The theft: Mira's run shouts (her `say` tool), which is the guard's own event.
  assert.equal(await at(page, 'brann'), '7,5');
  await press(page, 's');
  assert.equal(await page.locator('#wanted').textContent(), 'yes');
  await page.locator('#log li', { hasText: 'Mira shouts: “Stop, thief! Guards!”' }).waitFor();
  await page.locator('.piece[data-name="mira"] .bubble.shout').waitFor();
  // Brann's `move` animates him across the board, then cornering the thief is another
  // event, whose `attack` the game's rule approves (wanted, within reach).
  await page.locator('#log li', { hasText: 'Brann strikes you' }).waitFor({ timeout: 10_000 });
  const brann = (await at(page, 'brann')).split(',').map(Number);
  assert.ok(Math.abs(brann[0] - 2) <= 1 && Math.abs(brann[1] - 2) <= 1, `Brann stands by the player at ${brann}`);
  assert.equal(await page.locator('#hp').textContent(), '7');
  assert.equal(await page.locator('#wanted').textContent(), 'no');
  assert.equal(await page.locator('#items').textContent(), 'bread', 'the stolen apple went back');
  const { mira } = await page.evaluate(() => window.market.state.npcs);
  assert.equal(mira.items.filter((i) => i === 'apple').length, 3);
  await page.screenshot({ path: `${artifacts}/game-market.png` });

  // Reloading keeps the game: the board, the log, and each NPC's conversation.
  const before = { player: await at(page, 'player'), brann: await at(page, 'brann'), log: await log(page) };
  await page.reload();
  await page.getByRole('status').filter({ hasText: 'Ready' }).waitFor();
  assert.deepEqual({ player: await at(page, 'player'), brann: await at(page, 'brann'), log: await log(page) }, before);
  assert.equal(await page.locator('#hp').textContent(), '7');
  const turns = await page.evaluate(() => Object.fromEntries(
    Object.entries(window.market.agents).map(([name, a]) => [name, a.conversation().interactions.length])));
  // Mira: the player came near, the trade, the theft; Brann: the shout, the cornering.
  assert.deepEqual({ mira: turns.mira, brann: turns.brann }, { mira: 3, brann: 2 });
  assert.deepEqual(problems, []);
});

test('the game keeps drawing frames, its main thread never blocked past 100 ms, while its NPCs handle twenty events each', async (t) => {
  const { page, problems } = await openGame(t);
  const result = await page.evaluate(async () => {
    // Long tasks as the page itself reports them (every task over 50 ms on the main
    // thread): what a player feels as a stall, whatever the compositor of a loaded,
    // software-rendered Chromium does with vsync.
    const supported = PerformanceObserver.supportedEntryTypes.includes('longtask');
    const tasks = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) tasks.push(entry.duration);
    });
    observer.observe({ type: 'longtask' });
    const gaps = [];
    let last = null;
    let running = true;
    const tick = (time) => {
      if (last !== null) gaps.push(time - last);
      last = time;
      if (running) requestAnimationFrame(tick);
    };
    await new Promise((ok) => requestAnimationFrame((time) => { last = time; requestAnimationFrame(tick); ok(); }));
    const { fire } = window.market;
    const started = performance.now();
    const runs = [];
    for (let i = 0; i < 20; i += 1) {
      for (const name of ['mira', 'brann', 'wren']) {
        runs.push(fire(name, 'crowd.noise', `Noise ${i} in the crowd; nobody near.`, ['say']));
      }
    }
    const outcomes = await Promise.all(runs);
    const ms = performance.now() - started;
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    // A task still running when the runs end is reported once it ends: one more turn.
    await new Promise((ok) => setTimeout(ok, 0));
    running = false;
    tasks.push(...observer.takeRecords().map((entry) => entry.duration));
    observer.disconnect();
    return { supported, ms, gaps, tasks, types: outcomes.map((o) => o.type) };
  });
  const longest = Math.max(0, ...result.tasks);
  const tasks = result.tasks.map((d) => d.toFixed(0)).join(' ');
  console.log(`60 runs in ${result.ms.toFixed(0)} ms, ${result.gaps.length} frames, long tasks [${tasks}]`);
  assert.ok(result.supported, 'Chromium reports long tasks (else this test would see none)');
  assert.deepEqual(result.types.filter((type) => type === 'failed' || type === 'aborted'), []);
  assert.ok(result.gaps.length >= 3, `frames were drawn while the agents ran (${result.gaps.length})`);
  // Each run yields between steps, so the page's tasks stay short: none reaches the
  // long-task mark here, even beside three busy processes on two cores. Before the
  // yield, a run held the thread 50–133 ms. 100 ms leaves a loaded machine twice the
  // mark and still fails a run that blocks for one long stretch (a 120 ms block shows
  // as one 120 ms task).
  assert.ok(longest < 100, `the main thread was blocked for ${longest.toFixed(0)} ms (long tasks: ${tasks})`);
  assert.deepEqual(problems, []);
});

test('only the actions an event allows run, and the game refuses a costly one its rule forbids', async (t) => {
  const { page, problems } = await openGame(t);
  // Brann's rules would strike on "reach", but this event allows him only to speak.
  const outcome = await page.evaluate(() =>
    window.market.fire('brann', 'thief.cornered', 'The player is within your reach.', ['say']));
  assert.equal(outcome.type, 'answered');
  assert.equal(await page.locator('#hp').textContent(), '10');
  // Allowed, but the player is not wanted: the game's rule denies the strike.
  const denied = await page.evaluate(() =>
    window.market.fire('brann', 'thief.cornered', 'The player is within your reach.', ['attack']));
  assert.notEqual(denied.type, 'failed');
  await page.locator('#log li', { hasText: 'The game refuses Brann: the guard strikes only a wanted thief' }).waitFor();
  assert.equal(await page.locator('#hp').textContent(), '10');
  assert.deepEqual(problems, []);
});

/** A scripted OpenAI-compatible model: each request takes the next reply. */
function script(replies) {
  const requests = [];
  const handler = async (route) => {
    requests.push(JSON.parse(route.request().postData() ?? '{}'));
    const reply = replies.shift() ?? { content: 'Hm.' };
    if (typeof reply === 'string') {
      await route.fulfill({ status: 200, contentType: 'application/json', body: reply });
      return;
    }
    const message = { role: 'assistant', content: reply.content ?? null };
    if (reply.call) {
      message.tool_calls = [{ id: `call_${requests.length}`, type: 'function', function: reply.call }];
    }
    await route.fulfill({
      status: 200,
      contentType: 'application/json',
      body: JSON.stringify({
        id: 'scripted', object: 'chat.completion', model: 'scripted',
        choices: [{ index: 0, message, finish_reason: reply.call ? 'tool_calls' : 'stop' }],
      }),
    });
  };
  return { handler, requests };
}

test('with a proxy model, a forbidden call never runs, broken arguments are repaired, and an answer that is not JSON fails its run without crashing the game', async (t) => {
  const model = script([
    // A call this event does not allow: refused, and the model is told so.
    { call: { name: 'attack', arguments: '{"target":"player"}' } },
    { content: 'I hold my blade.' },
    // Broken JSON arguments, then an answer that is not JSON at all.
    { call: { name: 'say', arguments: '{"text": "Halt' } },
    'this is not json',
  ]);
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.route('**/v1/chat/completions', model.handler);
  await page.goto(`${env.server.url}${GAME}?model=${encodeURIComponent(`${env.server.url}v1`)}&name=scripted`);
  await page.getByRole('status').filter({ hasText: 'Ready' }).waitFor();

  const first = await page.evaluate(() =>
    window.market.fire('brann', 'player.near', 'The player comes near you.', ['say']));
  assert.equal(first.type, 'answered');
  assert.equal(first.text, 'I hold my blade.');
  assert.equal(await page.locator('#hp').textContent(), '10', 'the attack never ran');
  const refusal = JSON.stringify(model.requests[1].messages.at(-1));
  assert.match(refusal, /attack/, refusal);

  const second = await page.evaluate(() =>
    window.market.fire('brann', 'player.near', 'The player comes near you.', ['say']));
  // The unterminated arguments are repaired (the JSON discipline) and the allowed
  // `say` runs with them; the reply that is not JSON at all ends the run as failed,
  // with the reason, and the game tells the player so.
  assert.equal(model.requests[3].messages.at(-1).content, '{"said":"Halt"}');
  assert.deepEqual(second, {
    type: 'failed',
    error: "the model's answer could not be read: the response is not a chat completion (expected ident at line 1 column 2)",
  });
  assert.deepEqual(await log(page), [
    'Brann says: “Halt”',
    `(Brann is confused: ${second.error})`,
  ]);
  // The game goes on: the player still moves, unharmed.
  const startedAt = await at(page, 'player');
  await press(page, 'ArrowLeft');
  assert.notEqual(await at(page, 'player'), startedAt);
  assert.equal(await page.locator('#hp').textContent(), '10');
  assert.equal(model.requests.length, 4, 'no request after the unreadable one');
  // Not one console error, page error or off-origin request along the way.
  assert.deepEqual(problems, []);
});
