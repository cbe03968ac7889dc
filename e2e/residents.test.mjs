// Seed 000's world and seed 004's compositions from a plain host page, through the
// headless runtime (pkg/, scripts/headless.sh) in real Chromium: residents (agents
// with `memory: "own"`) keep their own histories across a reload, and schedules fire
// on their own, survive a reload, stop on `unschedule`, never overlap their own run,
// and do with the periods a held-back tab missed what `missed` says.
import assert from 'node:assert/strict';
import { test, useDist, watch } from './harness.mjs';

// The page only loads the runtime; each test builds its agent in the page.
const host = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Residents</title><link rel="icon" href="data:,"></head>
<body>
  <script type="module">
    import init, { createAgent } from '/pkg/familiar.js';
    await init({ module_or_path: '/pkg/familiar_bg.wasm' });
    window.createAgent = createAgent;
    window.ready = true;
  </script>
</body>
</html>`;

const env = useDist({ pages: { '/residents.html': host } });

/** Waits until `holds()` (in Node) is true, up to `ms`. */
async function eventually(holds, ms) {
  const end = Date.now() + ms;
  while (!holds()) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms: ${holds}`);
    await new Promise((ok) => setTimeout(ok, 20));
  }
}

/** A fresh context's page of the host, with its problems watched. */
async function openHost(t) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}residents.html`);
  await page.waitForFunction(() => window.ready === true);
  return { page, problems };
}

// Two residents over one page model (`respond`): each request says whose it is by
// the resident's instructions in its system prompt, and every request is kept.
async function createWorld(page) {
  await page.evaluate(async () => {
    window.seen = [];
    window.world = await window.createAgent({
      name: 'world',
      goalCheck: false,
      model: {
        respond: (request) => {
          window.seen.push(request);
          const who = /You are (Dotty|Rook),/.exec(request.system)?.[1] ?? 'world';
          return `${who} answers turn ${window.seen.length}.`;
        },
      },
      agents: [
        { name: 'Dotty', description: 'The baker', instructions: 'You are Dotty, the baker.', memory: 'own' },
        { name: 'Rook', description: 'The guard', instructions: 'You are Rook, the guard.', memory: 'own' },
      ],
    });
  });
}

const fire = (page, actor, subject) =>
  page.evaluate(
    ([actor, subject]) => window.world.trigger({ kind: 'world', event: 'world.happened', actor, subject }),
    [actor, subject],
  );

/** Every request the page's model got for `who`, as the text of all its messages. */
const requestsOf = (page, who) =>
  page.evaluate(
    (who) => window.seen
      .filter((r) => r.system.includes(`You are ${who},`))
      .map((r) => r.messages.map((m) => m.content).join('\n')),
    who,
  );

test('two residents triggered alternately keep separate histories across a reload', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t);
  await createWorld(page);
  const dotty = ['the oven is cold', 'the flour ran out', 'customers are at the door'];
  const rook = ['a thief is at the gate', 'the night watch begins', 'the captain calls'];
  for (let i = 0; i < 2; i += 1) {
    assert.equal((await fire(page, 'Dotty', dotty[i])).type, 'answered');
    assert.equal((await fire(page, 'Rook', rook[i])).type, 'answered');
  }

  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  await createWorld(page);
  const afterReload = {};
  for (const [who, subjects] of [['Dotty', dotty], ['Rook', rook]]) {
    const outcome = await fire(page, who, subjects[2]);
    assert.equal(outcome.type, 'answered');
    assert.match(outcome.text, new RegExp(`^${who} answers`), outcome.text);
    afterReload[who] = outcome.text;
  }

  for (const [who, own, other] of [['Dotty', dotty, rook], ['Rook', rook, dotty]]) {
    const conversation = await page.evaluate((id) => window.world.conversation(id), `agent:${who}`);
    assert.equal(conversation.id, `agent:${who}`);
    assert.deepEqual(conversation.interactions.map((i) => i.input), own, `${who}'s turns, in order`);
    assert.deepEqual(conversation.interactions.map((i) => i.agent), [who, who, who]);
    for (const turn of conversation.interactions) {
      assert.match(turn.steps.at(-1).outcome.text, new RegExp(`^${who} answers`), JSON.stringify(turn));
    }
    // The model's requests for this resident carried its own turns only; the one
    // after the reload carried both earlier turns, kept across it.
    const requests = await requestsOf(page, who);
    assert.equal(requests.length, 1, `after the reload, one request for ${who}`);
    const [last] = requests;
    for (const subject of own) assert.ok(last.includes(subject), `${who}'s history has "${subject}": ${last}`);
    for (const subject of other) assert.ok(!last.includes(subject), `${who}'s history has no "${subject}": ${last}`);
    const otherName = who === 'Dotty' ? 'Rook' : 'Dotty';
    assert.ok(!last.includes(`${otherName} answers`), `${who}'s history has none of ${otherName}'s answers: ${last}`);
  }
  // The open conversation (the main agent's) holds neither resident's turns.
  const open = await page.evaluate(() => window.world.conversation());
  assert.ok(!open?.id?.startsWith('agent:'), JSON.stringify(open?.id));
  assert.equal(open?.interactions?.length ?? 0, 0);

  // `@Dotty` opens her own conversation and shares her memory; `@world` leaves it.
  const opened = [];
  await page.exposeFunction('__opened', (id) => opened.push(id));
  await page.evaluate(() => window.world.on('opened', (e) => window.__opened(e.conversation)));
  const asked = await page.evaluate(() => window.world.send('@Dotty is the bread ready?'));
  assert.match(asked.text, /^Dotty answers/);
  assert.equal(await page.evaluate(() => window.world.conversation().id), 'agent:Dotty');
  const [mention] = (await requestsOf(page, 'Dotty')).slice(-1);
  for (const subject of dotty) assert.ok(mention.includes(subject), `@Dotty reads her triggers: ${mention}`);
  assert.ok(mention.includes(afterReload.Dotty));
  const back = await page.evaluate(() => window.world.send('@world hello'));
  assert.match(back.text, /^world answers/, 'the main agent (not a resident) answers');
  const left = await page.evaluate(() => window.world.conversation());
  assert.ok(!left.id.startsWith('agent:'), left.id);
  assert.deepEqual(left.interactions.map((i) => [i.input, i.agent]), [['@world hello', 'world']]);
  await eventually(() => opened.length === 2, 2_000);
  assert.deepEqual(opened, ['agent:Dotty', left.id]);
  const dottys = await page.evaluate(() => window.world.conversation('agent:Dotty').interactions.map((i) => i.input));
  assert.deepEqual(dottys, [...dotty, '@Dotty is the bread ready?']);
  assert.deepEqual(problems, []);
});

