// The page assistant in one tag (classic script, `defer` or not; an absolute src, or
// `base-uri` in the page's CSP, since a relative one is resolved against <base>):
//   <script src="https://…/pkg-page/assistant.js" data-model-url="…" data-model="…" defer></script>
// adds a launcher (widget.js); familiar.js and its wasm come when a person opens it.
// No data-model-url: offline (the rules model). data-namespace: its localStorage prefix.
// Its own tag comes from Document.prototype's currentScript getter (<img
// name="currentScript"> shadows `document.currentScript`), checked; attributes are read
// with getAttribute (never an inherited Object.prototype.modelUrl).
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
