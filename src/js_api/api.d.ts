// What the JavaScript API takes and gives, as the Rust code reads and writes it:
// `createAgent`'s config and `registerTool`'s tool (src/app/spec.rs), `trigger`'s
// game event, the outcome a run resolves to (src/run/mod.rs), the updates listeners
// get (src/js_api/mod.rs `payload`, src/run/event.rs, src/app/update.rs), approvals, and
// `saveState` (src/app/state.rs). Everything crosses as JSON: `undefined` and
// functions inside a value are dropped, and a field given as `null` counts as absent.
// Keep this file in step with those modules; it is appended to pkg/familiar.d.ts.

/** A JSON value, as the agent gives it back. */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

// ---------------------------------------------------------------------------------
// createAgent(config)
// ---------------------------------------------------------------------------------

/**
 * `createAgent`'s configuration. Every field is optional: `createAgent()` (or `{}`)
 * is an offline agent named `familiar` answering with the rules model's fallback.
 * Unknown fields are refused, and every problem is listed in the one `Error`.
 */
export interface AgentConfig {
  /** 1 to 64 letters, digits, `_` or `-`. Default `"familiar"`. */
  name?: string;
  /** The system prompt. Default: a short helpful-agent prompt. */
  instructions?: string;
  /** Where answers come from. Default: the rules model with no rules. */
  model?: ModelConfig;
  /** The iteration cap of a run, 1 to 50. Default 10. */
  maxSteps?: number;
  /** Offer the model the built-in `plan` tool. Default `false`. */
  planning?: boolean;
  /** Reflection rounds on a drafted answer: `true` is one, or a number 0 to 3. Default none. */
  reflection?: boolean | number;
  /** On a game event, ask the model whether the goal is complete after an action. Default `true`. */
  goalCheck?: boolean;
  /** A character to play: its file (as in `public/characters/*.json`) or the URL to fetch it from (1 MiB at most). */
  character?: CharacterFile | string;
  /** Where the world (memory, a character's transactions) is kept. Default `"local"`. */
  store?: StoreConfig;
  /** Prefix of every storage key: letters, digits, `.`, `_` or `-`, 1 to 100. Default `familiar.agent.<name>`. */
  namespace?: string;
  /** Keep conversations in `localStorage`; `false` keeps them in memory only. Default `true`. */
  persist?: boolean;
  /** Built-in tools to give the agent. Default none. */
  builtins?: Builtin[];
  /** A run's time budget in ms, 1000 to 3600000. Default 600000. */
  timeBudgetMs?: number;
  /**
   * How many turns a conversation keeps, 10 to 100000; past that its oldest are let go
   * (storage is finite). Turns older than the newest 200 keep their trigger and answer,
   * not every step. Default 5000.
   */
  keepTurns?: number;
  /**
   * Chat goes through the supervisor (seed 003): it judges the request SIMPLE or
   * COMPLEX, plans a complex one, runs the agent (with every tool, the host's too) on
   * the whole plan, and decides whether it is done (a second round when not). Each
   * stage is a `supervisor` update; an approval inside the plan pauses it all, and a
   * reload mid-plan `resume()`s where it was. The model must answer the JSON of each
   * stage: a proxy model, or a `respond` function offline. Default `false`.
   */
  supervisor?: boolean;
  /** Each run first guesses the goal behind its input (the goal analysis phase); the turn records it (`goal_guessed`). Default `false`. */
  goalGuess?: boolean;
  /**
   * The composition's other agents: `@name` switches to one (per conversation; `@` and this agent's own name switch back),
   * `commands` route `/command` to one, and `tool` offers one to this agent as a tool (the composite agent).
   */
  agents?: SubAgentConfig[];
  /** `/command` → the name of one of `agents`. */
  commands?: Record<string, string>;
  /**
   * Called as each turn starts with the turn's `{trigger, actor, subject}`; what it returns joins the turn's prompt as
   * what the agent perceives now (the page's address and selection, a game's scene), cut to 4,000 characters.
   * Return text (yours), `{text, others: true}` for text other parties wrote (quoted as data; the turn asks before
   * acting), and `actor` fields to set the actor's current state. A promise of either is awaited.
   */
  environment?: (turn: { trigger: { kind: string; event: string; timestamp?: string }; actor: unknown; subject: unknown }) =>
    | string
    | { text?: string; others?: boolean; actor?: Record<string, unknown> }
    | Promise<string | { text?: string; others?: boolean; actor?: Record<string, unknown> }>;
}

