// The scripted model of e2e/widgets.test.mjs: each task as a person words it, the plan
// of tool calls a capable model makes for it, and the model that answers the
// assistant's requests by reading the page tools' results in the turn so far. A plan
// goes on from what the tools said, as a model reading them would: a read-only date
// field that fill refuses is worked through its calendar; a value read back that is not
// the one typed is set through the widget's own controls; a suggestion not listed yet
// is looked for again.

/**
 * The turn under way: the person's task and the tool calls since, each with its id,
 * arguments and parsed result.
 */
function turnOf(body) {
  const start = body.messages.findLastIndex((m) => m.role === 'user' && Object.hasOwn(plans, m.content));
  const calls = new Map();
  const done = [];
  for (const m of body.messages.slice(start + 1)) {
    for (const call of m.tool_calls ?? []) calls.set(call.id, call.function);
    if (m.role !== 'tool') continue;
    const call = calls.get(m.tool_call_id) ?? { name: '?', arguments: '{}' };
    let result;
    try {
      result = JSON.parse(m.content);
    } catch {
      result = m.content;
    }
    done.push({ id: m.tool_call_id, name: call.name, args: JSON.parse(call.arguments || '{}'), result, text: m.content });
  }
  return { task: body.messages[start]?.content, done };
}

const ACTIONS = new Set(['click', 'fill', 'select_option', 'check', 'scroll_to', 'highlight', 'press', 'submit', 'double_click', 'hover']);

/** What a step reads of the turn so far: the last result and the latest element lines. */
function reader(done) {
  const last = done.at(-1);
  const listings = () => done.filter((d) => Array.isArray(d.result?.elements)).reverse();
  const line = (pattern) => listings()[0]?.result.elements.find((l) => pattern.test(l));
  const since = done.slice(done.findLastIndex((d) => !d.id.startsWith('again_')) + 1);
  return {
    last: last?.result,
    /** The last tool's name. */
    lastName: last?.name,
    /** The tools this step has run so far (its listings again, a key to open a list). */
    since,
    /** The last action's error (a refusal, a failure), or ''. */
    failed: last && ACTIONS.has(last.name) && typeof last.result?.done !== 'string' ? last.text : '',
    /** The latest listing's lines. */
    listing: () => listings()[0]?.result.elements ?? [],
    /** Whether the latest listing has a line matching `pattern`. */
    has: (pattern) => Boolean(line(pattern)),
    /** The latest listing's line matching `pattern`. */
    line,
    /** The number of the element whose line in the latest listing matches `pattern`. */
    element(pattern) {
      for (const { result } of listings()) {
        const found = result.elements.find((l) => pattern.test(l));
        if (found) return Number(/\[(\d+)\]/.exec(found)[1]);
      }
      const seen = listings()[0]?.result.elements ?? [];
      throw new Error(`no element matches ${pattern} among the ${seen.length} listed: ${seen.join('; ').slice(0, 600)}`);
    },
  };
}

/** Whether `d` is an action refused because its element left the page since it was listed. */
const redrawn = (d) => ACTIONS.has(d.name) && typeof d.result?.done !== 'string' && /is not on the page \(any more\)/.test(d.text);

/** A step's answer that lists the elements again without moving the plan on. */
const again = () => ['page_elements', {}, 'again'];
/** How many times a step may list again before the plan gives up. */
const AGAIN_LIMIT = 3;

/**
 * The model: the task's plan, a list of steps; step i answers once i tools have run in
 * this turn (listings a step asked for `again` aside), with a tool call [name, args] or
 * the final text. A failed action that the next step does not `recover` from, or a step
 * that cannot find what it needs, ends the turn with "FAILED: why".
 */
