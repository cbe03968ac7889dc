// A game NPC on the headless runtime: Grunt, an orc guard at the north gate. The
// game gives him two tools that change its state, runs him on a game event (goblins
// attack), lets a player talk to him, and decides in code whether he may open the
// gate. Offline: inline rules stand in for a model (swap `model` for
// `{ url, model }` to use an OpenAI-compatible proxy).
//
// Build the runtime with scripts/headless.sh, then serve this module (compiled, or
// through a bundler) next to pkg/. Type-checked by scripts/typecheck.sh.

import init, {
  createAgent,
  type AgentConfig,
  type ApprovalAnswer,
  type FamiliarAgent,
  type GameEvent,
  type Outcome,
  type PendingApproval,
  type SavedState,
  type ToolConfig,
  type Update,
} from '../pkg/familiar.js';

/** The game's own state, which only the tools change. */
const game = {
  gate: 'closed' as 'open' | 'closed',
  alarms: 0,
  /** How much Grunt trusts the player; he opens the gate from 2 up. */
  trust: 1,
  log: [] as string[],
};

const config: AgentConfig = {
  name: 'grunt',
  instructions: 'You are Grunt, an orc guarding the north gate. Speak in short, gruff sentences.',
  model: {
    rules: [
      {
        keywords: ['goblin', 'attack'],
        tool: 'sound_alarm',
        arguments: { level: 'high' },
        answer: 'HORN! Goblins! ({alarms} alarms today.)',
      },
      {
        keywords: ['open the gate', 'let me in'],
        tool: 'open_gate',
        arguments: { reason: '{message}' },
        answer: 'Gate is {gate}. Move.',
      },
    ],
    fallback: 'Grunt grunts.',
  },
  maxSteps: 4,
  // After an action on a game event, answer from its result rather than ask the
  // model whether the goal is complete.
  goalCheck: false,
  // Kept in memory only: the game saves Grunt with its own save file (see below).
  persist: false,
};

// Handlers get the arguments checked against `parameters`, and a request id that
// stays the same if a call is retried: apply an action once per id.
const applied = new Set<string>();

const soundAlarm: ToolConfig<{ level: 'low' | 'high' }> = {
  name: 'sound_alarm',
  description: 'Blows the war horn so the garrison comes to the gate.',
  kind: 'action',
  parameters: {
    type: 'object',
    properties: { level: { type: 'string', enum: ['low', 'high'] } },
    required: ['level'],
    additionalProperties: false,
  },
  handler: ({ level }, { requestId }) => {
    if (!applied.has(requestId)) {
      applied.add(requestId);
      game.alarms += 1;
      game.log.push(`alarm (${level})`);
    }
    return { alarms: game.alarms, level };
  },
};

const openGate: ToolConfig<{ reason: string }> = {
  name: 'open_gate',
  description: 'Opens the north gate for whoever asks.',
  kind: 'action',
  // The game decides (below, in onApproval) before this runs.
  approval: 'ask',
  timeoutMs: 5_000,
  parameters: {
    type: 'object',
    properties: { reason: { type: 'string' } },
    required: ['reason'],
  },
  handler: async ({ reason }) => {
    await new Promise((resolve) => setTimeout(resolve, 100)); // the winch is slow
    game.gate = 'open';
    game.log.push(`gate opened: ${reason}`);
    return { gate: game.gate };
  },
};

function decide(pending: PendingApproval): ApprovalAnswer {
  if (pending.call.name !== 'open_gate') {
    return false;
  }
  if (game.alarms > 0) {
    return { approve: false, reason: 'The horn has sounded: the gate stays shut.' };
  }
  return game.trust >= 2;
}

function show(outcome: Outcome): string {
  switch (outcome.type) {
    case 'answered':
    case 'goal_complete':
    case 'cap_reached':
      return outcome.text;
    case 'aborted':
      return `(stopped: ${outcome.reason})`;
    case 'budget_reached':
      return `(${outcome.reason})`;
    case 'failed':
      return `(failed: ${outcome.error})`;
  }
}

export async function main(): Promise<void> {
  await init();
  const grunt: FamiliarAgent = await createAgent(config);
  grunt.registerTool(soundAlarm);
  grunt.registerTool(openGate);
  grunt.onApproval(decide);

  const toolStarted = (update: Update) => {
    if (update.event === 'tool_started') {
      console.log(`[turn ${update.turn}] Grunt uses ${update.call.name} ${update.call.arguments}`);
    }
  };
  grunt.on('tool_started', toolStarted);
  grunt.on('done', (update: Update) => {
    if (update.event === 'done') {
      console.log(`[turn ${update.turn}] done (${update.type})`);
    }
  });

  // A game event: only the alarm is allowed while the battle starts.
  const attack: GameEvent = {
    kind: 'battle',
    event: 'battle.started',
    actor: { name: 'Grunt', state: { hp: 30, post: 'north gate' } },
    subject: { kind: 'battle', id: 3, content: 'Goblins attack the north gate!' },
    allowedActions: ['sound_alarm'],
  };
  const afterAttack: Outcome = await grunt.trigger(attack);
  console.log('Grunt:', show(afterAttack));

  // A player asks; the approval handler says no while the alarm has sounded.
  const refused: Outcome = await grunt.send('Please open the gate, I live here.');
  console.log('Grunt:', show(refused), '| gate:', game.gate);

  // Later, with the alarm over and more trust, the same request goes through.
  game.alarms = 0;
  game.trust = 2;
  const opened: Outcome = await grunt.send('Open the gate, friend.');
  console.log('Grunt:', show(opened), '| gate:', game.gate);

  grunt.off('tool_started', toolStarted);
  const waiting: PendingApproval[] = grunt.pending();
  console.log(`${waiting.length} call(s) waiting; game log: ${game.log.join('; ')}`);
  // A pending() entry names its call exactly (conversation, turn, call id).
  for (const call of waiting) {
    grunt.deny(call, 'closing time');
  }

  // The game keeps Grunt in its own save file.
  const saved: SavedState = grunt.saveState();
  const restored = await createAgent({ ...config, name: 'grunt2' });
  restored.loadState(saved);
  grunt.destroy();
  restored.destroy();
}