/** Another agent of a composition. */
export interface SubAgentConfig {
  /** 1 to 64 letters, digits, `_` or `-`; unique. */
  name: string;
  /** What it is good for: shown with `@name`, and its description as a tool. */
  description?: string;
  instructions?: string;
  /** Its own model: rules or a proxy. Default: the main agent's. */
  model?: ModelConfig;
  /** `"own"`: a resident with a memory of its own (its triggers and `@name` messages share one conversation). Default `"shared"`. */
  memory?: "own" | "shared";
  /** Offered to the main agent as a tool it calls with `{request}`: `"data"` may only look things up. */
  tool?: "data" | "action";
}

/** `agent.schedule(...)`: a trigger fired every `every` milliseconds. */
export interface Schedule {
  /** Names it; a schedule of the same id is replaced. Default: one is made. */
  id?: string;
  /** The period in milliseconds, at least 1000. */
  every: number;
  /** The event to fire, as `trigger()` takes it (stamped with the time it fires). */
  trigger: GameEvent;
  /** What periods missed while the page was hidden or closed do: `"skip"` (default) or `"catchUp"` (fire once). */
  missed?: "skip" | "catchUp";
}

/** A schedule as the agent keeps it. */
export interface ScheduleInfo {
  id: string;
  every_ms: number;
  trigger: unknown;
  missed: "skip" | "catch_up";
  /** When it fires next, in milliseconds since the epoch. */
  next_ms: number;
}

/**
 * The built-in tools: `current_time`, `page_title`, `remember` / `recall` / `forget`,
 * and `"page"`, the page assistant's tools (builds with the `page` feature: the full
 * build and the page-assistant build; the lean runtime refuses it): `read_page`,
 * `page_outline`, `page_elements`, `find_in_page` read the page (hidden text left out,
 * results marked as the page's words), and `click`, `fill`, `select_option`, `check`,
 * `scroll_to`, `highlight` act on an element by its `page_elements` number, each
 * asking for approval first.
 */
export type Builtin = "clock" | "page_title" | "memory" | "page";

/** `"rules"` (the rules model with no rules), rules given inline, an OpenAI-compatible proxy, the page's own `respond` function, or a local model (full build). */
export type ModelConfig = "rules" | RulesModelConfig | ProxyModelConfig | PageModelConfig | LocalModelConfig;

/**
 * A GGUF model of the llama family run in a Web Worker of this page (the full build's
 * `local/worker.js`): no server, no key. The weights download once, with progress,
 * and are kept in the browser's Cache Storage. Tool calls are constrained to the
 * tools' JSON Schemas, so they always parse. The lean and page-assistant builds refuse it.
 */
export interface LocalModelConfig {
  local: string | {
    /** The GGUF file's address (resolved against the page). */
    url: string;
    /** The window in tokens, 256 to 131072 (at most the model's own). Default 2048. */
    contextTokens?: number;
    /** The worker's script, when not `local/worker.js` beside the page. */
    worker?: string;
    /** Told how loading goes: `{loaded, total, cached}`, then `{ready, cached, contextTokens}` or `{error}`. */
    onProgress?: (status: { loaded?: number; total?: number; cached?: boolean; ready?: boolean; contextTokens?: number; error?: string }) => void;
  };
}

/**
 * A model the page answers (an offline planner of its own, a model the crate does not
 * speak to): `respond` gets each request and returns, or resolves to, the answer. Its
 * tool calls are validated like any model's; a throw or rejection fails the step.
 */
export interface PageModelConfig {
  respond: (request: ModelRequest) => ModelAnswer | PromiseLike<ModelAnswer>;
}

/** What `respond` is asked: the transcript, the tools on offer, and the JSON shape wanted (the supervisor's stages), if any. */
export interface ModelRequest {
  system: string;
  messages: { role: "system" | "user" | "assistant" | "tool"; content: string; tool_calls?: ToolCall[]; tool_call_id?: string }[];
  tools: { name: string; description: string; parameters: JsonSchema }[];
  /** `{name: "Complexity" | "TaskPlan" | "Judgement" | …, schema}` when the answer must be that JSON. */
  responseFormat: { name: string; schema: JsonSchema } | null;
}

/** Text, or text with tool calls (`arguments` as an object or JSON text). */
export type ModelAnswer = string | { text?: string; toolCalls?: { id?: string; name: string; arguments?: object | string }[] };

