// The demo's views and its two examples as a new user meets them (issue 43), at 1280 and
// 360 px on the release build: axe (its default rules with WCAG 2.2 AA's turned on) in
// each state finds no serious or critical violation; each panel opens at its top with
// focus on its heading, is walked by keyboard with focus asserted after every action,
// and closes with Escape back to its button; the top bar stays on screen in a long
// conversation; World runs read as the events and the residents' deeds they are; the
// copilot says what a denial left undone; Mossbrook Market and the copilot fit a
// phone. Screenshots of the World and the Guild at both widths go to e2e/artifacts/.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test, answer, artifacts, openDemo, send, topBar, useDist, watch } from './harness.mjs';

const env = useDist();
const axeSource = await readFile(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const WIDTHS = [1280, 360];
const viewport = (width) => ({ width, height: width > 900 ? 900 : 740 });

/** axe's serious and critical violations: its default rules, and every WCAG 2.0-2.2
 * A/AA rule turned on (target-size among them). */
async function audit(page) {
  // Evaluated through the DevTools protocol, not a <script>: the page's CSP stays whole.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const wcag = new Set(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa']);
    const rules = Object.fromEntries(window.axe.getRules()
      .filter((r) => r.tags.some((tag) => wcag.has(tag)))
      .map((r) => [r.ruleId, { enabled: true }]));
    const result = await window.axe.run(document, { rules, resultTypes: ['violations'] });
    return result.violations
      .filter((v) => v.impact === 'serious' || v.impact === 'critical')
      .map((v) => `${v.id} (${v.impact}): ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  });
}

/** Runs axe in `state` and records what it found under that name. */
async function check(page, found, state) {
  await page.waitForTimeout(150);
  const violations = await audit(page);
  if (violations.length) found[state] = violations;
}

/** Where focus is: the focused element's tag, id and first class. */
function focused(page) {
  return page.evaluate(() => {
    const el = document.activeElement;
    if (!el || el === document.body) return 'body';
    const id = el.id ? `#${el.id}` : '';
    const cls = el.classList[0] ? `.${el.classList[0]}` : '';
    return `${el.tagName.toLowerCase()}${id}${cls}`;
  });
}

/** Asserts focus is on `selector`. */
async function focusIs(page, selector, what) {
  const on = await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector);
  assert.ok(on, `${what}: focus on ${selector}, not ${await focused(page)}`);
}

/** Waits (up to 2 s) for focus to land on `selector`, moved there once a move is done. */
async function focusLands(page, selector, what) {
  for (let i = 0; i < 40; i += 1) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.waitForTimeout(50);
  }
  await focusIs(page, selector, what);
}

/** Waits (up to 2 s) for `holds()` (async, true or false); fails with `what` if it never does. */
async function until(page, holds, what) {
  for (let i = 0; i < 40; i += 1) {
    if (await holds()) return;
    await page.waitForTimeout(50);
  }
  assert.ok(await holds(), what);
}

/** Presses Tab (Shift+Tab when `back`) until focus is on `selector`; fails after 80. */
async function tabTo(page, selector, { back = false } = {}) {
  for (let i = 0; i < 80; i += 1) {
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    await page.keyboard.press(back ? 'Shift+Tab' : 'Tab');
  }
  throw new Error(`Tab never reached ${selector}; focus is on ${await focused(page)}`);
}

/** Whether `selector` is on screen, below the sticky top bar (its top in view). */
function atTop(page, selector) {
  return page.evaluate((selector) => {
    const box = document.querySelector(selector).getBoundingClientRect();
    const bar = document.querySelector('.familiar-actions').getBoundingClientRect();
    return box.top >= bar.bottom - 1 && box.top < window.innerHeight / 2;
  }, selector);
}

/** The buttons inside `selector` smaller than 44×44 px, named. */
function smallTargets(page, selector) {
  return page.evaluate((selector) => [...document.querySelectorAll(`${selector} button, ${selector} summary`)]
    .filter((b) => b.offsetParent !== null)
    .map((b) => [b.textContent.trim().slice(0, 30), b.getBoundingClientRect()])
    .filter(([, r]) => r.width < 44 || r.height < 44)
    .map(([name, r]) => `${name} ${Math.round(r.width)}×${Math.round(r.height)}`), selector);
}

/** How far the page is wider than its window. */
const overflow = (page) => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);

/** A screenshot of `locator` as the page lays it out at its top (scrolled to 0, so the
 * sticky top bar is in its own place, not over the panel). */
