// Story copilot (seed 003): a narrative designer's copilot on Familiar's public JS API.
// The page owns the story graph and answers the agent's tools itself, by request id over
// a MessagePort (`function_call` in, `function_result` out, as the seed's client does
// over its socket); the agent runs under the supervisor (`supervisor: true`): it
// analyses the request, plans it, runs the executor on the whole plan, and decides.
// Offline, the page's own deterministic planner answers as the model (`model.respond`,
// copilot-planner.js); with `?model=URL&name=MODEL` a proxy model plans instead. The
// scene the designer is in reaches each run as what the agent perceives
// (`environment`: `current_scene_id: N`), and the node tools put their node there.
// Plain JavaScript.
import init, { createAgent } from '../../familiar-demo.js';
import { planner } from './copilot-planner.js';

const GRAPH = 'arrow.copilot.graph';
const VIEW = 'arrow.copilot.view';

// --- The story graph, saved after every change -------------------------------------

const fresh = () => ({ nodes: [], connections: [], variables: [], characters: [], next: 1, answered: {}, scene: 1 });
let graph = read(GRAPH) ?? fresh();
let view = read(VIEW) ?? { stage: '', tasks: [], activity: [], answer: '' };
/** The messages the host exchanged with the agent over the port, in order (this page load). */
const wire = [];
/** The scenes a designer can be in; nodes are made in the current one. */
const SCENES = ['The gate', 'The market', 'The tower', 'The woods', 'The tavern'];
const currentScene = () => graph.scene ?? 1;

function read(key) {
  try {
    return JSON.parse(localStorage.getItem(key));
  } catch {
    return null;
  }
}

function save() {
  localStorage.setItem(GRAPH, JSON.stringify(graph));
  localStorage.setItem(VIEW, JSON.stringify(view));
}

const id = (prefix) => `${prefix}${graph.next++}`;
const node = (nodeId) => graph.nodes.find((n) => n.id === nodeId);
const isName = (name) => typeof name === 'string' && /^[A-Za-z_][A-Za-z0-9_]{0,39}$/.test(name);

/** A node of `type` in scene `scene` (the current one unless the call names one). */
function addNode(type, scene, fields) {
  if (scene !== undefined && !(Number.isInteger(scene) && scene >= 1 && scene <= SCENES.length)) {
    throw new Error(`no scene ${JSON.stringify(scene)}: scenes are 1 to ${SCENES.length}`);
  }
  const created = { id: id('n'), type, scene: scene ?? currentScene(), ...fields };
  graph.nodes.push(created);
  return { id: created.id, type };
}

function character(characterId) {
  const found = graph.characters.find((c) => c.id === characterId);
  if (!found) {
    const known = graph.characters.map((c) => `${c.id} (${c.name})`).join(', ') || 'none yet';
    throw new Error(`no character "${characterId}": create_character first (characters: ${known})`);
  }
  return found;
}

function variable(name) {
  const found = graph.variables.find((v) => v.name === name);
  if (!found) throw new Error(`no variable "${name}": create_variable first`);
  return found;
}

/** What is wrong with the graph, for `validate_graph` and the Checks list. */
function problems() {
  const found = [];
  const out = (n) => graph.connections.filter((c) => c.from === n.id);
  const into = (n) => graph.connections.filter((c) => c.to === n.id);
  for (const n of graph.nodes) {
    if (n.type === 'condition') {
      const labels = out(n).map((c) => c.label);
      if (!labels.includes('true') || !labels.includes('false')) found.push(`condition ${n.id} needs a "true" and a "false" branch`);
    }
    if (n.type === 'hub' && out(n).length < 2) found.push(`hub ${n.id} offers fewer than two choices`);
    if (graph.nodes.length > 1 && out(n).length === 0 && into(n).length === 0) found.push(`node ${n.id} is not connected`);
  }
  return found;
}

// --- The tools the copilot is given: the page answers each ---------------------------

