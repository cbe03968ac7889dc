// The model providers the extension's options offer, each with its OpenAI-compatible
// address and the headers its documentation names for a key, and what both the
// options page and the side panel need of them: the stored choice, the key's headers
// (added for the provider's origin only), a key masked for showing, and a refusal
// read into a sentence. The key itself lives in chrome.storage.local, which
// background.js closes to content scripts; it never enters a web page or the engine's
// config (createAgent's model.fetch adds it).

/** Bearer, as OpenAI documents it and Groq, OpenRouter, Gemini's and Anthropic's
 * OpenAI-compatible endpoints take it. */
const bearer = (key) => ({ Authorization: `Bearer ${key}` });

export const PROVIDERS = {
  proxy: {
    label: 'A Familiar proxy (its token in X-Proxy-Token)',
    url: '',
    headers: (key) => ({ 'X-Proxy-Token': key }),
  },
  openai: { label: 'OpenAI', url: 'https://api.openai.com/v1', headers: bearer, model: 'gpt-4o-mini' },
  anthropic: {
    label: 'Anthropic',
    url: 'https://api.anthropic.com/v1',
    // Its OpenAI SDK compatibility takes the key as the OpenAI SDK sends it; a request
    // with an Origin (the extension's) is refused without the opt-in header.
    headers: (key) => ({ ...bearer(key), 'anthropic-dangerous-direct-browser-access': 'true' }),
    model: 'claude-3-5-haiku-latest',
  },
  gemini: {
    label: 'Google Gemini',
    url: 'https://generativelanguage.googleapis.com/v1beta/openai',
    headers: bearer,
    model: 'gemini-2.0-flash',
  },
  openrouter: { label: 'OpenRouter', url: 'https://openrouter.ai/api/v1', headers: bearer, model: 'openai/gpt-4o-mini' },
  groq: { label: 'Groq', url: 'https://api.groq.com/openai/v1', headers: bearer, model: 'llama-3.3-70b-versatile' },
  ollama: { label: 'Ollama on this machine', url: 'http://127.0.0.1:11434/v1', headers: null, local: 'ollama' },
  lmstudio: { label: 'LM Studio on this machine', url: 'http://127.0.0.1:1234/v1', headers: null, local: 'lmstudio' },
  custom: { label: 'Any OpenAI-compatible address (key as Bearer)', url: '', headers: bearer },
};

/** Models known to call tools well, by name: marked in the options' list. */
const CALLS_TOOLS = /gpt-4o|gpt-4\.1|gpt-5|\bo[34]\b|o[34]-mini|claude-(3-5|3-7|sonnet|opus|haiku-4)|claude-.*-4|gemini-(1\.5|2|2\.5|3)|llama-?3\.[123]|llama-4|qwen-?2\.5|qwen-?3|mistral-(large|small|medium)|command-r|hermes|gpt-oss|kimi-k2|deepseek-(chat|v3)|granite-?3|functionary|smollm2/i;

export const callsToolsWell = (id) => CALLS_TOOLS.test(id);

/** The key as it may be shown: its first three and last four characters. */
export function masked(key) {
  if (!key) return '';
  return key.length > 12 ? `${key.slice(0, 3)}…${key.slice(-4)}` : `…${key.slice(-2)}`;
}

/** An address's origin, or '' when it is not a URL. */
export function originOf(address) {
  try {
    return new URL(address).origin;
  } catch {
    return '';
  }
}

/**
 * The stored choice: { provider, url, model, stream, kept }, `kept` the key with the
 * provider and origin it was entered for ({ key, provider, origin }, or null). A key of
 * older versions, stored alone ({ key } as a string, or the proxy's { token }), is bound
 * to the stored model's provider and origin, the only ones it was ever sent to.
 */
export async function stored() {
  const kept = await chrome.storage.local.get(['model', 'key', 'token']);
  const model = kept.model ?? null;
  if (!model?.url) return null;
  const provider = PROVIDERS[model.provider] ? model.provider : 'proxy';
  const old = typeof kept.key === 'string' ? kept.key : kept.key ? '' : kept.token ?? '';
  const bound = kept.key?.key ? kept.key : old ? { key: old, provider, origin: originOf(model.url) } : null;
  return {
    provider,
    url: model.url,
    model: model.model ?? '',
    stream: model.stream !== false,
    kept: bound?.origin ? bound : null,
  };
}