async function shoot(page, locator, name) {
  await page.evaluate(() => window.scrollTo(0, 0));
  await page.waitForTimeout(100);
  const box = await locator.boundingBox();
  await page.screenshot({ path: `${artifacts}/${name}`, fullPage: true, clip: box });
}

/** Opens a panel from the top bar by keyboard: Tab to its button (through the menu,
 * narrow), Enter. */
const openByKeyboard = (page, name) => topBar(page, name, { keyboard: true });

/** Where a panel closed by Escape gives focus back at `width`: its button, or
 * (900 px and less) the menu holding it. */
const opener = (width, button) => (width > 900 ? button : '#familiar-menu-button');

for (const width of WIDTHS) {
  test(`World at ${width} px: opens at its heading, reads as a game panel, is walked by keyboard, credits its runs, and closes with Escape`, async (t) => {
    const { page, problems } = await openDemo(env, t, { viewport: viewport(width) });
    const found = {};
    await check(page, found, 'first load');
    await openByKeyboard(page, 'World');
    const world = page.locator('section.world');
    await world.waitFor();
    await focusLands(page, '#world-heading', 'World opens');
    await until(page, () => atTop(page, '#world-heading'), 'the World opens at its top, below the top bar');
    await world.locator('.world-agent[data-agent="Mira"] dd.energy', { hasText: '45' }).waitFor();
    await check(page, found, 'World open');

    // Keyboard: the header's controls, then the first card's, in order.
    await page.keyboard.press('Tab');
    await focusIs(page, '.pause-market', 'Tab from the heading');
    await page.keyboard.press('Enter');
    await world.locator('.market-timer', { hasText: 'Market check paused' }).waitFor();
    await focusIs(page, '.pause-market', 'Pause keeps focus');
    await page.keyboard.press('Tab');
    await focusIs(page, '.battle-starts', 'Tab after Pause');
    await page.keyboard.press('Tab');
    await focusIs(page, '.world-agent[data-agent="Dotty"] .market-check', 'Tab into the first card');

    // Mira's market check, her conversation open: fired by keyboard, focus stays.
    await tabTo(page, '.world-agent[data-agent="Mira"] .open-memory');
    await page.keyboard.press('Enter');
    await focusIs(page, '.world-agent[data-agent="Mira"] .open-memory', 'Opening her conversation keeps focus');
    await tabTo(page, '.world-agent[data-agent="Mira"] .market-check', { back: true });
    await page.keyboard.press('Enter');
    await page.locator('.turn[data-status="completed"]').first().waitFor({ timeout: 15_000 });
    await focusIs(page, '.world-agent[data-agent="Mira"] .market-check', 'A market check keeps focus');
    await world.locator('.world-agent[data-agent="Mira"] dd.energy', { hasText: '75' }).waitFor();

    // The game panel: stats as numbers with bars, names not ids, tables, sentences.
    const mira = world.locator('.world-agent[data-agent="Mira"]');
    assert.equal(await mira.locator('.portrait').innerText(), 'M');
    assert.match(await mira.locator('.identity').innerText(), /Loyalty 20/);
    assert.equal(Number(await mira.locator('dd.gold').innerText()), 40);
    assert.equal(await mira.locator('dd.energy .stat-fill').getAttribute('width'), '75');
    assert.match(await mira.locator('.relationships').innerText(), /Dotty: acquaintance \(20\)/);
    assert.match(await world.locator('.world-agent[data-agent="Dotty"] .relationships').innerText(), /You: friend \(40\)/);
    assert.match(await world.locator('table.battles tbody').innerText(), /Battle 1 \(active\): 120 – 95\s+Lantern Guild – Ashen Circle/);
    assert.match(await world.locator('table.market tbody').innerText(), /bread\s+3 gold\s+\+1 energy/);
    assert.match(await world.locator('table.market tbody').innerText(), /food\s+10 gold\s+\+50 energy/);
    assert.match(await world.locator('.messages').innerText(), /You → Dotty: “Dotty, is the Lantern Guild winning the battle\?”/);
    const changes = await world.locator('.world-changes li .change-text').allInnerTexts();
    assert.deepEqual(changes, [
      'At the market check, Mira used 1 food.',
      'At the market check, Mira bought 1 food.',
      'At the market check, Mira worked at mining.',
      'At the market check, Mira tried to buy 1 food but could not: Insufficient gold. Need 10, have 0.',
    ]);
    const shown = await world.innerText();
    assert.doesNotMatch(shown, /[{}]|→ \d+:|market\.check/, 'no raw JSON, ids or event names in the World view');
    assert.deepEqual(await smallTargets(page, 'section.world'), [], 'every World control is at least 44×44 px');
    assert.ok(await overflow(page) <= 0, `the page is no wider than its ${width} px window`);

    // The run in Mira's conversation: the event, then Mira's deeds in words.
    const turn = page.locator('.turn').first();
    assert.equal(await turn.locator('.message-user').count(), 0, 'a market check is not "You said"');
    assert.match(await turn.locator('.message-event').innerText(), /Market check[\s\S]*Scheduled market check/i);
    assert.match(await turn.locator('.speaker').innerText(), /^Mira/);
    const said = await turn.locator('.message-assistant .markdown').innerText();
    assert.match(said, /Worked at mining\. Bought 1 food\. Used 1 food\./);
    assert.doesNotMatch(said, /do_work|buy_item|consume_item/, 'the answer is in words, not tool names');
    // The log's step is one click (or key) away: it opens her conversation.
    await tabTo(page, '.world-changes li:first-child .change-open');
    await page.keyboard.press('Enter');
    await focusIs(page, '.world-changes li:first-child .change-open', 'Opening a step keeps focus');
    await check(page, found, 'World after a market check');
    await shoot(page, world, `world-${width}.png`);

    await page.keyboard.press('Escape');
    await world.waitFor({ state: 'detached' });
    await focusIs(page, opener(width, '.show-world'), 'Escape closes the World');
    assert.deepEqual(found, {});
    assert.deepEqual(problems, []);
  });

  test(`Guild at ${width} px: opens at its heading, keeps focus through every move, one chart with axes read by keys, a table, and Escape`, async (t) => {
    const { page, problems } = await openDemo(env, t, { viewport: viewport(width) });
    const found = {};
    await openByKeyboard(page, 'Guild');
    const guild = page.locator('section.guild');
    await guild.locator('.guild-resource[data-resource="gold"] dd', { hasText: /\d/ }).waitFor();
    await focusLands(page, 'section.guild h2', 'Guild opens');
    await until(page, () => atTop(page, 'section.guild h2'), 'the Guild opens at its top, below the top bar');
    await check(page, found, 'Guild open');

    const message = (pattern) => guild.locator('.guild-message', { hasText: pattern }).waitFor();
    await tabTo(page, '.guild-propose');
    await page.keyboard.press('Enter');
    await message(/The council drafted 2 proposals\./);
    await focusLands(page, '.guild-propose', 'Propose keeps focus');
    await tabTo(page, '.guild-proposal[data-status="pending"] .guild-scry');
    const first = await page.evaluate(() => document.activeElement.closest('.guild-proposal').dataset.id);
    await page.keyboard.press('Enter');
    await message(/The oracle has spoken/);
    await focusLands(page, `.guild-proposal[data-id="${first}"] .guild-scry`, 'Scry keeps focus on its button');
    await page.keyboard.press('Tab');
    await focusIs(page, `.guild-proposal[data-id="${first}"] .guild-accept`, 'Tab from Scry');
    await page.keyboard.press('Enter');
    await message(/^Accepted: /);
    await focusLands(page, `.guild-proposal[data-id="${first}"] .guild-status`, 'Accept hands focus to its result');
    await tabTo(page, '.guild-proposal[data-status="pending"] .guild-reject');
    const second = await page.evaluate(() => document.activeElement.closest('.guild-proposal').dataset.id);
    await page.keyboard.press('Enter');
    await message(/^Rejected: /);
    await focusLands(page, `.guild-proposal[data-id="${second}"] .guild-status`, 'Reject hands focus to its result');
    await tabTo(page, '.guild-next-tick', { back: true });
    await page.keyboard.press('Enter');
    await message(/^Tick 1: 1 proposal applied\./);
    await focusLands(page, '.guild-next-tick', 'Tick keeps focus');

    // One chart on a shared scale with labelled axes, read by the arrow keys.
    const axis = await guild.locator('.guild-axis-title').allTextContents();
    assert.deepEqual(axis, ['Tick', 'Amount']);
    assert.equal(await guild.locator('.guild-axis-x').count(), 2, 'ticks 0 and 1 on the x axis');
    await tabTo(page, '.guild-chart', { back: true });
    const readout = guild.locator('.guild-readout');
    await page.keyboard.press('Home');
    assert.match(await readout.innerText(), /^Tick 0: gold 100, food 80, morale 55, influence 10$/);
    await page.keyboard.press('ArrowRight');
    assert.match(await readout.innerText(), /^Tick 1: gold \d+, food \d+, morale \d+, influence \d+$/);
    await focusIs(page, '.guild-chart', 'the chart keeps focus while read');
    // Hovering a tick's column reads it too.
    const box = await guild.locator('.guild-chart').boundingBox();
    await page.mouse.move(box.x + box.width * 0.15, box.y + box.height * 0.4);
    assert.match(await readout.innerText(), /^Tick 0: /, 'hover reads the tick under the pointer');
    // The same numbers as a table.
    await tabTo(page, '.guild-table summary');
    await page.keyboard.press('Enter');
    const rows = await guild.locator('.guild-table tbody tr').allInnerTexts();
    assert.equal(rows.length, 2);
    assert.match(rows[0], /^0\s+100\s+80\s+55\s+10$/);
    assert.deepEqual(await smallTargets(page, 'section.guild'), [], 'every Guild control is at least 44×44 px');
    assert.ok(await overflow(page) <= 0, `the page is no wider than its ${width} px window`);
    await check(page, found, 'Guild after a tick');
    await shoot(page, guild, `guild-${width}.png`);

    await page.keyboard.press('Escape');
    await guild.waitFor({ state: 'detached' });
    await focusIs(page, opener(width, '.show-guild'), 'Escape closes the Guild');
    assert.deepEqual(found, {});
    assert.deepEqual(problems, []);
  });

  test(`Settings and History at ${width} px: open at their top with focus, walk by keyboard, close with Escape; the proxy's model example is a hint`, async (t) => {
    const { page, problems } = await openDemo(env, t, { viewport: viewport(width) });
    const found = {};
    await send(page, 'Remember that the ale is cold');
    await answer(page, 1);
    await check(page, found, 'idle after an answer');

    await openByKeyboard(page, 'Settings');
    await focusLands(page, '#settings-heading', 'Settings opens');
    await until(page, () => atTop(page, '#settings-heading'), 'Settings opens at its top');
    await page.keyboard.press('Tab');
    await focusIs(page, 'input[name="model"]', 'Tab from the heading');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    assert.equal(await page.locator('.use-proxy').isChecked(), true);
    await tabTo(page, '.proxy-model');
    assert.equal(await page.locator('.proxy-model').getAttribute('placeholder'), null, 'no example inside the field');
    assert.match(await page.locator('#hint-model').innerText(), /for example “gpt-4o-mini”/);
    assert.match(await page.locator('.proxy-model').getAttribute('aria-describedby'), /hint-model/);
    await check(page, found, 'Settings open');
    await page.keyboard.press('Escape');
    await focusIs(page, opener(width, '.show-settings'), 'Escape closes Settings');

    await openByKeyboard(page, 'History');
    await focusLands(page, 'section.conversations', 'History opens');
    await until(page, () => atTop(page, 'section.conversations'), 'History opens at its top');
    await page.keyboard.press('Tab');
    await focusIs(page, '.open-conversation', 'Tab to the first conversation');
    await page.keyboard.press('Tab');
    await focusIs(page, '.delete-conversation', 'Tab to its Delete');
    await check(page, found, 'History open');
    await page.keyboard.press('Escape');
    await focusIs(page, opener(width, '.show-conversations'), 'Escape closes History');
    assert.deepEqual(found, {});
    assert.deepEqual(problems, []);
  });

  test(`the top bar at ${width} px stays on screen at the end of a long conversation`, async (t) => {
    const { page, problems } = await openDemo(env, t, { viewport: viewport(width) });
    for (let n = 1; n <= 6; n += 1) {
      await send(page, `What time is it? (${n})`);
      await answer(page, n);
    }
    await until(page, async () => await page.evaluate(() => window.scrollY) > 0, 'the conversation outgrew the window');
    // Narrow, the rest of the bar is in its menu, opened here.
    if (width <= 900) await page.getByRole('button', { name: 'Menu', exact: true }).click();
    for (const name of ['New', 'History', 'Guild', 'World', 'Settings']) {
      const button = page.getByRole('button', { name, exact: true });
      const inView = await button.evaluate((b) => {
        const r = b.getBoundingClientRect();
        return r.top >= 0 && r.bottom <= window.innerHeight && r.left >= 0 && r.right <= window.innerWidth;
      });
      assert.ok(inView, `${name} is on screen`);
    }
    await topBar(page, 'World');
    await page.locator('section.world').waitFor();
    await until(page, () => atTop(page, '#world-heading'), 'from the end of a long conversation, the World opens at its top');
    assert.deepEqual(problems, []);
  });
}

