// The story copilot's offline planner: the page's own deterministic model
// (`createAgent({model: {respond}})`). It answers the supervisor's three JSON stages
// (Complexity, TaskPlan, Judgement) and, as the executor, makes the tool calls that
// carry the plan out, reading each result the run got back.
//
// It understands requests through a small grammar over the story's parts, not a list
// of sentences: a request is cut into clauses (sentences, "then", "and" before a
// verb), and each clause names what to make — a character, a variable, a dialog
// node (a speaker, found among the story's characters or created first, and a speech
// act or quoted words), narration, a hub of choices, a condition, a variable update,
// a check of the graph — or is the branching dialog
// "NAME greets the player, and if FLAG is true she …, otherwise she …". Nodes made by
// one request are connected in the order asked. Each node lands in the scene the
// designer is in, which the run perceives (`current_scene_id: N`, the agent's
// environment). Anything else is declined with what it can do offline.

/** Verbs that start a new clause after "and". */
const VERBS = new Set(['add', 'build', 'check', 'connect', 'create', 'give', 'make', 'narrate', 'set', 'validate', 'write', 'describe']);
/** Capitalised words that are not names. */
const STOP = new Set(['Build', 'Create', 'Add', 'Make', 'Write', 'If', 'Then', 'The', 'She', 'He', 'They', 'Otherwise', 'Request', 'Plan', 'Carry', 'Still', 'A', 'An', 'Do', 'Greetings', 'Ah', 'Set', 'Connect', 'Check', 'Validate', 'Narrate', 'Describe', 'First', 'Finally', 'Next', 'And', 'Hello', 'Welcome', 'Farewell', 'Thank', 'Player', 'I', 'Please', 'Give']);
/** Speech acts a dialog line is written from, when the request quotes no words. */
const SPEECH = [
  [/\b(greets|welcomes|greet|welcome)\b/i, () => 'Hello, traveller! Welcome.'],
  [/\b(thanks|thank)\b/i, () => 'Thank you, friend.'],
  [/\b(says goodbye|bids farewell|farewells)\b/i, () => 'Farewell, traveller.'],
  [/\b(warns|warn)\b/i, () => 'Careful: the road ahead is not safe.'],
  [/\basks (?:the player |them |you )?(?:about |for )?(.+)$/i, (m) => `Tell me about ${m[1].replace(/[.?!]+$/, '')}?`],
];
const SPEAKS = /\b(greets|welcomes|thanks|says|bids|warns|asks|tells|answers|replies|shouts|whispers|speaks|talks)\b/i;

const quotedWords = (text) => text.match(/"([^"]+)"|“([^”]+)”/)?.slice(1).find(Boolean);
const capitalised = (text) => text.charAt(0).toUpperCase() + text.slice(1);
const parse = (text) => {
  try {
    return JSON.parse(text);
  } catch {
    return { error: text };
  }
};

/** `request` cut into clauses: sentences, then "then", then "and" before a verb. */
export function clausesOf(request) {
  const out = [];
  for (const sentence of request.split(/(?<=[.;!?])\s+|\n+/)) {
    let current = [];
    const words = sentence.split(/\s+/).filter(Boolean);
    for (let i = 0; i < words.length; i += 1) {
      const word = words[i].toLowerCase().replace(/[^a-z]/g, '');
      const next = (words[i + 1] ?? '').toLowerCase().replace(/[^a-z]/g, '');
      const cut = word === 'then' || (word === 'and' && (next === 'then' || VERBS.has(next)));
      if (cut && current.length) {
        out.push(current.join(' '));
        current = [];
      }
      if (cut && word === 'and' && next === 'then') i += 1;
      if (!cut) current.push(words[i]);
    }
    if (current.length) out.push(current.join(' '));
  }
  return out
    .map((c) => c.replace(/^(first|then|next|finally|also),?\s+/i, '').replace(/[\s,.;:]+$/, '').trim())
    .filter(Boolean)
    .map(capitalised);
}

/** The planner: what `request` asks, as tasks and the steps that carry them out. */
export function recipe(request, story) {
  keys = 0;
  const branch = branching(request);
  if (branch) return branch;
  const parts = clausesOf(request).map((clause) => ({ clause, made: intent(clause, story) }));
  if (!parts.length || parts.some((p) => !p.made)) return null;
  const tasks = parts.map((p) => p.clause);
  const steps = parts.flatMap((p) => p.made);
  const nodes = steps.filter((s) => s.node);
  if (nodes.length > 1) {
    tasks.push('Connect the new nodes in order');
    for (let i = 1; i < nodes.length; i += 1) steps.push(connect(nodes[i - 1].node, nodes[i].node));
  }
  return { tasks, steps, summary: (c) => said(c) };
}