/** Waits until `fn(arg)` holds in the page, polled every 50 ms, up to `ms`. */
const until = (page, fn, arg, ms) => page.waitForFunction(fn, arg, { timeout: ms, polling: 50 });

// An agent whose turns the page logs: `{at, conversation, turn, input}` when a turn
// begins and `{at, conversation, turn, end: true}` when it is done. `respond` waits
// `window.slowMs` before answering and counts the model calls in flight.
async function createTicker(page, { name = 'ticker', persist = false, slowMs = 0 } = {}) {
  await page.evaluate(async ({ name, persist, slowMs }) => {
    window.log = [];
    window.slowMs = slowMs;
    window.inFlight = 0;
    window.mostInFlight = 0;
    window.ticker = await window.createAgent({
      name,
      persist,
      goalCheck: false,
      model: {
        respond: async () => {
          window.inFlight += 1;
          window.mostInFlight = Math.max(window.mostInFlight, window.inFlight);
          await new Promise((ok) => setTimeout(ok, window.slowMs));
          window.inFlight -= 1;
          return 'Market checked.';
        },
      },
      agents: [
        { name: 'Skipper', instructions: 'You are Skipper.', memory: 'own' },
        { name: 'Catcher', instructions: 'You are Catcher.', memory: 'own' },
      ],
    });
    window.ticker.on('turn_began', (e) =>
      window.log.push({ at: Date.now(), conversation: e.conversation, turn: e.turn, input: e.input }));
    window.ticker.on('done', (e) =>
      window.log.push({ at: Date.now(), conversation: e.conversation, turn: e.turn, end: true }));
  }, { name, persist, slowMs });
}

const began = (page, input) =>
  page.evaluate((input) => window.log.filter((e) => !e.end && e.input === input), input);

