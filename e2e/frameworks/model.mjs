// The scripted model of e2e/frameworks.test.mjs: each task as a person words it, the
// plan of tool calls a model makes for it, and the model that answers the assistant's
// requests by reading the page tools' results in the turn so far.

/**
 * The turn under way: the person's task, the tool calls since, each with its parsed
 * result, and the runtime's own notes to the model (a failed action's) if any.
 */
function turnOf(body) {
  const start = body.messages.findLastIndex((m) => m.role === 'user' && Object.hasOwn(plans, m.content));
  const calls = new Map();
  const done = [];
  const notes = [];
  for (const m of body.messages.slice(start + 1)) {
    for (const call of m.tool_calls ?? []) calls.set(call.id, call.function);
    if (m.role === 'user') notes.push(m.content);
    if (m.role !== 'tool') continue;
    const call = calls.get(m.tool_call_id) ?? { name: '?', arguments: '{}' };
    let result;
    try {
      result = JSON.parse(m.content);
    } catch {
      result = m.content;
    }
    done.push({ name: call.name, args: JSON.parse(call.arguments || '{}'), result, text: m.content });
  }
  return { task: body.messages[start]?.content, done, notes };
}

/** What a step reads of the turn so far: the last result and the latest element lines. */
function reader(done) {
  const last = done.at(-1);
  return {
    last: last?.result,
    /** The number of the element whose line in the latest listing matches `pattern`. */
    element(pattern) {
      const listings = done.filter((d) => Array.isArray(d.result?.elements)).reverse();
      for (const { result } of listings) {
        const line = result.elements.find((l) => pattern.test(l));
        if (line) return Number(/\[(\d+)\]/.exec(line)[1]);
      }
      const seen = listings[0]?.result.elements ?? [];
      throw new Error(`no element matches ${pattern} among the ${seen.length} listed: ${seen.join('; ').slice(0, 400)}`);
    },
  };
}

const ACTIONS = new Set(['click', 'fill', 'select_option', 'check', 'scroll_to', 'highlight', 'press', 'submit', 'double_click', 'hover']);

/**
 * The model: the task's plan, a list of steps; step i answers once i tools have run in
 * this turn, with a tool call [name, args] or the final text. A failed action, or a
 * step that cannot find what it needs, ends the turn with "FAILED: why".
 */
export function scripted(body) {
  const { task, done, notes } = turnOf(body);
  if (process.env.FAMILIAR_FRAMEWORKS_LOG) console.log(JSON.stringify({ task, done: done.at(-1) }));
  const say = (content) => ({ role: 'assistant', content });
  if (!task) return say('FAILED: no task this model knows');
  if (notes.length) return say(`FAILED: ${notes.at(-1).slice(0, 300)}`);
  const plan = plans[task];
  const last = done.at(-1);
  if (last && ACTIONS.has(last.name) && typeof last.result?.done !== 'string') {
    return say(`FAILED: ${last.name} answered ${last.text.slice(0, 300)}`);
  }
  if (last && !ACTIONS.has(last.name) && typeof last.result !== 'object') {
    return say(`FAILED: ${last.name} answered ${last.text.slice(0, 300)}`);
  }
  const step = plan[done.length];
  if (!step) return say('FAILED: the plan ran out of steps');
  let next;
  try {
    next = step(reader(done));
  } catch (error) {
    return say(`FAILED: ${error.message}`);
  }
  if (typeof next === 'string') return say(next);
  const [name, args] = next;
  return {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: `call_${done.length + 1}`, type: 'function', function: { name, arguments: JSON.stringify(args) } }],
  };
}

const NEW_TODO = /textbox "What needs to be done\?"/;
export const countIn = (text) => /(\d+) items? left/.exec(text)?.[1];

/** Each task as a person words it, and the steps a model takes for it. */
export const tasks = {
  todo: {
    add: 'Add "Bake bread" to my list.',
    done: 'Mark "Call grandma" as done.',
    filter: 'Show only the active items.',
    clear: 'Clear the completed items.',
    count: 'How many items are left?',
  },
  form: {
    error: 'Sign me up as Ada Lovelace, then tell me what the form says is missing.',
    finish: 'My email is ada@example.com. Finish the sign-up with the Pro plan and accept the terms.',
    framed: 'Sign me up as Ada Lovelace, ada@example.com, on the Pro plan, and accept the terms.',
  },
  table: {
    search: 'Search the table for owl.',
    next: 'Go to the next page.',
    cell: 'What is the wingspan of the Long-eared owl?',
  },
  dialog: {
    invite: 'Invite ada@example.com as an Editor.',
    escape: 'Open the invite dialog, then press Escape to close it.',
  },
  modal: {
    rename: 'Rename the project to "Barn owl census".',
    escape: 'Open the rename dialog, then press Escape to close it.',
  },
};

