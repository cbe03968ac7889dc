// Seed 000's world played in the page with no key: the World view fires triggers at
// the agents, the offline world policy plays them through the one engine, and the view
// follows every change. The market check makes penniless Mira work, buy and eat; a
// battle is joined by the loyal and ignored by the disloyal; a reload finds the world
// where it was.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appReady, openDemo, useDist } from './harness.mjs';

const env = useDist();

/** The World panel, opened, its market timer paused (the test fires by hand). */
async function openWorld(page) {
  await page.getByRole('button', { name: 'World', exact: true }).click();
  const world = page.locator('section.world');
  await world.waitFor();
  const pause = world.locator('.pause-market');
  if ((await pause.innerText()) === 'Pause') await pause.click();
  await world.getByText('Market check paused').waitFor();
  return world;
}

async function stats(world, name) {
  const card = world.locator(`.world-agent[data-agent="${name}"]`);
  const read = async (stat) => Number(await card.locator(`dd.${stat}`).innerText());
  return { energy: await read('energy'), gold: await read('gold') };
}

/** Waits until `n` turns have completed. */
async function completed(page, n) {
  await page.locator('.turn[data-status="completed"]').nth(n - 1).waitFor({ timeout: 15_000 });
}

/** The text of every step of turn `i` (from 1), its steps opened. */
async function steps(page, i) {
  const turn = page.locator('.turn').nth(i - 1);
  await turn.locator('.steps-summary').click();
  return turn.locator('.step-list').evaluate((list) => list.textContent);
}

async function waitFor(check, what) {
  for (let i = 0; i < 100; i += 1) {
    if (await check()) return;
    await new Promise((ok) => setTimeout(ok, 100));
  }
  assert.fail(`timed out waiting for ${what}`);
}

test('the market check works, buys and eats; a battle is joined by the loyal and ignored by the disloyal; a reload keeps the world', async (t) => {
  const { page, problems } = await openDemo(env, t);
  let world = await openWorld(page);
  assert.deepEqual(await stats(world, 'Mira'), { energy: 45, gold: 0 });
  const dotty = world.locator('.world-agent[data-agent="Dotty"]');
  await waitFor(async () => /Lantern Guild: sentiment 70, trust 80, loyalty 85/
    .test(await dotty.locator('.relationships').innerText()), "Dotty's standing toward her faction");

  await world.locator('.world-agent[data-agent="Mira"] .market-check').click();
  await completed(page, 1);
  const market = await steps(page, 1);
  const order = ['buy_item', 'do_work', 'buy_item', 'consume_item'];
  let at = 0;
  for (const tool of order) {
    at = market.indexOf(tool, at);
    assert.ok(at >= 0, `${tool} in order in the steps: ${market}`);
    at += tool.length;
  }
  await waitFor(async () => (await stats(world, 'Mira')).energy === 26, "Mira's energy after eating");
  // Mining: −20 energy, +50 gold; one loaf: −3 gold, +1 energy.
  assert.deepEqual(await stats(world, 'Mira'), { energy: 26, gold: 47 });
  const changes = await world.locator('.world-changes li').evaluateAll((items) =>
    items.map((li) => li.dataset.tool).reverse());
  assert.deepEqual(changes, order, 'every change logged with its step');
  assert.match(await world.locator('.world-changes li').first().innerText(), /step 4 · consume_item/);

  await world.locator('.battle-starts').click();
  await completed(page, 4);
  assert.match(await steps(page, 2), /join_battle/, 'Dotty, loyal, fights');
  assert.match(await steps(page, 3), /join_battle/, 'Brannoc, loyal to his side, fights');
  const mira = await steps(page, 4);
  assert.match(mira, /ignore_battle/, 'Mira, disloyal, stays out');
  assert.doesNotMatch(mira, /join_battle/);
  await waitFor(async () => (await stats(world, 'Dotty')).energy === 0, "Dotty's energy spent");
  assert.equal((await stats(world, 'Mira')).energy, 26, 'Mira spent nothing');
  const battle = world.locator('.battles');
  await waitFor(async () => /Battle 1 \(active\): 200 – 155/.test(await battle.innerText()), 'the damage dealt');

  await page.reload();
  await appReady(page);
  world = await openWorld(page);
  await waitFor(async () => (await stats(world, 'Mira')).gold === 47, 'the world read back');
  assert.deepEqual(await stats(world, 'Mira'), { energy: 26, gold: 47 });
  assert.equal((await stats(world, 'Dotty')).energy, 0);
  assert.match(await world.locator('.battles').innerText(), /Battle 1 \(active\): 200 – 155/);
  assert.equal(await page.locator('.turn').count(), 4, 'the four runs are in the conversation');
  assert.deepEqual(problems, []);
});