test('a 2 s schedule fires from the JS API, survives a reload and stops on unschedule', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t);
  await createTicker(page, { persist: true });
  const made = await page.evaluate(() => {
    const at = Date.now();
    const id = window.ticker.schedule({
      id: 'market', every: 2000,
      trigger: { kind: 'schedule', event: 'market.check', subject: 'check the market' },
    });
    return { at, id, schedules: window.ticker.schedules() };
  });
  assert.equal(made.id, 'market');
  assert.equal(made.schedules.length, 1);
  assert.equal(made.schedules[0].every_ms, 2000);
  assert.equal(made.schedules[0].missed, 'skip');
  await until(page, () => window.log.filter((e) => !e.end && e.input === 'check the market').length >= 2, null, 10_000);
  const fired = await began(page, 'check the market');
  assert.ok(fired[0].at - made.at >= 1900, `the first firing is one period on: ${fired[0].at - made.at} ms`);
  const gap = fired[1].at - fired[0].at;
  assert.ok(gap >= 1900 && gap < 3000, `fired every 2 s: ${gap} ms apart`);
  // Each firing is a turn of its own that the model answered.
  const turns = await page.evaluate(() => window.ticker.conversation().interactions);
  assert.ok(turns.length >= 2);
  for (const turn of turns) assert.equal(turn.input, 'check the market');

  // Kept with the agent: a reload finds it, and it fires there.
  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  await createTicker(page, { persist: true });
  const kept = await page.evaluate(() => window.ticker.schedules());
  assert.deepEqual(kept.map((s) => [s.id, s.every_ms]), [['market', 2000]]);
  await until(page, () => window.log.some((e) => !e.end && e.input === 'check the market'), null, 6_000);

  const stopped = await page.evaluate(() => ({
    removed: window.ticker.unschedule('market'),
    again: window.ticker.unschedule('market'),
    schedules: window.ticker.schedules(),
  }));
  assert.deepEqual(stopped, { removed: true, again: false, schedules: [] });
  // A run it started may still end; none begins after it, over two and a half periods.
  const count = (await began(page, 'check the market')).length;
  await page.waitForTimeout(5_000);
  assert.equal((await began(page, 'check the market')).length, count, 'nothing fired after unschedule');
  // And not after another reload either.
  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  await createTicker(page, { persist: true });
  assert.deepEqual(await page.evaluate(() => window.ticker.schedules()), []);
  assert.deepEqual(problems, []);
});

test('a schedule never overlaps its own slow run', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t);
  // Each run takes 3.5 s, longer than the 2 s period.
  await createTicker(page, { slowMs: 3_500 });
  await page.evaluate(() => window.ticker.schedule({
    id: 'slow', every: 2000,
    trigger: { kind: 'schedule', event: 'market.check', actor: 'Skipper', subject: 'a slow check' },
  }));
  // Three runs have ended (about 2 + 3 × 4 s).
  await until(page, () => window.log.filter((e) => e.end).length >= 3, null, 25_000);
  await page.evaluate(() => window.ticker.unschedule('slow'));
  const log = await page.evaluate(() => window.log);
  // Every run began after the one before it was done: began, done, began, done…
  let running = 0;
  let most = 0;
  for (const entry of log) {
    assert.equal(entry.conversation, 'agent:Skipper', JSON.stringify(entry));
    running += entry.end ? -1 : 1;
    most = Math.max(most, running);
    assert.ok(running >= 0 && running <= 1, `at most one run in flight: ${JSON.stringify(log)}`);
  }
  assert.equal(most, 1);
  assert.equal(await page.evaluate(() => window.mostInFlight), 1, 'one model call in flight at a time');
  // A period that fell due mid-run was let go, not queued behind it (the turn would
  // then begin the moment the last one ended): the next run began on the period after.
  const starts = log.filter((e) => !e.end).map((e) => e.at);
  const ends = log.filter((e) => e.end).map((e) => e.at);
  for (let i = 1; i < Math.min(starts.length, 3); i += 1) {
    assert.ok(starts[i] - starts[i - 1] >= 3_900, `runs ${starts[i] - starts[i - 1]} ms apart (two periods)`);
    assert.ok(starts[i] - ends[i - 1] >= 200, `run ${i} began ${starts[i] - ends[i - 1]} ms after run ${i - 1} ended`);
  }
  assert.deepEqual(problems, []);
});