const plans = {
  [tasks.todo.add]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(NEW_TODO), text: 'Bake bread' }],
    (r) => ['press', { element: r.element(NEW_TODO), key: 'Enter' }],
    () => 'Added "Bake bread".',
  ],
  [tasks.todo.done]: [
    () => ['page_elements', {}],
    (r) => ['check', { element: r.element(/checkbox "[^"]*Call grandma/), checked: true }],
    () => 'Marked "Call grandma" as done.',
  ],
  [tasks.todo.filter]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/link "Active"/) }],
    () => 'Showing the active items.',
  ],
  [tasks.todo.clear]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/button "Clear completed"/) }],
    () => 'Cleared the completed items.',
  ],
  // As a model would: the page's text first, then a search for the words a count has.
  [tasks.todo.count]: [
    () => ['read_page', {}],
    (r) => {
      const n = countIn(r.last.text);
      return n ? `${n} items left.` : ['find_in_page', { text: 'left' }];
    },
    (r) => {
      const n = countIn(r.last.matches.join(' '));
      if (!n) throw new Error(`neither read_page nor find_in_page shows "N items left" (find_in_page: ${JSON.stringify(r.last.matches)})`);
      return `${n} items left (read_page left the count out; find_in_page found it).`;
    },
  ],
  [tasks.form.error]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(/textbox "Full name"/), text: 'Ada Lovelace' }],
    (r) => ['click', { element: r.element(/button "Next"/) }],
    () => ['find_in_page', { text: 'required' }],
    (r) => {
      const said = r.last.matches.find((m) => /email is required/i.test(m));
      if (!said) throw new Error(`no "Email is required" after Next (find_in_page: ${JSON.stringify(r.last.matches)})`);
      return 'The form says: Email is required.';
    },
  ],
  [tasks.form.finish]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(/textbox "Email"/), text: 'ada@example.com' }],
    (r) => ['click', { element: r.element(/button "Next"/) }],
    () => ['page_elements', {}],
    (r) => ['select_option', { element: r.element(/combobox "Plan"/), option: 'Pro' }],
    (r) => ['check', { element: r.element(/checkbox "I accept the terms"/), checked: true }],
    (r) => ['click', { element: r.element(/button "Create account"/) }],
    () => ['find_in_page', { text: 'welcome' }],
    (r) => {
      if (!r.last.matches.length) throw new Error('no welcome after Create account');
      return `Done: ${r.last.matches[0]}`;
    },
  ],
  // The form in the host page's frame: one read holds the host's text and the frame's,
  // and the frame's fields are numbered with the host's own link.
  [tasks.form.framed]: [
    () => ['read_page', {}],
    (r) => {
      const missing = ['Join the Barn Owl Trust', 'Create your account'].filter((s) => !r.last.text.includes(s));
      if (missing.length) throw new Error(`read_page lacks ${missing.join(' and ')}: ${JSON.stringify(r.last.text.slice(0, 300))}`);
      return ['page_elements', {}];
    },
    (r) => {
      r.element(/link "Read our privacy notice"/);
      return ['fill', { element: r.element(/textbox "Full name"/), text: 'Ada Lovelace' }];
    },
    (r) => ['fill', { element: r.element(/textbox "Email"/), text: 'ada@example.com' }],
    (r) => ['click', { element: r.element(/button "Next"/) }],
    () => ['page_elements', {}],
    (r) => ['select_option', { element: r.element(/combobox "Plan"/), option: 'Pro' }],
    (r) => ['check', { element: r.element(/checkbox "I accept the terms"/), checked: true }],
    (r) => ['click', { element: r.element(/button "Create account"/) }],
    () => ['find_in_page', { text: 'welcome' }],
    (r) => {
      if (!r.last.matches.length) throw new Error('no welcome after Create account');
      return `Done: ${r.last.matches[0]}`;
    },
  ],
  [tasks.table.search]: [
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(/(textbox|searchbox) "Search birds"/), text: 'owl' }],
    () => 'Searched for owl.',
  ],
  [tasks.table.next]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/button "Next"/) }],
    () => 'On the next page.',
  ],
  [tasks.table.cell]: [
    () => ['read_page', {}],
    (r) => {
      const cm = /Long-eared owl\b.{0,80}?(\d+) cm/s.exec(r.last.text)?.[1];
      if (!cm) throw new Error(`read_page has no Long-eared owl row: ${JSON.stringify(r.last.text.slice(0, 300))}`);
      return `The Long-eared owl's wingspan is ${cm} cm.`;
    },
  ],
  [tasks.dialog.invite]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/button "Invite a member"/) }],
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(/textbox "Email"/), text: 'ada@example.com' }],
    (r) => ['select_option', { element: r.element(/combobox "Role"/), option: 'Editor' }],
    (r) => ['click', { element: r.element(/button "Send invite"/) }],
    () => 'Invited ada@example.com as an Editor.',
  ],
  [tasks.dialog.escape]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/button "Invite a member"/) }],
    () => ['page_elements', {}],
    (r) => ['press', { element: r.element(/button "Cancel"/), key: 'Escape' }],
    () => 'Closed the dialog.',
  ],
  [tasks.modal.rename]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/button "Rename"/) }],
    () => ['page_elements', {}],
    (r) => ['fill', { element: r.element(/textbox "Project name"/), text: 'Barn owl census' }],
    (r) => ['click', { element: r.element(/button "Save"/) }],
    () => 'Renamed the project to Barn owl census.',
  ],
  [tasks.modal.escape]: [
    () => ['page_elements', {}],
    (r) => ['click', { element: r.element(/button "Rename"/) }],
    () => ['page_elements', {}],
    (r) => ['press', { element: r.element(/button "Cancel"/), key: 'Escape' }],
    () => 'Closed the dialog.',
  ],
};
