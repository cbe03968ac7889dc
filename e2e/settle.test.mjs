// An action on a field is judged by what the field shows once the page settled (issue
// 57, class 4), not by the value set the moment before. A booking form as widget
// libraries draw one: a time field whose widget takes only "h:mm AM/PM" and puts
// "12:00" back when the field loses the focus, a read-only date field worked through
// its calendar's button, a name field, a plan list and a terms box. First a person
// meets the widgets with real input, so the fixture does what it says; then the
// one-tag assistant does each task, a scripted model calling the page tools and the
// person clicking Allow on every card: "14:30" is reported as not taken (the field
// shows "12:00"), and "2:30 PM" then takes; the read-only date is refused, saying to
// work its widget and naming its calendar's button; the name, the plan and the box
// take and report success.
import assert from 'node:assert/strict';
import { test, settled, useDist } from './harness.mjs';
import { numbered, openPage } from './one_tag.mjs';

const page = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Book a room</title><link rel="icon" href="data:,"></head>
<body>
  <main>
    <h1>Book a room</h1>
    <form id="booking">
      <p><label for="name">Your name</label> <input id="name"></p>
      <p><label for="time">Start time</label> <input id="time" placeholder="h:mm AM/PM" autocomplete="off"></p>
      <p><label for="date">Start date</label> <input id="date" readonly placeholder="Pick a date">
        <button type="button" id="open">Open calendar</button></p>
      <div id="calendar" hidden><button type="button">14</button> <button type="button">15</button></div>
      <p><label for="plan">Plan</label> <select id="plan"><option>Free</option><option>Pro</option></select></p>
      <p><label><input type="checkbox" id="terms"> I accept the terms</label></p>
    </form>
  </main>
  <script>
    // The time widget: what it cannot read as its own format it puts back to its
    // default when the field loses the focus, as time-picker libraries do.
    const time = document.getElementById('time');
    time.addEventListener('blur', () => {
      if (!/^(1[0-2]|[1-9]):[0-5][0-9] (AM|PM)$/.test(time.value.trim())) time.value = '12:00';
    });
    // The date widget: its field is read-only; its calendar writes the date.
    const calendar = document.getElementById('calendar');
    document.getElementById('open').addEventListener('click', () => { calendar.hidden = !calendar.hidden; });
    calendar.addEventListener('click', (event) => {
      if (event.target.tagName !== 'BUTTON') return;
      document.getElementById('date').value = '2025-05-' + event.target.textContent;
      calendar.hidden = true;
    });
  </script>
  <script src="/pkg-page/assistant.js" data-model-url="/script/v1" data-model="scripted" data-stream="false" defer></script>
</body></html>`;

/** Each task as a person words it, and its steps: a listing, then actions on it. */
const tasks = {
  time: ['Set the start time to 14:30.', [
    (l) => ['fill', { element: numbered(l, 'Start time'), text: '14:30' }],
    (l) => ['fill', { element: numbered(l, 'Start time'), text: '2:30 PM' }],
  ]],
  date: ['Set the start date to May 15.', [
    (l) => ['fill', { element: numbered(l, 'Start date'), text: '2025-05-15' }],
  ]],
  name: ['My name is Ada Lovelace.', [
    (l) => ['fill', { element: numbered(l, 'Your name'), text: 'Ada Lovelace' }],
  ]],
  plan: ['Choose the Pro plan and accept the terms.', [
    (l) => ['select_option', { element: numbered(l, 'Plan'), option: 'Pro' }],
    (l) => ['check', { element: numbered(l, 'I accept the terms'), checked: true }],
  ]],
};

/** Each task's action results, as the model read them (parsed), by task. */
const results = {};

/**
 * The model: lists the elements once, then takes its task's steps whatever each
 * action answered (the test reads the answers), then says it is done.
 */
function scripted(body) {
  const texts = Object.values(tasks).map(([text]) => text);
  const asked = body.messages.findLast((m) => m.role === 'user' && texts.includes(m.content))?.content;
  const [key, [, steps]] = Object.entries(tasks).find(([, [text]]) => text === asked);
  const since = body.messages.findLastIndex((m) => m.role === 'user' && m.content === asked);
  const tools = body.messages.slice(since).filter((m) => m.role === 'tool').map((m) => JSON.parse(m.content));
  results[key] = tools.slice(1);
  if (!tools.length) {
    return { role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'page_elements', arguments: '{}' } }] };
  }
  const step = steps[tools.length - 1];
  if (!step) return { role: 'assistant', content: 'Done.' };
  const [name, args] = step(tools[0].elements);
  return {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${tools.length}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  };
}

const env = useDist({ pages: { '/booking.html': page }, scripted });

const open = (t, options) => openPage(env, t, 'booking.html', options);

/** Sends task `key`, clicking Allow on each card with the mouse, until the turn ends. */
async function allowEach(tab, panel, key) {
  const box = panel.getByRole('textbox', { name: 'Ask about this page' });
  await box.fill(tasks[key][0]);
  await box.press('Enter');
  const send = panel.getByRole('button', { name: 'Send' });
  const deadline = Date.now() + 30_000;
  const steps = tasks[key][1].length;
  while (results[key]?.length !== steps || !(await send.isEnabled())) {
    if (Date.now() >= deadline) assert.fail(`the turn did not end: ${await panel.locator('.log').innerText()}`);
    const card = panel.getByRole('group', { name: 'Approval' }).first();
    if (await card.isVisible()) await card.getByRole('button', { name: 'Allow', exact: true }).click();
    await tab.waitForTimeout(100);
  }
  await settled(tab);
  return results[key];
}

const value = (tab, id) => tab.locator(`#${id}`).inputValue();

