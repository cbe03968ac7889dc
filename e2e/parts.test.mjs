// The demo's parts (issue 45): the World, the Guild and Settings are each their own
// wasm module (scripts/demo-wasm.sh), fetched the first time the part is opened, or
// sooner when its button is hovered or focused; the first load carries none of them.
// A part whose module cannot be fetched says so where it would be, and opens when asked
// again once the network is back, the chat untouched meanwhile.
import assert from 'node:assert/strict';
import { test, useDist, openDemo, ask, settled } from './harness.mjs';

const env = useDist();

/** The wasm modules `page` has fetched so far, by file name. */
const modules = (page) => page.evaluate(() => performance.getEntriesByType('resource')
  .map((e) => new URL(e.name).pathname.slice(1))
  .filter((name) => name.endsWith('.wasm')));

const parts = [
  ['World', 'button.show-world', 'section.world h2', 'split_world.wasm'],
  ['Guild', 'button.show-guild', 'section.guild h2', 'split_guild.wasm'],
  ['Settings', 'button.show-settings', '#settings-heading', 'split_settings.wasm'],
];

test('the first load fetches the chat\'s module alone; each part\'s module comes when the part is opened', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await settled(page);
  assert.deepEqual(await modules(page), ['familiar-demo_bg.wasm'], 'no part is in the first load');
  for (const [name, button, heading, module] of parts) {
    await page.click(button);
    await page.locator(heading).waitFor();
    assert.ok((await modules(page)).includes(module), `opening the ${name} fetched ${module}`);
    await page.click(button);
    await page.locator(heading).waitFor({ state: 'detached' });
  }
  // Opened again, a part's module is not fetched again.
  const before = (await modules(page)).length;
  await page.click('button.show-world');
  await page.locator('section.world h2').waitFor();
  assert.equal((await modules(page)).length, before, 'the World\'s module was fetched once');
  assert.deepEqual(problems, []);
});

test('hovering or focusing a part\'s button fetches its module before the click', async (t) => {
  const { page, problems } = await openDemo(env, t);
  await page.hover('button.show-guild');
  await page.waitForFunction(() => performance.getEntriesByType('resource')
    .some((e) => e.name.endsWith('/split_guild.wasm') && e.responseEnd > 0));
  await page.focus('button.show-world');
  await page.waitForFunction(() => performance.getEntriesByType('resource')
    .some((e) => e.name.endsWith('/split_world.wasm') && e.responseEnd > 0));
  await page.click('button.show-world');
  await page.locator('section.world h2').waitFor();
  assert.deepEqual(problems, []);
});

test('a part whose module cannot be fetched says so, the chat goes on, and it opens once the network is back', async (t) => {
  const { page, problems } = await openDemo(env, t);
  let blocked = true;
  await page.route('**/split_world.wasm', (route) => (blocked ? route.abort('internetdisconnected') : route.continue()));
  await page.click('button.show-world');
  const alert = page.locator('.part-error[role="alert"]');
  await alert.waitFor();
  assert.match(await alert.innerText(), /The World could not be loaded/);
  // The chat is untouched by the failure.
  assert.match(await ask(page, 'What time is it?'), /\d{1,2}:\d{2}/);
  blocked = false;
  await alert.getByRole('button', { name: 'try again' }).click();
  await page.locator('section.world h2').waitFor();
  assert.equal(await alert.count(), 0, 'the error is gone once the World is open');
  // The failed fetch is the one console error the browser itself logs.
  assert.deepEqual(problems.filter((p) => !/split_world\.wasm|Failed to fetch|ERR_INTERNET_DISCONNECTED/.test(p)), []);
});
