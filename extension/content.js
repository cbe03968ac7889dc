// The extension's content script, one per frame of every page: it reads and acts on
// this frame's document when the assistant's side panel asks, and does nothing else.
// It adds nothing to the page's DOM (an element it acts on is outlined for three
// seconds), keeps no conversation, and answers only the extension's own pages: page
// scripts live in another world and cannot message it. The reader (the familiar-page
// crate's frame build, about 75 KB gzip) is compiled the first time the panel asks, never
// on a page the person does not use the assistant on.
(() => {
  let reader;
  // The reader is web-accessible only at the session's dynamic URL (the manifest's
  // use_dynamic_url), which getURL gives: a page that probes the fixed
  // chrome-extension://<id>/frame/ path to detect the extension gets an error.
  const frame = () => {
    reader ??= import(chrome.runtime.getURL('frame/familiar_page.js')).then(async (module) => {
      await module.default({ module_or_path: chrome.runtime.getURL('frame/familiar_page_bg.wasm') });
      // Closed shadow roots are read too: a person sees what they hold.
      const open = chrome.dom?.openOrClosedShadowRoot;
      return new module.Frame(open ? (element) => open(element) ?? null : undefined);
    });
    return reader;
  };

  // How this frame's document is drawn, as the browser sees it from inside
  // (IntersectionObserver v2: isVisible is false when it is faded, transformed,
  // filtered or covered, in this frame or any around it). Nothing for the top frame,
  // or where the browser has no such observer.
  const drawn = () => new Promise((resolve) => {
    if (window === window.top) return resolve({});
    let observer;
    const done = (seen) => {
      observer?.disconnect();
      resolve(seen);
    };
    try {
      observer = new IntersectionObserver(([entry]) => done({
        intersecting: entry.isIntersecting,
        visible: typeof entry.isVisible === 'boolean' ? entry.isVisible : undefined,
      }), { trackVisibility: true, delay: 100 });
      observer.observe(document.documentElement);
    } catch {
      return resolve({});
    }
    setTimeout(() => done({}), 500);
  });

  const answer = async (message) => {
    switch (message.op) {
      case 'ping':
        return { ok: true, title: document.title, webmcp: typeof document.modelContext?.getTools === 'function' };
      // The tools this frame's page declares with WebMCP: document.modelContext is the
      // page's in this isolated world too, and executeTool runs the page's own execute.
      case 'tools': {
        const tools = (await document.modelContext?.getTools?.()) ?? [];
        return { ok: true, document: self.origin, tools: JSON.stringify(tools.map((tool) => ({
          name: tool.name, description: tool.description, inputSchema: tool.inputSchema,
          annotations: tool.annotations, origin: tool.origin,
        }))) };
      }
      // Only the tool the panel listed and the card named: the same document origin
      // and the same tool origin, else refused (the frame may hold another page now).
      case 'execute': {
        if (self.origin !== message.document) {
          return { error: `the frame holds another page now (${self.origin}, not ${message.document}); \`${message.name}\` was not run` };
        }
        const tools = (await document.modelContext?.getTools?.()) ?? [];
        const tool = tools.find((t) => t.name === message.name && (t.origin ?? null) === (message.origin ?? null));
        if (!tool) return { error: `the page declares no tool \`${message.name}\` of ${message.origin ?? message.document} now` };
        const answer = await document.modelContext.executeTool(tool, JSON.parse(message.input));
        return { ok: true, answer: typeof answer === 'string' ? answer : JSON.stringify(answer ?? '') };
      }
      case 'snapshot': {
        const reader = await frame();
        const snapshot = reader.snapshot();
        const seen = await drawn();
        return {
          ok: true,
          snapshot,
          frames: JSON.parse(reader.shownFrames()),
          place: JSON.parse(reader.place(seen.intersecting, seen.visible)),
        };
      }
      case 'perform':
        (await frame()).perform(message.element, message.act);
        return { ok: true };
      default:
        return { error: `unknown request ${message.op}` };
    }
  };

  chrome.runtime.onMessage.addListener((message, sender, respond) => {
    // The side panel is an extension page: it has no tab. Another content script
    // (another frame's, which the page could drive) has one and is not heard.
    if (sender.id !== chrome.runtime.id || sender.tab || message?.to !== 'familiar-frame') return false;
    answer(message).then(respond, (error) => respond({ error: String(error?.message ?? error) }));
    return true;
  });
})();
