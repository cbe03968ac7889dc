// The story copilot, public/examples/copilot.html, as a narrative designer meets it in
// headless Chromium on the release build: a Familiar agent under the supervisor, the
// page's own offline planner as its model, and the story graph answered by the page
// over a message port. Driven through the page's controls and read from the screen;
// `window.copilot.graph` (the page's own state) is read to check ids.
import assert from 'node:assert/strict';
import { test, artifacts, useDist, watch } from './harness.mjs';

const env = useDist();
const PAGE = 'public/examples/copilot.html';
const BRANCHING = 'Build a branching dialog: Elena greets the player, and if has_key is true she opens the gate, otherwise she sends them away.';

async function openCopilot(t) {
  const context = await env.browser.newContext({ viewport: { width: 1400, height: 1000 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}${PAGE}`);
  await ready(page);
  return { page, problems };
}

const ready = (page) => page.getByRole('status').filter({ hasText: 'Ready' }).waitFor({ timeout: 20_000 });

async function ask(page, text) {
  await page.getByLabel('Ask the copilot').fill(text);
  await page.getByRole('button', { name: 'Send', exact: true }).click();
}

const texts = (page, selector) => page.locator(selector).allTextContents();

/** What the graph view draws: nodes by type, edges with their labels. */
async function drawn(page) {
  const nodes = await page.locator('#graph .node').evaluateAll((gs) => gs.map((g) => g.dataset.type));
  const edges = await page.locator('#graph .edge').evaluateAll((gs) => gs.map((g) => `${g.dataset.from}>${g.dataset.to}:${g.dataset.label}`));
  return { nodes: nodes.sort(), edges };
}

/** Approves the call the copilot asks about, once it asks; returns once decided. */
async function approve(page, what) {
  const dialog = page.getByRole('alertdialog', { name: 'Approval needed' });
  await dialog.waitFor();
  const question = await dialog.textContent();
  assert.match(question, what);
  await dialog.getByRole('button', { name: 'Approve', exact: true }).click();
  // Decided once it is hidden, or the next call (other arguments) is asked.
  await page.waitForFunction((before) => {
    const box = document.getElementById('approval');
    return box.hidden || box.textContent !== before;
  }, question);
  return question;
}

test('the copilot plans a branching dialog, asks before creating the variable, and draws three dialog nodes, a condition and its branches; a reload keeps the graph', async (t) => {
  const { page, problems } = await openCopilot(t);
  await ask(page, BRANCHING);
  // Paused inside the plan: the plan is on screen, round 1 is executing, and the
  // variable waits for the designer.
  const dialog = page.getByRole('alertdialog', { name: 'Approval needed' });
  await dialog.waitFor();
  assert.equal((await texts(page, '#plan li')).length, 7);
  assert.match(await page.locator('#stage').textContent(), /Executing round 1 of at most 2 \(7 tasks\)/);
  assert.deepEqual(await texts(page, '#variables li'), [], 'nothing is created before the approval');
  await page.screenshot({ path: `${artifacts}/copilot-approval.png` });
  await approve(page, /create variable: .*has_key/);
  await ready(page);

  assert.match(await page.locator('#answer').textContent(), /Built Elena's branching dialog: a greeting, a condition on has_key, and a line for each branch\. The graph checks out\./);
  assert.match(await page.locator('#stage').textContent(), /^Done/);
  const activity = await texts(page, '#activity li');
  for (const stage of ['Analysing', 'complex', 'Plan of 7 tasks', 'Executing round 1', 'Checking the result', 'Done']) {
    assert.ok(activity.some((line) => line.includes(stage)), `the supervisor told "${stage}": ${activity.join(' | ')}`);
  }
  const graph = await drawn(page);
  assert.deepEqual(graph.nodes, ['condition', 'dialog', 'dialog', 'dialog']);
  const { nodes } = await page.evaluate(() => window.copilot.graph);
  const [greeting, condition, yes, no] = nodes.map((n) => n.id);
  assert.deepEqual(graph.edges, [`${greeting}>${condition}:`, `${condition}>${yes}:true`, `${condition}>${no}:false`]);
  assert.equal(nodes[2].text, 'Elena opens the gate.');
  assert.equal(nodes[3].text, 'Elena sends them away.');
  assert.deepEqual(await texts(page, '#variables li'), ['has_key: boolean = false']);
  assert.deepEqual(await texts(page, '#characters li'), ['Elena (c1)']);
  assert.deepEqual(await texts(page, '#problems li'), ['The graph checks out.']);
  await page.screenshot({ path: `${artifacts}/copilot-graph.png` });

  await page.reload();
  await ready(page);
  assert.deepEqual(await drawn(page), graph);
  assert.deepEqual(await texts(page, '#variables li'), ['has_key: boolean = false']);
  assert.match(await page.locator('#answer').textContent(), /Built Elena's branching dialog/);
  assert.ok(await page.locator('#resume').isHidden(), 'a finished plan offers nothing to resume');
  assert.deepEqual(problems, []);
});

test('a host tool that errors is seen by the model, which recovers with what the error told it', async (t) => {
  const { page, problems } = await openCopilot(t);
  // A simple request first: Elena exists before the plan asks for her.
  await ask(page, 'Add a character Elena');
  await ready(page);
  assert.match(await page.locator('#answer').textContent(), /Created Elena \(c1\)\./);
  assert.ok((await texts(page, '#activity li')).some((l) => l.includes('The request is simple')));

  await ask(page, BRANCHING);
  await approve(page, /has_key/);
  await ready(page);
  const activity = await texts(page, '#activity li');
  assert.ok(
    activity.includes("✗ create character: `create_character` failed: a character named Elena already exists (id c1)"),
    `the page's error reached the run: ${activity.join(' | ')}`,
  );
  assert.match(await page.locator('#answer').textContent(), /\(Elena already existed \(c1\); I used that one\.\) The graph checks out\./);
  // The id the error gave is the one the dialog nodes speak with; no second Elena.
  assert.deepEqual(await texts(page, '#characters li'), ['Elena (c1)']);
  const { nodes } = await page.evaluate(() => window.copilot.graph);
  assert.deepEqual(nodes.filter((n) => n.type === 'dialog').map((n) => n.character), ['c1', 'c1', 'c1']);
  assert.equal((await drawn(page)).edges.length, 3);
  assert.deepEqual(problems, []);
});

