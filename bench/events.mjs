// What one game event costs as an NPC's conversation grows (issue 32), through the JS
// API in headless Chromium on the release build in dist/: one agent with the rules
// model and a host tool, `trigger` after `trigger`, in memory (`persist: false`) and
// persisted (the default, localStorage). Prints the mean ms per event over a window of
// events at each mark, so a flat curve reads as a flat row.
//
//   node bench/events.mjs            marks 100, 1000, 10000
//   MARKS=100,400,800 node bench/events.mjs
//
// A failed save (a full localStorage) fails the run: nothing may be lost on the way.
// A series stops early when one window's mean passes LIMIT_MS (default 250), since an
// O(history) cost would take hours to reach 10,000 events; its later marks print "—".
import { launchChromium, serveDist } from '../e2e/harness.mjs';

const MARKS = (process.env.MARKS ?? '100,1000,10000').split(',').map(Number);
const WINDOW = Number(process.env.WINDOW ?? 50);
const LIMIT_MS = Number(process.env.LIMIT_MS ?? 250);

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>events</title><link rel="icon" href="data:,"></head>
<body><script type="module">
  import init, { createAgent } from '/familiar-demo.js';
  await init({ module_or_path: '/familiar-demo_bg.wasm' });
  window.series = async ({ persist, marks, window: size, limit }) => {
    localStorage.clear();
    const npc = await createAgent({
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
    let failedSaves = 0;
    npc.on('save_failed', () => { failedSaves += 1; });
    const event = { kind: 'raid', event: 'raid.started', actor: { name: 'Keeper' },
      subject: 'A goblin is at the gate', allowedActions: ['spawn'] };
    const rows = [];
    let done = 0;
    for (const mark of marks) {
      while (done < mark - size) {
        const outcome = await npc.trigger(event);
        if (outcome.type === 'failed') throw new Error(outcome.error);
        done += 1;
      }
      const start = performance.now();
      for (let i = 0; i < size; i += 1) await npc.trigger(event);
      done += size;
      const ms = (performance.now() - start) / size;
      rows.push({ mark, ms });
      if (ms > limit) break;
    }
    npc.destroy();
    // What the series left in localStorage, in characters (its quota counts them).
    let stored = 0;
    for (let i = 0; i < localStorage.length; i += 1) {
      const key = localStorage.key(i);
      stored += key.length + localStorage.getItem(key).length;
    }
    return { rows, failedSaves, stored };
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
  const table = {};
  let footer = '';
  for (const persist of [false, true]) {
    const { rows, failedSaves, stored } = await tab.evaluate(
      (options) => window.series(options),
      { persist, marks: MARKS, window: WINDOW, limit: LIMIT_MS },
    );
    table[persist ? 'persisted (default)' : 'persist: false'] = rows;
    if (persist) footer = `persisted: ${failedSaves} failed saves; ${stored.toLocaleString('en')} characters left in localStorage (its quota: about 5,242,880)`;
    if (failedSaves > 0) process.exitCode = 1;
  }
  const cell = (rows, mark) => {
    const row = rows.find((r) => r.mark === mark);
    return row ? row.ms.toFixed(2) : '—';
  };
  console.log(`ms per event (mean of ${WINDOW} events ending at each mark), full build, rules model, one host tool`);
  console.log(`| events so far | ${MARKS.join(' | ')} |`);
  console.log(`|---|${MARKS.map(() => '---').join('|')}|`);
  for (const [name, rows] of Object.entries(table)) {
    console.log(`| ${name} | ${MARKS.map((m) => cell(rows, m)).join(' | ')} |`);
  }
  console.log(footer);
} finally {
  await browser.close();
  await server.close();
}
