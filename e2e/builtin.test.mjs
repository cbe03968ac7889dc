// The browser's own model (issue 59): createAgent({model: {builtin, fallback}}) in the
// full build (dist/). This project's Chromium 156 has the Prompt API (`LanguageModel`)
// and answers `unavailable` (no on-device model): the fallback runs and the page is
// told why, which it shows. The path where the model is available cannot run here for
// real, so the adapter's is tested against a stand-in `LanguageModel` put in the page
// before it loads, following the API's published interface (the explainer's and
// Chromium's IDL: availability(), create({initialPrompts}), contextWindow,
// contextUsage, measureContextUsage(input, options), promptStreaming(input,
// {responseConstraint}) giving a ReadableStream of text deltas, destroy()); the tests
// name it.
import assert from 'node:assert/strict';
import { test, useDist, watch } from './harness.mjs';

const keep = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Keep</title><link rel="icon" href="data:,"></head>
<body>
  <p>Model: <output id="model-status">asking</output></p>
  <script type="module">
    import init, { createAgent } from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
    const told = [];
    const guard = await createAgent({
      name: 'guard',
      instructions: 'You guard the keep.',
      persist: false,
      model: {
        builtin: { onStatus: (status) => {
          told.push(status);
          document.getElementById('model-status').textContent = status.reason;
        } },
        fallback: { fallback: 'All quiet (rules model).', rules: [] },
      },
    });
    guard.registerTool({
      name: 'look_out',
      description: 'What the guard sees from the wall.',
      kind: 'data',
      parameters: { type: 'object', properties: { side: { type: 'string', enum: ['north', 'south'] } }, required: ['side'] },
      handler: async ({ side }) => ({ side, seen: 'three goblins' }),
    });
    const deltas = [];
    guard.on('delta', (e) => deltas.push(e));
    window.ask = async (text) => {
      deltas.length = 0;
      const outcome = await guard.send(text);
      return { outcome, deltas: deltas.slice() };
    };
    window.told = told;
  </script>
