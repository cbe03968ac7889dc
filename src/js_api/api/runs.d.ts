// ---------------------------------------------------------------------------------
// trigger(event)
// ---------------------------------------------------------------------------------

/** Something that happened in the game, for the agent to act on. */
export interface GameEvent {
  /** The family of event, e.g. `"battle"`. */
  kind: string;
  /** The event, e.g. `"battle.started"`. */
  event: string;
  /** When it happened (RFC 3339). Default: when it is given. */
  timestamp?: string;
  /** Who acts: a name, or the agent's identity and stats. */
  actor?: string | GameActor;
  /** What happened: a description, or its subject; the model reads `content` as its first message. */
  subject: string | GameSubject;
  /** The action tools this event allows; absent allows all. */
  allowedActions?: string[];
  /** The data tools this event may read (its data scope); absent allows all. */
  dataScopes?: string[];
}

export interface GameActor {
  id?: unknown;
  name?: string;
  /** Identity, stats, anything the agent should know about itself. */
  state?: { [key: string]: unknown };
}

export interface GameSubject {
  /** e.g. `"battle"`, `"market"`. */
  kind?: string;
  id?: unknown;
  /** A description of what happened; must not be empty. */
  content: string;
  /** The message to answer, when the event is one (another party wrote it: it is
   * quoted, and actions ask first). */
  messageId?: unknown;
  /** Who wrote `content`, when another player did: it is quoted, and actions ask first. */
  author?: string | number;
}

// ---------------------------------------------------------------------------------
// What `send` and `trigger` resolve to
// ---------------------------------------------------------------------------------

/** How a run ended. */
export type Outcome =
  /** The model answered in text. */
  | { type: "answered"; text: string }
  /** The model acted and judged the goal complete; `text` is its judgement. */
  | { type: "goal_complete"; text: string }
  /** The iteration cap was hit; `text` is the final, tools-off answer. */
  | { type: "cap_reached"; text: string }
  /** Stopped from outside (`abort`, `destroy`). */
  | { type: "aborted"; reason: string }
  /** A budget it counts against is reached: nothing more was asked of the model;
   *  `reason` is the sentence that says which budget. */
  | { type: "budget_reached"; reason: string }
  /** The run could not go on. */
  | { type: "failed"; error: string };

// ---------------------------------------------------------------------------------
// on(name, listener): updates
// ---------------------------------------------------------------------------------

/** A model's request to run one tool. */
export interface ToolCall {
  id: string;
  name: string;
  /** The arguments as the model wrote them: JSON text, possibly invalid. */
  arguments: string;
}

export type ToolKind = "data" | "action";

/** A tool's result or error. */
export type ToolResult = { ok: JsonValue } | { error: string };

/** What started a run. */
export interface Trigger {
  kind: string;
  event: string;
}

/** Why the model is asked. */
export type Purpose =
  | { purpose: "guess_goal" }
  /** Reason and decide; `iteration` counts from 1. */
  | { purpose: "reason"; iteration: number }
  /** The cap was hit: one last answer with tools off. */
  | { purpose: "final_answer" }
  | { purpose: "check_goal" }
  | { purpose: "reflect"; round: number };

/** A piece of the model's response as it streams. */
export type Delta =
  | { type: "text"; text: string }
  | { type: "reasoning"; text: string }
  /** A fragment of the tool call at `index`; name and id come with the first. */
  | { type: "tool_call"; index: number; id: string | null; name: string | null; arguments: string };

/** What the model decided, or what came back to it. */
export type Thought =
  | { type: "actions"; text: string; calls: ToolCall[] }
  | { type: "message"; text: string }
  | { type: "tool_return"; call_id: string; tool: string; result: ToolResult; duration_ms: number }
  | { type: "error"; message: string };

/** The run's facts and follow-ups owed (each absent when empty). */
export interface ContextMemory {
  facts?: { [name: string]: JsonValue };
  owed?: { tool: string; note: string }[];
}

/** A reflection on the drafted answer. */
export interface Review {
  verdict: "finished" | "revise" | "more_actions";
  feedback: string;
}

/** A character's transaction, as kept in the `transactions` table. */
export interface Transaction {
  id: string;
  user_id: string;
  character: string;
  transaction_type: string;
  state: string;
  status: "pending" | "completed" | "cancelled" | "expired";
  context: { [key: string]: JsonValue };
  created_at: string;
  updated_at: string;
}

/** The conversation and turn an update belongs to. */
export interface TurnTag {
  conversation: string;
  turn: number;
}