/** The deterministic rules model, with the host's rules: no network, no key. */
export interface RulesModelConfig {
  rules: Rule[];
  /** What it says when no rule applies. Default: that it runs offline with no rule for this. */
  fallback?: string;
}

/** When a message mentions one of `keywords`, call `tool`, then answer from its result. */
export interface Rule {
  /** Lower-case words or phrases; any one triggers the rule. */
  keywords: string[];
  /** The tool to call (the rule is skipped when the run does not offer it). */
  tool: string;
  /** The call's arguments; in text values `{message}` is the user's words, `{rest}` the words after the keyword. Default `{}`. */
  arguments?: { [name: string]: unknown };
  /** The answer; each `{field}` is filled from the tool's JSON result. */
  answer: string;
}

/** An OpenAI-compatible chat-completions server (a proxy holding the provider key). */
export interface ProxyModelConfig {
  /** Its base URL, `http(s)://…` (`/chat/completions` is added unless already there). */
  url: string;
  /** The model name it serves. */
  model: string;
  /** One extra request header, e.g. a proxy token; provider API keys are refused. */
  header?: { name: string; value: string };
  /** 0 to 2. */
  temperature?: number;
  /** 1 to 1000000. */
  maxTokens?: number;
  /** The model's context window in tokens, 256 to 10000000 (more than `maxTokens`). Default: what the server says, else 8192; a refusal for length lowers it. */
  contextTokens?: number;
  /** Longest wait for the response to start and between streamed chunks, 1000 to 600000 ms. Default 60000. */
  timeoutMs?: number;
  /** Ask for a streamed answer. Default `true`. */
  stream?: boolean;
}

/** `"local"` (the page's `localStorage`) or a Supabase project (anon key only; `https://`, or `http://` on loopback). */
export type StoreConfig = "local" | { supabaseUrl: string; anonKey: string };

/** A character file (`identity`, `workflows`, …), checked as a whole when the agent is created. */
export interface CharacterFile {
  [field: string]: unknown;
}

// ---------------------------------------------------------------------------------
// registerTool(tool)
// ---------------------------------------------------------------------------------

/**
 * A tool the page runs. `handler` is a function, or something to post
 * `function_call` messages to (an iframe's window, a `MessagePort`, an extension
 * port) whose `function_result` answers come back the same way or through
 * `receive`. A tool of the same name is replaced.
 *
 * A result is taken only from the target its call was posted to: a window's
 * `message` events whose `source` is that window and whose `origin` is the tool's
 * `origin`, a port's own messages. Request ids on the wire carry a part no other
 * target can guess, so one frame or port can never answer another tool's call.
 *
 * A sandboxed iframe (no `allow-same-origin`) has an opaque origin (`"null"`) that
 * cannot be posted to safely; give it one end of a `MessageChannel` and register the
 * other:
 *
 * ```js
 * const { port1, port2 } = new MessageChannel();
 * frame.addEventListener('load', () => frame.contentWindow.postMessage({ type: 'familiar_port' }, '*', [port2]), { once: true });
 * agent.registerTool({ name: 'move', description: '…', handler: port1 });
 * // in the frame: onmessage = (e) => { const port = e.ports[0]; port.onmessage = (m) => … port.postMessage({ type: 'function_result', … }) }
 * ```
 *
 * The port is handed over once, on the frame's first load, to whatever document the
 * page put there (its `src` or `srcdoc`); afterwards only that document holds it,
 * wherever the frame navigates.
 */
