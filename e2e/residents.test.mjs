// Seed 000's world and seed 004's compositions from a plain host page, through the
// headless runtime (pkg/, scripts/headless.sh) in real Chromium: residents (agents
// with `memory: "own"`) keep their own histories across a reload, and schedules fire
// on their own, survive a reload, stop on `unschedule`, never overlap their own run,
// and do with the periods a held-back tab missed what `missed` says. The schedules run
// on Playwright's clock, held still: time moves only as a test moves it, so each firing
// is where its period puts it, to the millisecond, however loaded the machine.
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

/**
 * A fresh context's page of the host, with its problems watched; with `clock`, the page
 * runs on Playwright's clock (installed before it loads: its Date and timers).
 */
async function openHost(t, { clock = false } = {}) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  if (clock) await context.clock.install();
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

/**
 * Holds the page's clock still (openHost's `clock`): from here the page's time moves
 * only by `page.clock.runFor` and `fastForward`. Returns the page's time.
 */
async function holdClock(page) {
  const at = (await page.evaluate(() => Date.now())) + 1_000;
  await page.clock.pauseAt(at);
  return at;
}


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
  const { page, problems } = await openHost(t, { clock: true });
  await createTicker(page, { persist: true });
  await holdClock(page);
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
  // Two periods on the page's clock: it fires at 2 s and at 4 s, and not before.
  await page.clock.runFor(1_999);
  assert.equal((await began(page, 'check the market')).length, 0, 'nothing fired before its period');
  await page.clock.runFor(2_001);
  const fired = await began(page, 'check the market');
  assert.deepEqual(fired.map((f) => f.at - made.at), [2_000, 4_000], 'fired every 2 s from the schedule');
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
  await page.clock.runFor(2_000);
  assert.ok((await began(page, 'check the market')).length >= 1, 'the kept schedule fired within a period of the reload');

  const stopped = await page.evaluate(() => ({
    removed: window.ticker.unschedule('market'),
    again: window.ticker.unschedule('market'),
    schedules: window.ticker.schedules(),
  }));
  assert.deepEqual(stopped, { removed: true, again: false, schedules: [] });
  // A run it started may still end; none begins after it, over two and a half periods.
  const count = (await began(page, 'check the market')).length;
  await page.clock.runFor(5_000);
  assert.equal((await began(page, 'check the market')).length, count, 'nothing fired after unschedule');
  // And not after another reload either.
  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  await createTicker(page, { persist: true });
  assert.deepEqual(await page.evaluate(() => window.ticker.schedules()), []);
  assert.deepEqual(problems, []);
});

test('a schedule never overlaps its own slow run', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t, { clock: true });
  // Each run takes 3.5 s, longer than the 2 s period.
  await createTicker(page, { slowMs: 3_500 });
  await holdClock(page);
  await page.evaluate(() => window.ticker.schedule({
    id: 'slow', every: 2000,
    trigger: { kind: 'schedule', event: 'market.check', actor: 'Skipper', subject: 'a slow check' },
  }));
  // 14 s on the page's clock: runs begin at 2, 6 and 10 s and end 3.5 s later.
  await page.clock.runFor(14_000);
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
  // (A run takes its model's 3.5 s and the runtime's few ms: it ends just after 5.5 s.)
  assert.equal(ends.length, 3, JSON.stringify(log));
  for (let i = 1; i < 3; i += 1) {
    assert.equal(starts[i] - starts[i - 1], 4_000, `runs two periods apart, on the boundary: ${JSON.stringify(log)}`);
    assert.ok(starts[i] - ends[i - 1] > 400, `run ${i} began on the period after run ${i - 1} ended, not as it ended: ${JSON.stringify(log)}`);
  }
  assert.deepEqual(problems, []);
});

test('a schedule lets a period go while its agent answers another trigger', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t, { clock: true });
  await createTicker(page, { slowMs: 3_500 });
  await holdClock(page);
  // Catcher is busy with a game event of the page's own when its schedule falls due.
  await page.evaluate(() => {
    window.ticker.schedule({
      id: 'market', every: 2000,
      trigger: { kind: 'schedule', event: 'market.check', actor: 'Catcher', subject: 'the market check' },
    });
    window.manual = window.ticker.trigger({ kind: 'world', event: 'customer.arrived', actor: 'Catcher', subject: 'a customer' });
  });
  // The customer's run ends at 3.5 s; the check due at 2 s is let go and begins at 4 s.
  await page.clock.runFor(5_000);
  assert.equal((await page.evaluate(() => window.manual)).type, 'answered');
  await page.evaluate(() => window.ticker.unschedule('market'));
  await page.clock.runFor(3_000);
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
  assert.equal(log[2].at - log[0].at, 4_000, `began two periods in, on the boundary: ${seen}`);
  assert.ok(log[2].at - log[1].at > 400, `began on the next period, not as the run ended: ${seen}`);
  assert.equal(await page.evaluate(() => window.mostInFlight), 1);
  assert.deepEqual(problems, []);
});

// A hidden tab's timers are held back (Chrome throttles, then freezes them), and fire
// late, at most once, when it is brought back: what Playwright's clock.fastForward does
// to the page's timers (the closed laptop lid of its documentation).
test('after its timers were held past two periods, "skip" fires none of them and "catchUp" fires once', { timeout: 60_000 }, async (t) => {
  const { page, problems } = await openHost(t, { clock: true });
  await createTicker(page);
  const made = await holdClock(page);
  await page.evaluate(() => {
    for (const [who, missed] of [['Skipper', 'skip'], ['Catcher', 'catchUp']]) {
      window.ticker.schedule({
        id: who, every: 2000, missed,
        trigger: { kind: 'schedule', event: 'market.check', actor: who, subject: `${who} checks` },
      });
    }
  });
  const firings = (who) => page.evaluate(
    (who) => window.log.filter((e) => !e.end && e.conversation === `agent:${who}`).map((e) => e.at),
    who,
  );
  // Both fire on time while the page runs: at 2 s (their runs done by 2.1 s).
  await page.clock.runFor(2_100);
  assert.deepEqual([(await firings('Skipper')).map((at) => at - made), (await firings('Catcher')).map((at) => at - made)],
    [[2_000], [2_000]]);
  assert.equal(await page.evaluate(() => window.log.filter((e) => e.end).length), 2, 'both runs done');
  // Held past three periods: the tab comes back at 9 s, its timers late.
  await page.clock.fastForward(6_900);
  const releasedAt = made + 9_000;
  // Then on to the next period boundary, 10 s.
  await page.clock.runFor(1_000);
  const skipper = (await firings('Skipper')).map((at) => at - made);
  const catcher = (await firings('Catcher')).map((at) => at - made);
  const seen = JSON.stringify({ made, releasedAt, skipper, catcher });
  // Skipper let the held periods go: nothing at the release, then the boundary.
  assert.deepEqual(skipper, [2_000, 10_000], `Skipper: ${seen}`);
  // Catcher fired once for all of them at the release, then on the boundary with Skipper.
  assert.deepEqual(catcher, [2_000, 9_000, 10_000], `Catcher: ${seen}`);
  const schedules = await page.evaluate(() => window.ticker.schedules());
  assert.equal(schedules.length, 2);
  await page.evaluate(() => ['Skipper', 'Catcher'].forEach((id) => window.ticker.unschedule(id)));
  assert.deepEqual(problems, []);
});