test('a reload mid-plan offers Resume, and the resumed plan finishes without creating anything twice', async (t) => {
  const { page, problems } = await openCopilot(t);
  await ask(page, BRANCHING);
  await page.getByRole('alertdialog', { name: 'Approval needed' }).waitFor();
  assert.deepEqual(await texts(page, '#characters li'), ['Elena (c1)'], 'Elena was created before the pause');

  await page.reload();
  await ready(page);
  const resume = page.getByRole('button', { name: 'Resume', exact: true });
  await resume.waitFor();
  await resume.click();
  // The approval the reload cut off is asked again; the character is not created again.
  await approve(page, /has_key/);
  // A run read back from storage is data, not trusted: each later action of it asks
  // the designer too (README, Untrusted text). The designer approves them all.
  const asked = [];
  const status = page.getByRole('status');
  while (!(await status.textContent()).startsWith('Ready')) {
    const dialog = page.getByRole('alertdialog', { name: 'Approval needed' });
    if (await dialog.isVisible()) {
      const question = await approve(page, /wants to/);
      asked.push(question.match(/wants to ([a-z ]+):/)[1]);
    } else {
      await page.waitForTimeout(50);
    }
  }
  assert.deepEqual(asked, [
    'create dialog node', 'create condition node', 'create dialog node', 'create dialog node',
    'create connection', 'create connection', 'create connection',
  ]);
  assert.match(await page.locator('#answer').textContent(), /Built Elena's branching dialog/);
  assert.deepEqual(await texts(page, '#characters li'), ['Elena (c1)']);
  assert.deepEqual(await texts(page, '#variables li'), ['has_key: boolean = false']);
  const graph = await drawn(page);
  assert.deepEqual(graph.nodes, ['condition', 'dialog', 'dialog', 'dialog']);
  assert.equal(graph.edges.length, 3);
  const activity = await texts(page, '#activity li');
  const after = activity.slice(activity.indexOf('Resuming the plan a reload cut off'));
  assert.ok(after.length > 1 && !after.some((l) => l.includes('Plan of')), `the plan is not made again: ${after.join(' | ')}`);
  assert.equal(after.filter((l) => l.startsWith('→ create character')).length, 0, 'Elena is not asked for again');
  // The one console line allowed: the agent reports the interrupted run as it starts.
  assert.deepEqual(problems.filter((p) => !p.includes('familiar: Interrupted')), []);
});

const WORKED = 'Create a dialog where Elena greets the player';

test("the seed's worked example offline, step by step: analysed SIMPLE, planned, carried out through the host's function_call and function_result in the current scene, decided, answered", async (t) => {
  const { page, problems } = await openCopilot(t);
  // The seed's client is in scene 5, and Elena (its character 3) exists.
  await page.getByLabel('Current scene').selectOption('5');
  await ask(page, 'Add a character Elena');
  await ready(page);
  assert.match(await page.locator('#answer').textContent(), /^Created Elena \(c1\)\.$/);

  await ask(page, WORKED);
  await ready(page);
  // Every stage the seed's trace names, in its order, and nothing else.
  assert.deepEqual(await texts(page, '#activity li'), [
    `You: ${WORKED}`,
    'Supervisor: Analysing the request…',
    'Supervisor: The request is simple: one step',
    'Supervisor: Planning…',
    'Supervisor: Plan of 1 task',
    'Supervisor: Executing round 1 of at most 2 (1 task)',
    '→ create dialog node: Elena, lines “Hello, traveller! Welcome.”, scene 5',
    '✓ create dialog node: id n2, type dialog',
    'Supervisor: Checking the result…',
    'Supervisor: Done: every task is done',
  ]);
  assert.deepEqual(await texts(page, '#plan li'), [WORKED]);
  assert.equal(await page.locator('#answer').textContent(), 'Created dialog node for Elena.');
  // Through the host: one function_call out, one function_result back, by request id.
  const wire = await page.evaluate(() => window.copilot.wire);
  const [call, result] = wire.slice(-2);
  assert.match(call.request_id, /~[0-9a-f]{16}$/);
  assert.deepEqual(call, {
    type: 'function_call', request_id: call.request_id, function: 'create_dialog_node',
    arguments: { character_id: 'c1', lines: ['Hello, traveller! Welcome.'], scene_id: 5 },
  });
  assert.deepEqual(result, { type: 'function_result', request_id: call.request_id, success: true, result: { id: 'n2', type: 'dialog' } });
  assert.equal(wire.length, 4, 'Elena, then the dialog node: a call and a result each');
  await page.getByText('Messages with the host').click();
  assert.equal((await texts(page, '#wire li')).length, 4);
  // The node is Elena's, in scene 5, and drawn there.
  const { nodes } = await page.evaluate(() => window.copilot.graph);
  assert.deepEqual(nodes, [{ id: 'n2', type: 'dialog', scene: 5, character: 'c1', speaker: 'Elena', text: 'Hello, traveller! Welcome.' }]);
  assert.equal(await page.locator('#graph .node[data-scene="5"]').count(), 1);
  await page.screenshot({ path: `${artifacts}/copilot-worked-example.png` });
  assert.deepEqual(problems, []);
});

test('the offline planner reads a request it was never given as an example: a new character, a quoted line, narration, connected in order in the scene chosen', async (t) => {
  const { page, problems } = await openCopilot(t);
  await page.getByLabel('Current scene').selectOption('2');
  await ask(page, 'Add a character Marcus, then write a dialog where Marcus says "Who goes there?" and narrate: The gate creaks open.');
  await ready(page);
  assert.deepEqual(await texts(page, '#plan li'), [
    'Add a character Marcus',
    'Write a dialog where Marcus says "Who goes there?"',
    'Narrate: The gate creaks open',
    'Connect the new nodes in order',
  ]);
  const activity = await texts(page, '#activity li');
  assert.ok(activity.includes('Supervisor: The request is complex: 4 tasks'), activity.join(' | '));
  assert.equal(
    await page.locator('#answer').textContent(),
    'Created Marcus (c1). Created dialog node for Marcus. Created a narration node. Connected them in order (1 connection).',
  );
  const { nodes, connections } = await page.evaluate(() => window.copilot.graph);
  assert.deepEqual(nodes.map((n) => [n.type, n.scene, n.text]), [['dialog', 2, 'Who goes there?'], ['content', 2, 'The gate creaks open']]);
  assert.deepEqual(connections.map((c) => `${c.from}>${c.to}`), [`${nodes[0].id}>${nodes[1].id}`]);
  assert.deepEqual(await texts(page, '#characters li'), ['Marcus (c1)']);
  assert.deepEqual(problems, []);
});
