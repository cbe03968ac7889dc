// The widget inside someone else's page: it mounts into the host's #familiar element,
// takes its width and the host's theme, and leaves the host's own look alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test, answer, artifacts, ask, openHeld, useDist, watch } from './harness.mjs';

const host = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Ashfall — a game</title>
  <link rel="icon" href="data:,">
  <link rel="stylesheet" href="/main.css">
  <style>
    body { margin: 24px; font-family: serif; display: flex; gap: 24px; }
    #map { flex: 1; height: 600px; background: #2b3a2b; }
    #familiar { width: 360px; --familiar-accent: rgb(0, 128, 0); }
  </style>
</head>
<body>
  <div id="map"><button id="host-button">Attack</button></div>
  <aside id="familiar"></aside>
  <script type="module">
    import init from '/familiar-demo.js';
    await init({ module_or_path: '/familiar-demo_bg.wasm' });
  </script>
</body>
</html>`;

// The same game with index.html's shell (its markup and script, as the README says to
// copy them) inside #familiar, so its players can type while the .wasm loads.
const index = readFileSync(new URL('../dist/index.html', import.meta.url), 'utf8');
const shell = index.slice(index.indexOf('<div id="familiar-loading"'), index.indexOf('</script>', index.indexOf('<div id="familiar-loading"')) + '</script>'.length);
const hostWithShell = host.replace('<aside id="familiar"></aside>', `<aside id="familiar">${shell}</aside>`);

const env = useDist({ pages: { '/game.html': host, '/game-with-shell.html': hostWithShell } });

test('embedded in a host page, the widget fits its sidebar, wears its theme and leaves the page alone', async (t) => {
  const context = await env.browser.newContext({ viewport: { width: 1440, height: 900 } });
  t.after(() => context.close());
  const page = await context.newPage();
  const problems = await watch(page, env);
  await page.goto(`${env.server.url}game.html`);
  const widget = page.locator('#familiar');
  await widget.getByRole('combobox', { name: 'Message' }).waitFor();

  assert.equal(await page.locator('body > .familiar-app').count(), 0, 'nothing mounted on the body');
  const said = await ask(page, 'What time is it?');
  assert.match(said, /^It's \d\d:\d\d on /);

  const style = (selector, property) =>
    page.locator(selector).first().evaluate((e, p) => getComputedStyle(e)[p], property);
  assert.equal(await style('#familiar .composer-send', 'backgroundColor'), 'rgb(0, 128, 0)', 'the host themes it');
  assert.equal(await style('#familiar .familiar-body', 'flexDirection'), 'column', 'a 360 px widget stacks');
  const box = await widget.boundingBox();
  assert.equal(Math.round(box.width), 360);
  assert.equal(await style('#familiar .familiar', 'minHeight'), 'auto', 'as tall as its content, not the window');
  assert.equal(await style('body', 'margin'), '24px', "the host's body keeps its margin");
  assert.equal(await style('body', 'fontFamily'), 'serif');
  assert.equal(await style('#host-button', 'borderRadius'), '0px', "the host's buttons are not restyled");

  await page.screenshot({ path: join(artifacts, 'widget-in-host.png') });
  assert.deepEqual(problems, []);
});

test('a host page with the shell in its #familiar takes a message before the app runs', async (t) => {
  const { page, release } = await openHeld(env, t, { path: 'game-with-shell.html', viewport: { width: 1440, height: 900 } });
  const widget = page.locator('#familiar');
  await widget.getByRole('combobox', { name: 'Message' }).fill('What time is it?');
  await widget.getByRole('combobox', { name: 'Message' }).press('Enter');
  assert.match(await widget.getByRole('status').innerText(), /goes out as soon as it is ready/);

  release();
  assert.match(await answer(page, 1), /^It's \d\d:\d\d on /);
  assert.equal(await widget.locator('#familiar-loading').count(), 0, 'the shell gave way');
  assert.equal(await widget.locator('.familiar-app').count(), 1, 'one app, in the host element');
  assert.equal(await page.locator('body > .familiar-app').count(), 0, 'nothing mounted on the body');
});
