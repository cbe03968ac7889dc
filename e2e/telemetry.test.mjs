// OpenTelemetry from inside the tab (issue 60, Export), on the full build (dist/): a
// host page creates an agent with `telemetry: {endpoint, headers, content: true,
// onSpan}` pointed at a real OTLP/HTTP receiver on loopback that this file starts
// (scripts/otlp_receiver.py: it decodes every export strictly with the OpenTelemetry
// project's own definitions, PyPI opentelemetry-proto, from the venv `scripts/setup.sh
// test` installs, $OTLP_VENV). What the receiver decoded is asserted: a chat turn with a
// tool and an approval (the tool a composite's sub-agent's, under its own span), an
// agent called as an opaque tool (its run under the call's span), a resident's trigger, a run resumed after a reload (one trace), and spans kept while
// the collector answered 503 and across a reload, then delivered. A password and a
// card number in the page's form, and a card number typed into the chat, appear in
// nothing exported (the receiver's spans, onSpan's, `agent.trace()`'s download). The
// demo: Settings name the collector, and the inspector's Download trace saves the open
// conversation's trace as an OTLP JSON file. A model call through the real LiteLLM proxy
// the test command runs (FAMILIAR_LITELLM_URL; its scripted provider counts 5 prompt and
// 7 completion tokens) reaches the receiver as a `chat` span with the tokens the `usage`
// update counted; so does one an agent called as a tool makes, counted to its caller's
// turn and holding its caller's budget.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { after, before } from 'node:test';
import { appReady, ask, test, useDist } from './harness.mjs';

const PASSWORD = 'hunter2-correct-horse';
const LITELLM = process.env.FAMILIAR_LITELLM_URL;
// The browser's token of tests/servers/litellm/browser_auth.py.
const TOKEN = 'familiar-proxy-token-7c1d9e2b4a6f8e3d5c0b';
const CARD = '4111 1111 1111 1111';
const TYPED_CARD = '5555-5555-5555-4444';