export interface ToolConfig<Args = any> {
  /** 1 to 64 letters, digits, `_` or `-`. */
  name: string;
  /** What the tool does: the model chooses tools by it. Must not be empty. */
  description: string;
  /** The arguments as a JSON Schema of type `object`; checked before the handler runs. Default: no arguments. */
  parameters?: ToolParameters;
  /** `"data"` only reads (several may run at once); `"action"` changes the world (one per step). Default `"action"`. */
  kind?: ToolKind;
  /**
   * `"auto"` runs without asking, whatever the conversation has read; `"ask"` pauses the
   * run for an approval every time; `"ask_if_untrusted"` asks only once the conversation
   * (this turn or an earlier one) has read text the person did not write — what a
   * `"data"` tool returned, a page, another player's post or message, an event subject
   * with an `author` or `messageId`, a loaded state — so such text cannot make it act
   * unseen; `"deny"` never runs it. Default: `"ask_if_untrusted"` for an action, `"auto"` for data. Say
   * `"auto"` for an action only if anyone whose words reach the agent may trigger it.
   */
  approval?: "auto" | "ask" | "ask_if_untrusted" | "deny";
  /** How long a call may take, 1 to 600000 ms. Default 30000. */
  timeoutMs?: number;
  /**
   * Who may have written the tool's results. `"others"`: another party's words (a
   * player's post, a frame's answer), so once the conversation has read one, actions
   * that are `"ask_if_untrusted"` ask first; `"own"`: only what your code or your
   * world's rules produce, so reading one changes nothing. Default: `"others"` for a
   * tool whose `handler` is something to post to (an iframe, a port: whoever answers
   * there can write anything), and for a `"data"` function; `"own"` for an `"action"`
   * function (your code's report of what it did). Say `"own"` for a frame or a port
   * only when you control everything that can answer there.
   */
  author?: "own" | "others";
  handler: ToolHandler<Args>;
  /**
   * Required for an iframe's window (and refused for anything else): the origin the
   * frame is at, to post calls to and to accept answers from, e.g.
   * `"https://game.example"`. It is normalised as the browser writes origins (scheme
   * and host in lower case, default port dropped, one trailing `/` allowed; no path,
   * query or user). `"*"` accepts answers from whatever the frame shows and posts the
   * calls' arguments to it, even after it navigates elsewhere: only when asked for
   * by name. `"null"` (a sandboxed frame) is refused: use a `MessagePort`.
   */
  origin?: string;
}

/** Runs a call: a function, or a target to post `function_call` messages to. */
export type ToolHandler<Args = any> = ToolFunction<Args> | MessageTarget;

/**
 * Called with the checked arguments and the call's request id (the same across
 * retries: answer a repeat once). Its result, or what it resolves to, must be JSON;
 * a throw, a rejection or a result that is not JSON becomes an error the model reads.
 */
export type ToolFunction<Args = any> = (args: Args, context: { requestId: string }) => unknown;

/** Anything with `postMessage`: a window, a `MessagePort`, a worker, an extension port. */
export interface MessageTarget {
  postMessage(message: FunctionCallMessage, ...rest: any[]): void;
}

