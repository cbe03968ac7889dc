// Usage and cost (issue 60) on the full build (dist/), from a host page's agent with its
// chat mounted: the real LiteLLM proxy the test command runs (FAMILIAR_LITELLM_URL;
// tests/servers/litellm, its scripted provider counting 5 prompt and 7 completion
// tokens) reports usage in its stream's last chunk, which each turn shows under its
// answer, priced at createAgent's `prices`, with the conversation's total, and which
// the API reports in `usage` updates and `agent.usage()`. A conversation budget stops
// the next turn in words, in the chat and as the outcome `send` resolves to, and the
// model is not asked. SmolLM2 (the local model, dist/models) counts its own tokens and
// costs nothing. The demo's Settings set the proxy model's price and a conversation
// budget, which its chat is held to. The proxy is another origin: its requests are the
// only ones allowed off the page's.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test, appReady, artifacts, dist, useDist, watch } from './harness.mjs';

const LITELLM = process.env.FAMILIAR_LITELLM_URL;
// The browser's token of tests/servers/litellm/browser_auth.py.
const TOKEN = 'familiar-proxy-token-7c1d9e2b4a6f8e3d5c0b';
const models = join(dist, 'models');
const weights = existsSync(models) ? readdirSync(models).find((f) => f.endsWith('.gguf')) : undefined;

const host = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Usage</title><link rel="icon" href="data:,"><link rel="stylesheet" href="/main.css"></head>
<body>
  <aside id="chat" style="width: 420px"></aside>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    window.usages = [];
    window.make = async (config) => {
      const agent = await createAgent({ name: 'clerk', persist: false, instructions: 'Answer briefly.', ...config });
      agent.on('usage', (u) => window.usages.push(u));
      agent.mount(document.getElementById('chat'));
      window.agent = agent;
      return true;
    };
    document.title = 'ready';
  </script>
</body>
</html>`;

const env = useDist({ pages: { '/usage.html': host } });

async function open(t) {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}usage.html`);
  await page.waitForFunction(() => document.title === 'ready');
  // The proxy is the one other origin this page talks to.
  const offOrigin = (p) => LITELLM && p.startsWith(`request off the page's origin: ${LITELLM}`);
  return { page, problems: () => problems.filter((p) => !offOrigin(p)) };
}

function proxy(extra = {}) {
  return {
    model: { url: `${LITELLM}/v1`, model: 'scripted', header: { name: 'X-Proxy-Token', value: TOKEN } },
    prices: { scripted: { input: 2, output: 8 } },
    ...extra,
  };
}

async function say(page, text) {
  const box = page.locator('#chat').getByRole('combobox', { name: 'Message' });
  await box.fill(text);
  await box.press('Enter');
}

test('usage from the real LiteLLM proxy is shown per turn, priced, and reported by the API', { skip: LITELLM ? false : 'FAMILIAR_LITELLM_URL is not set (scripts/test.sh runs LiteLLM)' }, async (t) => {
  const { page, problems } = await open(t);
  await page.evaluate((c) => window.make(c), proxy());
  await say(page, 'hello there');
  const turn = page.locator('#chat .turn').first();
  await turn.locator('.message-assistant', { hasText: 'scripted reply' }).waitFor();
  // 5 × $2 + 7 × $8 per million tokens.
  await turn.locator('.turn-usage', { hasText: '12 tokens · $0.0001' }).waitFor();
  assert.equal(await turn.locator('.turn-usage').textContent(), 'This turn used 12 tokens · $0.0001');
  await say(page, 'and again');
  await page.locator('#chat .turn').nth(1).locator('.turn-usage', { hasText: '12 tokens' }).waitFor();
  assert.equal(await page.locator('#chat .conversation-usage').textContent(), 'This conversation: 24 tokens · $0.0001');
  const usages = await page.evaluate(() => window.usages);
  assert.equal(usages.length, 2, JSON.stringify(usages));
  assert.deepEqual(
    usages.map((u) => [u.event, u.agent, u.call.prompt_tokens, u.call.completion_tokens, u.total.calls]),
    [['usage', 'clerk', 5, 7, 1], ['usage', 'clerk', 5, 7, 1]],
  );
  assert.ok(Math.abs(usages[0].call.cost - 0.000066) < 1e-12, String(usages[0].call.cost));
  const report = await page.evaluate(() => window.agent.usage());
  assert.equal(report.conversation.calls, 2);
  assert.equal(report.conversation.prompt_tokens + report.conversation.completion_tokens, 24);
  assert.equal(report.agents.clerk.calls, 2);
  assert.equal(report.today.calls, 2);
  const turns = await page.evaluate(() => window.agent.conversation().interactions.map((i) => i.usage.completion_tokens));
  assert.deepEqual(turns, [7, 7], 'each saved turn carries its own');
  await page.screenshot({ path: `${artifacts}/usage-litellm.png` });
  assert.deepEqual(problems(), []);
});