test('a person meets the widgets: the time field puts back what is not its format, the date is picked on its calendar', async (t) => {
  const { tab, problems } = await open(t, { assistant: false });
  await tab.getByLabel('Start time').fill('14:30');
  await tab.keyboard.press('Tab');
  assert.equal(await value(tab, 'time'), '12:00');
  await tab.getByLabel('Start time').fill('2:30 PM');
  await tab.keyboard.press('Tab');
  assert.equal(await value(tab, 'time'), '2:30 PM');
  await tab.getByLabel('Start date').click();
  await tab.keyboard.type('2025');
  assert.equal(await value(tab, 'date'), '', 'a read-only field takes no typing');
  await tab.getByRole('button', { name: 'Open calendar' }).click();
  await tab.getByRole('button', { name: '15' }).click();
  assert.equal(await value(tab, 'date'), '2025-05-15');
  assert.deepEqual(problems, []);
});

test('a time the widget puts back on blur is reported as not taken, with what the field shows; its own format then takes', async (t) => {
  const { tab, problems, panel } = await open(t);
  const [rewritten, taken] = await allowEach(tab, panel, 'time');
  assert.match(rewritten.error ?? '', /the field shows "12:00" after the page settled, not "14:30": the value did not take/, JSON.stringify(rewritten));
  assert.equal(typeof taken.done, 'string', JSON.stringify(taken));
  assert.equal(await value(tab, 'time'), '2:30 PM');
  assert.deepEqual(problems, []);
});

test('a read-only date field is not typed into: the error says so, to work its widget, and names its calendar button', async (t) => {
  const { tab, problems, panel } = await open(t);
  const [refused] = await allowEach(tab, panel, 'date');
  const said = refused.error ?? '';
  assert.match(said, /the field is read-only/, JSON.stringify(refused));
  assert.match(said, /work it through the widget's own controls/);
  assert.match(said, /beside it: .*button "Open calendar"/);
  assert.equal(await value(tab, 'date'), '');
  assert.deepEqual(problems, []);
});

test('a field that takes the value, a list and a box report success, and the page shows them', async (t) => {
  const { tab, problems, panel } = await open(t);
  const [named] = await allowEach(tab, panel, 'name');
  assert.equal(typeof named.done, 'string', JSON.stringify(named));
  assert.equal(await value(tab, 'name'), 'Ada Lovelace');
  const [chosen, checked] = await allowEach(tab, panel, 'plan');
  assert.equal(typeof chosen.done, 'string', JSON.stringify(chosen));
  assert.equal(typeof checked.done, 'string', JSON.stringify(checked));
  assert.equal(await tab.locator('#plan').inputValue(), 'Pro');
  assert.equal(await tab.locator('#terms').isChecked(), true);
  assert.deepEqual(problems, []);
});