export function scripted(body) {
  const { task, done } = turnOf(body);
  if (process.env.FAMILIAR_WIDGETS_LOG) console.log(JSON.stringify({ task, done: done.at(-1) }));
  const say = (content) => ({ role: 'assistant', content });
  if (!task) return say('FAILED: no task this model knows');
  const last = done.at(-1);
  const plan = plans[task];
  // An action on an element the page redrew since it was listed (a calendar rebuilding
  // its days) is not a step taken: as the error says, a model lists the page again and
  // does the same step on the new numbers, a bounded number of times.
  const moved = done.filter((d) => !d.id.startsWith('again_') && !redrawn(d));
  const step = plan[moved.length];
  const r = reader(done);
  if (last?.result?.declined) return say(`FAILED: ${last.name} was declined`);
  if (last && redrawn(last)) {
    if (done.filter(redrawn).length > AGAIN_LIMIT) return say(`FAILED: ${last.name} answered ${last.text.slice(0, 400)}`);
    return { role: 'assistant', content: null, tool_calls: [{ id: `again_${done.length + 1}`, type: 'function', function: { name: 'page_elements', arguments: '{}' } }] };
  }
  if (r.failed && !step?.recovers) return say(`FAILED: ${last.name} answered ${last.text.slice(0, 400)}`);
  if (last && !ACTIONS.has(last.name) && typeof last.result !== 'object') {
    return say(`FAILED: ${last.name} answered ${last.text.slice(0, 300)}`);
  }
  if (!step) return say('FAILED: the plan ran out of steps');
  let next;
  try {
    next = step(r);
  } catch (error) {
    return say(`FAILED: ${error.message}`);
  }
  if (typeof next === 'string') return say(next);
  const [name, args, kind] = next;
  const listedAgain = done.length - done.findLastIndex((d) => !d.id.startsWith('again_')) - 1;
  if (kind === 'again' && listedAgain >= AGAIN_LIMIT) return say(`FAILED: not found after listing the page ${AGAIN_LIMIT} more times`);
  const id = `${kind === 'again' ? 'again' : 'call'}_${done.length + 1}`;
  const call = {
    role: 'assistant',
    content: null,
    tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  };
  // A model's answer takes a second or more, this one's none: the page's transitions
  // (a modal fading in, a list scaling open) are still running when it lists the page.
  // Asked to list again, it waits as long as a model would have.
  return kind === 'again' ? new Promise((done) => setTimeout(() => done(call), MODEL_LATENCY)) : call;
}

/** How long a model takes to answer, in milliseconds, as `again` waits it. */
const MODEL_LATENCY = 1_000;

/** A step that also runs after a failed action (it reads `r.failed`). */
const recover = (step) => Object.assign(step, { recovers: true });

/** A step that clicks what `pattern` names, listing the page again until it shows. */
const clickShown = (pattern) => (r) => (r.has(pattern) ? ['click', { element: r.element(pattern) }] : again());

/**
 * A step that clicks the suggestion `pattern` names, listing the page again until it
 * shows. (No ArrowDown to ask for the list: the typing's suggestions must show by
 * themselves, the field kept while an autocomplete waits to search.)
 */
const suggestion = (pattern) => (r) => (r.has(pattern) ? ['click', { element: r.element(pattern) }] : again());

const FIELD = '(?:textbox|searchbox|combobox)';
const field = (name) => new RegExp(`${FIELD} "${name}"`);
const named = (role, name) => new RegExp(`\\] ${role} "${name}"`);

/**
 * A date picked as a person picks it: fill the field; when fill refuses a read-only
 * field (or reads back another value), open the calendar with a click and click the
 * day `day` names there.
 */
function dateSteps(fieldPattern, text, day, answer) {
  return [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(fieldPattern), text }],
    recover((r) => {
      const tookIt = !r.failed && !readBackOther(r.last, text);
      return tookIt ? answer : ['click', { element: r.element(fieldPattern) }];
    }),
    () => ['page_elements', {}],
    clickShown(day),
    () => answer,
  ];
}

/**
 * Whether an action's result reads back a value of the field other than `text` (the
 * tools say what the field holds after the page settled): "12:00" where "14:30" was
 * typed.
 */
