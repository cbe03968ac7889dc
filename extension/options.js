// The extension's options: which model the assistant asks ({ model: { provider, url,
// model, stream } } in chrome.storage.local; none: offline) and its key, bound to the
// provider and origin it was entered for ({ key: { key, provider, origin } }: sent
// nowhere else, and dropped on Save when the address moves to another origin),
// from a provider's preset (providers.js) or any OpenAI-compatible address. Saving,
// listing the models and trying one ask the browser for access to that one origin
// (host permission), so requests reach it from the extension's own origin; the panel
// reads the choice when it opens. The key is never shown back in full. Model
// addresses over plain http are refused unless on this machine.
import { PROVIDERS, allowOrigin, callsToolsWell, keyFor, keyedFetch, masked, refusal, stored } from './providers.js';

const $ = (id) => document.getElementById(id);
const form = $('model');
const provider = $('provider');
const url = $('url');
const name = $('name');
const token = $('token');
const stream = $('stream');
const status = $('status');
const check = $('check');
const ownOrigin = new URL(chrome.runtime.getURL('/')).origin;
$('origin').textContent = ownOrigin;

for (const [value, { label }] of Object.entries(PROVIDERS)) {
  provider.append(new Option(label, value));
}

/** The key kept now, with the provider and origin it is for ({ key, provider, origin } or null). */
let kept = null;

function showKey() {
  $('key-kept').hidden = !kept;
  $('key-masked').textContent = masked(kept?.key);
  $('key-origin').textContent = kept ? `${PROVIDERS[kept.provider]?.label ?? kept.provider} at ${kept.origin}` : '';
  token.placeholder = kept ? 'Leave empty to keep the stored key' : '';
}

function showProvider() {
  const preset = PROVIDERS[provider.value];
  $('local-note').hidden = !preset.local;
  $('key-label').hidden = preset.headers === null;
  if (preset.model && !name.value) name.placeholder = preset.model;
}

provider.addEventListener('change', () => {
  const preset = PROVIDERS[provider.value];
  if (preset.url) url.value = preset.url;
  showProvider();
});

const ready = stored().then((choice) => {
  if (choice) {
    provider.value = choice.provider;
    url.value = choice.url;
    name.value = choice.model;
    stream.checked = choice.stream;
    kept = choice.kept;
  }
  showProvider();
  showKey();
});

/** The address's origin, or a sentence saying why it cannot be used. */
function originOf(address) {
  let parsed;
  try {
    parsed = new URL(address);
  } catch {
    return { problem: 'The model address is not a URL: it should look like https://proxy.example/v1.' };
  }
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(parsed.hostname) || /^127(\.\d{1,3}){3}$/.test(parsed.hostname);
  if (parsed.protocol === 'http:' && !loopback) {
    return { problem: 'A model address over plain http is only allowed on this machine (127.0.0.1, localhost): use https.' };
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return { problem: 'The model address must start with https://.' };
  }
  return { origin: parsed.origin };
}

/** Asks for access to `origins` alone (the person's click allows the prompt). */
function access(...origins) {
  try {
    return chrome.permissions.request({ origins: origins.map((o) => `${o}/*`) }).catch(() => false);
  } catch {
    return Promise.resolve(false);
  }
}

/** Whether the extension may reach `origin` now (false when that cannot be told). */
async function reachable(origin) {
  try {
    return await chrome.permissions.contains({ origins: [`${origin}/*`] });
  } catch {
    return false;
  }
}

/**
 * The form's choice: the address's origin, and a fetch that adds the key there only:
 * the key typed, else the kept one if it was entered for this provider at this origin.
 * `withheld` says why a kept key was not used ('' when it was, or there is none).
 */
function choice() {
  const address = url.value.trim().replace(/\/+$/, '');
  const { origin, problem } = originOf(address);
  const typed = token.value.trim();
  const key = typed || keyFor(kept, provider.value, origin);
  const withheld = !typed && kept && !key && origin
    ? `The stored key is for ${PROVIDERS[kept.provider]?.label ?? kept.provider} at ${kept.origin}: it was not sent to ${origin}.`
    : '';
  return { address, origin, problem, key, withheld, send: origin && keyedFetch(provider.value, key, origin) };
}

/** `text`, then why the kept key was not sent, if it was not. */
const withNote = (text, withheld) => (withheld ? `${text} ${withheld}` : text);