/** The venv the test command installs the receiver's definitions into. */
function otlpPython() {
  if (process.env.OTLP_VENV) return `${process.env.OTLP_VENV}/bin/python`;
  const lib = readFileSync(resolve(import.meta.dirname, '..', 'scripts', 'lib.sh'), 'utf8');
  const version = /OTLP_PROTO_VERSION=["']?([\w.]+)/.exec(lib)?.[1];
  const cache = process.env.XDG_CACHE_HOME ?? `${homedir()}/.cache`;
  return `${cache}/familiar/otlp-proto-${version}/bin/python`;
}

const PAGE = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Tavern</title><link rel="icon" href="data:,"></head>
<body>
  <form id="pay" aria-label="Pay">
    <label>Name <input name="name" value="Ada"></label>
    <label>Password <input type="password" name="password" autocomplete="current-password"></label>
    <label>Card number <input name="cardnumber" autocomplete="cc-number"></label>
    <button>Pay</button>
  </form>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    // The person typed these; the page's walk masks them.
    document.querySelector('[name=password]').value = ${JSON.stringify(PASSWORD)};
    document.querySelector('[name=cardnumber]').value = ${JSON.stringify(CARD)};
    window.spans = [];
    window.make = async (endpoint) => {
      window.guide = await createAgent({
        name: 'guide', namespace: 'telemetry-test', goalCheck: false,
        model: { fallback: 'Hm.', rules: [
          { keywords: ['buy'], tool: 'buy_item', arguments: { item: 'sword' }, answer: 'Bought {bought}.' },
          { keywords: ['wait'], tool: 'slow', answer: 'Waited: {done}.' },
          { keywords: ['scout'], tool: 'scout', arguments: { request: 'look around' }, answer: 'The scout is back.' },
        ] },
        builtins: ['page'],
        agents: [
          { name: 'shop', description: 'Runs the shop', tool: 'tools', tools: ['buy_item'] },
          { name: 'Dotty', description: 'The baker', instructions: 'You are Dotty.', memory: 'own' },
          // An opaque tool: its own run, on its own rules, with the page's look-ups.
          { name: 'scout', description: 'Looks around the page', tool: 'data',
            model: { fallback: 'Nothing seen.', rules: [{ keywords: ['look'], tool: 'page_outline', answer: 'Seen.' }] } },
        ],
        telemetry: {
          endpoint, headers: { 'x-tenant': 'tavern' }, content: true, serviceName: 'tavern',
          onSpan: (span) => window.spans.push(span),
        },
      });
      window.guide.registerTool({
        name: 'buy_item', description: 'Buys an item.', kind: 'action', approval: 'ask',
        parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'] },
        handler: async ({ item }) => ({ bought: 'a ' + item }),
      });
      // Answers only once the test says so (a run cut off by a reload waits here).
      window.answerSlow = null;
      window.guide.registerTool({
        name: 'slow', description: 'Takes its time.', kind: 'data',
        parameters: { type: 'object', properties: {} },
        handler: () => new Promise((resolve) => { window.answerSlow = resolve; }),
      });
    };
    // An agent on the proxy, traced without content, its usage updates kept.
    window.usages = [];
    window.makeProxy = async (endpoint, url, token) => {
      window.clerk = await createAgent({
        name: 'clerk', namespace: 'telemetry-proxy', persist: false, goalCheck: false,
        model: { url: url + '/v1', model: 'scripted', header: { name: 'X-Proxy-Token', value: token } },
        telemetry: { endpoint },
      });
      window.clerk.on('usage', (u) => window.usages.push(u));
    };
    // An agent on the rules model whose opaque sub-agent answers through the proxy.
    window.makeScouted = async (endpoint, url, token) => {
      window.warden = await createAgent({
        name: 'warden', namespace: 'telemetry-scouted', persist: false, goalCheck: false,
        model: { fallback: 'Hm.', rules: [
          { keywords: ['scout'], tool: 'scout', arguments: { request: 'look around' }, answer: 'The scout is back.' },
        ] },
        agents: [{ name: 'scout', description: 'Looks around', tool: 'data',
          model: { url: url + '/v1', model: 'scripted', header: { name: 'X-Proxy-Token', value: token } } }],
        budgets: { conversation: { tokens: 12 } },
        telemetry: { endpoint },
      });
      window.wardenUsages = [];
      window.warden.on('usage', (u) => window.wardenUsages.push(u));
    };
    window.ready = true;
  </script>
</body>
</html>`;

const env = useDist({ pages: { '/tavern.html': PAGE } });
const receiver = {};

before(async () => {
  const child = spawn(otlpPython(), ['scripts/otlp_receiver.py', 'serve', '--port', '0'], {
    cwd: resolve(import.meta.dirname, '..'),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  receiver.child = child;
  const port = await new Promise((resolvePort, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
    child.stdout.on('data', (chunk) => {
      const listening = /listening on (\d+)/.exec(String(chunk));
      if (listening) resolvePort(Number(listening[1]));
    });
  });
  receiver.url = `http://127.0.0.1:${port}`;
});

after(() => receiver.child?.kill());

const call = async (method, path) => (await fetch(receiver.url + path, { method })).json();
const received = () => call('GET', '/spans');

/** A span's attribute value (string, int or bool). */
const attr = (span, key) => {
  const value = span.attributes?.find((a) => a.key === key)?.value;
  return value?.stringValue ?? value?.intValue ?? value?.boolValue;
};

