// Asking a person leaves the page as it was (issue 57): the one-tag assistant opens a
// menu, or types into a field whose suggestions pop up, and the next step, the one the
// person is asked about, needs that menu or list still open. The page closes them as
// widget libraries do: a press anywhere outside (a listener on the document) and the
// field losing the focus. A card must take neither: the person clicks Allow on every
// card, with the mouse, as a person does, and the task is done.
import assert from 'node:assert/strict';
import { test, useDist } from './harness.mjs';
import { allowEach, numbered, openPage } from './one_tag.mjs';

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Projects</title><link rel="icon" href="data:,">
<style>[role=menu], [role=listbox] { border: 1px solid #888; padding: 4px; list-style: none; margin: 0; }</style>
</head><body>
  <main>
    <h1>Owl survey</h1>
    <button id="actions" type="button" aria-haspopup="menu" aria-expanded="false">Actions</button>
    <ul id="menu" role="menu" hidden>
      <li role="menuitem" tabindex="-1">Rename project</li>
      <li role="menuitem" tabindex="-1">Archive project</li>
    </ul>
    <p id="status">Active</p>
    <label for="city">City</label>
    <input id="city" role="combobox" aria-expanded="false" aria-controls="cities" autocomplete="off">
    <ul id="cities" role="listbox" hidden></ul>
    <p id="chosen">No city</p>
  </main>
  <script>
    window.shut = [];
    const actions = document.getElementById('actions');
    const menu = document.getElementById('menu');
    const show = (shown) => { menu.hidden = !shown; actions.setAttribute('aria-expanded', String(shown)); };
    actions.addEventListener('click', () => show(menu.hidden));
    // Closed by a press outside it, as menu libraries do: in the bubble phase, or
    // (?capture) in the capture phase, before any element sees the press.
    document.addEventListener('pointerdown', (event) => {
      if (!menu.hidden && !menu.contains(event.target) && event.target !== actions) {
        window.shut.push('menu by ' + event.type + ' on ' + (event.target.id || event.target.tagName) + (event.isTrusted ? ' trusted' : ' synthetic'));
        show(false);
      }
    }, location.search.includes('capture'));
    menu.addEventListener('click', (event) => {
      if (event.target.textContent === 'Archive project') document.getElementById('status').textContent = 'Archived';
      show(false);
    });
    const city = document.getElementById('city');
    const cities = document.getElementById('cities');
    city.addEventListener('input', () => {
      const typed = city.value.toLowerCase();
      cities.replaceChildren(...['Lisbon', 'Lima', 'Lyon'].filter((c) => c.toLowerCase().startsWith(typed))
        .map((c) => Object.assign(document.createElement('li'), { role: 'option', textContent: c })));
      for (const option of cities.children) option.setAttribute('role', 'option');
      cities.hidden = !typed || !cities.children.length;
      city.setAttribute('aria-expanded', String(!cities.hidden));
    });
    // Closed when the field loses the focus, as autocompletes do.
    city.addEventListener('blur', () => {
      const to = document.activeElement; setTimeout(() => { if (!cities.hidden) window.shut.push('list, focus to ' + (to?.id || to?.tagName)); cities.hidden = true; }, 0);
    });
    cities.addEventListener('mousedown', (event) => event.preventDefault());
    cities.addEventListener('click', (event) => {
      city.value = event.target.textContent;
      document.getElementById('chosen').textContent = 'City: ' + city.value;
      cities.hidden = true;
    });
  </script>
  <script src="/pkg-page/assistant.js" data-model-url="/script/v1" data-model="scripted" data-stream="false" defer></script>
</body></html>`;

/**
 * The model: lists the elements, acts on one, lists them again, acts on the next; the
 * steps for "archive" are a click on Actions then on Archive project, for "Lisbon" a
 * fill of City then a click on the suggestion.
 */
function scripted(body) {
  const asked = body.messages.findLast((m) => m.role === 'user' && /archive|Lisbon/.test(m.content)).content;
  const since = body.messages.findLastIndex((m) => m.role === 'user' && m.content === asked);
  const results = body.messages.slice(since).filter((m) => m.role === 'tool');
  const call = (name, args) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${results.length}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });
  const last = results.at(-1)?.content ?? '';
  if (/declined|not run|error|hidden|not found/i.test(last) && results.length % 2 === 0) {
    return { role: 'assistant', content: `That did not work: ${last}` };
  }
  const steps = /archive/.test(asked)
    ? [(l) => call('click', { element: numbered(l, 'Actions') }), (l) => call('click', { element: numbered(l, 'Archive project') })]
    : [(l) => call('fill', { element: numbered(l, 'City'), text: 'Lis' }), (l) => call('click', { element: numbered(l, 'Lisbon') })];
  // Even results are listings, odd ones the actions' results.
  if (results.length >= 4) return { role: 'assistant', content: 'Done.' };
  if (results.length % 2 === 0) return call('page_elements', {});
  return steps[(results.length - 1) / 2](JSON.parse(last).elements);
}

const env = useDist({ pages: { '/projects.html': page }, scripted });

const open = (t, query = '') => openPage(env, t, `projects.html${query}`);

test('a card leaves a menu the agent opened open: the person allows each step and the project is archived', async (t) => {
  const { tab, problems, panel } = await open(t);
  const allowed = await allowEach(tab, panel, 'Please archive the project from the Actions menu',
    async () => (await tab.locator('#status').innerText()) === 'Archived');
  assert.equal(allowed.length, 2, allowed.join(' | '));
  assert.deepEqual(await tab.evaluate(() => window.shut), [], 'the menu never closed under a card');
  assert.deepEqual(problems, []);
});

test('a card leaves the focus in a field the agent typed into: its suggestions stay open and Lisbon is chosen', async (t) => {
  const { tab, problems, panel } = await open(t);
  const allowed = await allowEach(tab, panel, 'Set the city to Lisbon',
    async () => (await tab.locator('#chosen').innerText()) === 'City: Lisbon');
  assert.equal(allowed.length, 2, allowed.join(' | '));
  assert.deepEqual(await tab.evaluate(() => window.shut), [], 'the list never closed under a card');
  assert.deepEqual(problems, []);
});

test('a menu closed by a press in the capture phase, which no page element can stop, is opened again by the next step', async (t) => {
  const { tab, problems, panel } = await open(t, '?capture');
  const allowed = await allowEach(tab, panel, 'Please archive the project from the Actions menu',
    async () => (await tab.locator('#status').innerText()) === 'Archived');
  assert.equal(allowed.length, 2, allowed.join(' | '));
  const shut = await tab.evaluate(() => window.shut);
  assert.equal(shut.length, 1, `the person's press on the card closed it once: ${shut}`);
  assert.deepEqual(problems, []);
});