</body>
</html>`;

/**
 * A stand-in for the Prompt API, following its published interface, answering as a
 * small scripted model: with tools on offer (a responseConstraint) it calls
 * `look_out`, then answers from the result; without, it answers plain text. It keeps
 * what it was given in `window.standIn`.
 */
function standIn() {
  const seen = { created: [], prompted: [], measured: 0, destroyed: 0 };
  window.standIn = seen;
  const words = (input) => (typeof input === 'string' ? input : input.map((m) => m.content).join('\n'));
  class LanguageModel extends EventTarget {
    static async availability() { return 'available'; }
    static async create(options = {}) {
      seen.created.push(options.initialPrompts ?? []);
      return new LanguageModel(options.initialPrompts ?? []);
    }
    #used;
    constructor(initial) {
      super();
      this.#used = Math.ceil(words(initial).length / 4);
    }
    get contextWindow() { return 4096; }
    get contextUsage() { return this.#used; }
    oncontextoverflow = null;
    async measureContextUsage(input, options = {}) {
      seen.measured += 1;
      const constraint = options.responseConstraint && !options.omitResponseConstraintInput
        ? JSON.stringify(options.responseConstraint).length : 0;
      return Math.ceil((words(input).length + constraint) / 4);
    }
    async append() {}
    async clone() { return this; }
    destroy() { seen.destroyed += 1; }
    async prompt(input, options) {
      let text = '';
      for await (const chunk of this.promptStreaming(input, options)) text += chunk;
      return text;
    }
    promptStreaming(input, options = {}) {
      seen.prompted.push({ input, constraint: options.responseConstraint ?? null, omit: options.omitResponseConstraintInput ?? false });
      const asked = words(input);
      let reply;
      if (!options.responseConstraint) reply = 'A plain answer.';
      else if (asked.startsWith('Tool result')) {
        // One line of JSON after the label: {"tool": …, "result": …}.
        const fed = JSON.parse(asked.slice(asked.indexOf('{')));
        reply = JSON.stringify({ answer: `I see ${fed.result.seen} to the north.` });
      } else reply = JSON.stringify({ tool_calls: [{ name: 'look_out', arguments: { side: 'north' } }] });
      const chunks = reply.match(/[^]{1,7}/g);
      return new ReadableStream({
        pull(controller) {
          if (chunks.length) controller.enqueue(chunks.shift());
          else controller.close();
        },
      });
    }
  }
  Object.defineProperty(globalThis, 'LanguageModel', { value: LanguageModel, configurable: true, writable: true });
}

const env = useDist({ pages: { '/keep.html': keep } });

async function open(t, { stand = false } = {}) {
  const context = await env.browser.newContext();
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  if (stand) await page.addInitScript(standIn);
  await page.goto(`${env.server.url}keep.html`);
  await page.waitForFunction(() => typeof window.ask === 'function', null, { timeout: 30_000 });
  return { page, problems };
}

test("this Chromium's Prompt API answers unavailable: the rules model runs and the page shows why", async (t) => {
  const { page, problems } = await open(t);
  assert.equal(await page.evaluate(async () => typeof LanguageModel === 'function' && LanguageModel.availability()), 'unavailable');
  const told = await page.evaluate(() => window.told);
  assert.equal(told.length, 1);
  assert.deepEqual([told[0].availability, told[0].runs], ['unavailable', 'rules']);
  await assert.doesNotReject(page.getByText(/browser's own model does not run: the browser says its model is unavailable.*the rules model runs instead/).waitFor());
  const { outcome } = await page.evaluate(() => window.ask('Anything on the walls?'));
  assert.equal(outcome.text, 'All quiet (rules model).');
  assert.deepEqual(problems, []);
});

test('against a stand-in LanguageModel following the published interface, the adapter calls a tool in its schema, feeds the result back and streams the answer', async (t) => {
  const { page, problems } = await open(t, { stand: true });
  const told = await page.evaluate(() => window.told);
  assert.deepEqual([told[0].availability, told[0].runs], ['available', 'builtin']);
  const { outcome, deltas } = await page.evaluate(() => window.ask('Who is at the gate?'));
  assert.equal(outcome.text, 'I see three goblins to the north.');
  // Streamed: the answer arrived in several text deltas that make it up.
  const texts = deltas.filter((d) => d.type === 'text').map((d) => d.text);
  assert.ok(texts.length > 2, JSON.stringify(deltas));
  assert.equal(texts.join(''), outcome.text);
  const seen = await page.evaluate(() => window.standIn);
  assert.equal(seen.prompted.length, 2, 'one prompt for the call, one for the answer');
  // The first reply was held to {answer} | {tool_calls}, look_out's arguments in its own schema.
  const [answer, calls] = seen.prompted[0].constraint.anyOf;
  assert.deepEqual(answer.required, ['answer']);
  const call = calls.properties.tool_calls.items.anyOf.find((c) => c.properties.name.enum[0] === 'look_out');
  assert.deepEqual(call.properties.arguments.properties.side.enum, ['north', 'south']);
  assert.equal(seen.prompted[0].omit, true, 'the system turn describes the tools; the constraint is not sent twice');
  // The system turn first, then the result fed back as the prompted turn.
  assert.equal(seen.created[1][0].role, 'system');
  assert.match(seen.created[1][0].content, /look_out: What the guard sees from the wall\./);
  assert.match(seen.prompted[1].input[0].content,
    /^Tool result \(data the tool returned, not the person's words\): \{"tool":"look_out","result":\{.*three goblins/);
  assert.equal(seen.measured, 2, 'each prompt measured against the window before it ran');
  assert.equal(seen.destroyed, 2, 'each session destroyed once its reply was read');
  assert.deepEqual(problems, []);
});

test("against a stand-in LanguageModel following the published interface, a prompt past the session's window is never prompted: the run learns the window and says the request does not fit", async (t) => {
  const { page, problems } = await open(t, { stand: true });
  await page.evaluate(() => {
    Object.defineProperty(LanguageModel.prototype, 'contextWindow', { get: () => 200 });
  });
  const result = await page.evaluate(() => window.ask('Who is at the gate? '.repeat(120)).catch((e) => ({ error: String(e.message ?? e) })));
  const failed = result.error ?? result.outcome?.error ?? JSON.stringify(result.outcome);
  assert.match(failed, /does not fit the model's context window of 200 tokens/);
  const seen = await page.evaluate(() => window.standIn);
  assert.equal(seen.prompted.length, 0, 'nothing was prompted');
  assert.ok(seen.measured >= 1, 'the prompt was measured first');
  assert.equal(seen.destroyed, seen.created.length, 'every session opened was destroyed');
  assert.deepEqual(problems, []);
});
