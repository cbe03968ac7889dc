// WebMCP the other way (issue 59, Publish): a host page creates an agent with
// `webmcp: true` (the full build, dist/) and registers its tools; they are listed in
// `document.modelContext.getTools()` for the browser's own agents. A call made from
// the page's side with `executeTool` (as a browser agent makes it) is a turn of the
// agent's conversation, judged as text another party wrote: the action waits for
// Familiar's approval card, runs once approved, and nothing runs when denied; a
// look-up answers at once. `destroy` takes the tools back. This file launches its own
// Chromium with --enable-features=WebMCP (the harness's has none), on loopback (a
// secure context).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { chromium } from 'playwright-core';
import { launchChromium, serveDist, test, watch } from './harness.mjs';

const KEEP = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Keep</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/main.css"></head>
<body>
  <p>Gate: <output id="gate">closed</output></p>
  <aside id="chat" style="width: 420px"></aside>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    const guard = await createAgent({
      name: 'guard', persist: false, webmcp: true,
      model: { fallback: 'All quiet.', rules: [] },
    });
    window.opened = 0;
    guard.registerTool({
      name: 'open_gate', description: 'Opens the keep gate.', kind: 'action',
      parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
      handler: async ({ reason }) => {
        window.opened += 1;
        document.getElementById('gate').textContent = 'open (' + reason + ')';
        return { gate: 'open' };
      },
    });
    guard.registerTool({
      name: 'look_out', description: 'What the guard sees from the wall.', kind: 'data',
      parameters: { type: 'object', properties: {} },
      handler: async () => ({ seen: 'three goblins' }),
    });
    guard.mount(document.getElementById('chat'));
    window.guard = guard;
    window.tools = async () => (await document.modelContext.getTools()).map((t) => t.name);
    window.run = async (name, input) => {
      const tool = (await document.modelContext.getTools()).find((t) => t.name === name);
      try {
        return { answer: await document.modelContext.executeTool(tool, input) };
      } catch (error) {
        return { error: String(error?.message ?? error) };
      }
    };
  </script>
</body>
</html>`;

const env = {};
before(async () => {
  env.server = await serveDist({ pages: { '/keep.html': KEEP } });
  env.browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync',
      '--enable-features=WebMCP'],
  });
});
after(async () => {
  await env.browser?.close();
  await env.server?.close();
});

async function open(t, browser = env.browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}keep.html`);
  await page.waitForFunction(() => window.guard !== undefined, null, { timeout: 30_000 });
  return { page, problems };
}

const listed = (page, names) => page.waitForFunction(
  (want) => window.tools().then((got) => JSON.stringify(got) === JSON.stringify(want)), names);

test("with webmcp: true the host's tools are in document.modelContext.getTools(), a look-up marked read-only", async (t) => {
  const { page, problems } = await open(t);
  await listed(page, ['look_out', 'open_gate']);
  const tools = await page.evaluate(async () => (await document.modelContext.getTools())
    .map((tool) => [tool.name, tool.annotations?.readOnlyHint ?? null, tool.description, tool.origin === location.origin]));
  assert.deepEqual(tools, [
    ['look_out', true, 'What the guard sees from the wall.', true],
    ['open_gate', false, 'Opens the keep gate.', true],
  ]);
  assert.deepEqual(problems, []);
});

test("a browser agent's call to an action waits on Familiar's approval card and runs once approved", async (t) => {
  const { page, problems } = await open(t);
  await listed(page, ['look_out', 'open_gate']);
  const called = page.evaluate(() => window.run('open_gate', { reason: 'the baker' }));
  const card = page.locator('#chat .approval');
  await card.waitFor();
  assert.equal(await page.evaluate(() => window.opened), 0, 'nothing ran before the person said so');
  assert.match(await card.innerText(), /open_gate/);
  await page.locator('#chat').getByText(/Run the tool .open_gate./).first().waitFor();
  await card.locator('.approve').click();
  assert.deepEqual(await called, { answer: '{"gate":"open"}' });
  assert.equal(await page.locator('#gate').textContent(), 'open (the baker)');
  assert.equal(await page.evaluate(() => window.opened), 1);
  assert.deepEqual(problems, []);
});

test("a browser agent's call denied on the card runs nothing and is rejected, the browser logging the reason", async (t) => {
  const { page, problems } = await open(t);
  await listed(page, ['look_out', 'open_gate']);
  const called = page.evaluate(() => window.run('open_gate', { reason: 'a stranger' }));
  await page.locator('#chat .approval .deny').click();
  const result = await called;
  // A rejection: Chromium hands the caller its own words for it ("the invocation
  // failed") and logs ours.
  assert.ok(result.error && !('answer' in result), JSON.stringify(result));
  assert.equal(await page.evaluate(() => window.opened), 0);
  assert.equal(await page.locator('#gate').textContent(), 'closed');
  // Chromium logs a rejected execute itself; nothing else may complain.
  const [browserSays, ...rest] = problems;
  assert.match(browserSays ?? '', /WebMCP tool execution failed: .*`open_gate` was not run: the person declined it/);
  assert.deepEqual(rest, []);
});

test("a browser agent's look-up runs without a card and answers", async (t) => {
  const { page, problems } = await open(t);
  await listed(page, ['look_out', 'open_gate']);
  assert.deepEqual(await page.evaluate(() => window.run('look_out', {})), { answer: '{"seen":"three goblins"}' });
  assert.equal(await page.locator('#chat .approval').count(), 0);
  assert.deepEqual(problems, []);
});

test('unregisterTool and destroy take the tools back from the model context', async (t) => {
  const { page, problems } = await open(t);
  await listed(page, ['look_out', 'open_gate']);
  await page.evaluate(() => window.guard.unregisterTool('look_out'));
  await listed(page, ['open_gate']);
  await page.evaluate(() => window.guard.destroy());
  await listed(page, []);
  assert.deepEqual(problems, []);
});

test('without WebMCP the agent is created as before and publishes nothing', async (t) => {
  const browser = await launchChromium();
  t.after(() => browser.close());
  const { page, problems } = await open(t, browser);
  assert.equal(await page.evaluate(() => 'modelContext' in document), false);
  assert.equal(await page.evaluate(() => typeof window.guard.send), 'function');
  assert.deepEqual(problems, []);
});
