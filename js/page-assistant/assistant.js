// The page assistant in one tag:
//   <script src="https://…/pkg-page/assistant.js" data-model-url="…" data-model="…" defer></script>
// adds a launcher button to the page, in a closed shadow root; the assistant itself
// (familiar.js and its wasm) is fetched when a person opens it, or hovers or focuses the
// launcher. With no data-model-url it runs offline (the rules model: /summary, the
// outline, links, forms). Conversations are kept in this site's localStorage under its
// own namespace (data-namespace, default "familiar-page-assistant"). Needs
// 'wasm-unsafe-eval' in the page's script-src (README: the CSP it needs); without it the
// panel says so.
//
// What the loader believes comes from its own <script> element only: it is found through
// Document.prototype's currentScript getter (markup such as <img name="currentScript">
// shadows `document.currentScript`, not the getter) and checked to be a script element;
// its attributes are read with getAttribute (a polluted Object.prototype.modelUrl is not
// an attribute). The tag must be a classic script (`defer` or not), as above; `src`
// should be absolute, or the page should set `base-uri` in its CSP, since a relative
// `src` is resolved against the page's <base> when it runs.
// The document's own members are read from Document.prototype throughout: named
// elements (<img name="readyState">, <form name="addEventListener">) shadow them on
// `document` itself.
(() => {
  const own = (name) => Object.getOwnPropertyDescriptor(Document.prototype, name);
  const script = own('currentScript')?.get?.call(document);
  if (!(script instanceof HTMLScriptElement) || !script.hasAttribute('src')) {
    console.error('Familiar page assistant: assistant.js must be loaded by its own <script src> tag');
    return;
  }
  const attribute = (name) => script.getAttribute(`data-${name}`) ?? undefined;
  const base = new URL('.', script.src).href;
  const modelUrl = attribute('model-url');
  const model = modelUrl
    ? { url: new URL(modelUrl, location.href).href, model: attribute('model'), stream: attribute('stream') !== 'false' }
    : undefined;
  const options = { base, model, namespace: attribute('namespace'), title: attribute('title') };
  const begin = () => import(new URL('widget.js', base).href)
    .then((widget) => widget.start(options))
    .catch((error) => console.error('Familiar page assistant:', error));
  if (own('readyState')?.get?.call(document) === 'loading') {
    EventTarget.prototype.addEventListener.call(document, 'DOMContentLoaded', begin, { once: true });
  } else begin();
})();