/** The steps one clause asks for, or `null` when the grammar does not know it. */
function intent(clause, story) {
  const variable = clause.match(/\bvariable (?:called |named )?([A-Za-z_]\w*)/i)?.[1];
  const setTo = clause.match(/\bset (?:the variable )?([A-Za-z_]\w*) to ("?[\w.-]+"?)/i);
  const condition = clause.match(/\b(?:condition|branch|check) on ([A-Za-z_]\w*)(?: (?:being|is|=) (\S+))?/i)
    ?? clause.match(/\bif ([a-z_]\w*) is (\S+)/i);
  const name = speaker(clause, story);
  if (/\bvalidate\b|\bcheck the (?:graph|story)\b/i.test(clause)) return [validate()];
  if (setTo) return [update(setTo[1], value(setTo[2]), story)];
  if (variable) return [variableStep(variable, /\bnumber\b/i.test(clause) ? 'number' : /\b(text|string)\b/i.test(clause) ? 'string' : 'boolean')];
  if (/\bcharacter\b/i.test(clause) && name) return [characterStep(name)];
  if (condition) return [conditionStep(condition[1], value(condition[2] ?? 'true'), story)];
  if (/\b(hub|choice|choices|menu)\b/i.test(clause)) return [hub(clause)];
  if (/\b(narration|narrate|describe|content node|narrative text)\b/i.test(clause)) return [content(clause)];
  if (name && (/\bdialog(ue)?\b/i.test(clause) || SPEAKS.test(clause))) return dialog(name, clause, story);
  return null;
}

