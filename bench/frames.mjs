// Frame gaps while agents run (issue 28): five offline NPCs, each handling EVENTS game
// events at once, through the JS API in headless Chromium on the release build in
// dist/. A requestAnimationFrame loop records every frame's gap; prints the longest,
// the 95th percentile and how many passed 20 ms, with how long the runs took.
//
//   node bench/frames.mjs          five NPCs × 20 events
//   NPCS=5 EVENTS=200 node bench/frames.mjs
import { launchChromium, serveDist } from '../e2e/harness.mjs';

const NPCS = Number(process.env.NPCS ?? 5);
const EVENTS = Number(process.env.EVENTS ?? 20);

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>frames</title><link rel="icon" href="data:,"></head>
<body><script type="module">
  import init, { createAgent } from '/familiar-demo.js';
  await init({ module_or_path: '/familiar-demo_bg.wasm' });
  window.storm = async ({ npcs, events }) => {
    localStorage.clear();
    const agents = [];
    for (let i = 0; i < npcs; i += 1) {
      const npc = await createAgent({
        name: 'npc' + i, persist: false,
        model: { fallback: 'Hm.', rules: [
          { keywords: ['goblin'], tool: 'spawn', arguments: { kind: 'goblin' }, answer: 'Spawned {spawned}.' },
        ] },
      });
      npc.registerTool({
        name: 'spawn', description: 'Spawns a creature.', kind: 'action',
        parameters: { type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] },
        handler: async ({ kind }) => ({ spawned: kind }),
      });
      agents.push(npc);
    }
    const event = { kind: 'raid', event: 'raid.started', subject: 'A goblin is at the gate', allowedActions: ['spawn'] };
    const gaps = [];
    let last = null;
    let running = true;
    const tick = (t) => { if (last !== null) gaps.push(t - last); last = t; if (running) requestAnimationFrame(tick); };
    await new Promise((ok) => requestAnimationFrame((t) => { last = t; requestAnimationFrame(tick); ok(); }));
    const start = performance.now();
    const outcomes = await Promise.all(agents.flatMap((npc) =>
      Array.from({ length: events }, () => npc.trigger(event))));
    const ms = performance.now() - start;
    await new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)));
    running = false;
    agents.forEach((a) => a.destroy());
    const sorted = [...gaps].sort((a, b) => a - b);
    return { ms, frames: gaps.length, max: sorted.at(-1), p95: sorted[Math.floor(sorted.length * 0.95)],
      over20: gaps.filter((g) => g > 20).length, ok: outcomes.filter((o) => o.type === 'goal_complete').length };
  };
  window.ready = true;
</script></body></html>`;

const server = await serveDist({ pages: { '/frames.html': page } });
const browser = await launchChromium();
try {
  const tab = await (await browser.newContext()).newPage();
  tab.on('pageerror', (e) => console.error(`page error: ${e.message}`));
  await tab.goto(`${server.url}frames.html`);
  await tab.waitForFunction(() => window.ready === true);
  for (let round = 0; round < 3; round += 1) {
    const r = await tab.evaluate((o) => window.storm(o), { npcs: NPCS, events: EVENTS });
    console.log(`${NPCS} NPCs × ${EVENTS} events: ${r.ok} completed in ${r.ms.toFixed(0)} ms; ` +
      `${r.frames} frames, longest ${r.max.toFixed(1)} ms, p95 ${r.p95.toFixed(1)} ms, ${r.over20} over 20 ms`);
  }
} finally {
  await browser.close();
  await server.close();
}