/** The kept key if it was entered for this provider at this origin, else ''. */
export function keyFor(kept, provider, origin) {
  return kept?.key && kept.provider === provider && kept.origin === origin ? kept.key : '';
}

/** The headers that carry `key` for `provider` (none without a key). */
export function keyHeaders(provider, key) {
  const headers = PROVIDERS[provider]?.headers;
  return key && headers ? headers(key) : {};
}

/**
 * A fetch that adds the key's headers to requests for `origin` only, and sends every
 * other request as it is: createAgent's model.fetch, and the options' own requests.
 */
export function keyedFetch(provider, key, origin) {
  const extra = keyHeaders(provider, key);
  return (url, init = {}) => {
    if (new URL(url).origin !== origin || !Object.keys(extra).length) return fetch(url, init);
    const headers = new Headers(init.headers);
    for (const [name, value] of Object.entries(extra)) headers.set(name, value);
    return fetch(url, { ...init, headers, signal: init.signal, redirect: init.redirect ?? 'error' });
  };
}

/** The steps that let the extension's origin reach a local server that refuses it. */
export function allowOrigin(provider, origin) {
  if (PROVIDERS[provider]?.local === 'ollama') {
    return `Ollama refuses origins it was not told of: quit it, then start it with OLLAMA_ORIGINS=${origin} ollama serve ` +
      `(on macOS: launchctl setenv OLLAMA_ORIGINS "${origin}", then restart Ollama; on Windows: set OLLAMA_ORIGINS ` +
      'in the environment variables, then restart Ollama).';
  }
  if (PROVIDERS[provider]?.local === 'lmstudio') {
    return 'In LM Studio, open the Developer tab, start the server, and turn on "Enable CORS" in its settings.';
  }
  return `The server must allow requests from ${origin} (CORS).`;
}

/** A refused or failed request (its status and body, or the error thrown), in words. */
export function refusal(provider, origin, { status, body, thrown }) {
  if (thrown) {
    return `No answer from ${origin}: check the address, that the server is running, and that the extension may ` +
      `reach it (allow it when the browser asks, then try again). ${
      PROVIDERS[provider]?.local ? allowOrigin(provider, chrome.runtime.getURL('').replace(/\/$/, '')) : ''}`.trim();
  }
  let message = '';
  try {
    let json = JSON.parse(body);
    if (Array.isArray(json)) json = json[0];
    const error = json?.error ?? json;
    message = typeof error === 'string' ? error : error?.message ?? '';
  } catch {
    message = String(body ?? '').trim().slice(0, 300);
  }
  const said = message ? ` (${message})` : '';
  // A refusal of one request option (tool_choice, parallel_tool_calls, a JSON mode) is
  // not one of tools: the model may call them still.
  if (/tool/i.test(message) && /not support|unsupported|no endpoints found that support|requires --jinja/i.test(message) &&
    !/tool_choice|parallel_tool_calls|json/i.test(message)) {
    return `This model cannot call tools, which the assistant needs${said}: choose one marked ★ in the list.`;
  }
  if (status === 401) return `The key was refused (HTTP 401)${said}: check it, or paste a new one.`;
  if (status === 403) {
    return PROVIDERS[provider]?.local
      ? `The server refused this extension's origin (HTTP 403)${said}. ${allowOrigin(provider, chrome.runtime.getURL('').replace(/\/$/, ''))}`
      : `The key may not use this model (HTTP 403)${said}.`;
  }
  if (status === 429) {
    // Gemini's ordinary rate limit says "exceeded your current quota ... check your plan
    // and billing details" (RESOURCE_EXHAUSTED) with a retry delay: a limit to wait
    // out. Only insufficient_quota, credit or billing wording otherwise means the
    // account is empty (OpenAI's insufficient_quota names billing too).
    const text = `${message} ${body ?? ''}`;
    const waits = /RESOURCE_EXHAUSTED|retry in|retryDelay|rate.?limit/i.test(text);
    return /insufficient.quota|credit/i.test(text) || (!waits && /billing/i.test(text))
      ? `The account behind the key has no quota or credit left (HTTP 429)${said}.`
      : `Rate limited (HTTP 429)${said}: try again in a moment.`;
  }
  if (status === 404) return `Nothing at that address or no such model (HTTP 404)${said}: check the address (it usually ends in /v1) and the model name.`;
  return `The server answered HTTP ${status}${said}.`;
}