/** A JSON Schema subset: `type`, `properties`, `required`, `items`, `enum`, `const`, `additionalProperties: false`. */
export interface ToolParameters {
  type?: "object";
  properties?: { [name: string]: JsonSchema };
  required?: string[];
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

/** One property's schema. */
export interface JsonSchema {
  type?: "object" | "array" | "string" | "number" | "integer" | "boolean" | "null" | string[];
  description?: string;
  properties?: { [name: string]: JsonSchema };
  required?: string[];
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  additionalProperties?: boolean;
  [keyword: string]: unknown;
}

/** What a message-target tool is sent. */
export interface FunctionCallMessage {
  type: "function_call";
  /**
   * Echo it in the result. It is the call's idempotency key, `~`, and 16 hex digits
   * only this agent can compute: the same call repeated (a run resumed after a
   * reload) carries the same id, so answer a repeat from your own record.
   */
  request_id: string;
  function: string;
  arguments: JsonValue;
}

/** The answer a message-target tool sends back (or the host hands to `receive`). A failure's `result` is its error message. */
export interface FunctionResultMessage {
  type: "function_result";
  request_id: string;
  success: boolean;
  result?: unknown;
}

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
  | { event: "started"; trigger: Trigger; input: string }
  | ({ event: "fitted" } & Fit)
  | ({ event: "step_started" } & Purpose)
  | ({ event: "delta" } & Delta)
  | ({ event: "thought" } & Thought)
  /** `kind` is null for a tool the agent does not know (the call fails). */
  | { event: "tool_started"; call: ToolCall; kind: ToolKind | null }
  | { event: "plan_updated"; plan: string[]; memory: ContextMemory }
  /** `description`: what the tool says it does (its registered or host description), when it says. */
  | { event: "approval_needed"; call: ToolCall; description?: string }
  /**
   * A call that would have asked ran without a card, under a grant given on an earlier
   * card (`by`): show it all the same ("Allowed for this task: Click the button "Next" [12]").
   * The turn's steps record it as an approval step with `decision: "allowed"`.
   */
  | { event: "allowed"; call: ToolCall; description?: string; by: Grant }
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
  | ({ event: "supervisor" } & SupervisorStatus & TurnTag);

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

// ---------------------------------------------------------------------------------
// Approvals: pending(), onApproval(handler), approve / deny
// ---------------------------------------------------------------------------------

/** A call waiting for a decision. */
export interface PendingApproval {
  conversation: string;
  turn: number;
  /** The agent whose run made the call. */
  agent: string;
  call: ToolCall;
  /** What the call would do, in plain words, when its tool can say (the page actions: `Click the button "Send" [7]`), else what the tool says it does in its own words (its registered description, or the host tool's), when it has one. */
  description?: string;
  /** The site the call acts on (`"https://shop.example"`), for a page action: what a `"task"` or `"site"` grant holds for. */
  site?: string;
  /**
   * Why this call asks every time, whatever was granted before: it submits, buys,
   * deletes, sends or signs out (`its name says "place order"`, `it submits the form
   * "Payment"`), judged from the element's name and role and the form it submits.
   * Its `grants` are empty then.
   */
  always_asks?: string;
  /** What the card may offer besides this one call (see `Grant`), in this order; show one button for each. */
  grants: Grant[];
}

/**
 * What a person may grant on a card besides the call itself; none ever covers a call
 * with `always_asks`:
 * - `"task"`, "Allow for this task": the rest of this run's (this message's) page
 *   actions on `site` run without a card, each still shown as an `allowed` event and
 *   recorded; a new message asks again.
 * - `"site"`, "Always allow scrolling and highlighting on this site": the harmless page
 *   actions (`scroll_to`, `highlight`; not `hover`, which fires the page's pointer
 *   handlers as a click may) on `site`, from now on. The agent holds
 *   it while it lives; the host keeps it (the extension in `chrome.storage` per site,
 *   the one-tag widget in its `localStorage` namespace) and gives it back with
 *   `agent.allowHarmless(site)` to each agent it creates.
 * - `"always"`: this tool, for this agent, in this conversation.
 */
export type Grant = "task" | "site" | "always";

/**
 * What an approval handler may return (or resolve to): `true` approves this call,
 * one of `pending.grants` (`"task"`, `"site"`, `"always"`) approves it and grants
 * that, `false` denies; as an object, `approve: true` approves (with `grant`, or
 * `always: true` for `"always"`) and anything else denies with `reason`. A grant the
 * card did not offer approves the call alone. Any other value, a throw or a rejection
 * denies.
 */
export type ApprovalAnswer =
  | boolean
  | Grant
  | { approve?: boolean; grant?: Grant; always?: boolean; reason?: string };

export type ApprovalHandler = (pending: PendingApproval) => ApprovalAnswer | PromiseLike<ApprovalAnswer>;

/**
 * Names one waiting call for `approve` / `deny`: its conversation, turn and call id.
 * A `pending()` entry is one (it has `call.id`), so `agent.approve(agent.pending()[0])`
 * decides exactly that call. Models number their calls `call_1`, `call_2`… in every
 * run, so the call id alone is taken only while no other waiting call (another
 * conversation's run) has the same id; otherwise `approve` / `deny` throw and decide
 * nothing.
 */
export type ApprovalKey =
  | { conversation: string; turn: number; callId: string }
  | { conversation: string; turn: number; call: { id: string } };

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
  | { type: "observe"; trigger: Trigger }
  /** A model call: why, its visible reasoning, and the tools it chose. */
  | { type: "reason"; purpose: Purpose; reasoning: string; calls: string[] }
  | { type: "plan"; steps: string[]; memory: ContextMemory }
  /** The next request was trimmed to fit the model's context window. */
  | { type: "fitted"; fit: Fit }
  /** `result` and `duration_ms` are null until the call finishes. */
  | { type: "tool_call"; call: ToolCall; kind: ToolKind | null; result: ToolResult | null; duration_ms: number | null }
  /** A call that asked (`decision` once decided), or ran under a grant (`decision.decision: "allowed"`); `description`: its card's words. */
  | { type: "approval"; call: ToolCall; description?: string; decision?: { decision: "approved" } | { decision: "allowed"; by: Grant } | { decision: "denied"; reason: string } }
  | { type: "reflection"; review: Review }
  | { type: "goal_check"; complete: boolean; answer: string }
  | { type: "error"; message: string }
  | { type: "answer"; text: string; outcome: Outcome };

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