/** Who speaks in `clause`: after "where", else the first name-like word. */
function speaker(clause, story) {
  const words = [...clause.matchAll(/\b([A-Z][a-z][\w'-]*)\b/g)].map((m) => m[1]).filter((w) => !STOP.has(w));
  const known = words.find((w) => story.characters.some((c) => c.name.toLowerCase() === w.toLowerCase()));
  return clause.match(/\bwhere ([A-Z][\w'-]*)/)?.[1] ?? known ?? words[0];
}

const value = (text) => {
  const bare = String(text).replace(/^"|"$/g, '');
  if (bare === 'true' || bare === 'false') return bare === 'true';
  return Number.isFinite(Number(bare)) && bare !== '' ? Number(bare) : bare;
};

// --- Steps: a tool call each, with what its result teaches the next ---------------

/** `name`'s character id: the one this run made or found, else the story's. */
const characterId = (c, story, name) => c.characters[name]
  ?? story.characters.find((k) => k.name.toLowerCase() === name.toLowerCase())?.id;

const withScene = (c, args) => (c.scene === undefined ? args : { ...args, scene_id: c.scene });

export const characterStep = (name, { onlyIfMissing = null } = {}) => ({
  tool: 'create_character',
  what: `create ${name}`,
  skip: onlyIfMissing && ((c) => characterId(c, onlyIfMissing, name) !== undefined),
  args: () => ({ name }),
  took: (result, c) => { c.characters[name] = result.id; c.made.push(`Created ${name} (${result.id})`); },
  // Seen in the error: the character exists, and its id is there to use.
  recover: (error, c) => {
    const existing = error.match(/already exists \(id (\w+)\)/)?.[1];
    if (existing) c.characters[name] = existing;
    if (existing) c.notes.push(`${name} already existed (${existing}); I used that one`);
    return Boolean(existing);
  },
});

export const variableStep = (name, type = 'boolean') => ({
  tool: 'create_variable',
  what: `create the variable ${name}`,
  args: () => ({ name, type, initial: { boolean: false, number: 0, string: '' }[type] }),
  took: (_, c) => { c.made.push(`Created the variable ${name}`); },
  recover: (error, c) => {
    const exists = /already exists/.test(error);
    if (exists) c.notes.push(`${name} already existed; I used it`);
    return exists;
  },
});

/** A node step: its id is kept under `key` for the connections after it. */
const nodeStep = (key, tool, what, args, made) => ({
  tool,
  what,
  node: key,
  args: (c) => withScene(c, args(c)),
  took: (result, c) => { c[key] = result.id; c.made.push(made(result, c)); },
});

let keys = 0;
const nextKey = (kind) => `${kind}${(keys += 1)}`;

function dialog(name, clause, story) {
  const quoted = quotedWords(clause);
  const act = SPEECH.map(([pattern, line]) => [clause.match(pattern), line]).find(([m]) => m);
  const line = quoted ?? (act ? act[1](act[0]) : `(${clause.replace(/^.*?\bwhere\s+/i, '')}.)`);
  return [
    characterStep(name, { onlyIfMissing: story }),
    nodeStep(nextKey('dialog'), 'create_dialog_node', `write ${name}'s line`,
      (c) => ({ character_id: characterId(c, story, name) ?? name, lines: [line] }),
      () => `Created dialog node for ${name}`),
  ];
}

const content = (clause) => {
  const text = quotedWords(clause) ?? (clause.split(/:\s*/).slice(1).join(': ') || clause);
  return nodeStep(nextKey('content'), 'create_content_node', 'write the narration', () => ({ text }), () => 'Created a narration node');
};

const hub = (clause) => {
  const title = quotedWords(clause) ?? (clause.split(/:\s*/).slice(1).join(': ') || clause);
  return nodeStep(nextKey('hub'), 'create_hub_node', 'offer the choice', () => ({ title }), () => 'Created a hub of choices');
};

const conditionStep = (variable, equals) => nodeStep(nextKey('condition'), 'create_condition_node', `branch on ${variable}`,
  () => ({ variable, equals }), () => `Created a condition on ${variable}`);

const update = (variable, to) => nodeStep(nextKey('update'), 'create_variable_update_node', `set ${variable}`,
  () => ({ variable, value: to }), () => `Created a node setting ${variable} to ${JSON.stringify(to)}`);

const validate = () => ({
  tool: 'validate_graph',
  what: 'validate the graph',
  args: () => ({}),
  took: (result, c) => { c.valid = result.ok; c.problems = result.problems ?? []; },
});

const connect = (from, to, label) => ({
  tool: 'create_connection',
  what: `connect ${from} to ${to}`,
  args: (c) => ({ from: c[from], to: c[to], ...(label ? { label } : {}) }),
  took: (_, c) => { c.connected += 1; },
});

/** What the executor says it did. */
function said(c) {
  const parts = [...c.made];
  if (c.connected) parts.push(`Connected them in order (${c.connected} connection${c.connected === 1 ? '' : 's'})`);
  const text = [`${parts.join('. ') || 'Nothing needed doing'}.`, ...c.notes.map((n) => `(${n}.)`)];
  if (c.valid !== undefined) text.push(c.valid ? 'The graph checks out.' : `Still wrong: ${c.problems.join('; ')}.`);
  return text.join(' ');
}

/** "NAME greets the player, and if FLAG is true she A, otherwise she B." */
function branching(request) {
  const who = [...request.matchAll(/\b([A-Z][a-z]+)\b/g)].map((m) => m[1]).find((w) => !STOP.has(w));
  const flag = request.match(/\b([a-z]+_[a-z0-9_]+)\b/)?.[1];
  const branch = request.match(/if \w+ is true,? (?:she|he|they) ([^,.]+?),? (?:otherwise|else),? (?:she|he|they) ([^.]+)/i);
  if (!(branch && who && flag)) return null;
  const line = (key, text) => ({
    tool: 'create_dialog_node',
    what: `write the ${key} line`,
    args: (c) => ({ character_id: c.characters[who], lines: [text] }),
    took: (result, c) => { c[key] = result.id; },
  });
  const sceneLine = (step) => ({ ...step, args: (c) => withScene(c, step.args(c)) });
  return {
    tasks: [
      `Create the character ${who}`,
      `Create the boolean variable ${flag}`,
      `Write ${who}'s greeting`,
      `Branch on ${flag}`,
      'Write what happens on each branch',
      'Connect the nodes',
      'Validate the graph',
    ],
    steps: [
      characterStep(who),
      variableStep(flag),
      sceneLine(line('greeting', 'Greetings, traveller. Do you carry the key?')),
      sceneLine({
        tool: 'create_condition_node',
        what: `branch on ${flag}`,
        args: () => ({ variable: flag, equals: true }),
        took: (result, c) => { c.condition = result.id; },
      }),
      sceneLine(line('yes', `${who} ${branch[1].trim()}.`)),
      sceneLine(line('no', `${who} ${branch[2].trim()}.`)),
      connect('greeting', 'condition'),
      connect('condition', 'yes', 'true'),
      connect('condition', 'no', 'false'),
      validate(),
    ],
    summary: (c) => [
      `Built ${who}'s branching dialog: a greeting, a condition on ${flag}, and a line for each branch.`,
      ...c.notes.map((n) => `(${n}.)`),
      c.valid ? 'The graph checks out.' : `Still wrong: ${c.problems.join('; ')}.`,
    ].join(' '),
  };
}

// --- The model ---------------------------------------------------------------------

/** Where the brief begins: the last user message that is not the loop's note after a result. */
function briefAt(messages) {
  let start = messages.length - 1;
  while (start > 0 && !(messages[start].role === 'user' && messages[start - 1].role !== 'tool')) start -= 1;
  return start;
}

/**
 * The calls this run made since its brief, each with what came back: an assistant
 * message's calls are answered by the tool messages right after it.
 */
function callsSince(messages, start) {
  const out = [];
  messages.forEach((m, i) => {
    if (i < start || m.role !== 'assistant' || !m.tool_calls?.length) return;
    const answers = [];
    for (let j = i + 1; messages[j]?.role === 'tool'; j += 1) answers.push(messages[j]);
    for (const call of m.tool_calls) {
      const answer = answers.find((a) => a.tool_call_id === call.id);
      if (answer) out.push({ name: call.name, result: parse(answer.content) });
    }
  });
  return out;
}

/** How many calls the run made since its brief: the next one's id is `call_{n + 1}`. */
const callCount = (messages, start) => messages.slice(start).reduce((n, m) => n + (m.tool_calls?.length ?? 0), 0);

/**
 * The executor's next move: the plan's steps replayed against the calls the run made
 * (a step skipped then, such as a character that already existed, is skipped again),
 * then the next call, or what was done.
 */
function execute(messages, story) {
  const start = briefAt(messages);
  const brief = messages[start]?.content ?? '';
  const plan = recipe(brief.split('\n\nThe whole plan:')[0], story);
  if (!plan) {
    return 'Offline I know characters, variables, dialog lines (who speaks, and a greeting, a thanks, a warning or quoted words), narration, choices, conditions, variable updates, connections in order, and a check of the graph — e.g. "Create a dialog where Elena greets the player". Configure a model for anything else.';
  }
  const scene = messages.slice(0, start + 1).map((m) => m.content.match(/current_scene_id: (\d+)/)?.[1]).filter(Boolean).pop();
  const c = { notes: [], done: [], made: [], characters: {}, connected: 0, scene: scene === undefined ? undefined : Number(scene) };
  const calls = callsSince(messages, start);
  let k = 0;
  for (const step of plan.steps) {
    const made = calls[k];
    if (!made) {
      if (step.skip?.(c)) continue;
      // Ids unique in the run, and the same when a resumed run asks again.
      const id = `call_${callCount(messages, start) + 1}`;
      return { toolCalls: [{ id, name: step.tool, arguments: step.args(c) }] };
    }
    // Skipped when it was planned: the run went on to the next step's tool.
    if (made.name !== step.tool && step.skip) continue;
    k += 1;
    const { result } = made;
    // The designer's "no" (`{"declined": …}`) is a decision, not a failure: nothing is
    // retried, and the answer says what was not done and what was, before it.
    if (result && typeof result === 'object' && 'declined' in result) return declinedAnswer(step, result.declined, c);
    if (result && typeof result === 'object' && 'error' in result) {
      if (!step.recover?.(String(result.error), c)) return `I could not ${step.what}: ${result.error}`;
    } else {
      step.took(result, c);
      c.done.push(step.what);
    }
  }
  return plan.summary(c);
}

/** What the executor says when the designer declined `step`: not done, and why. */
function declinedAnswer(step, why, c) {
  const reason = String(why ?? '').trim();
  const before = c.done.length ? ` Done before that: ${c.done.join(', ')}.` : ' Nothing was changed.';
  return `Not done: I did not ${step.what}, because you declined it${reason ? ` (${reason})` : ''}; I stopped there.${before}`;
}

/** The offline model over `story()`: the supervisor's JSON stages, and the executor's calls. */
export function planner(story) {
  return function respond(request) {
    const users = request.messages.filter((m) => m.role === 'user');
    const asked = users[users.length - 1]?.content ?? '';
    switch (request.responseFormat?.name) {
      case 'Complexity': {
        const plan = recipe(asked, story());
        const complex = (plan?.tasks.length ?? 1) > 1;
        return JSON.stringify({ level: complex ? 'COMPLEX' : 'SIMPLE', reason: complex ? `${plan.tasks.length} tasks` : 'one step' });
      }
      case 'TaskPlan':
        return JSON.stringify({ tasks: recipe(asked, story())?.tasks ?? ['Answer the request'] });
      case 'Judgement': {
        const report = asked.split("Executor's report:")[1] ?? '';
        // Declined by the designer: finished as they decided, not a failure to retry.
        if (/because you declined/i.test(report)) return JSON.stringify({ done: true, summary: report.trim() });
        const failed = /could not|still wrong|^\s*Offline I know/i.test(report);
        return JSON.stringify({ done: !failed, summary: failed ? report.trim() : 'every task is done' });
      }
      default:
        return execute(request.messages, story());
    }
  };
}