test('a schedule lets a period go while its agent answers another trigger', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t);
  await createTicker(page, { slowMs: 3_500 });
  // Catcher is busy with a game event of the page's own when its schedule falls due.
  const manual = page.evaluate(() => {
    window.ticker.schedule({
      id: 'market', every: 2000,
      trigger: { kind: 'schedule', event: 'market.check', actor: 'Catcher', subject: 'the market check' },
    });
    return window.ticker.trigger({ kind: 'world', event: 'customer.arrived', actor: 'Catcher', subject: 'a customer' });
  });
  assert.equal((await manual).type, 'answered');
  await until(page, () => window.log.some((e) => !e.end && e.input === 'the market check'), null, 10_000);
  await page.evaluate(() => window.ticker.unschedule('market'));
  await until(page, () => window.log.filter((e) => e.end).length >= 2, null, 10_000);
  const log = await page.evaluate(() => window.log);
  const seen = JSON.stringify(log);
  assert.deepEqual(log.map((e) => [e.conversation, e.end ? 'done' : e.input]), [
    ['agent:Catcher', 'a customer'],
    ['agent:Catcher', 'done'],
    ['agent:Catcher', 'the market check'],
    ['agent:Catcher', 'done'],
  ], seen);
  // Due 2 s in, mid-run: let go rather than queued behind the run (it would then
  // begin as the run ended); it fired on the next period, 4 s in.
  assert.ok(log[2].at - log[1].at >= 200, `began ${log[2].at - log[1].at} ms after the run ended: ${seen}`);
  assert.ok(log[2].at - log[0].at >= 3_900, `began ${log[2].at - log[0].at} ms after the run began: ${seen}`);
  assert.equal(await page.evaluate(() => window.mostInFlight), 1);
  assert.deepEqual(problems, []);
});

// A hidden tab's timers are held back (Chrome throttles, then freezes them). This
// headless Chromium ignores CDP's Page.setWebLifecycleState "frozen" for a page it
// shows (its timers ran on), so the test holds them as surely another way: it pauses
// the page's JavaScript in the debugger, and the schedules' timer fires late, as in a
// tab brought back.
test('after its timers were held past two periods, "skip" fires none of them and "catchUp" fires once', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t);
  await createTicker(page);
  await page.evaluate(() => {
    for (const [who, missed] of [['Skipper', 'skip'], ['Catcher', 'catchUp']]) {
      window.ticker.schedule({
        id: who, every: 2000, missed,
        trigger: { kind: 'schedule', event: 'market.check', actor: who, subject: `${who} checks` },
      });
    }
  });
  // Both fire on time while the page runs.
  await until(page, () => ['Skipper', 'Catcher'].every((who) =>
    window.log.filter((e) => e.end && e.conversation === `agent:${who}`).length >= 1), null, 10_000);
  const cdp = await page.context().newCDPSession(page);
  let paused = 0;
  cdp.on('Debugger.paused', () => { paused += 1; });
  await cdp.send('Debugger.enable');
  const heldAt = await page.evaluate(() => Date.now());
  await cdp.send('Debugger.pause');
  // Held for three and a half periods (7 s); it pauses as the next timer fires.
  await new Promise((ok) => setTimeout(ok, 7_000));
  assert.equal(paused, 1, 'the page was paused');
  await cdp.send('Debugger.resume');
  await cdp.send('Debugger.disable');
  const releasedAt = heldAt + 7_000;
  const after = (who) => page.evaluate(
    ([who, since]) => window.log
      .filter((e) => !e.end && e.conversation === `agent:${who}` && e.at > since)
      .map((e) => e.at),
    [who, heldAt + 100],
  );
  // Skipper's next firing is the next period boundary; then Catcher's on-time one.
  await until(page, (since) => window.log.some((e) =>
    !e.end && e.conversation === 'agent:Skipper' && e.at > since), heldAt + 100, 10_000);
  const [boundary] = await after('Skipper');
  await until(page, (since) => window.log.some((e) =>
    !e.end && e.conversation === 'agent:Catcher' && e.at >= since), boundary - 300, 10_000);
  const skipper = await after('Skipper');
  const catcher = await after('Catcher');
  const seen = JSON.stringify({ heldAt, releasedAt, skipper, catcher });
  // Nothing ran while held.
  for (const at of [...skipper, ...catcher]) assert.ok(at >= releasedAt, `fired while held: ${seen}`);
  // Skipper let the held periods go: its first firing after the release is on a
  // boundary, not at the release.
  assert.ok(boundary - releasedAt >= 300, `Skipper fired at the release: ${seen}`);
  // Catcher fired once for all of them at the release, then on the boundary with Skipper.
  const caughtUp = catcher.filter((at) => at < boundary - 300);
  assert.equal(caughtUp.length, 1, `Catcher caught up once: ${seen}`);
  assert.ok(caughtUp[0] - releasedAt < 1_000, `at the release: ${seen}`);
  assert.equal(catcher.filter((at) => at >= boundary - 300).length, 1, `then on time: ${seen}`);
  const schedules = await page.evaluate(() => window.ticker.schedules());
  assert.equal(schedules.length, 2);
  await page.evaluate(() => ['Skipper', 'Catcher'].forEach((id) => window.ticker.unschedule(id)));
  assert.deepEqual(problems, []);
});