test('a conversation budget stops the next turn in words, in the chat and through the API, without asking the model', { skip: LITELLM ? false : 'FAMILIAR_LITELLM_URL is not set (scripts/test.sh runs LiteLLM)' }, async (t) => {
  const { page, problems } = await open(t);
  await page.evaluate((c) => window.make(c), proxy({ budgets: { conversation: { tokens: 12 } } }));
  let asked = 0;
  page.on('request', (r) => r.url().includes('/chat/completions') && asked++);
  const first = await page.evaluate(() => window.agent.send('first'));
  assert.equal(first.type, 'answered', JSON.stringify(first));
  const words = "Stopped: this conversation's budget of 12 tokens is reached (12 tokens used). Nothing more was asked of the model.";
  const second = await page.evaluate(() => window.agent.send('second'));
  assert.deepEqual(second, { type: 'budget_reached', reason: words });
  assert.equal(asked, 1, 'the second turn never reached the proxy');
  // In the chat: the message kept, the stop said in words, not an error.
  const turn = page.locator('#chat .turn').nth(1);
  await turn.locator('.message-user', { hasText: 'second' }).waitFor();
  await turn.getByText(words.replace(/\.$/, ''), { exact: false }).first().waitFor();
  // Said as a stop's note, not as the model's answer.
  assert.match(await turn.locator('.answer-stopped').textContent(), /budget of 12 tokens is reached/);
  assert.equal(await turn.locator('.message-failed').count(), 0);
  assert.equal(await turn.getAttribute('data-status'), 'aborted');
  // Through a person's message too.
  await say(page, 'third');
  await page.locator('#chat .turn').nth(2).getByText("budget of 12 tokens is reached").first().waitFor();
  assert.equal(asked, 1);
  // Raised, the conversation goes on.
  await page.evaluate(() => window.agent.setBudgets({ conversation: { tokens: 1000 } }));
  const fourth = await page.evaluate(() => window.agent.send('fourth'));
  assert.equal(fourth.type, 'answered');
  await page.screenshot({ path: `${artifacts}/usage-budget.png` });
  assert.deepEqual(problems(), []);
});

test('SmolLM2 in the page counts its own tokens, shown per turn and free', { skip: weights ? false : 'no GGUF in dist/models (scripts/setup.sh test installs SmolLM2)', timeout: 600_000 }, async (t) => {
  const { page, problems } = await open(t);
  await page.evaluate((url) => window.make({ model: { local: { url } } }), `/models/${weights}`);
  await say(page, 'Say hello.');
  const usage = page.locator('#chat .turn').first().locator('.turn-usage');
  await usage.waitFor({ timeout: 540_000 });
  const text = await usage.textContent();
  assert.match(text, /^This turn used [\d,]+ tokens · free$/);
  const [u] = await page.evaluate(() => window.usages);
  assert.ok(u.call.prompt_tokens > 10 && u.call.completion_tokens > 0, JSON.stringify(u));
  assert.equal(u.call.cost, 0);
  assert.equal(u.call.unpriced, 0, 'in the page: free, not unknown');
  assert.deepEqual(problems(), []);
});

test("the demo's Settings price the proxy's model and set a conversation budget its chat is held to", { skip: LITELLM ? false : 'FAMILIAR_LITELLM_URL is not set (scripts/test.sh runs LiteLLM)' }, async (t) => {
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const all = await watch(page, env);
  await page.goto(env.server.url);
  await appReady(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.use-proxy').check();
  await page.locator('.proxy-url').fill(`${LITELLM}/v1`);
  await page.locator('.proxy-model').fill('scripted');
  await page.locator('.proxy-header').fill(`X-Proxy-Token: ${TOKEN}`);
  await page.getByLabel('Input price').fill('2');
  await page.getByLabel('Output price').fill('8');
  await page.getByLabel('Conversation budget (tokens)').fill('12');
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.settings-close').click();
  const box = page.getByRole('combobox', { name: 'Message' });
  await box.fill('hello');
  await box.press('Enter');
  const first = page.locator('.turn').first();
  await first.locator('.turn-usage', { hasText: '12 tokens · $0.0001' }).waitFor();
  await box.fill('again');
  await box.press('Enter');
  await page.locator('.turn').nth(1).getByText("Stopped: this conversation's budget of 12 tokens is reached (12 tokens used)").first().waitFor();
  assert.equal(await page.locator('.turn').nth(1).getAttribute('data-status'), 'aborted');
  await page.screenshot({ path: `${artifacts}/usage-settings.png` });
  assert.deepEqual(all.filter((p) => !p.startsWith(`request off the page's origin: ${LITELLM}`)), []);
});