const object = (properties, required) => ({ type: 'object', properties, required, additionalProperties: false });
/** A node tool's parameters: its own, and the scene to put it in. */
const inScene = (properties, required) => object({
  ...properties,
  scene_id: { type: 'integer', description: 'The scene to add the node to: the current_scene_id you perceive. Default: the current scene.' },
}, required);
const TOOLS = [
  {
    name: 'create_character', kind: 'action', description: 'Create a character who can speak in dialog nodes. Returns its id.',
    parameters: object({ name: { type: 'string' } }, ['name']),
    run: ({ name }) => {
      const same = graph.characters.find((c) => c.name.toLowerCase() === String(name).toLowerCase());
      if (same) throw new Error(`a character named ${same.name} already exists (id ${same.id})`);
      if (!String(name).trim()) throw new Error('a character needs a name');
      const created = { id: id('c'), name: String(name).trim() };
      graph.characters.push(created);
      return created;
    },
  },
  {
    name: 'create_variable', kind: 'action', approval: 'ask',
    description: 'Create a project-wide variable (boolean, number or string) that conditions read and updates change. Asks the designer first.',
    parameters: object({ name: { type: 'string' }, type: { type: 'string', enum: ['boolean', 'number', 'string'] }, initial: {} }, ['name', 'type']),
    run: ({ name, type, initial }) => {
      if (!isName(name)) throw new Error(`"${name}" is not a variable name: use letters, digits and _`);
      if (graph.variables.some((v) => v.name === name)) throw new Error(`a variable named ${name} already exists`);
      const fallback = { boolean: false, number: 0, string: '' }[type];
      const created = { id: id('v'), name, type, initial: initial ?? fallback };
      graph.variables.push(created);
      return created;
    },
  },
  {
    name: 'create_dialog_node', kind: 'action', description: 'A node where a character speaks some lines. Returns the node id.',
    parameters: inScene({ character_id: { type: 'string' }, lines: { type: 'array', items: { type: 'string' } } }, ['character_id', 'lines']),
    run: ({ character_id: speaker, lines, scene_id: scene }) => {
      const who = character(speaker);
      if (!lines.length) throw new Error('a dialog node needs at least one line');
      return addNode('dialog', scene, { character: who.id, speaker: who.name, text: lines.join(' ') });
    },
  },
  {
    name: 'create_content_node', kind: 'action', description: 'A node of narration. Returns the node id.',
    parameters: inScene({ text: { type: 'string' } }, ['text']),
    run: ({ text, scene_id: scene }) => addNode('content', scene, { text }),
  },
  {
    name: 'create_hub_node', kind: 'action', description: 'A node offering the player choices: connect it to each choice with a label. Returns the node id.',
    parameters: inScene({ title: { type: 'string' } }, ['title']),
    run: ({ title, scene_id: scene }) => addNode('hub', scene, { text: title }),
  },
  {
    name: 'create_condition_node', kind: 'action',
    description: 'A node that branches on a variable: connect its "true" and "false" branches. Returns the node id.',
    parameters: inScene({ variable: { type: 'string' }, equals: {} }, ['variable', 'equals']),
    run: ({ variable: name, equals, scene_id: scene }) => addNode('condition', scene, { variable: variable(name).name, equals, text: `${name} = ${JSON.stringify(equals)}?` }),
  },
  {
    name: 'create_variable_update_node', kind: 'action', description: 'A node that sets a variable when the story passes it. Returns the node id.',
    parameters: inScene({ variable: { type: 'string' }, value: {} }, ['variable', 'value']),
    run: ({ variable: name, value, scene_id: scene }) => addNode('update', scene, { variable: variable(name).name, value, text: `${name} ← ${JSON.stringify(value)}` }),
  },
  {
    name: 'create_connection', kind: 'action',
    description: 'Connect node `from` to node `to` (a condition\'s branches are labelled "true" and "false"; a hub\'s by the choice).',
    parameters: object({ from: { type: 'string' }, to: { type: 'string' }, label: { type: 'string' } }, ['from', 'to']),
    run: ({ from, to, label = '' }) => {
      const known = graph.nodes.map((n) => n.id).join(', ') || 'none yet';
      for (const end of [from, to]) {
        if (!node(end)) throw new Error(`no node "${end}": connections join existing nodes (${known})`);
      }
      if (from === to) throw new Error('a node cannot lead to itself');
      if (graph.connections.some((c) => c.from === from && c.to === to)) throw new Error(`${from} already leads to ${to}`);
      const created = { id: id('e'), from, to, label };
      graph.connections.push(created);
      return created;
    },
  },
  {
    name: 'validate_graph', kind: 'data', description: 'Check the story graph: every condition has both branches, every hub two choices, nothing left unconnected.',
    run: () => ({ ok: problems().length === 0, problems: problems(), nodes: graph.nodes.length, connections: graph.connections.length }),
  },
];

