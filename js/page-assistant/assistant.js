// The page assistant in one tag:
//   <script src="https://…/pkg-page/assistant.js" data-model-url="…" data-model="…" defer></script>
// adds a launcher button and the assistant's panel to the page, in a shadow root. With
// no data-model-url it runs offline (the rules model: /summary, the outline, links,
// forms). Conversations are kept in this site's localStorage under its own namespace
// (data-namespace, default "familiar-page-assistant"). Needs 'wasm-unsafe-eval' in the
// page's script-src (README: the CSP it needs); without it the panel says so.
(() => {
  const script = document.currentScript ?? document.querySelector('script[src$="assistant.js"]');
  const base = new URL('.', script.src);
  const data = script.dataset;
  const model = data.modelUrl
    ? { url: new URL(data.modelUrl, location.href).href, model: data.model, stream: data.stream !== 'false' }
    : undefined;
  const begin = () => import(new URL('widget.js', base))
    .then((widget) => widget.start({ base, model, namespace: data.namespace, title: data.title }))
    .catch((error) => console.error('Familiar page assistant:', error));
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', begin);
  else begin();
})();
