// The JavaScript API from a plain page with its own script and no framework: a game
// creates an NPC agent with the rules model, gives it a tool that changes the page,
// sends it a game event, shows what happened; then mounts the chat widget.
import assert from 'node:assert/strict';
import { test, artifacts, useDist, watch } from './harness.mjs';

const game = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Goblin Keep</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/main.css">
</head>
<body>
  <h1>Goblin Keep</h1>
  <p>Gate: <output id="gate">closed</output></p>
  <ol id="log"></ol>
  <button id="raid" disabled>Goblins at the gate!</button>
  <aside id="chat" style="width: 360px"></aside>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    const log = (text) => {
      const li = document.createElement('li');
      li.textContent = text;
      document.getElementById('log').append(li);
    };
    const guard = await createAgent({
      name: 'guard',
      instructions: 'You guard the keep.',
      persist: false,
      model: { fallback: 'All quiet.', rules: [
        { keywords: ['goblin', 'goblins'], tool: 'close_gate', arguments: { reason: 'goblins' }, answer: 'Gate {gate}.' },
      ] },
    });
    guard.registerTool({
      name: 'close_gate',
      description: 'Closes or bars the keep gate.',
      kind: 'action',
      parameters: { type: 'object', properties: { reason: { type: 'string' } }, required: ['reason'] },
      handler: async ({ reason }, { requestId }) => {
        document.getElementById('gate').textContent = 'barred';
        log('gate barred because of ' + reason + ' (' + requestId.split('-')[0] + ')');
        return { gate: 'barred' };
      },
    });
    guard.on('tool_started', (e) => log('tool: ' + e.call.name));
    guard.on('done', (e) => log('done: ' + e.text));
    window.guard = guard;
    const raid = document.getElementById('raid');
    raid.disabled = false;
    raid.addEventListener('click', async () => {
      const outcome = await guard.trigger({
        kind: 'raid', event: 'raid.started', actor: { name: 'Guard' },
        subject: 'Goblins are at the gate', allowedActions: ['close_gate'],
      });
      log('outcome: ' + outcome.type);
    });
  </script>
</body>
</html>`;

const env = useDist({ pages: { '/keep.html': game, '/shop.html': shopPage() } });

test('a plain page creates an agent, gives it a tool, sends a game event and shows the change', async (t) => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}keep.html`);
  await page.locator('#raid:enabled').waitFor();
  assert.equal(await page.locator('.familiar-app').count(), 0, 'an API page gets no widget it did not ask for');

  await page.click('#raid');
  await page.locator('#log li', { hasText: 'outcome:' }).waitFor();
  assert.equal(await page.locator('#gate').textContent(), 'barred');
  const lines = await page.locator('#log li').allTextContents();
  assert.ok(lines.includes('tool: close_gate'), lines.join(' | '));
  assert.ok(lines.some((l) => l.startsWith('gate barred because of goblins (familiar.agent.guard')), lines.join(' | '));
  assert.ok(lines.includes('outcome: goal_complete'), lines.join(' | '));
  assert.ok(lines.some((l) => l.startsWith('done: ')), lines.join(' | '));

  // The same agent as a chat widget in the page's own element.
  await page.evaluate(() => window.guard.mount(document.getElementById('chat')));
  const chat = page.locator('#chat');
  await chat.getByText('Goblins are at the gate').waitFor();
  await chat.getByRole('combobox', { name: 'Message' }).fill('more goblins?');
  await chat.getByRole('combobox', { name: 'Message' }).press('Enter');
  await chat.locator('.turn').nth(1).locator('.message-assistant', { hasText: 'Gate barred.' }).waitFor();
  await page.screenshot({ path: `${artifacts}/api-keep.png` });
  await page.evaluate(() => window.guard.unmount());
  assert.equal(await page.locator('#chat .familiar-app').count(), 0);
  assert.deepEqual(problems, []);
});