/**
 * Answers the agent's `function_call`s on our end of the port. A request id seen
 * before (a run resumed after a reload repeats the call it never heard back about) is
 * answered from the record, so nothing is created twice.
 */
function answerCalls(port) {
  port.onmessage = ({ data }) => {
    if (data?.type !== 'function_call') return;
    wire.push(data);
    const { request_id: requestId, function: name, arguments: args } = data;
    let answer = graph.answered[requestId];
    if (!answer) {
      const tool = TOOLS.find((t) => t.name === name);
      try {
        answer = { success: true, result: tool.run(args ?? {}) };
      } catch (error) {
        answer = { success: false, result: error.message };
      }
      graph.answered[requestId] = answer;
      save();
    }
    const reply = { type: 'function_result', request_id: requestId, ...answer };
    wire.push(reply);
    port.postMessage(reply);
    render();
  };
}

// --- The graph view ------------------------------------------------------------------

const svg = document.getElementById('graph');
const NS = 'http://www.w3.org/2000/svg';
const el = (name, attrs = {}, text) => {
  const made = document.createElementNS(NS, name);
  for (const [k, v] of Object.entries(attrs)) made.setAttribute(k, v);
  if (text !== undefined) made.textContent = text;
  return made;
};

/** Columns by depth from the nodes nothing leads to; rows in creation order. */
function layout() {
  const depth = {};
  const roots = graph.nodes.filter((n) => !graph.connections.some((c) => c.to === n.id));
  const queue = roots.map((n) => [n.id, 0]);
  while (queue.length) {
    const [at, d] = queue.shift();
    if (depth[at] !== undefined && depth[at] >= d) continue;
    depth[at] = d;
    if (d < graph.nodes.length) for (const c of graph.connections.filter((e) => e.from === at)) queue.push([c.to, d + 1]);
  }
  const rows = {};
  const place = {};
  for (const n of graph.nodes) {
    const d = depth[n.id] ?? 0;
    rows[d] = (rows[d] ?? 0) + 1;
    place[n.id] = { x: 10 + d * 230, y: 10 + (rows[d] - 1) * 95 };
  }
  return place;
}

/** `text` in at most `lines` lines of at most `width` characters, broken between words. */
function wrap(text, width, lines) {
  const out = [''];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const line = out[out.length - 1];
    if (!line || line.length + 1 + word.length <= width) out[out.length - 1] = line ? `${line} ${word}` : word.slice(0, width);
    else out.push(word.slice(0, width));
  }
  if (out.length <= lines) return out;
  const kept = out.slice(0, lines);
  kept[lines - 1] = `${kept[lines - 1].slice(0, width - 1)}…`;
  return kept;
}

