// Mossbrook Market: a small game whose three NPCs are Familiar agents. The game owns
// its state; the NPCs change it only through the host tools it registers (move, say,
// give, trade, attack, and look to read it), each run starts from a game event
// (`trigger`), only the actions that event allows can run, and costly actions (trade,
// attack) pass the game's own rule in `onApproval`. Plain JavaScript, a DOM board.
import init, { createAgent } from '../../familiar-demo.js';

const W = 9;
const H = 7;
const SAVE = 'mossbrook.game';
const STEP_MS = 90; // one cell of an animated move

const fresh = () => ({
  player: { x: 4, y: 5, gold: 6, hp: 10, items: [] },
  npcs: {
    mira: { x: 1, y: 1, glyph: 'M', items: ['apple', 'apple', 'apple', 'bread', 'bread'], gold: 0 },
    brann: { x: 7, y: 5, glyph: 'B', items: [] },
    wren: { x: 6, y: 1, glyph: 'W', items: ['flower', 'flower'] },
  },
  wanted: false,
  log: [],
});

// Each NPC: who it is (its own instructions and storage namespace), and the offline
// rules that stand in for a model: a keyword in the event picks a tool call.
const NPCS = {
  mira: {
    instructions: 'You are Mira, a sharp-tongued merchant. You sell apples and bread at two gold each. Act only through your tools.',
    rules: [
      { keywords: ['stole', 'stolen'], tool: 'say', arguments: { text: 'Stop, thief! Guards!', shout: true }, answer: 'Mira shouts for the guard.' },
      { keywords: ['buy'], tool: 'trade', arguments: { item: '{rest}', price: 2 }, answer: 'Mira sells {item} for {price} gold.' },
      { keywords: ['near'], tool: 'say', arguments: { text: 'Fresh apples and bread, two gold apiece!' }, answer: 'Mira calls out her wares.' },
    ],
  },
  brann: {
    instructions: 'You are Brann, the market guard: slow to anger, quick to act against thieves. Act only through your tools.',
    rules: [
      { keywords: ['thief'], tool: 'move', arguments: { toward: 'player' }, answer: 'Brann marches to {at}.' },
      { keywords: ['reach'], tool: 'attack', arguments: { target: 'player' }, answer: 'Brann strikes: {result}' },
      { keywords: ['near'], tool: 'say', arguments: { text: 'Keep your hands to yourself, stranger.' }, answer: 'Brann eyes you.' },
    ],
  },
  wren: {
    instructions: 'You are Wren, a wandering fiddler who gives flowers to anyone who listens. Act only through your tools.',
    rules: [
      { keywords: ['bell'], tool: 'move', arguments: { toward: 'anywhere' }, answer: 'Wren wanders to {at}.' },
      { keywords: ['near'], tool: 'give', arguments: { item: 'flower', to: 'player' }, answer: 'Wren gives you a {item}.' },
    ],
  },
};

// --- The game's state, saved after every change ----------------------------------

let state = load() ?? fresh();

function load() {
  try {
    return JSON.parse(localStorage.getItem(SAVE));
  } catch {
    return null;
  }
}

function save() {
  localStorage.setItem(SAVE, JSON.stringify(state));
}

function log(text) {
  state.log.push(text);
  state.log = state.log.slice(-60);
  save();
  render();
}

const near = (a, b) => Math.max(Math.abs(a.x - b.x), Math.abs(a.y - b.y)) <= 1;
const occupied = (x, y) => [state.player, ...Object.values(state.npcs)].some((p) => p.x === x && p.y === y);
const label = (name) => name[0].toUpperCase() + name.slice(1);

// --- The board -------------------------------------------------------------------

const board = document.getElementById('board');
const pieces = {};

function buildBoard() {
  for (let y = 0; y < H; y += 1) {
    for (let x = 0; x < W; x += 1) {
      const cell = document.createElement('div');
      cell.className = x <= 1 && y <= 1 ? 'cell stall' : 'cell';
      board.append(cell);
    }
  }
  for (const name of ['player', ...Object.keys(NPCS)]) {
    const piece = document.createElement('div');
    piece.className = 'piece';
    piece.dataset.name = name;
    piece.innerHTML = '<span class="glyph"></span><span class="name"></span>';
    piece.querySelector('.name').textContent = name === 'player' ? 'You' : label(name);
    board.append(piece);
    pieces[name] = piece;
  }
}