/** A request's answer: { ok, status, body } or { thrown }. */
async function request(send, address, init) {
  try {
    const response = await send(address, init);
    return { ok: response.ok, status: response.status, body: await response.text() };
  } catch (error) {
    return { thrown: error };
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  check.textContent = '';
  const { address, origin, problem, key, send } = choice();
  const secret = token.value.trim();
  if (!address) {
    await chrome.storage.local.remove(['model', 'token', 'key']);
    kept = null;
    showKey();
    status.textContent = 'Saved: the assistant runs offline.';
    return;
  }
  if (problem) {
    status.textContent = problem;
    return;
  }
  // Asked before any await, while the click still counts as the person's gesture.
  const granted = access(origin);
  const model = { provider: provider.value, url: url.value.trim(), stream: stream.checked };
  if (name.value.trim()) model.model = name.value.trim();
  // The key is stored with the provider and origin it is for: the one typed, or the
  // kept one (an older version's { token } migrates here) if this is still its
  // provider and origin. A kept key for another is dropped, never carried over.
  const hadKey = kept;
  kept = key && PROVIDERS[provider.value].headers !== null ? { key, provider: provider.value, origin } : null;
  await chrome.storage.local.set(kept ? { model, key: kept } : { model });
  await chrome.storage.local.remove(kept ? 'token' : ['key', 'token']);
  token.value = '';
  showKey();
  const dropped = hadKey && !kept && PROVIDERS[provider.value].headers !== null
    ? ` The stored key was for ${PROVIDERS[hadKey.provider]?.label ?? hadKey.provider} at ${hadKey.origin}: it is removed, ` +
      `not sent to ${origin}; paste the key for this address.`
    : '';
  const saved = `Saved: the panel uses this model from its next start.${dropped}`;
  status.textContent = saved;
  // The address is checked as it is saved: one that answers 404 is said at once.
  request(send, `${address}/models`, {}).then((listed) => {
    if (listed.status === 404 || listed.thrown) {
      check.textContent = `Saved, but ${address}/models ${listed.thrown ? 'did not answer' : 'answered 404'}: ` +
        `${refusal(provider.value, origin, listed)} “Try it” checks the whole way.`;
    }
  });
  // Said once the browser has answered (a person may take a while on its prompt).
  const allowed = await granted;
  status.textContent = `${saved} ${allowed
    ? `The extension may reach ${origin}.`
    : `Access to ${origin} was not granted: allow it when the browser asks, then Save again; without it, ${
      allowOrigin(provider.value, ownOrigin)}`}`;
});

$('forget').addEventListener('click', async () => {
  await chrome.storage.local.remove(['key', 'token']);
  kept = null;
  token.value = '';
  showKey();
  status.textContent = 'The key is removed from this browser.';
});

/** Lists the provider's models, the ones known to call tools well marked ★ and first. */
$('list').addEventListener('click', async () => {
  const { address, origin, problem, withheld, send } = choice();
  if (problem) {
    check.textContent = problem;
    return;
  }
  // Not awaited: the browser's prompt may stay open; a refusal for want of access
  // is said below.
  access(origin);
  check.textContent = `Asking ${origin} for its models…`;
  const answer = await request(send, `${address}/models`, {});
  const list = $('model-list');
  list.replaceChildren();
  $('models').replaceChildren();
  if (!answer.ok) {
    check.textContent = withNote(refusal(provider.value, origin, answer), withheld);
    return;
  }
  let ids = [];
  try {
    const json = JSON.parse(answer.body);
    ids = (json.data ?? json.models ?? []).map((m) => m.id ?? m.name).filter(Boolean);
  } catch { /* said below */ }
  ids.sort((a, b) => Number(callsToolsWell(b)) - Number(callsToolsWell(a)) || a.localeCompare(b));
  for (const id of ids) {
    const item = document.createElement('li');
    const pick = document.createElement('button');
    pick.type = 'button';
    pick.textContent = callsToolsWell(id) ? `★ ${id} (calls tools well)` : id;
    pick.addEventListener('click', () => { name.value = id; });
    item.append(pick);
    list.append(item);
    $('models').append(new Option(id));
  }
  check.textContent = withNote(ids.length
    ? `${ids.length} models; ★ marks those known to call tools well. Pick one, then Try it.`
    : `${origin} listed no models.`, withheld);
});

/** The tool "Try it" asks the model to call. */
const TOOL = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather now in a city.',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
};

