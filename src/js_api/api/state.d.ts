// ---------------------------------------------------------------------------------
// conversation(), saveState() / loadState(state)
// ---------------------------------------------------------------------------------

/** How a request was fitted into the model's window: sizes in (estimated) tokens, then what was trimmed, in order. */
export interface Fit {
  window: number;
  room: number;
  before: number;
  after: number;
  trims: Trim[];
}

export type Trim =
  | { trim: "refused"; window?: number; scale: number }
  | { trim: "tools_not_offered"; count: number }
  | { trim: "schemas_shortened"; tools: number; level: 1 | 2 | 3 | 4; saved: number }
  | { trim: "results_cut"; results: number; saved: number }
  | { trim: "turns_dropped"; turns: number; saved: number };

/** One step of an interaction's timeline. */
export type Step =
  /** `environment`: what the agent perceived as it started (seed 004's environment), when anything. */
  | { type: "observe"; trigger: Trigger; environment?: Perception }
  /** A model call: why, its visible reasoning, and the tools it chose. */
  | { type: "reason"; purpose: Purpose; reasoning: string; calls: string[] }
  | { type: "plan"; steps: string[]; memory: ContextMemory }
  /** The next request was trimmed to fit the model's context window. */
  | { type: "fitted"; fit: Fit }
  /** `result` and `duration_ms` are null until the call finishes; `agent`: the composite's sub-agent that owns the tool (the step is its). */
  | { type: "tool_call"; call: ToolCall; kind: ToolKind | null; result: ToolResult | null; duration_ms: number | null; agent?: string }
  /** A call that asked (`decision` once decided), or ran under a grant (`decision.decision: "allowed"`); `description`: its card's words. */
  | { type: "approval"; call: ToolCall; description?: string; agent?: string; decision?: { decision: "approved" } | { decision: "allowed"; by: Grant } | { decision: "denied"; reason: string } }
  | { type: "reflection"; review: Review }
  | { type: "goal_check"; complete: boolean; answer: string }
  | { type: "error"; message: string }
  | { type: "answer"; text: string; outcome: Outcome };

/** What an agent perceived as its turn started: `others` when other parties wrote it (quoted as data). */
export interface Perception {
  text: string;
  others?: boolean;
}

/** One trigger and everything the agent did about it. */
export interface Interaction {
  /** The turn. */
  id: number;
  input: string;
  steps: Step[];
  status: "Start" | "Planning" | "Executing" | "Reflecting" | "Completed" | "Failed" | "Aborted";
  /** Answer text streamed so far, until the outcome replaces it. */
  draft: string;
  /** When it began, ms since the epoch (0: unknown). */
  started_ms: number;
  /** Steps let go once the turn grew old (it keeps its trigger and its answer); absent when none. */
  folded?: number;
  /** The agent that answered it. */
  agent?: string;
  /** What its model calls used and cost; absent when it made none. */
  usage?: Tally;
  /** The goal the run guessed behind the input (`goalGuess`). */
  goal?: string;
}

/** What `conversation(id?)` returns: the open conversation, or the one `id` names (a resident's own is `agent:<name>`). */
export interface ConversationView {
  id: string;
  interactions: Interaction[];
  /** How many of its first turns were let go (it keeps its newest `keepTurns`). */
  let_go: number;
  /** What its runs carry from one to the next: facts, and follow-ups still owed. */
  memory: { facts?: Record<string, unknown>; owed?: { tool: string; note: string }[] };
}

/** Everything an agent keeps, from `saveState()`, for `loadState()`. */
export interface SavedState {
  /** The save format's version (1); a newer one than the build's is refused. */
  version: number;
  /** The open conversation's id. */
  open: string;
  conversations: SavedConversation[];
}

export interface SavedConversation {
  id: string;
  title: string;
  updated_ms: number;
  conversation: {
    interactions: Interaction[];
    /** Facts the model always sees; absent when none. */
    pinned?: string[];
  };
}