/** Waits until `check(spans)` is truthy on what the receiver has; its value. */
async function until(check, what, timeout = 30_000) {
  const end = Date.now() + timeout;
  for (;;) {
    const found = check(await received());
    if (found) return found;
    if (Date.now() > end) throw new Error(`the receiver never got ${what}: ${JSON.stringify(await received())}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const runOf = (spans, agent, input) =>
  spans.find((s) => s.name === `invoke_agent ${agent}` && (input === undefined || attr(s, 'gen_ai.input.messages')?.includes(input)));

async function open(t) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    // A 503 while the collector is down is the browser's own log line, expected.
    if (m.type() === 'error' && !/503|Service Unavailable/.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  await page.goto(`${env.server.url}tavern.html`);
  await page.waitForFunction(() => window.ready === true);
  await page.evaluate((url) => window.make(url), receiver.url);
  return { page, problems };
}

async function reload(page) {
  await page.reload();
  await page.waitForFunction(() => window.ready === true);
  await page.evaluate((url) => window.make(url), receiver.url);
}

test('a chat turn with a sub-agent tool and an approval, and a resident trigger, reach the collector as GenAI spans', async (t) => {
  await call('POST', '/reset');
  const { page, problems } = await open(t);
  const sent = page.evaluate(() => window.guide.send('buy a sword'));
  await page.waitForFunction(() => window.guide.pending().length === 1);
  await page.evaluate(() => window.guide.approve(window.guide.pending()[0]));
  assert.equal((await sent).text, 'Bought a sword.');

  const spans = await until((s) => runOf(s, 'guide', 'buy a sword') && s, 'the turn');
  const run = runOf(spans, 'guide', 'buy a sword');
  const trace = spans.filter((s) => s.traceId === run.traceId);
  const shop = trace.find((s) => s.name === 'invoke_agent shop');
  const buy = trace.find((s) => s.name === 'execute_tool buy_item');
  const chats = trace.filter((s) => s.name === 'chat rules');
  assert.ok(shop && buy && chats.length >= 2, JSON.stringify(trace.map((s) => s.name)));
  assert.equal(shop.parentSpanId, run.spanId, "the sub-agent's span is the run's child");
  assert.equal(buy.parentSpanId, shop.spanId, "the shop's tool call is under the shop");
  assert.ok(chats.every((c) => c.parentSpanId === run.spanId && c.kind === 'SPAN_KIND_CLIENT'));
  assert.equal(attr(run, 'gen_ai.operation.name'), 'invoke_agent');
  assert.equal(attr(run, 'gen_ai.provider.name'), 'familiar.rules');
  assert.equal(attr(run, 'familiar.trigger.kind'), 'chat');
  assert.equal(attr(run, 'familiar.outcome'), 'answered');
  assert.match(attr(buy, 'gen_ai.tool.call.id'), /\w/);
  assert.match(attr(buy, 'gen_ai.tool.call.result'), /a sword/, 'content was asked for');
  assert.deepEqual(run.events.map((e) => e.name), ['familiar.approval_needed', 'familiar.decided']);
  assert.equal(run.resource.attributes.find((a) => a.key === 'service.name').value.stringValue, 'tavern');
  assert.equal(run.scope.name, 'familiar');

  // A resident's trigger: its own agent's run, in its own conversation's trace.
  const fired = await page.evaluate(() =>
    window.guide.trigger({ kind: 'world', event: 'world.happened', actor: 'Dotty', subject: 'the oven is cold' }));
  assert.equal(fired.type, 'answered');
  const dotty = await until((s) => runOf(s, 'Dotty'), "Dotty's run");
  assert.equal(attr(dotty, 'familiar.trigger.event'), 'world.happened');
  assert.equal(attr(dotty, 'gen_ai.conversation.id'), 'agent:Dotty');
  assert.notEqual(dotty.traceId, run.traceId, "a resident's conversation is a trace of its own");

  // onSpan got the same spans, as OTLP JSON.
  const given = await page.evaluate(() => window.spans.map((s) => s.spanId));
  const got = new Set((await received()).map((s) => s.spanId));
  assert.ok(given.length >= 6 && given.every((id) => got.has(id)), `${given.length} spans given`);
  assert.deepEqual(problems, []);
});

test("an agent called as an opaque tool is its own run under the call's span, with its model and tool calls", async (t) => {
  await call('POST', '/reset');
  const { page, problems } = await open(t);
  const sent = await page.evaluate(() => window.guide.send('send the scout'));
  assert.equal(sent.text, 'The scout is back.');
  const spans = await until((s) => runOf(s, 'guide', 'send the scout') && s.some((x) => x.name === 'invoke_agent scout') && s, "the scout's run");
  const run = runOf(spans, 'guide', 'send the scout');
  const one = (name) => {
    const found = spans.filter((s) => s.name === name);
    assert.equal(found.length, 1, `${name}: ${JSON.stringify(spans.map((s) => s.name))}`);
    return found[0];
  };
  const called = one('execute_tool scout');
  const scout = one('invoke_agent scout');
  const looked = one('execute_tool page_outline');
  assert.equal(called.parentSpanId, run.spanId, "the call is the guide's");
  assert.equal(scout.parentSpanId, called.spanId, "the scout's run is under its call");
  assert.equal(looked.parentSpanId, scout.spanId, "the scout's own tool call is under its run");
  const chats = spans.filter((s) => s.name === 'chat rules' && s.parentSpanId === scout.spanId);
  assert.equal(chats.length, 2, "the scout's two model calls");
  assert.equal(attr(scout, 'gen_ai.agent.name'), 'scout');
  assert.equal(attr(scout, 'familiar.outcome'), 'answered');
  assert.match(attr(scout, 'gen_ai.input.messages'), /look around/, 'content was asked for');
  assert.equal(attr(called, 'gen_ai.tool.call.result'), '"Seen."');
  assert.ok([called, scout, looked, ...chats].every((s) => s.traceId === run.traceId), 'one trace');
  assert.deepEqual(problems, []);
});

test("a proxy model call's chat span carries the tokens its provider counted and who answered", { skip: LITELLM ? false : 'FAMILIAR_LITELLM_URL is not set (scripts/test.sh runs LiteLLM)' }, async (t) => {
  await call('POST', '/reset');
  const { page, problems } = await open(t);
  await page.evaluate(([endpoint, url, token]) => window.makeProxy(endpoint, url, token), [receiver.url, LITELLM, TOKEN]);
  const answer = await page.evaluate(() => window.clerk.send('hello there'));
  assert.equal(answer.type, 'answered', JSON.stringify(answer));
  const counted = (s) => s.name === 'chat scripted' && attr(s, 'gen_ai.usage.input_tokens') !== undefined;
  const chat = await until((s) => s.find(counted), "the proxy call's chat span with its tokens");
  const usages = await page.evaluate(() => window.usages);
  assert.equal(usages.length, 1, JSON.stringify(usages));
  const { prompt_tokens: input, completion_tokens: output } = usages[0].call;
  assert.deepEqual([input, output], [5, 7], 'what the scripted provider counts');
  // The receiver decoded int64s; the span says what the usage update said.
  assert.equal(Number(attr(chat, 'gen_ai.usage.input_tokens')), input);
  assert.equal(Number(attr(chat, 'gen_ai.usage.output_tokens')), output);
  assert.equal(attr(chat, 'gen_ai.provider.name'), 'openai');
  assert.equal(attr(chat, 'gen_ai.request.model'), 'scripted');
  // Who answered, as the proxy's chunks name it.
  assert.match(attr(chat, 'gen_ai.response.id') ?? '', /\S/, 'the response id the proxy gave');
  assert.match(attr(chat, 'gen_ai.response.model') ?? '', /\S/, 'the model the proxy says answered');
  const run = (await received()).find((s) => s.spanId === chat.parentSpanId);
  assert.equal(run?.name, 'invoke_agent clerk', 'under its run');
  assert.deepEqual(problems, []);
});

test("an agent called as a tool on the proxy: its tokens are its caller's turn's, hold the caller's budget and are on its own chat span", { skip: LITELLM ? false : 'FAMILIAR_LITELLM_URL is not set (scripts/test.sh runs LiteLLM)' }, async (t) => {
  await call('POST', '/reset');
  const { page, problems } = await open(t);
  await page.evaluate(([endpoint, url, token]) => window.makeScouted(endpoint, url, token), [receiver.url, LITELLM, TOKEN]);
  // The rules model costs nothing; the scout's one proxy call, 12 tokens, reaches the
  // conversation's budget of 12, so the warden stops before asking its model again.
  const answer = await page.evaluate(() => window.warden.send('send the scout'));
  const words = "Stopped: this conversation's budget of 12 tokens is reached (12 tokens used). Nothing more was asked of the model.";
  assert.deepEqual(answer, { type: 'budget_reached', reason: words });
  const usages = await page.evaluate(() => window.wardenUsages);
  assert.equal(usages.length, 1, JSON.stringify(usages));
  assert.equal(usages[0].agent, 'warden', "counted as the caller's");
  assert.deepEqual([usages[0].call.prompt_tokens, usages[0].call.completion_tokens], [5, 7]);
  assert.equal(usages[0].total.prompt_tokens + usages[0].total.completion_tokens, 12, "the turn's total");
  const counted = (s) => s.name === 'chat scripted' && attr(s, 'gen_ai.usage.input_tokens') !== undefined;
  const spans = await until((s) => s.some(counted) && s.some((x) => x.name === 'invoke_agent warden') && s, "the scout's chat span and the warden's run");
  const chat = spans.find(counted);
  assert.equal(Number(attr(chat, 'gen_ai.usage.input_tokens')), 5);
  assert.equal(Number(attr(chat, 'gen_ai.usage.output_tokens')), 7);
  assert.equal(attr(chat, 'gen_ai.provider.name'), 'openai', "the scout's own model's");
  const scout = spans.find((s) => s.spanId === chat.parentSpanId);
  assert.equal(scout?.name, 'invoke_agent scout', "under the scout's run");
  const called = spans.find((s) => s.spanId === scout.parentSpanId);
  assert.equal(called?.name, 'execute_tool scout', 'under the call');
  const run = spans.find((s) => s.spanId === called.parentSpanId);
  assert.equal(run?.name, 'invoke_agent warden');
  assert.equal(attr(run, 'familiar.outcome'), 'budget_reached');
  assert.deepEqual(problems, []);
});

test('a run resumed after a reload continues its span in the same trace', async (t) => {
  await call('POST', '/reset');
  const { page, problems } = await open(t);
  page.evaluate(() => window.guide.send('wait for it')).catch(() => {});
  await page.waitForFunction(() => window.answerSlow !== null);
  // The model call that asked for `slow` has ended: it is exported before the reload.
  const before = await until((s) => s.find((x) => x.name === 'chat rules') && s, 'the first model call');
  const chat = before.find((x) => x.name === 'chat rules');
  const conversation = await page.evaluate(() => window.guide.conversation().id);

  await reload(page);
  const resumed = page.evaluate((id) => window.guide.resume(id), conversation);
  await page.waitForFunction(() => window.answerSlow !== null);
  await page.evaluate(() => window.answerSlow({ done: 'yes' }));
  assert.equal((await resumed).text, 'Waited: yes.');

  const spans = await until((s) => runOf(s, 'guide', 'wait for it') && s, 'the resumed run');
  const run = runOf(spans, 'guide', 'wait for it');
  assert.equal(chat.parentSpanId, run.spanId, 'the run span opened before the reload ended after it');
  const turn = spans.filter((s) => s.traceId === chat.traceId);
  assert.ok(turn.length >= 4 && turn.length === spans.length, 'one trace id across the reload');
  // The agent says, as it starts, that a reload cut the run off.
  const said = `console: familiar: Interrupted { conversation: "${conversation}", turn: 1, agent: "guide", refused: None }`;
  assert.deepEqual(problems, [said]);
});

test('spans are kept while the collector is down and across a reload, then delivered; masked fields never leave', async (t) => {
  await call('POST', '/reset');
  await call('POST', '/down');
  const { page, problems } = await open(t);
  const forms = await page.evaluate(() => window.guide.send('what forms are on this page'));
  assert.match(forms.text, /Forms on the page: 1/);
  await page.evaluate((card) => window.guide.send(`pay with ${card}`), TYPED_CARD);
  const refused = async () => (await call('GET', '/requests')).unavailable;
  for (let i = 0; (await refused()) < 1; i += 1) {
    assert.ok(i < 100, 'the exporter tried while the collector was down');
    await new Promise((r) => setTimeout(r, 100));
  }
  assert.deepEqual(await received(), [], 'nothing was accepted while down');

  // Still down across a reload: the outbox is kept in localStorage.
  await reload(page);
  const before = await refused();
  for (let i = 0; (await refused()) <= before; i += 1) {
    assert.ok(i < 100, 'the reloaded page tried again');
    await new Promise((r) => setTimeout(r, 100));
  }
  await call('POST', '/up');
  const spans = await until((s) => runOf(s, 'guide', 'forms') && runOf(s, 'guide', 'pay with') && s, 'the kept spans');
  const tool = spans.find((s) => s.name === 'execute_tool page_forms');
  assert.match(attr(tool, 'gen_ai.tool.call.result'), /Password/, "the form's fields were exported, content on");

  const exported = JSON.stringify(spans);
  const given = JSON.stringify(await page.evaluate(() => window.spans));
  const download = JSON.stringify(await page.evaluate(() => window.guide.trace()));
  assert.match(download, /execute_tool page_forms/);
  for (const [what, text] of [['the receiver', exported], ['onSpan', given], ['the download', download]]) {
    for (const secret of [PASSWORD, CARD, CARD.replaceAll(' ', ''), TYPED_CARD, TYPED_CARD.replaceAll('-', '')]) {
      assert.ok(!text.includes(secret), `${what} carries ${secret}`);
    }
  }
  assert.match(exported, /pay with \[masked\]/);
  assert.deepEqual(problems, []);
});

test("the demo's Settings name a collector, and the inspector downloads the conversation's trace", async (t) => {
  await call('POST', '/reset');
  const context = await env.browser.newContext({ viewport: { width: 1280, height: 900 }, acceptDownloads: true });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
  await page.goto(env.server.url);
  await appReady(page);
  await page.getByRole('button', { name: 'Settings' }).click();
  await page.locator('.collector').fill(receiver.url);
  await page.locator('.collector-headers').fill('x-tenant: demo');
  await page.locator('.settings-save').click();
  await page.locator('.settings-saved', { hasText: 'Saved.' }).waitFor();
  await page.locator('.settings-close').click();

  assert.match(await ask(page, 'What time is it?'), /\d/);
  const spans = await until((s) => s.find((x) => x.name.startsWith('invoke_agent')) && s, "the demo's turn");
  const run = spans.find((x) => x.name.startsWith('invoke_agent'));
  assert.equal(run.resource.attributes.find((a) => a.key === 'service.name').value.stringValue, 'familiar-demo');
  assert.ok(spans.some((s) => s.name.startsWith('execute_tool current_time')), JSON.stringify(spans.map((s) => s.name)));
  assert.equal(attr(run, 'gen_ai.input.messages'), undefined, 'no prompt leaves by default');
  assert.ok(!JSON.stringify(spans).includes('What time is it'), 'nor anywhere else');

  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download trace' }).click(),
  ]);
  assert.match(download.suggestedFilename(), /^trace-.+\.json$/);
  const file = JSON.parse(await readFile(await download.path(), 'utf8'));
  const downloaded = file.resourceSpans[0].scopeSpans[0].spans;
  assert.deepEqual(
    downloaded.map((s) => s.spanId).sort(),
    spans.map((s) => s.spanId).sort(),
    'the file holds the spans the collector got',
  );
  assert.deepEqual(problems, []);
});