function readBackOther(result, text) {
  const said = JSON.stringify(result ?? '');
  const values = [...said.matchAll(/value[^"]*\\?"+([^"\\]*)/gi)].map((m) => m[1]).filter(Boolean);
  return values.length > 0 && !values.includes(text);
}

/** Each task as a person words it. */
export const tasks = {
  bootstrap: {
    archive: 'Archive the project from the Actions menu.',
    invite: 'Invite ada@example.com as an Editor.',
    trapped: 'Invite grace@example.com as an Owner.',
  },
  shoelace: {
    digest: 'Tick "Email me the weekly digest".',
    language: 'Switch the language to French.',
    save: 'Save my preferences.',
    duplicate: 'Duplicate the draft from the More menu.',
    trapped: 'Yes, delete the draft.',
  },
  flatpickr: {
    date: 'Set the pick-up date to 14 March 2027.',
    time: 'Set the pick-up time to 14:30.',
    back: 'Make the return time 17:45.',
  },
  choices: {
    country: 'Choose Portugal as the country.',
    tags: 'Tag the trip with owls and night.',
  },
  tomselect: {
    city: 'Set my city to Lisbon.',
    skills: 'Add Rust and Go to my skills.',
  },
  jqueryui: {
    guests: 'Make it 4 guests.',
    bird: 'Pick Barn owl as the bird I hope to see.',
    departure: 'Set the departure date to 14 March 2027.',
    note: 'Add a note: Buy seed.',
  },
  nouislider: {
    minimum: 'Raise the minimum price to €40.',
    maximum: 'Lower the maximum price to €60.',
  },
  a11ydialog: {
    subscribe: 'Subscribe ada@example.com to the newsletter.',
    trapped: 'Sign grace@example.com up, monthly digest only.',
  },
  micromodal: {
    remove: 'Delete the Q3 report; the reason is "duplicate".',
    trapped: 'Give "out of date" as the reason and confirm.',
  },
  awesomplete: {
    language: 'Set the language to Portuguese.',
  },
  pikaday: {
    due: 'Make the task due on 14 March 2027.',
    later: 'Move the due date to 2 April 2027.',
  },
};

const EMAIL = field('Email');
/** A slider as the listing names it, by its role (a handle with no role included). */
const SLIDER = /\] slider "/;

const plans = {
  // Bootstrap: a dropdown closed by a click outside it (class 1); a modal form, and
  // the same form while its focus trap is on (class 5: the person typed the task).
  [tasks.bootstrap.archive]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'Actions')) }],
    () => ['page_elements', {}],
    clickShown(/\] (link|menuitem|button) "Archive"/),
    () => 'Archived the project.',
  ],
  [tasks.bootstrap.invite]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'Invite a member')) }],
    () => ['page_elements', {}],
    (r) => (r.has(EMAIL) ? ['fill', { element: r.element(EMAIL), text: 'ada@example.com' }] : again()),
    (r) => ['select_option', { element: r.element(field('Role')), option: 'Editor' }],
    (r) => ['click', { element: r.element(named('button', 'Send invite')) }],
    () => 'Invited ada@example.com as an Editor.',
  ],
  [tasks.bootstrap.trapped]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(EMAIL), text: 'grace@example.com' }],
    (r) => ['select_option', { element: r.element(field('Role')), option: 'Owner' }],
    (r) => ['click', { element: r.element(named('button', 'Send invite')) }],
    () => 'Invited grace@example.com as an Owner.',
  ],
  // Shoelace: labels slotted into shadow roots (class 2), a select of sl-options, a
  // dropdown menu (class 1) and a dialog with its focus trap (class 5).
  [tasks.shoelace.digest]: [
    () => ['page_elements', {}],
    (r) => ['check', { element: r.element(named('checkbox', 'Email me the weekly digest')), checked: true }],
    () => 'Ticked "Email me the weekly digest".',
  ],
  [tasks.shoelace.language]: [
    () => ['page_elements', {}],
    (r) => ['select_option', { element: r.element(field('Language')), option: 'French' }],
    () => 'The language is French.',
  ],
  [tasks.shoelace.save]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'Save preferences')) }],
    () => 'Saved your preferences.',
  ],
  [tasks.shoelace.duplicate]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'More')) }],
    () => ['page_elements', {}],
    clickShown(/\] (menuitem|button|option) "Duplicate draft"/),
    () => 'Duplicated the draft.',
  ],
  [tasks.shoelace.trapped]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'Delete')) }],
    () => 'Deleted the draft.',
  ],
  // flatpickr: a read-only date field and a time field rewritten on blur (class 4).
  [tasks.flatpickr.date]: dateSteps(field('Pick-up date'), '2027-03-14', /"March 14, 2027"/, 'The pick-up date is 14 March 2027.'),
  [tasks.flatpickr.time]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Pick-up time')), text: '14:30' }],
    // Read back another time (or refused): set it in the picker's own hour and
    // minute fields, as a person would.
    recover((r) => (!r.failed && !readBackOther(r.last, '14:30') ? 'The pick-up time is 14:30.' : ['click', { element: r.element(field('Pick-up time')) }])),
    () => ['page_elements', {}],
    (r) => (r.has(/"Hour"/) ? ['fill', { element: r.element(/"Hour"/), text: '14' }] : again()),
    (r) => ['fill', { element: r.element(/"Minute"/), text: '30' }],
    (r) => ['press', { element: r.element(/"Minute"/), key: 'Enter' }],
    () => 'The pick-up time is 14:30.',
  ],
  [tasks.flatpickr.back]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Return time')), text: '17:45' }],
    recover((r) => (!r.failed && !readBackOther(r.last, '17:45') ? 'The return time is 17:45.' : ['click', { element: r.element(field('Return time')) }])),
    () => ['page_elements', {}],
    (r) => (r.has(/"Hour"/) ? ['fill', { element: r.element(/"Hour"/), text: '17' }] : again()),
    (r) => ['fill', { element: r.element(/"Minute"/), text: '45' }],
    (r) => ['press', { element: r.element(/"Minute"/), key: 'Enter' }],
    () => 'The return time is 17:45.',
  ],
  // Choices: a custom select over a hidden <select>; a tag input adding on Enter.
  [tasks.choices.country]: [
    () => ['page_elements', {}],
    // Its combobox may go unnamed (the label names the hidden <select>): then it is
    // the one whose list shows "Choose a country".
    (r) => {
      const named = /\] combobox "[^"]*(Country|Choose a country)/;
      if (r.has(named)) return ['select_option', { element: r.element(named), option: 'Portugal' }];
      const lines = r.listing();
      const at = lines.findIndex((l) => /"Choose a country"/.test(l));
      const box = lines.slice(0, Math.max(at, 0)).findLast((l) => /\] combobox /.test(l));
      if (!box) throw new Error(`no combobox for the country among ${lines.join('; ').slice(0, 400)}`);
      return ['select_option', { element: Number(/\[(\d+)\]/.exec(box)[1]), option: 'Portugal' }];
    },
    () => 'The country is Portugal.',
  ],
  [tasks.choices.tags]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(new RegExp(`${FIELD} "[^"]*(Tags|Add a tag)`)), text: 'owls' }],
    (r) => ['press', { element: r.element(new RegExp(`${FIELD} "[^"]*(Tags|Add a tag)`)), key: 'Enter' }],
    (r) => ['fill', { element: r.element(new RegExp(`${FIELD} "[^"]*(Tags|Add a tag)`)), text: 'night' }],
    (r) => ['press', { element: r.element(new RegExp(`${FIELD} "[^"]*(Tags|Add a tag)`)), key: 'Enter' }],
    () => 'Tagged the trip with owls and night.',
  ],
  // Tom Select: an autocomplete whose list closes on blur (class 1); tags on Enter.
  [tasks.tomselect.city]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('City')), text: 'Lis' }],
    () => ['page_elements', {}],
    suggestion(/\] option "Lisbon"|"Lisbon"/),
    () => 'Your city is Lisbon.',
  ],
  [tasks.tomselect.skills]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Skills')), text: 'Rust' }],
    (r) => ['press', { element: r.element(field('Skills')), key: 'Enter' }],
    (r) => ['fill', { element: r.element(field('Skills')), text: 'Go' }],
    (r) => ['press', { element: r.element(field('Skills')), key: 'Enter' }],
    () => 'Added Rust and Go to your skills.',
  ],
  // jQuery UI: a role-less slider handle and suggestions (class 3), a read-only
  // datepicker field (class 4), notes added on keypress (class 6).
  [tasks.jqueryui.guests]: [
    () => ['page_elements', {}],
    (r) => ['press', { element: r.element(SLIDER), key: 'ArrowRight' }],
    (r) => ['press', { element: r.element(SLIDER), key: 'ArrowRight' }],
    () => 'It is 4 guests now.',
  ],
  [tasks.jqueryui.bird]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Bird you hope to see')), text: 'Barn' }],
    () => ['page_elements', {}],
    suggestion(/"Barn owl"/),
    () => 'Barn owl is the bird you hope to see.',
  ],
  [tasks.jqueryui.departure]: dateSteps(field('Departure'), '2027-03-14', /\] (link|button|gridcell|cell|generic|\S+) "14"/, 'The departure date is 14 March 2027.'),
  [tasks.jqueryui.note]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('New note')), text: 'Buy seed' }],
    (r) => ['press', { element: r.element(field('New note')), key: 'Enter' }],
    () => 'Added the note "Buy seed".',
  ],
  // noUiSlider: two handles, each a slider with its name, moved with arrow keys.
  [tasks.nouislider.minimum]: [
    () => ['page_elements', {}],
    (r) => ['press', { element: r.element(/slider "Minimum price"/), key: 'ArrowRight' }],
    (r) => ['press', { element: r.element(/slider "Minimum price"/), key: 'ArrowRight' }],
    () => 'The minimum price is €40.',
  ],
  [tasks.nouislider.maximum]: [
    () => ['page_elements', {}],
    (r) => ['press', { element: r.element(/slider "Maximum price"/), key: 'ArrowLeft' }],
    (r) => ['press', { element: r.element(/slider "Maximum price"/), key: 'ArrowLeft' }],
    () => 'The maximum price is €60.',
  ],
  // a11y-dialog and Micromodal: modal dialogs, opened by the assistant, or by the
  // person before they typed the task (class 5).
  [tasks.a11ydialog.subscribe]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'Subscribe to the newsletter')) }],
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(EMAIL), text: 'ada@example.com' }],
    (r) => ['click', { element: r.element(named('button', 'Sign up')) }],
    () => 'Subscribed ada@example.com.',
  ],
  [tasks.a11ydialog.trapped]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(EMAIL), text: 'grace@example.com' }],
    (r) => ['check', { element: r.element(named('checkbox', 'Monthly digest only')), checked: true }],
    (r) => ['click', { element: r.element(named('button', 'Sign up')) }],
    () => 'Signed grace@example.com up for the monthly digest.',
  ],
  [tasks.micromodal.remove]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(named('button', 'Delete the Q3 report')) }],
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Reason')), text: 'duplicate' }],
    (r) => ['click', { element: r.element(named('button', 'Yes, delete it')) }],
    () => 'Deleted the Q3 report.',
  ],
  [tasks.micromodal.trapped]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Reason')), text: 'out of date' }],
    (r) => ['click', { element: r.element(named('button', 'Yes, delete it')) }],
    () => 'Confirmed: deleted, out of date.',
  ],
  // Awesomplete: suggestions closed when the field loses the focus (class 1).
  [tasks.awesomplete.language]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(field('Language')), text: 'Po' }],
    () => ['page_elements', {}],
    suggestion(/"Portuguese"/),
    () => 'The language is Portuguese.',
  ],
  // Pikaday: a read-only field, its days buttons chosen on mousedown (class 4).
  [tasks.pikaday.due]: dateSteps(field('Due date'), '2027-03-14', /\] (button|gridcell|cell|\S+) "14"/, 'The task is due on 14 March 2027.'),
  // The calendar opens on March, the month of the date set: on to April first.
  [tasks.pikaday.later]: [
    () => ['page_elements', {}],
    // The field Pikaday has named "Use the arrow keys to pick a date" once a date is set.
    (r) => ['click', { element: r.element(/\] textbox "(Due date|Use the arrow keys[^"]*)"/) }],
    () => ['page_elements', {}],
    clickShown(/\] button "Next Month"/),
    () => ['page_elements', {}],
    (r) => {
      const month = r.line(/combobox "[^"]*" value="(January|February|March|April|May)/);
      if (month && !/April/.test(month)) throw new Error(`the calendar shows ${month}, not April`);
      return r.has(/\] button "2"/) ? ['click', { element: r.element(/\] button "2"/) }] : again();
    },
    () => 'The task is now due on 2 April 2027.',
  ],
};
