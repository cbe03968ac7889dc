// What a person can operate is listed, role or not (issue 57): the one-tag assistant
// on a page built the way widget libraries build it. A slider's handle is a focusable
// span in a track (jQuery UI's markup), with no role and no value but where it sits;
// an autocomplete's suggestions are plain list items in a popup placed under the
// field; a combobox's list is a `role=listbox` its `aria-controls` names, of plain
// items; a custom dropdown's items are divs drawn for the pointer. The person asks,
// clicks Allow on every card, and each task is done through the assistant's tools.
// FAMILIAR_ROLELESS_LOG=1 prints each listing the model reads.
import assert from 'node:assert/strict';
import { test, useDist } from './harness.mjs';
import { allowEach as allowEachCard, openPage } from './one_tag.mjs';

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Trip</title><link rel="icon" href="data:,">
<style>
  .ui-slider { position: relative; width: 300px; height: 10px; margin: 16px 8px; background: #ccc; }
  .ui-slider-handle { position: absolute; top: -5px; width: 16px; height: 20px; margin-left: -8px; background: #36c; }
  .suggestions { position: absolute; margin: 0; padding: 0; list-style: none; background: #fff; border: 1px solid #888; }
  #fruits { list-style: none; margin: 0; padding: 4px; border: 1px solid #888; }
  .item, .card.linked { cursor: pointer; }
  label { cursor: pointer; }
</style>
</head><body>
  <main>
    <h1>Plan the trip</h1>
    <p>Budget</p>
    <div id="budget" class="ui-slider ui-slider-horizontal ui-widget"><span tabindex="0" class="ui-slider-handle ui-corner-all" style="left: 40%"></span></div>
    <p id="budget-value">Budget: 40</p>

    <label for="city">City</label>
    <input id="city" autocomplete="off">
    <p id="chosen">No city</p>

    <label for="fruit">Fruit</label>
    <input id="fruit" role="combobox" aria-controls="fruits" aria-expanded="true" autocomplete="off">
    <ul id="fruits" role="listbox"><li>Apple</li><li>Pear</li><li>Plum</li></ul>
    <p id="fruit-chosen">No fruit</p>

    <div class="dropdown"><p>Colour</p><div class="items"><div class="item">Red</div><div class="item">Green</div></div></div>
    <p id="colour">No colour</p>

    <div class="card linked"><h2>Owl tour</h2><a href="#tour">Details</a></div>
    <div class="card" tabindex="0">Night walk</div>
    <label><input type="checkbox"> <span>Insurance</span></label>
    <p>Plain words, no control.</p>
  </main>
  <script>
    const handle = document.querySelector('.ui-slider-handle');
    let budget = 40;
    handle.addEventListener('keydown', (event) => {
      const moves = { ArrowRight: budget + 10, ArrowLeft: budget - 10, Home: 0, End: 100, PageUp: budget + 20, PageDown: budget - 20 };
      if (!(event.key in moves)) return;
      event.preventDefault();
      budget = Math.min(100, Math.max(0, moves[event.key]));
      handle.style.left = budget + '%';
      document.getElementById('budget-value').textContent = 'Budget: ' + budget;
    });

    const city = document.getElementById('city');
    const list = document.createElement('ul');
    list.className = 'suggestions';
    list.hidden = true;
    document.body.append(list);
    city.addEventListener('input', () => {
      const typed = city.value.toLowerCase();
      list.replaceChildren(...['Lisbon', 'Lima', 'Lyon'].filter((c) => c.toLowerCase().startsWith(typed))
        .map((c) => Object.assign(document.createElement('li'), { textContent: c })));
      const box = city.getBoundingClientRect();
      Object.assign(list.style, { left: box.left + scrollX + 'px', top: box.bottom + scrollY + 'px', width: box.width + 'px' });
      list.hidden = !typed || !list.children.length;
    });
    list.addEventListener('mousedown', (event) => event.preventDefault());
    list.addEventListener('click', (event) => {
      city.value = event.target.textContent;
      document.getElementById('chosen').textContent = 'City: ' + city.value;
      list.hidden = true;
    });

    document.getElementById('fruits').addEventListener('click', (event) => {
      document.getElementById('fruit').value = event.target.textContent;
      document.getElementById('fruit-chosen').textContent = 'Fruit: ' + event.target.textContent;
    });
    for (const item of document.querySelectorAll('.item')) {
      item.addEventListener('click', () => { document.getElementById('colour').textContent = 'Colour: ' + item.textContent; });
    }
  </script>
  <script src="/pkg-page/assistant.js" data-model-url="/script/v1" data-model="scripted" data-stream="false" defer></script>
</body></html>`;

/** Every `page_elements` listing the model read, in order. */
const listings = [];

/** The line of `listing` that `match` finds. */
function lineOf(listing, match) {
  const line = listing.find((l) => match.test(l));
  if (!line) throw new Error(`no ${match} in ${listing.join(' | ')}`);
  return line;
}

const number = (line) => Number(/\[(\d+)\]/.exec(line)[1]);

/** The tasks: the words that ask for each, and its actions, each from the listing before it. */
const tasks = [
  { asked: /budget/, acts: [(l) => ['press', { element: number(lineOf(l, /\bslider\b/)), key: 'ArrowRight' }]] },
  {
    asked: /Lisbon/,
    acts: [
      (l) => ['fill', { element: number(lineOf(l, /textbox "City"/)), text: 'Li' }],
      (l) => ['click', { element: number(lineOf(l, /option "Lisbon"/)) }],
    ],
  },
  { asked: /Pear/, acts: [(l) => ['click', { element: number(lineOf(l, /option "Pear"/)) }]] },
  { asked: /colour/, acts: [(l) => ['click', { element: number(lineOf(l, /clickable "Red"/)) }]] },
];

/**
 * The model: lists the elements, does the task's next action, lists them again, and
 * so on; after the last action's listing, says it is done.
 */
function scripted(body) {
  const asked = body.messages.findLast((m) => m.role === 'user' && tasks.some((t) => t.asked.test(m.content))).content;
  const task = tasks.find((t) => t.asked.test(asked));
  const since = body.messages.findLastIndex((m) => m.role === 'user' && m.content === asked);
  const results = body.messages.slice(since).filter((m) => m.role === 'tool');
  const call = (name, args) => ({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${results.length}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  });
  const last = results.at(-1)?.content ?? '';
  if (results.length % 2 === 0 && results.length > 0 && /declined|not run|error|hidden|not found/i.test(last)) {
    return { role: 'assistant', content: `That did not work: ${last}` };
  }
  if (results.length % 2 === 0) return call('page_elements', {});
  const listing = JSON.parse(last).elements;
  listings.push(listing);
  if (process.env.FAMILIAR_ROLELESS_LOG) console.log(listing.join('\n'));
  const step = (results.length - 1) / 2;
  if (step >= task.acts.length) return { role: 'assistant', content: 'Done.' };
  return call(...task.acts[step](listing));
}

const env = useDist({ pages: { '/trip.html': page }, scripted });

async function open(t) {
  const opened = await openPage(env, t, 'trip.html');
  listings.length = 0;
  return opened;
}

/** Sends `text`, then clicks Allow on each card until `done` holds and the model is done. */
const allowEach = (tab, panel, text, done) => allowEachCard(tab, panel, text,
  async () => (await done()) && panel.getByText('Done.').isVisible());

test("a slider's handle, a focusable span with no role, is listed with where it sits and moved with ArrowRight", async (t) => {
  const { tab, problems, panel } = await open(t);
  const allowed = await allowEach(tab, panel, 'Raise the budget one step',
    async () => (await tab.locator('#budget-value').innerText()) === 'Budget: 50');
  assert.equal(allowed.length, 1, allowed.join(' | '));
  assert.match(lineOf(listings[0], /\bslider\b/), /value="40%"/);
  assert.match(lineOf(listings.at(-1), /\bslider\b/), /value="50%"/, 'read again, it says where it moved');
  assert.deepEqual(problems, []);
});

test("an autocomplete's suggestions, plain list items in a popup under the field, are listed as its options and one is chosen", async (t) => {
  const { tab, problems, panel } = await open(t);
  const allowed = await allowEach(tab, panel, 'Set the city to Lisbon',
    async () => (await tab.locator('#chosen').innerText()) === 'City: Lisbon');
  assert.equal(allowed.length, 2, allowed.join(' | '));
  const city = number(lineOf(listings[1], /textbox "City"/));
  assert.match(lineOf(listings[1], /option "Lima"/), new RegExp(`popup of \\[${city}\\]$`));
  assert.deepEqual(problems, []);
});

test("a combobox's aria-controls list of plain items is listed as its options and one is chosen", async (t) => {
  const { tab, problems, panel } = await open(t);
  const allowed = await allowEach(tab, panel, 'Pick Pear as the fruit',
    async () => (await tab.locator('#fruit-chosen').innerText()) === 'Fruit: Pear');
  assert.equal(allowed.length, 1, allowed.join(' | '));
  const fruit = number(lineOf(listings[0], /combobox "Fruit"/));
  for (const name of ['Apple', 'Pear', 'Plum']) {
    assert.match(lineOf(listings[0], new RegExp(`option "${name}"`)), new RegExp(`popup of \\[${fruit}\\]$`));
  }
  assert.deepEqual(problems, []);
});

test('items drawn for the pointer are clickable, a focusable card is listed, and what holds controls or labels one is not', async (t) => {
  const { tab, problems, panel } = await open(t);
  const allowed = await allowEach(tab, panel, 'Choose the red colour',
    async () => (await tab.locator('#colour').innerText()) === 'Colour: Red');
  assert.equal(allowed.length, 1, allowed.join(' | '));
  const listing = listings[0];
  lineOf(listing, /clickable "Green"/);
  lineOf(listing, /focusable "Night walk"/);
  lineOf(listing, /link "Details"/);
  lineOf(listing, /checkbox "Insurance"/);
  const inferred = listing.filter((l) => /\] (clickable|focusable) /.test(l)).map((l) => l.replace(/^\*?\[\d+\] /, ''));
  assert.deepEqual(inferred, ['clickable "Red"', 'clickable "Green"', 'focusable "Night walk"'],
    'a card holding a link, the labels drawn for the pointer and plain text are not listed');
  assert.ok(!listing.some((l) => /Owl tour|Plain words/.test(l)), listing.join(' | '));
  assert.deepEqual(problems, []);
});
