// The extension's service worker: the toolbar button opens the side panel, where the
// assistant lives (panel.html). Nothing else runs here.
chrome.sidePanel
  .setPanelBehavior({ openPanelOnActionClick: true })
  .catch((error) => console.error('Familiar page assistant:', error));