/**
 * The first tool call of an answer, whole (JSON) or streamed (server-sent events, the
 * call's name and arguments in fragments): { call } or { error } from the stream.
 */
function firstCall(body) {
  const text = body.trimStart();
  if (text.startsWith('{')) {
    const json = JSON.parse(text);
    return { call: json.choices?.[0]?.message?.tool_calls?.[0] ?? null, error: json.error };
  }
  let name = '';
  let args = '';
  let seen = false;
  for (const line of text.split('\n')) {
    const data = line.startsWith('data:') ? line.slice(5).trim() : '';
    if (!data || data === '[DONE]') continue;
    const chunk = JSON.parse(data);
    if (chunk.error) return { call: null, error: chunk.error };
    for (const call of chunk.choices?.[0]?.delta?.tool_calls ?? []) {
      if ((call.index ?? 0) !== 0) continue;
      seen = true;
      name += call.function?.name ?? '';
      args += call.function?.arguments ?? '';
    }
  }
  return { call: seen ? { function: { name, arguments: args } } : null };
}

/** Runs one tool call end to end, as the panel asks: the model must call get_weather. */
$('try').addEventListener('click', async () => {
  const { address, origin, problem, withheld, send } = choice();
  const model = name.value.trim() || PROVIDERS[provider.value].model || '';
  if (problem || !model) {
    check.textContent = problem ?? 'Name a model first (List the models shows them).';
    return;
  }
  // Not awaited: the browser's prompt may stay open; a refusal for want of access
  // is said below.
  access(origin);
  check.textContent = `Trying ${model}: one tool call…`;
  const answer = await request(send, `${address}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
    body: JSON.stringify({
      model,
      stream: stream.checked,
      max_tokens: 200,
      // The model's likeliest call: a check that passes or fails the same each time.
      temperature: 0,
      messages: [{ role: 'user', content: 'What is the weather in Paris? Use the tool.' }],
      tools: [TOOL],
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
    }),
  });
  if (!answer.ok) {
    check.textContent = withNote(`Try it failed: ${refusal(provider.value, origin, answer)}`, withheld);
    return;
  }
  let read = { call: null };
  try {
    read = firstCall(answer.body);
  } catch {
    check.textContent = `Try it failed: the answer could not be read: ${answer.body.slice(0, 200)}`;
    return;
  }
  const { call, error } = read;
  if (error) {
    check.textContent = `Try it failed: ${refusal(provider.value, origin, { status: 200, body: JSON.stringify({ error }) })}`;
    return;
  }
  if (!call) {
    check.textContent = `Try it failed: ${model} answered without calling the tool: it may not call tools ` +
      '(choose one marked ★ in the list).';
    return;
  }
  let args = null;
  try {
    args = JSON.parse(call.function?.arguments || '{}');
  } catch { /* said below */ }
  check.textContent = call.function?.name === 'get_weather' && args
    ? `It works: ${model} called get_weather(${JSON.stringify(args)}).`
    : `Try it failed: ${model} called the tool wrongly (${call.function?.name}: ${call.function?.arguments}).`;
});

/** Probes Ollama (11434) and LM Studio (1234) on this machine. */
$('find').addEventListener('click', async () => {
  const found = $('found');
  access('http://127.0.0.1', 'http://localhost');
  found.textContent = 'Looking on this machine…';
  const said = [];
  for (const key of ['ollama', 'lmstudio']) {
    const preset = PROVIDERS[key];
    const answer = await request(fetch, `${preset.url}/models`, { signal: AbortSignal.timeout(2_000) });
    if (answer.ok) {
      said.push(`${preset.label} answers at ${preset.url}.`);
      if (PROVIDERS[provider.value].local && !url.value) url.value = preset.url;
    } else if (answer.status === 403) {
      said.push(`${preset.label} runs but refuses this extension: ${allowOrigin(key, ownOrigin)}`);
    } else if (answer.thrown && !(await reachable(new URL(preset.url).origin))) {
      // The request went before the browser's prompt was answered: without access,
      // a server that runs looks like none.
      said.push(`${preset.label}: no answer at ${preset.url}, and the extension may not reach this machine yet: ` +
        'allow access when the browser asks, then press Find again.');
    } else {
      said.push(`${preset.label}: nothing at ${preset.url}.`);
    }
  }
  found.textContent = said.join(' ');
});

await ready;