function render() {
  for (const [name, who] of Object.entries({ player: state.player, ...state.npcs })) {
    const piece = pieces[name];
    piece.dataset.at = `${who.x},${who.y}`;
    // Placed by the stylesheet from its cell (the board's cells shrink on a phone).
    piece.style.setProperty('--x', who.x);
    piece.style.setProperty('--y', who.y);
    piece.querySelector('.glyph').textContent = name === 'player' ? '@' : who.glyph;
  }
  // The board as words for a screen reader: who stands where.
  const where = Object.entries({ player: state.player, ...state.npcs })
    .map(([name, who]) => `${name === 'player' ? 'You' : label(name)} at column ${who.x + 1}, row ${who.y + 1}`);
  board.setAttribute('aria-label', `The market, ${W} by ${H}, the stall at the top left: ${where.join('; ')}.`);
  document.getElementById('gold').textContent = state.player.gold;
  document.getElementById('hp').textContent = state.player.hp;
  document.getElementById('items').textContent = state.player.items.join(', ') || 'nothing';
  document.getElementById('wanted').textContent = state.wanted ? 'yes' : 'no';
  const list = document.getElementById('log');
  list.replaceChildren(...state.log.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
  list.scrollTop = list.scrollHeight;
}

function bubble(name, text, shout) {
  const piece = pieces[name];
  piece.querySelector('.bubble')?.remove();
  const note = Object.assign(document.createElement('div'), { className: shout ? 'bubble shout' : 'bubble', textContent: text });
  piece.append(note);
  setTimeout(() => note.remove(), 2500);
}

// --- The host tools: the only way an NPC changes the game ------------------------

const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** Where `toward` points for NPC `me`: the player, another NPC, the stall, or anywhere free. */
function goal(me, toward) {
  if (toward === 'player') return state.player;
  if (state.npcs[toward]) return state.npcs[toward];
  if (toward === 'stall') return { x: 1, y: 1 };
  if (toward === 'anywhere') {
    for (let tries = 0; tries < 50; tries += 1) {
      const spot = { x: Math.floor(Math.random() * W), y: Math.floor(Math.random() * H) };
      if (!occupied(spot.x, spot.y)) return spot;
    }
    return me;
  }
  throw new Error(`unknown place "${toward}": say player, stall, anywhere or an NPC's name`);
}

function tools(name) {
  const me = () => state.npcs[name];
  const object = (properties, required) => ({ type: 'object', properties, required, additionalProperties: false });
  return [
    {
      name: 'look', kind: 'data', description: 'Where everyone is, what you carry and whether the player is wanted.',
      handler: () => ({ you: me(), player: state.player, wanted: state.wanted, others: state.npcs }),
    },
    {
      name: 'move', kind: 'action', approval: 'auto', timeoutMs: 5000,
      description: 'Walk up to six cells toward the player, the stall, another NPC by name, or anywhere.',
      parameters: object({ toward: { type: 'string' } }, ['toward']),
      handler: async ({ toward }) => {
        const target = goal(me(), toward);
        const there = () => (target === state.player || state.npcs[toward] ? near(me(), target) : me().x === target.x && me().y === target.y);
        for (let n = 0; n < 6 && !there(); n += 1) {
          const next = { x: me().x + Math.sign(target.x - me().x), y: me().y + Math.sign(target.y - me().y) };
          if (occupied(next.x, next.y)) break;
          Object.assign(me(), next);
          save();
          render();
          await sleep(STEP_MS); // animated as it happens: one cell at a time
        }
        if (name === 'brann' && state.wanted && near(me(), state.player)) {
          fire('brann', 'thief.cornered', 'The wanted player is within your reach.', ['attack', 'say']);
        }
        return { at: `${me().x},${me().y}`, arrived: there() };
      },
    },
    {
      name: 'say', kind: 'action', approval: 'auto', description: 'Say something aloud; shout to be heard across the market.',
      parameters: object({ text: { type: 'string' }, shout: { type: 'boolean' } }, ['text']),
      handler: ({ text, shout = false }) => {
        bubble(name, text, shout);
        log(`${label(name)}${shout ? ' shouts' : ' says'}: “${text}”`);
        if (shout && name !== 'brann' && state.wanted) {
          fire('brann', 'shout.heard', `${label(name)} shouts that a thief is at the stall.`, ['move', 'say']);
        }
        return { said: text };
      },
    },
    {
      name: 'give', kind: 'action', approval: 'auto', description: 'Give one of your items to the player or another NPC.',
      parameters: object({ item: { type: 'string' }, to: { type: 'string' } }, ['item', 'to']),
      handler: ({ item, to }) => {
        const index = me().items.indexOf(item);
        if (index < 0) throw new Error(`${label(name)} has no ${item}`);
        const receiver = to === 'player' ? state.player : state.npcs[to];
        if (!receiver) throw new Error(`nobody called "${to}" is here`);
        me().items.splice(index, 1);
        receiver.items = [...(receiver.items ?? []), item];
        log(`${label(name)} gives ${to === 'player' ? 'you' : label(to)} a ${item}.`);
        return { item, to, left: me().items.length };
      },
    },
    {
      name: 'trade', kind: 'action', approval: 'ask', description: 'Sell the player one of your items for a price in gold.',
      parameters: object({ item: { type: 'string' }, price: { type: 'integer' } }, ['item', 'price']),
      handler: ({ item, price }) => {
        me().items.splice(me().items.indexOf(item), 1);
        me().gold = (me().gold ?? 0) + price;
        state.player.gold -= price;
        state.player.items.push(item);
        log(`${label(name)} sells you ${item} for ${price} gold.`);
        return { item, price, gold: state.player.gold };
      },
    },
    {
      name: 'attack', kind: 'action', approval: 'ask', description: 'Strike someone within reach.',
      parameters: object({ target: { type: 'string' } }, ['target']),
      handler: ({ target }) => {
        state.player.hp -= 3;
        const stolen = state.player.items.filter((i) => i === 'apple').length;
        state.player.items = state.player.items.filter((i) => i !== 'apple');
        state.npcs.mira.items.push(...Array(stolen).fill('apple'));
        state.wanted = false;
        pieces[target]?.classList.add('hit');
        setTimeout(() => pieces[target]?.classList.remove('hit'), 300);
        log(`${label(name)} strikes you (−3 health) and takes back ${stolen} ${stolen === 1 ? 'apple' : 'apples'}.`);
        return { result: `hit for 3, ${stolen} ${stolen === 1 ? 'apple' : 'apples'} returned`, hp: state.player.hp };
      },
    },
  ];
}

/** The game's rule for costly actions: fair trades it can pay for, force only on a wanted thief in reach. */
function rule(name, { call }) {
  let args;
  try {
    args = JSON.parse(call.arguments);
  } catch {
    return { approve: false, reason: 'unreadable arguments' };
  }
  const me = state.npcs[name];
  if (call.name === 'trade') {
    if (!me.items.includes(args.item)) return { approve: false, reason: `${label(name)} has no ${args.item} left` };
    if (!(args.price >= 1 && args.price <= 5)) return { approve: false, reason: 'the market allows prices of 1 to 5 gold' };
    if (state.player.gold < args.price) return { approve: false, reason: 'the player cannot pay that' };
    return true;
  }
  if (call.name === 'attack') {
    if (args.target !== 'player' || !state.wanted) return { approve: false, reason: 'the guard strikes only a wanted thief' };
    if (!near(me, state.player)) return { approve: false, reason: 'the thief is out of reach' };
    return true;
  }
  return false;
}

// --- The NPCs and the game's events -------------------------------------------------

const agents = {};
const queues = {};
const thinking = {};

function modelFor(name) {
  const query = new URLSearchParams(location.search);
  if (query.get('model')) return { url: query.get('model'), model: query.get('name') ?? 'default', stream: false };
  return { rules: NPCS[name].rules, fallback: `${label(name)} shrugs.` };
}

async function spawn(name) {
  const agent = await createAgent({
    name,
    namespace: `mossbrook.${name}`,
    instructions: NPCS[name].instructions,
    model: modelFor(name),
    maxSteps: 4,
    goalCheck: false,
  });
  for (const tool of tools(name)) agent.registerTool(tool);
  agent.onApproval((pending) => rule(name, pending));
  agent.on('step_started', () => pieces[name].classList.add('thinking'));
  agent.on('decided', (e) => {
    if (e.decision === 'denied') log(`The game refuses ${label(name)}: ${e.reason}`);
  });
  agents[name] = agent;
  queues[name] = Promise.resolve();
}

/**
 * Sends NPC `name` a game event; its runs take turns. Resolves to the run's outcome
 * and never rejects: a failed run (a bad model answer, a proxy down) is logged.
 */
function fire(name, event, content, allowedActions) {
  const run = async () => {
    thinking[name] = (thinking[name] ?? 0) + 1;
    try {
      const outcome = await agents[name].trigger({
        kind: event.split('.')[0], event, actor: { name: label(name) }, subject: content, allowedActions,
      });
      if (outcome.type === 'failed') log(`(${label(name)} is confused: ${outcome.error})`);
      return outcome;
    } catch (error) {
      log(`(${label(name)} could not act: ${error.message})`);
      return { type: 'failed', error: String(error.message) };
    } finally {
      thinking[name] -= 1;
      pieces[name].classList.toggle('thinking', thinking[name] > 0);
    }
  };
  const outcome = queues[name].then(run);
  queues[name] = outcome;
  return outcome;
}

/** The player moves one cell; an NPC the player comes near notices. */
function step(dx, dy) {
  const p = state.player;
  const to = { x: p.x + dx, y: p.y + dy };
  if (to.x < 0 || to.y < 0 || to.x >= W || to.y >= H || occupied(to.x, to.y)) return;
  const before = Object.fromEntries(Object.entries(state.npcs).map(([n, npc]) => [n, near(p, npc)]));
  Object.assign(p, to);
  save();
  render();
  for (const [name, npc] of Object.entries(state.npcs)) {
    if (near(p, npc) && !before[name]) fire(name, 'player.near', 'The player comes near you.', ['say', 'give']);
  }
}

function buy() {
  if (!near(state.player, state.npcs.mira)) return log('Mira is too far away to buy from.');
  return fire('mira', 'trade.requested', 'The player wants to buy bread', ['trade', 'say']);
}

function steal() {
  const mira = state.npcs.mira;
  if (!near(state.player, mira)) return log('Nothing within reach to steal.');
  const index = mira.items.indexOf('apple');
  if (index < 0) return log('No apples left to steal.');
  mira.items.splice(index, 1);
  state.player.items.push('apple');
  state.wanted = true;
  log('You steal an apple from the stall.');
  return fire('mira', 'item.stolen', 'The player stole an apple from your stall!', ['say']);
}

/** The market bell: a timer event for Wren. */
function bell() {
  return fire('wren', 'clock.bell', 'The market bell rings the hour.', ['move', 'say']);
}

// --- Start -------------------------------------------------------------------------

buildBoard();
render();
await init({ module_or_path: new URL('../../familiar-demo_bg.wasm', import.meta.url) });
for (const name of Object.keys(NPCS)) await spawn(name);

const keys = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };
document.addEventListener('keydown', (e) => {
  if (keys[e.key]) {
    e.preventDefault();
    step(...keys[e.key]);
  } else if (e.key === 'b' || e.key === 'B') buy();
  else if (e.key === 's' || e.key === 'S') steal();
});
for (const button of document.querySelectorAll('[data-move]')) {
  button.addEventListener('click', () => step(...button.dataset.move.split(',').map(Number)));
}
document.getElementById('buy').addEventListener('click', buy);
document.getElementById('steal').addEventListener('click', steal);
document.getElementById('restart').addEventListener('click', () => {
  state = fresh();
  save();
  render();
});
setInterval(bell, 20_000);

// For tests and the console: the game's own handles, nothing of the runtime's insides.
window.market = { get state() { return state; }, agents, fire, step, buy, steal, bell };
document.getElementById('status').textContent = 'Ready: the NPCs are listening.';