/** A run event as a listener gets it (without its `TurnTag`). */
export type RunEvent =
  /** `environment`: what the agent's environment perceived as the run began, when anything. */
  | { event: "started"; trigger: Trigger; input: string; environment?: Perception }
  | ({ event: "fitted" } & Fit)
  | ({ event: "step_started" } & Purpose)
  | ({ event: "delta" } & Delta)
  | ({ event: "thought" } & Thought)
  /** `kind` is null for a tool the agent does not know (the call fails); `agent`: the composite's sub-agent that owns the tool. */
  | { event: "tool_started"; call: ToolCall; kind: ToolKind | null; agent?: string }
  | { event: "plan_updated"; plan: string[]; memory: ContextMemory }
  /** `description`: what the tool says it does (its registered or host description), when it says. */
  | { event: "approval_needed"; call: ToolCall; description?: string; agent?: string }
  /**
   * A call that would have asked ran without a card, under a grant given on an earlier
   * card (`by`): show it all the same ("Allowed for this task: Click the button "Next" [12]").
   * The turn's steps record it as an approval step with `decision: "allowed"`.
   */
  | { event: "allowed"; call: ToolCall; description?: string; by: Grant; agent?: string }
  /** A person (or an `onApproval` handler) decided about the call: a decision, not a failure. */
  | ({ event: "decided"; call_id: string } & ({ decision: "approved" } | { decision: "allowed"; by: Grant } | { decision: "denied"; reason: string }))
  | ({ event: "reflection" } & Review)
  | { event: "goal_guessed"; goal: string }
  | { event: "goal_checked"; complete: boolean; answer: string }
  | ({ event: "done" } & Outcome);

/**
 * What a listener gets: `{event, conversation, turn, …fields}`, where `event` is the
 * update's name. Notices (`save_failed`, `corrupt_data`, `conflict`, `host_message_ignored`,
 * `interrupted`) belong to no turn (`interrupted` names the turn it would resume).
 */
export type Update =
  | (RunEvent & TurnTag)
  /** A turn began on this input (a message, or an event's description). */
  | ({ event: "turn_began"; input: string } & TurnTag)
  /** The agent opened this conversation itself: a message to a resident (an agent with `memory: "own"`) opens the resident's own conversation, and one to another agent leaves it. */
  | { event: "opened"; conversation: string }
  /** A turn cut off by a reload goes on: `resume()` drives its run again. */
  | ({ event: "turn_resumed" } & TurnTag)
  /** A character's workflows prepared this turn: what they added to the prompt. */
  | ({ event: "character_prepared"; injection: string | null } & TurnTag)
  /** A character's transaction after the answer, or why it was not recorded. */
  | ({ event: "transaction_recorded"; transaction: Transaction | null; error: string | null } & TurnTag)
  /** A character's transaction outlived its workflow's timeout and expired (at a turn, at load, or when read). */
  | { event: "transaction_expired"; transaction: Transaction }
  /** A write failed; what was not saved is still in memory. */
  | { event: "save_failed"; key: string; error: string }
  /** Saved data could not be read: it was kept aside under `kept_as` and a fresh one started. */
  | { event: "corrupt_data"; key: string; kept_as: string; error: string }
  /** Another tab saved this conversation since this agent read it: its new turns stay in memory, unsaved. */
  | { event: "conflict"; key: string }
  /** A host message was not a result any call was waiting for. */
  | { event: "host_message_ignored"; reason: string }
  /** A run was cut off by a reload (reported when the agent starts, and by `interrupted()`). */
  | ({ event: "interrupted" } & Interrupted)
  /** A supervised turn's stage (`supervisor: true`). */
  | ({ event: "supervisor" } & SupervisorStatus & TurnTag)
  /** A model call of the turn ended: what it used and cost (`call`), and the turn's total so far. */
  | ({ event: "usage"; agent: string; call: Tally; total: Tally } & TurnTag);

/** Where a supervised turn is: its stages in order, the executor's round once per round. */
export type SupervisorStatus =
  | { stage: "analysing" }
  | { stage: "assessed"; level: "SIMPLE" | "COMPLEX"; reason: string }
  | { stage: "planning" }
  /** The plan the executor gets whole. */
  | { stage: "planned"; tasks: string[] }
  /** Executor round `round` of at most `max_rounds` began (or went on after a reload); `tasks` is 0 for a simple request. */
  | { stage: "executing"; round: number; max_rounds: number; tasks: number }
  | { stage: "deciding"; round: number }
  | { stage: "decided"; done: boolean; summary: string };

/**
 * A run a reload cut off: `resume(conversation)` drives it on in its own turn (no
 * action it applied is applied again), `discardInterrupted(conversation)` forgets it.
 * A run a game event began resumes with that event given again,
 * `resume(conversation, event)`: its actor and allowed actions are the live event's.
 */
export interface Interrupted {
  conversation: string;
  turn: number;
  /** The agent whose run it is. */
  agent: string;
  /** Why resuming it would be refused (a played character's run), or null. */
  refused: string | null;
}

/** Every update's name. */
export type UpdateName = Update["event"];

/** What `on` and `off` take: an update's name, or `"*"` for all. */
export type ListenerName = UpdateName | "*";

/** The update named `N`: `(u: UpdateOf<"done">) => u.type`. */
export type UpdateOf<N extends UpdateName> = Extract<Update, { event: N }>;

export type UpdateListener = (update: Update) => void;
