// What one game event costs as an NPC's conversation grows (issue 32), through the JS
// API in headless Chromium on the release build in dist/: one agent with the rules
// model and a host tool, `trigger` after `trigger`, in memory (`persist: false`) and
// persisted (the default, localStorage). Prints the mean ms per event over a window of
// events at each mark, so a flat curve reads as a flat row.
//
//   node bench/events.mjs            marks 100, 1000, 10000
//   MARKS=100,400,800 node bench/events.mjs
//   BUILD=lean node bench/events.mjs  the headless runtime in pkg/ (scripts/headless.sh)
//
// A failed save (a full localStorage) fails the run: nothing may be lost on the way.
// A series stops early when one window's mean passes LIMIT_MS (default 250), since an
// O(history) cost would take hours to reach 10,000 events; its later marks print "—".
import { launchChromium, serveDist } from '../e2e/harness.mjs';

const MARKS = (process.env.MARKS ?? '100,1000,10000').split(',').map(Number);
const WINDOW = Number(process.env.WINDOW ?? 50);
const LIMIT_MS = Number(process.env.LIMIT_MS ?? 250);
const BUILD = process.env.BUILD ?? 'full';
const [script, wasm] = {
  full: ['/familiar-demo.js', '/familiar-demo_bg.wasm'],
  lean: ['/pkg/familiar.js', '/pkg/familiar_bg.wasm'],
}[BUILD] ?? [];
if (!script) throw new Error(`BUILD is full or lean, not ${BUILD}`);

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>events</title><link rel="icon" href="data:,"></head>
<body><script type="module">
  import init, { createAgent } from '${script}';
  await init({ module_or_path: '${wasm}' });
  // One series at a time: setup makes the agent, run(n) sends n events and says
  // how long they took, finish says what was left.
  let npc;
  let failedSaves = 0;
  const event = { kind: 'raid', event: 'raid.started', actor: { name: 'Keeper' },
    subject: 'A goblin is at the gate', allowedActions: ['spawn'] };
  window.setup = async (persist) => {
    localStorage.clear();
    failedSaves = 0;
    npc = await createAgent({
      name: 'npc', namespace: 'bench-' + persist, persist,
      model: { fallback: 'Hm.', rules: [
        { keywords: ['goblin'], tool: 'spawn', arguments: { kind: 'goblin' }, answer: 'Spawned {spawned}.' },
      ] },
    });
    npc.registerTool({
      name: 'spawn', description: 'Spawns a creature.', kind: 'action',
      parameters: { type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] },
      handler: async ({ kind }) => ({ spawned: kind }),
    });
    npc.on('save_failed', () => { failedSaves += 1; });
  };
  window.run = async (n) => {
    const start = performance.now();
    for (let i = 0; i < n; i += 1) {
      const outcome = await npc.trigger(event);
      if (outcome.type === 'failed') throw new Error(outcome.error);
    }
    return performance.now() - start;
  };
  window.finish = () => {
    npc.destroy();
    // What the series left in localStorage, in characters (its quota counts them).
    let stored = 0;
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      stored += key.length + localStorage.getItem(key).length;
    }
    return { failedSaves, stored };
  };
  window.ready = true;
</script></body></html>`;

const server = await serveDist({ pages: { '/events.html': page } });
const browser = await launchChromium();
try {
  const context = await browser.newContext();
  const tab = await context.newPage();
  tab.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await tab.goto(`${server.url}events.html`);
  await tab.waitForFunction(() => window.ready === true);
  // The main thread's busy time, from Chromium's own counters (seconds of tasks run).
  const cdp = await context.newCDPSession(tab);
  await cdp.send('Performance.enable');
  const busy = async () => {
    const { metrics } = await cdp.send('Performance.getMetrics');
    return metrics.find((m) => m.name === 'TaskDuration').value * 1000;
  };
  const table = {};
  let footer = '';
  for (const persist of [false, true]) {
    await tab.evaluate((p) => window.setup(p), persist);
    const rows = [];
    let done = 0;
    for (const mark of MARKS) {
      if (mark - WINDOW > done) await tab.evaluate((n) => window.run(n), mark - WINDOW - done);
      const before = await busy();
      const wall = await tab.evaluate((n) => window.run(n), WINDOW);
      const cpu = (await busy()) - before;
      done = mark;
      rows.push({ mark, ms: wall / WINDOW, busy: cpu / WINDOW });
      if (wall / WINDOW > LIMIT_MS) break;
    }
    const { failedSaves, stored } = await tab.evaluate(() => window.finish());
    const name = persist ? 'persisted (default)' : 'persist: false';
    table[name] = rows;
    if (persist) footer = `persisted: ${failedSaves} failed saves; ${stored.toLocaleString('en')} characters left in localStorage (its quota: about 5,242,880)`;
    if (failedSaves > 0) process.exitCode = 1;
  }
  const cell = (rows, mark, field) => {
    const row = rows.find((r) => r.mark === mark);
    return row ? row[field].toFixed(2) : '—';
  };
  console.log(`ms per event (mean of ${WINDOW} events ending at each mark), ${BUILD} build, rules model, one host tool`);
  console.log('wall: from trigger to its answer, frames left to the page included; main thread: what Chromium counted busy');
  console.log(`| events so far | ${MARKS.join(' | ')} |`);
  console.log(`|---|${MARKS.map(() => '---').join('|')}|`);
  for (const [name, rows] of Object.entries(table)) {
    console.log(`| ${name}, wall | ${MARKS.map((m) => cell(rows, m, 'ms')).join(' | ')} |`);
    console.log(`| ${name}, main thread | ${MARKS.map((m) => cell(rows, m, 'busy')).join(' | ')} |`);
  }
  console.log(footer);
} finally {
  await browser.close();
  await server.close();
}