function render() {
  const place = layout();
  const width = Math.max(760, ...Object.values(place).map((p) => p.x + 180));
  const height = Math.max(420, ...Object.values(place).map((p) => p.y + 90));
  svg.setAttribute('width', width);
  svg.setAttribute('height', height);
  const defs = el('defs');
  const marker = el('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 7, markerHeight: 7, orient: 'auto' });
  marker.append(el('path', { d: 'M0,0 L10,5 L0,10 z' }));
  defs.append(marker);
  const parts = [defs];
  for (const c of graph.connections) {
    const a = place[c.from];
    const b = place[c.to];
    if (!a || !b) continue;
    const edge = el('g', { class: 'edge', 'data-from': c.from, 'data-to': c.to, 'data-label': c.label });
    edge.append(el('line', { x1: a.x + 150, y1: a.y + 35, x2: b.x, y2: b.y + 35, 'marker-end': 'url(#arrow)' }));
    // The label sits on the first third of the edge, clear of the node it leads to.
    if (c.label) edge.append(el('text', { x: a.x + 156, y: a.y + 35 + (b.y - a.y) / 4 - 5 }, c.label));
    parts.push(edge);
  }
  for (const n of graph.nodes) {
    const p = place[n.id];
    const g = el('g', { class: `node ${n.type}`, 'data-id': n.id, 'data-type': n.type, 'data-scene': n.scene ?? 1, transform: `translate(${p.x},${p.y})` });
    g.append(el('rect', { width: 150, height: 70, rx: 8 }));
    g.append(el('text', { x: 8, y: 16, class: 'kind' }, `${n.id} · ${n.type}${n.speaker ? ` · ${n.speaker}` : ''}`));
    const words = String(n.text ?? '');
    wrap(words, 24, 2).forEach((line, i) => g.append(el('text', { x: 8, y: 36 + i * 17, class: 'body' }, line)));
    g.append(el('title', {}, `Scene ${n.scene ?? 1}: ${words}`));
    parts.push(g);
  }
  svg.replaceChildren(...parts);
  const list = (target, items) => document.getElementById(target).replaceChildren(
    ...items.map((text) => Object.assign(document.createElement('li'), { textContent: text })),
  );
  list('variables', graph.variables.map((v) => `${v.name}: ${v.type} = ${JSON.stringify(v.initial)}`));
  list('characters', graph.characters.map((c) => `${c.name} (${c.id})`));
  list('problems', graph.nodes.length ? (problems().length ? problems() : ['The graph checks out.']) : []);
  document.getElementById('stage').textContent = view.stage;
  list('plan', view.tasks);
  list('activity', view.activity);
  document.getElementById('answer').textContent = view.answer;
  document.getElementById('scene').value = String(currentScene());
  list('wire', wire.map((m) => JSON.stringify(m)));
}

// --- The copilot ----------------------------------------------------------------------

const status = (text) => { document.getElementById('status').textContent = text; };

const tasks = (n) => `${n} task${n === 1 ? '' : 's'}`;
const STAGES = {
  analysing: () => 'Analysing the request…',
  assessed: (s) => `The request is ${s.level.toLowerCase()}: ${s.reason}`,
  planning: () => 'Planning…',
  planned: (s) => `Plan of ${tasks(s.tasks.length)}`,
  executing: (s) => `Executing round ${s.round} of at most ${s.max_rounds}${s.tasks ? ` (${tasks(s.tasks)})` : ''}`,
  deciding: () => 'Checking the result…',
  decided: (s) => (s.done ? `Done: ${s.summary}` : `Not done: ${s.summary}`),
};

function note(text) {
  view.activity.push(text);
  view.activity = view.activity.slice(-80);
  save();
  render();
}

const respond = planner(() => graph);

function modelConfig() {
  const query = new URLSearchParams(location.search);
  if (query.get('model')) return { url: query.get('model'), model: query.get('name') ?? 'default' };
  return { respond };
}

await init({ module_or_path: new URL('../../familiar-demo_bg.wasm', import.meta.url) });
const agent = await createAgent({
  name: 'copilot',
  namespace: 'arrow.copilot',
  instructions: 'You are the copilot of a narrative design tool. Build what the designer asks in the story graph, only through your tools, then say briefly what you built.',
  model: modelConfig(),
  supervisor: true,
  maxSteps: 24,
  // What the copilot perceives as each request starts: the scene the designer is in
  // (seed 003's `current_scene_id`, which its client sends with every message).
  environment: () => `current_scene_id: ${currentScene()}`,
});
const { port1, port2 } = new MessageChannel();
answerCalls(port2);
// The port's other end is this page's own graph, not another party's: its answers are
// ours (`author: "own"`), so reading them does not make later actions ask.
for (const { run, ...tool } of TOOLS) agent.registerTool({ ...tool, author: 'own', timeoutMs: 30_000, handler: port1 });

agent.on('supervisor', (s) => {
  view.stage = STAGES[s.stage]?.(s) ?? s.stage;
  if (s.stage === 'planned') view.tasks = s.tasks;
  if (s.stage === 'analysing') view.tasks = [];
  note(`Supervisor: ${view.stage}`);
});
// The activity list speaks in words and names, not tool ids and JSON (issue 61).
const words = (name) => name.replaceAll('_', ' ');
agent.on('tool_started', (e) => note(`→ ${words(e.call.name)}: ${argumentsInWords(e.call.arguments)}`));
agent.on('thought', (e) => {
  if (e.type !== 'tool_return') return;
  note(e.result.error ? `✗ ${words(e.tool)}: ${e.result.error}` : `✓ ${words(e.tool)}: ${argumentsInWords(JSON.stringify(e.result.ok))}`);
});
/** A call's arguments in words: `{"name":"has_key","initial":false}` is "name has_key, initial false";
 * a character by its name, a scene by its number, lines quoted. */
function argumentsInWords(text) {
  try {
    const args = JSON.parse(text);
    if (args === null || typeof args !== 'object') return String(args);
    return Object.entries(args).map(([k, v]) => {
      if (k === 'character_id') return graph.characters.find((c) => c.id === v)?.name ?? `character ${v}`;
      if (k === 'scene_id') return `scene ${v}`;
      const shown = Array.isArray(v) ? v.map((x) => (typeof x === 'string' ? `“${x}”` : JSON.stringify(x))).join(' ')
        : typeof v === 'string' ? v : JSON.stringify(v);
      return `${words(k)} ${shown}`;
    }).join(', ');
  } catch {
    return text;
  }
}
agent.on('approval_needed', (e) => {
  document.getElementById('approval-text').textContent = `The copilot wants to ${e.call.name.replaceAll('_', ' ')}: ${argumentsInWords(e.call.arguments)}.`;
  document.getElementById('approval').hidden = false;
  status('Waiting for your approval');
  // The next thing to do is here: focus goes to the decision, and back after it.
  document.getElementById('approve').focus();
});
agent.on('decided', () => closeApproval());

/** Hides the approval; focus, when it was on it, goes back to the request box. */
function closeApproval() {
  const box = document.getElementById('approval');
  const had = box.contains(document.activeElement);
  box.hidden = true;
  if (had) document.getElementById('prompt').focus();
}

async function run(work) {
  document.getElementById('send').disabled = true;
  status('Working…');
  view.answer = '';
  render();
  try {
    const outcome = await work();
    view.answer = outcome.text ?? outcome.reason ?? outcome.error ?? '';
  } catch (error) {
    view.answer = `The copilot could not run: ${error.message}`;
  } finally {
    document.getElementById('send').disabled = false;
    closeApproval();
    save();
    render();
    status('Ready: ask the copilot.');
  }
}

document.getElementById('ask').addEventListener('submit', (e) => {
  e.preventDefault();
  const prompt = document.getElementById('prompt');
  const text = prompt.value.trim();
  if (!text) return;
  prompt.value = '';
  view.activity = [];
  note(`You: ${text}`);
  run(() => agent.send(text));
});
for (const example of document.querySelectorAll('.example')) {
  example.addEventListener('click', () => { document.getElementById('prompt').value = example.textContent; });
}
/** Decides the call the panel shows; a click after it was decided changes nothing. */
function decide(approve) {
  const [waiting] = agent.pending();
  closeApproval();
  if (!waiting) return;
  if (approve) agent.approve(waiting);
  else agent.deny(waiting, 'the designer said no');
}
// Enter sends, as in a chat; Shift+Enter starts a new line.
document.getElementById('prompt').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    document.getElementById('ask').requestSubmit();
  }
});
document.getElementById('approve').addEventListener('click', () => decide(true));
document.getElementById('deny').addEventListener('click', () => decide(false));
document.getElementById('stop').addEventListener('click', () => agent.abort());
const scenePicker = document.getElementById('scene');
scenePicker.replaceChildren(...SCENES.map((name, i) => Object.assign(document.createElement('option'), { value: String(i + 1), textContent: `${i + 1}: ${name}` })));
scenePicker.addEventListener('change', () => {
  graph.scene = Number(scenePicker.value);
  save();
});
document.getElementById('clear').addEventListener('click', () => {
  graph = fresh();
  view = { stage: '', tasks: [], activity: [], answer: '' };
  save();
  render();
});

// A plan a reload cut off: offered to resume (nothing it created is created again).
const cut = agent.interrupted().find((r) => !r.refused);
const resumeBox = document.getElementById('resume');
if (cut) {
  resumeBox.hidden = false;
  document.getElementById('resume-run').addEventListener('click', () => {
    resumeBox.hidden = true;
    note('Resuming the plan a reload cut off');
    run(() => agent.resume(cut.conversation));
  });
  document.getElementById('discard-run').addEventListener('click', () => {
    resumeBox.hidden = true;
    agent.discardInterrupted(cut.conversation);
  });
}

render();
// For tests and the console: the page's own handles, nothing of the runtime's insides.
window.copilot = { get graph() { return graph; }, get wire() { return [...wire]; }, agent, respond };
status('Ready: ask the copilot.');
