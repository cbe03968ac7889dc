// The extension's content script: starts the page assistant's widget (widget.js, from
// the extension) on the page, in the content script's isolated world, where the page's
// scripts cannot reach the agent and the extension's CSP ('wasm-unsafe-eval') lets its
// WebAssembly run. Conversations are kept in the extension's storage, per site, not in
// the site's localStorage: loaded before the agent starts, saved after every answer.
// The model: offline (the rules model) unless the extension's options page saved one
// ({ model: { url, model, stream } } in its storage).
(async () => {
  if (window.top !== window) return;
  const key = `conversations:${location.origin}`;
  const stored = await chrome.storage.local.get(['model', key]);
  const { start } = await import(chrome.runtime.getURL('widget.js'));
  await start({
    base: chrome.runtime.getURL('/'),
    model: stored.model,
    namespace: 'familiar-extension',
    persist: false,
    load: () => stored[key],
    save: (state) => chrome.storage.local.set({ [key]: state }),
  });
})().catch((error) => console.error('Familiar page assistant:', error));
