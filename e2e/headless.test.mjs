// The headless runtime (pkg/, built by scripts/headless.sh: no Leptos) runs, not only
// type-checks: a plain game page loads it, creates an agent with the rules model, gives
// it a host tool, fires a game event, saves and reloads its state, and is told plainly
// that this build has no widget to mount. It is the lean runtime (no character
// workflows, world, store or Supabase): a config asking for them is refused by name.
import assert from 'node:assert/strict';
import { test, useDist, watch } from './harness.mjs';

const game = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Headless keep</title><link rel="icon" href="data:,"></head>
<body>
  <p>Gate: <output id="gate">closed</output></p>
  <script type="module">
    import init, { createAgent } from '/pkg/familiar.js';
    await init({ module_or_path: '/pkg/familiar_bg.wasm' });
    const calls = [];
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
      handler: async ({ reason }) => {
        calls.push(reason);
        document.getElementById('gate').textContent = 'barred';
        return { gate: 'barred' };
      },
    });
    const outcome = await guard.trigger({
      kind: 'raid', event: 'raid.started', actor: { name: 'Guard' },
      subject: 'Goblins are at the gate', allowedActions: ['close_gate'],
    });
    const quiet = await guard.send('anything new?');
    const saved = guard.saveState();
    const again = await createAgent({ name: 'guard', persist: false, model: 'rules' });
    again.loadState(saved);
    let mount;
    try {
      guard.mount(document.body);
      mount = 'mounted';
    } catch (error) {
      mount = String(error?.message ?? error);
    }
    // What this build leaves out is refused by name, with the build that has it.
    const refused = [];
    for (const config of [
      { character: '/characters/dotty.json' },
      { builtins: ['memory'] },
      { builtins: ['page'] },
      { store: { supabaseUrl: 'https://example.supabase.co', anonKey: 'sb_publishable_0123456789abcdefghij' } },
    ]) {
      try {
        await createAgent({ name: 'lacking', persist: false, model: 'rules', ...config });
        refused.push('created');
      } catch (error) {
        refused.push(String(error?.message ?? error));
      }
    }
    window.result = {
      refused,
      outcome: outcome.type,
      quiet: quiet.text,
      calls,
      turns: again.saveState().conversations.map((c) => c.conversation.interactions.length),
      mount,
    };
  </script>
</body>
</html>`;

const env = useDist({ pages: { '/headless.html': game } });

test('the headless build runs a game event, a chat message and a saved state in a plain page', async (t) => {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}headless.html`);
  await page.waitForFunction(() => window.result !== undefined);
  const result = await page.evaluate(() => window.result);
  assert.equal(result.outcome, 'goal_complete');
  assert.equal(result.quiet, 'All quiet.');
  assert.deepEqual(result.calls, ['goblins'], 'the host tool ran once, with its arguments');
  assert.equal(await page.locator('#gate').textContent(), 'barred');
  assert.deepEqual(result.turns, [2], 'the reloaded agent holds both turns');
  assert.match(result.mount, /headless build/, 'mount says this build has no widget');
  const names = ['config.character', 'config.builtins', 'config.builtins', 'config.store'];
  assert.equal(result.refused.length, names.length);
  names.forEach((name, i) => {
    const refusal = result.refused[i];
    assert.ok(refusal.startsWith(name), refusal);
    assert.ok(refusal.includes('lean runtime') && refusal.includes('full build (dist/'), refusal);
  });
  assert.deepEqual(problems, []);
});