test('at 360 px the phone Inspector keeps focus inside while open, and Escape gives it back', async (t) => {
  const { page, problems } = await openDemo(env, t, { viewport: viewport(360) });
  await send(page, 'What time is it?');
  await answer(page, 1);
  await openByKeyboard(page, 'Inspector');
  const panel = page.locator('.inspector.open');
  await panel.waitFor();
  for (let i = 0; i < 6; i += 1) {
    await page.keyboard.press(i % 2 ? 'Shift+Tab' : 'Tab');
    assert.ok(await page.evaluate(() => document.activeElement.closest('.inspector') !== null),
      `focus stays in the Inspector after ${i + 1} Tab presses, not on ${await focused(page)}`);
  }
  const found = {};
  await check(page, found, 'inspector open');
  assert.deepEqual(found, {});
  await page.keyboard.press('Escape');
  await focusIs(page, '#familiar-menu-button', 'Escape closes it, back to the menu holding its button');
  assert.deepEqual(problems, []);
});

/** A page of the examples, at `width`. */
async function openExample(t, name, width) {
  const context = await env.browser.newContext({ viewport: viewport(width) });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}public/examples/${name}.html`);
  await page.getByRole('status').filter({ hasText: 'Ready' }).waitFor({ timeout: 20_000 });
  return { page, problems };
}

for (const width of WIDTHS) {
  test(`Mossbrook Market at ${width} px: axe finds nothing serious, the board fits, its controls are touch targets`, async (t) => {
    const { page, problems } = await openExample(t, 'market', width);
    const found = {};
    await check(page, found, 'market');
    assert.ok(await overflow(page) <= 0, `the page fits ${width} px: ${await overflow(page)} px over`);
    const board = await page.locator('#board').boundingBox();
    assert.ok(board.x >= 0 && board.x + board.width <= width, `the board fits: ${JSON.stringify(board)}`);
    assert.match(await page.locator('#board').getAttribute('aria-label'), /You at column \d+, row \d+/);
    assert.deepEqual(await smallTargets(page, '#controls'), [], 'every control is at least 44×44 px');
    // Moving keeps the pieces on their cells at any size.
    await page.keyboard.press('ArrowLeft');
    // The piece slides (a CSS transition): wait for its animations to finish.
    await page.locator('.piece[data-name="player"]').evaluate((el) => Promise.all(el.getAnimations().map((a) => a.finished)));
    const player = await page.locator('.piece[data-name="player"]').boundingBox();
    assert.ok(player.x >= board.x && player.x + player.width <= board.x + board.width + 1, 'the player is on the board');
    await check(page, found, 'market after a move');
    assert.deepEqual(found, {});
    assert.deepEqual(problems, []);
  });

  test(`the story copilot at ${width} px: Enter sends, focus goes to the approval and back, a denial is said, the graph fits`, async (t) => {
    const { page, problems } = await openExample(t, 'copilot', width);
    const found = {};
    await check(page, found, 'copilot ready');
    await page.getByLabel('Ask the copilot').focus();
    await page.keyboard.type('Create a variable has_key');
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('alertdialog', { name: 'Approval needed' });
    await dialog.waitFor();
    const asked = await dialog.innerText();
    assert.match(asked, /The copilot wants to create variable: /, 'the call in words');
    for (const part of ['name has_key', 'type boolean', 'initial false']) assert.ok(asked.includes(part), `${part} in ${asked}`);
    assert.doesNotMatch(asked, /[{}"]/, 'no raw JSON');
    await focusIs(page, '#approve', 'the approval takes focus');
    await check(page, found, 'copilot approval');
    await page.keyboard.press('Tab');
    await focusIs(page, '#deny', 'Tab to Deny');
    await page.keyboard.press('Enter');
    await page.getByRole('status').filter({ hasText: 'Ready' }).waitFor({ timeout: 20_000 });
    await focusLands(page, '#prompt', 'focus back in the request box after the decision');
    const said = await page.locator('#answer').innerText();
    assert.match(said, /^Not done: I did not create the variable has_key, because you declined it/);
    assert.doesNotMatch(said, /Created the variable/);
    assert.deepEqual(await page.evaluate(() => window.copilot.graph.variables), [], 'nothing was created');

    // A branching dialog drawn: the graph scrolls in its own box, the page does not widen.
    await page.keyboard.type('Build a branching dialog: Elena greets the player, and if has_key is true she opens the gate, otherwise she sends them away.');
    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await focusIs(page, '#approve', 'the approval takes focus');
    await page.keyboard.press('Enter');
    await page.locator('#answer', { hasText: 'The graph checks out.' }).waitFor({ timeout: 20_000 });
    await focusLands(page, '#prompt', 'focus back after approving');
    assert.ok(await overflow(page) <= 0, `the page fits ${width} px: ${await overflow(page)} px over`);
    await check(page, found, 'copilot with a graph');
    assert.deepEqual(found, {});
    assert.deepEqual(problems, []);
  });
}
