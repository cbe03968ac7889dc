// The extension's options: which model the assistant asks ({ model: { url, model,
// stream } } in chrome.storage.local; none: offline) and the proxy's token ({ token }).
// Saving asks the browser for access to that one origin (host permission), so the side
// panel's requests reach it from the extension's own origin; the panel reads both
// when it opens. Model addresses over plain http are refused unless on this machine.
const form = document.getElementById('model');
const url = document.getElementById('url');
const name = document.getElementById('name');
const token = document.getElementById('token');
const stream = document.getElementById('stream');
const status = document.getElementById('status');
document.getElementById('origin').textContent = new URL(chrome.runtime.getURL('/')).origin;

chrome.storage.local.get(['model', 'token']).then((stored) => {
  if (stored.model) {
    url.value = stored.model.url ?? '';
    name.value = stored.model.model ?? '';
    stream.checked = stored.model.stream !== false;
  }
  token.value = stored.token ?? '';
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

/** Asks for access to `origin` alone (the person's click allows the prompt). */
function access(origin) {
  try {
    return chrome.permissions.request({ origins: [`${origin}/*`] }).catch(() => false);
  } catch {
    return Promise.resolve(false);
  }
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const address = url.value.trim();
  const secret = token.value.trim();
  if (!address) {
    await chrome.storage.local.remove(['model', 'token']);
    status.textContent = 'Saved: the assistant runs offline.';
    return;
  }
  const { origin, problem } = originOf(address);
  if (problem) {
    status.textContent = problem;
    return;
  }
  // Asked before any await, while the click still counts as the person's gesture.
  const granted = access(origin);
  const model = { url: address, stream: stream.checked };
  if (name.value.trim()) model.model = name.value.trim();
  await chrome.storage.local.set(secret ? { model, token: secret } : { model });
  if (!secret) await chrome.storage.local.remove('token');
  const saved = 'Saved: the panel uses this model from its next start.';
  status.textContent = saved;
  // Said once the browser has answered (a person may take a while on its prompt).
  status.textContent = `${saved} ${await granted
    ? `The extension may reach ${origin}.`
    : `Access to ${origin} was not granted: the proxy must allow this extension's origin (CORS).`}`;
});