// Seed 004's composite: the shop's tools join the guide's list; its action asks on
// the same card as the guide's own would, runs in the page once approved, and its
// steps show nested under @shop. Each agent perceives through its own environment,
// recorded in the turn's observe step; the routes are listed with the way back.
function shopPage() {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Shop</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/main.css"></head>
<body>
  <p>Bought: <output id="bought">nothing</output></p>
  <aside id="chat" style="width: 420px"></aside>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    const guide = await createAgent({
      name: 'guide',
      persist: false,
      model: { fallback: 'I am the guide.', rules: [
        { keywords: ['buy'], tool: 'buy_item', arguments: { item: 'sword' }, answer: 'Bought: {bought}.' },
      ] },
      environment: () => 'the town square at noon',
      agents: [{
        name: 'shop', description: 'Runs the shop', tool: 'tools', tools: ['buy_item'],
        environment: () => 'the shop: two swords on the wall',
      }],
    });
    guide.registerTool({
      name: 'buy_item',
      description: 'Buys an item.',
      kind: 'action',
      approval: 'ask',
      parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
      handler: async ({ item }) => {
        document.getElementById('bought').textContent = item;
        return { bought: 'a ' + item };
      },
    });
    window.approvals = [];
    guide.on('approval_needed', (e) => window.approvals.push({ tool: e.call.name, agent: e.agent }));
    guide.mount(document.getElementById('chat'));
    window.guide = guide;
  </script>
</body>
</html>`;
}

test("a composite agent's sub-agent action asks for approval, runs once approved, and its steps show nested under it", async (t) => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}shop.html`);
  await page.waitForFunction(() => window.guide !== undefined);
  assert.deepEqual(await page.evaluate(() => window.guide.commands()), [
    { value: '@shop', label: 'Runs the shop' },
    { value: '@guide', label: 'Back to @guide, the main agent' },
  ]);

  const chat = page.locator('#chat');
  const composer = chat.getByRole('combobox', { name: 'Message' });
  await composer.fill('buy me a sword');
  await composer.press('Enter');
  await chat.locator('.approval .approve').waitFor();
  assert.equal(await page.locator('#bought').textContent(), 'nothing', 'nothing bought before the person says so');
  assert.deepEqual(await page.evaluate(() => window.approvals), [{ tool: 'buy_item', agent: 'shop' }]);
  await chat.locator('.approval .approve').click();
  await chat.locator('.message-assistant', { hasText: 'Bought: a sword.' }).waitFor();
  assert.equal(await page.locator('#bought').textContent(), 'sword');

  await chat.locator('.turn').first().locator('.steps-summary').click();
  const nested = chat.locator('.step-agent[data-agent="shop"]');
  await nested.first().waitFor();
  assert.equal(await nested.count(), 1, 'one run of the shop’s steps');
  assert.equal(await nested.locator('> .step-label').textContent(), '@shop');
  assert.deepEqual(await nested.locator('.step-nested > li').evaluateAll((lis) => lis.map((li) => li.className)), [
    'step step-approval',
    'step step-tool',
  ]);
  assert.equal(await nested.locator('.step-tool .tool-name').textContent(), 'buy_item');
  assert.equal(await chat.locator('.step-list:not(.step-nested) > .step-tool').count(), 0, 'no shop step outside its nest');
  assert.match(await chat.locator('.step-observe').textContent(), /perceived: the town square at noon/);

  // The sub-agent's own environment, and the saved record of both turns.
  await composer.fill('@shop what do you see?');
  await composer.press('Enter');
  await chat.locator('.turn').nth(1).locator('.message-assistant').waitFor();
  // The answer's box shows as the turn starts; its record is read once the turn is done.
  await page.waitForFunction(() => window.guide.conversation().interactions[1]?.status === 'Completed');
  const turns = await page.evaluate(() => window.guide.conversation().interactions);
  assert.deepEqual(turns.map((turn) => [turn.agent, turn.steps[0].environment?.text]), [
    ['guide', 'the town square at noon'],
    ['shop', 'the shop: two swords on the wall'],
  ]);
  const tagged = turns[0].steps.filter((s) => s.agent).map((s) => `${s.type}:${s.agent}`);
  assert.deepEqual(tagged, ['approval:shop', 'tool_call:shop']);
  await page.screenshot({ path: `${artifacts}/api-composite.png` });
  assert.deepEqual(problems, []);
});
