// The extension's options: which model the assistant asks (kept in chrome.storage.local
// as { model: { url, model, stream } }; none: offline). The content script reads it
// when it starts on a page.
const form = document.getElementById('model');
const url = document.getElementById('url');
const name = document.getElementById('name');
const stream = document.getElementById('stream');
const status = document.getElementById('status');

chrome.storage.local.get('model').then(({ model }) => {
  if (!model) return;
  url.value = model.url ?? '';
  name.value = model.model ?? '';
  stream.checked = model.stream !== false;
});

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  const address = url.value.trim();
  if (!address) {
    await chrome.storage.local.remove('model');
    status.textContent = 'Saved: the assistant runs offline.';
    return;
  }
  if (!url.checkValidity()) {
    status.textContent = 'The model address is not a URL: it should look like http://127.0.0.1:4000/v1.';
    return;
  }
  const model = { url: address, stream: stream.checked };
  if (name.value.trim()) model.model = name.value.trim();
  await chrome.storage.local.set({ model });
  status.textContent = 'Saved: pages opened from now on use this model.';
});
