// The interface's startup and a long conversation, in headless Chromium on the release
// build in dist/. Run through `bench/ui`, which builds it first.
//
// A long conversation opens on its newest turns (ui/chat/earlier.rs), the rest behind a
// "Show N earlier messages" button: render500 checks that what is drawn and what the
// button counts make the 500.
//
// Startup is timed inside the page, from the navigation's start (performance.timeOrigin)
// to the moment an enabled composer is in the DOM (a MutationObserver installed before
// any page script sets a mark), so no polling or round trip to the test process counts.
// That composer is index.html's shell, which takes a message while the .wasm loads and
// hands it to the app (web/shell.rs, ui/start.rs); it is usable once it is also painted (first
// contentful paint), and the later of the two is the goal's figure. The app's own
// milestones are printed beside it: when its wasm runs, when it is mounted (the agent
// is ready) and the first animation frame after that (the frame that draws it).
// "Cold" is a first visit in a fresh browser
// context (new renderer, empty caches); "warm" is a reload of it. The same is measured
// for the shell alone (index.html without its scripts) served by the same server: the
// floor this browser and machine set.
import { readFileSync } from 'node:fs';
import { launchChromium, serveDist } from '../e2e/harness.mjs';

const RUNS = Number(process.env.RUNS ?? 15);
// The floor: the demo's own index.html with its scripts and preloads taken out (and its
// composer enabled, as its script would).
const baseline = readFileSync(new URL('../dist/index.html', import.meta.url), 'utf8')
  .replace(/<script[\s\S]*?<\/script>/g, '')
  .replace(/ disabled(?=>)/g, '')
  .replace(/<link rel="(modulepreload|preload)"[^>]*>/g, '')
  // Trunk leaves its own directive (`<link data-trunk rel="rust" data-bin=…>`) in place.
  .replace(/<link data-trunk[^>]*>/g, '');
if (baseline.includes('familiar-demo')) throw new Error('the baseline page still loads the app');

const server = await serveDist({ pages: { '/baseline.html': baseline } });
const browser = await launchChromium();
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function watchComposer() {
  const ready = () => document.querySelector('.composer-input:not([disabled])');
  new MutationObserver((_, observer) => {
    if (ready()) {
      performance.mark('bench:interactive');
      observer.disconnect();
    }
  }).observe(document, { subtree: true, childList: true, attributes: true });
}

/** Milestones of the current page, in ms from navigation start. */
function milestones() {
  const at = (name) => Math.round(performance.getEntriesByName(name)[0]?.startTime ?? NaN);
  const nav = performance.getEntriesByType('navigation')[0];
  const wasm = performance.getEntriesByType('resource').find((e) => e.name.endsWith('.wasm'));
  return {
    html: Math.round(nav.responseEnd),
    wasm: Math.round(wasm?.responseEnd ?? NaN),
    start: at('familiar:start'),
    mounted: at('familiar:mounted'),
    interactive: at('bench:interactive'),
    painted: at('first-contentful-paint'),
    frame: at('familiar:frame'),
  };
}

/** The composer is usable once it is both in the DOM and painted; mounting is the
 * app's own work, from its wasm running to mounted (the rest is the network's, the
 * compiler's and the machine's, and varies far more from run to run). */
const usable = (m) => ({ ...m, usable: Math.max(m.interactive, m.painted), mounting: m.mounted - m.start });

async function load(page, url, reload) {
  if (reload) await page.reload();
  else await page.goto(url);
  await page.waitForFunction((app) => ['bench:interactive', 'first-contentful-paint', ...(app ? ['familiar:frame'] : [])]
    .every((name) => performance.getEntriesByName(name).length > 0), !url.includes('baseline'));
  return usable(await page.evaluate(milestones));
}

/** Cold and warm milestones of each of `urls`, `RUNS` times each, the pages taking
 * turns so that the machine's drift weighs on all of them alike. */
async function startup(urls) {
  const runs = urls.map(() => ({ cold: [], warm: [] }));
  for (let i = 0; i < RUNS; i += 1) {
    for (const [n, url] of urls.entries()) {
      const context = await browser.newContext();
      await context.addInitScript(watchComposer);
      const page = await context.newPage();
      runs[n].cold.push(await load(page, url, false));
      runs[n].warm.push(await load(page, url, true));
      await context.close();
    }
  }
  return runs;
}

