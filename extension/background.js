// The extension's service worker: the toolbar button opens the side panel, where the
// assistant lives (panel.html), and the extension's storage (the proxy token, every
// site's conversation, the standing permissions) is closed to content scripts, which
// run in the renderer of every page visited and never need it.
chrome.storage.local
  .setAccessLevel?.({ accessLevel: 'TRUSTED_CONTEXTS' })
  ?.catch((error) => console.error('Familiar page assistant:', error));
chrome.sidePanel
  .setPanelBehavior({ openPanelOnActionClick: true })
  .catch((error) => console.error('Familiar page assistant:', error));
