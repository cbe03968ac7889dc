// The demo page's first screen until the app mounts (see index.html): the composer
// takes a message at once and queues it; if the app cannot start, the page says so.
// A file, not an inline script, so the page runs under a CSP with no inline script.
// In a block: its names stay out of the page's global scope.
{
  const shell = document.getElementById('familiar-loading');
  const status = shell.querySelector('.familiar-tagline');
  const form = shell.querySelector('form');
  const box = form.querySelector('textarea');
  // Without scripts the app can't run, and the composer stays disabled. With them,
  // Enter or Send queues the message: the app sends it as soon as it runs.
  for (const control of form.elements) control.disabled = false;
  const queue = () => {
    if (!box.value.trim()) return;
    form.dataset.queued = 'true';
    status.textContent = 'Loading the agent… your message goes out as soon as it is ready.';
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    queue();
  });
  box.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      queue();
    }
  });
  // If the app cannot start (the .wasm fails to load or compile), say so instead
  // of loading forever. Once it mounts, the shell is gone and this does nothing.
  const couldNotStart = (reason) => {
    status.textContent = `Familiar could not start: ${reason?.message ?? reason}`;
    for (const control of form.elements) control.disabled = true;
  };
  addEventListener('error', (event) => couldNotStart(event.error ?? event.message));
  addEventListener('unhandledrejection', (event) => couldNotStart(event.reason));
}