/** A saved conversation of `turns` answered turns, each with a tool call. */
function conversation(turns) {
  const interactions = [];
  for (let id = 1; id <= turns; id += 1) {
    const call = { id: `call_${id}`, name: 'current_time', arguments: '{}' };
    interactions.push({
      id,
      input: `Question ${id}: what time is it?`,
      status: 'Completed',
      draft: '',
      started_ms: 1795338000000 + id * 1000,
      steps: [
        { type: 'observe', trigger: { kind: 'chat', event: 'message.received' } },
        { type: 'reason', purpose: { purpose: 'reason', iteration: 1 }, reasoning: '“time” asks for the current_time tool.', calls: ['current_time'] },
        { type: 'tool_call', call, kind: 'data', result: { Ok: { time: '09:00', date: '2026-11-22' } }, duration_ms: 2 },
        { type: 'reason', purpose: { purpose: 'reason', iteration: 1 }, reasoning: '', calls: [] },
        { type: 'answer', text: `It's **09:00** on Sunday (turn ${id}).`, outcome: { type: 'answered', text: `It's **09:00** on Sunday (turn ${id}).` } },
      ],
    });
  }
  return { interactions };
}

/** Milestones of a navigation to a saved conversation of 500 messages with their
 * steps: it is mounted (in the DOM) and first painted. */
async function render500() {
  const context = await browser.newContext();
  await context.addInitScript(watchComposer);
  const page = await context.newPage();
  await page.goto(server.url);
  await page.evaluate((saved) => {
    localStorage.setItem('familiar.conversation.bench', JSON.stringify(saved));
    localStorage.setItem('familiar.current', JSON.stringify('bench'));
  }, conversation(250));
  const times = await load(page, server.url, true);
  // What is drawn (the newest turns) and what the "Show N earlier messages" button
  // holds back must be the 500 together.
  const { drawn, earlier } = await page.evaluate(() => ({
    drawn: document.querySelectorAll('.message').length,
    earlier: Number(document.querySelector('.show-earlier')?.textContent.match(/\d+/)?.[0] ?? 0),
  }));
  await context.close();
  if (drawn + earlier !== 500) throw new Error(`drew ${drawn} messages and holds back ${earlier}, not 500`);
  if (drawn >= 500) throw new Error('drew all 500 messages: the newest turns alone are drawn on opening');
  return { ...times, drawn };
}

const [app, floor] = await startup([server.url, `${server.url}baseline.html`]);
const big = [];
for (let i = 0; i < RUNS; i += 1) big.push(await render500());

const row = (label, runs, key) => {
  const xs = runs.map((r) => r[key]);
  return `${label.padEnd(44)} ${String(median(xs)).padStart(5)} ms   (${Math.min(...xs)}–${Math.max(...xs)})`;
};
for (const kind of ['cold', 'warm']) {
  console.log(`${kind}: median of ${RUNS}, ms from navigation start (min–max)`);
  console.log(`  ${row('html received', app[kind], 'html')}`);
  console.log(`  ${row('wasm received', app[kind], 'wasm')}`);
  console.log(`  ${row('wasm running (main)', app[kind], 'start')}`);
  console.log(`  ${row('composer in the DOM, enabled', app[kind], 'interactive')}`);
  console.log(`  ${row('first contentful paint (the shell)', app[kind], 'painted')}`);
  console.log(`  ${row('composer on screen, takes input (goal 150)', app[kind], 'usable')}`);
  console.log(`  ${row('app mounted: the agent is ready', app[kind], 'mounted')}`);
  console.log(`  ${row('first frame drawing the app', app[kind], 'frame')}`);
  console.log(`  ${row('  of which mounting (wasm running to mounted)', app[kind], 'mounting')}`);
  console.log(`  ${row('shell alone: on screen, takes input', floor[kind], 'usable')}`);
}
console.log(`a saved conversation of 500 messages with their steps, warm: median of ${RUNS} (${big[0].drawn} drawn, the rest behind "Show earlier")`);
console.log(`  ${row('app mounted (steps folded, built on opening)', big, 'mounted')}`);
console.log(`  ${row('first frame drawing it', big, 'frame')}`);
console.log(`  ${row('  of which mounting (wasm running to mounted)', big, 'mounting')}`);
await browser.close();
await server.close();
