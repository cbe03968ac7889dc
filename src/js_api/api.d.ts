// What the JavaScript API takes and gives, as the Rust code reads and writes it:
// `createAgent`'s config and `registerTool`'s tool (src/app/spec.rs), `trigger`'s
// game event, the outcome a run resolves to (src/run/mod.rs), the updates listeners
// get (src/js_api/mod.rs `payload`, src/run/event.rs, src/app/update.rs), approvals, and
// `saveState` (src/app/state.rs). Everything crosses as JSON: `undefined` and
// functions inside a value are dropped, and a field given as `null` counts as absent.
// Keep these declarations in step with those modules. This file and its parts in
// api/ (tools, runs, approvals, state), in that order, are appended to
// pkg/familiar.d.ts as one section (src/js_api/mod.rs).

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
  /**
   * Offer the host's registered tools to the browser's own agents through WebMCP
   * (`document.modelContext`, where the browser has it on a secure page; the full
   * build's): each is registered as the host registers it and taken back by
   * `unregisterTool` and `destroy`. A browser agent's call is a turn of this agent's
   * conversation, judged as another party's words: an action waits for a person's
   * approval, a look-up answers; a refusal rejects `executeTool` with the reason.
   * Default `false`.
   */
  webmcp?: boolean;
  /**
   * Trace every run as OpenTelemetry spans (the GenAI semantic conventions: `invoke_agent`, `chat`,
   * `execute_tool`; a conversation is one trace) and export them as OTLP/HTTP JSON to a collector,
   * hand them to `onSpan`, or both (the full build's; docs/telemetry.md). Default: not traced.
   */
  telemetry?: TelemetryConfig;
  /**
   * Dollars per million tokens, by model name (the proxy's `model`; `local`, `rules`, `builtin` cost
   * nothing unless priced here): what turns each call's usage, as the provider counted it, into cost
   * (docs/usage-and-cost.md). A model with no price is counted in tokens, its cost said to be unknown.
   */
  prices?: Record<string, Price>;
  /**
   * Budgets that stop a run, in words, before its next model call once reached: each conversation's,
   * each agent's (over all its conversations) and the day's (UTC), in tokens, dollars or both. The
   * run ends `{type: "budget_reached", reason: "Stopped: this conversation's budget of … is reached …"}`;
   * what was spent is kept with the agent's conversations. Default: none.
   */
  budgets?: Budgets;
  /** Built-in tools to give the agent. Default none. */
  builtins?: Builtin[];
  /** A run's time budget in ms, 1000 to 3600000. Default 600000. */
  timeBudgetMs?: number;
  /**
   * The most tokens each reasoning call's answer may take, 16 to 100000. Default 2000,
   * seed 000's; the model's own `maxTokens` holds when lower.
   */
  reasonMaxTokens?: number;
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
   * `commands` route `/command` to one, and `tool` offers one to this agent: `"tools"` puts its tools in this agent's list
   * (the composite agent), `"data"` or `"action"` as one opaque tool. `agent.commands()` lists every route.
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
  /**
   * How the main agent is offered it. `"tools"` (seed 004's composite): its tools join the main agent's list; a call
   * to one goes through the same approvals, grants and host bridge as the main agent's own, and its steps carry
   * `agent: "<name>"` and show nested under it. `"data"` | `"action"`: one opaque tool the main agent calls with
   * `{request}`, which runs a run of its own (its steps are not kept, and it cannot ask a person; `"data"` may only
   * look things up).
   */
  tool?: "tools" | "data" | "action";
  /**
   * With `tool: "tools"`: the tools it brings, by name — the host's (`registerTool`, now or later) or its built-ins.
   * Default: each tool of its own that the main agent lacks. A tool has one owner.
   */
  tools?: string[];
  /** Its own environment, as `AgentConfig.environment`, for its turns (`@name`) instead of the main agent's. */
  environment?: AgentConfig["environment"];
  /**
   * Its owner's standing orders: within them it acts on its own whatever it has read
   * (a player's post, a message); a call outside them asks its owner, the card saying
   * which bound it passes. An absent bound does not bound. The engine checks each call
   * (the action, its `community_id`, `battle_id`, recipient `user_id`/`to`, and its
   * `energy` against the day's); the day's totals of gold and energy are the
   * database's to hold for a shared world (`set_standing_orders`, same shape).
   */
  allow?: {
    actions?: string[];
    gold_per_day?: number;
    energy_per_day?: number;
    communities?: number[];
    battles?: number[];
    message?: (number | string)[];
  };
}

/** Where a run's spans go (`AgentConfig.telemetry`): a collector, your own pipeline, or both. */
export interface TelemetryConfig {
  /**
   * The collector's OTLP/HTTP address: its traces URL or its base (`/v1/traces` is added), `https://`
   * (`http://` only to this machine). Spans are sent in batches, retried with backoff while it is down or
   * the page is offline, and kept (up to 1,000, in `localStorage` with `persist`) across a reload.
   */
  endpoint?: string;
  /** Headers each export carries (an API key, a tenant). Needs `endpoint`. */
  headers?: Record<string, string>;
  /** Prompts, answers, tool arguments and results on the spans too. Card numbers never leave. Default `false`. */
  content?: boolean;
  /**
   * Values that never leave, content or not (a player's session token, a password the host knows): each is
   * replaced by `[masked]` wherever it would appear in a span. 4 characters or more. Given again at each
   * `createAgent`: they are never saved.
   */
  secrets?: string[];
  /** Called with each span as it ends, in OTLP JSON's shape (`traceId`, `spanId`, `name`, `attributes`, …). */
  onSpan?: (span: OtlpSpan) => void;
  /** The resource's `service.name`. Default `"familiar"`. */
  serviceName?: string;
}

/** One span as OTLP JSON writes it. */
export interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** 1 internal (a run, a tool call), 3 client (a model call). */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: { key: string; value: Record<string, unknown> }[];
  events: { timeUnixNano: string; name: string; attributes: { key: string; value: Record<string, unknown> }[] }[];
  status: { code?: number; message?: string };
}

/** A route a person can type (`agent.commands()`), as seed 004 lists commands. */
export interface Command {
  /** What to type: `/summary`, `@shop`, or `@` and the main agent's name (the way back to it, listed last). */
  value: string;
  /** What it does: the agent's description, or `Talk to @name`, `Back to @name, the main agent`. */
  label: string;
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
export type ModelConfig = "rules" | RulesModelConfig | ProxyModelConfig | PageModelConfig | LocalModelConfig | BuiltinModelConfig;

/**
 * The browser's own model (the Prompt API's `LanguageModel`, the full build's): used
 * where `LanguageModel.availability()` answers `available`, with no server, no key and
 * no download of ours; tool calls constrained to the tools' schemas with
 * `responseConstraint`, the prompt measured against the session's context window.
 * Anywhere else `fallback` runs (the rules model when none is given), and `onStatus`
 * says which and why. The lean and page-assistant builds refuse it.
 */
export interface BuiltinModelConfig {
  builtin: true | {
    /** Told once, at `createAgent`: what the browser answered (`available`,
     * `unavailable`, `downloadable`, `downloading`, or `absent` without the API), the
     * model that runs (`builtin`, or the fallback's `rules`, `local`, `proxy`,
     * `respond`) and a sentence saying why. */
    onStatus?: (status: { availability: 'available' | 'unavailable' | 'downloadable' | 'downloading' | 'absent'; runs: 'builtin' | 'rules' | 'local' | 'proxy' | 'respond'; reason: string }) => void;
  };
  /** The model that runs where the browser's does not. Default: the rules model. */
  fallback?: Exclude<ModelConfig, BuiltinModelConfig>;
}

/**
 * A GGUF model of the llama family run in a Web Worker of this page (the full build's
 * `local/worker.js`): no server, no key. The weights download once, with progress
 * (a dropped connection resumes where it stopped, when the server takes `Range`), and
 * are kept in the browser's Cache Storage when the storage quota has room. Tool calls are constrained to the
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
    /** The file's SHA-256 (64 hex digits), when its publisher gives one: a download, or
     * a copy in the browser's cache, that does not match is refused and not kept. */
    sha256?: string;
    /** Where the model runs: `"auto"` (the default) takes WebGPU where the browser gives
     * an adapter and the model's family runs there, else the CPU (saying why in
     * `note`); `"webgpu"` fails to load where there is none; `"cpu"` never asks. */
    backend?: 'auto' | 'webgpu' | 'cpu';
    /** Threads on the CPU, 1 to 64: by default every core the browser reports. More
     * than one needs a cross-origin-isolated page (COOP and COEP headers); elsewhere
     * the model runs on one. A game that keeps a core for its frames asks for fewer. */
    threads?: number;
    /** Told how loading goes: `{loaded, total, cached}`, then `{ready, cached, contextTokens,
     * backend, threads, adapter?, note?}` or `{error}`. */
    onProgress?: (status: { loaded?: number; total?: number; cached?: boolean; ready?: boolean; contextTokens?: number; backend?: 'webgpu' | 'cpu'; threads?: number; adapter?: string; note?: string; error?: string }) => void;
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
  /** One extra request header, e.g. a proxy token; provider API keys are refused (a
   * web page's scripts can all read its config). */
  header?: { name: string; value: string };
  /** Sends the model's requests (chat, model list) in the page's `fetch`'s place,
   * called as `fetch(url, init)` is: the host adds what the engine must not hold (an
   * extension's stored key, for that provider's origin only) or routes the request
   * through its own server. The top-level model's only. Default: the page's `fetch`. */
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
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

/** A model's price in dollars per million tokens. */
export interface Price {
  input: number;
  output: number;
}

/** A budget: at most so many tokens, so many dollars, or both (the first reached stops). */
export interface Limit {
  tokens?: number;
  cost?: number;
}

/** `createAgent({budgets})`, `setBudgets`. */
export interface Budgets {
  conversation?: Limit;
  agent?: Limit;
  day?: Limit;
}

/** Model calls added up: tokens as the provider counted them, cost at the configured prices. */
export interface Tally {
  calls: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Dollars; a lower bound when `unpriced` calls had no price. */
  cost: number;
  /** Calls whose model had no price. */
  unpriced: number;
}

/** `agent.usage(conversation?)`. */
export interface UsageReport {
  /** The open conversation's (or the one named). */
  conversation: Tally;
  /** Each agent's, over all its conversations. */
  agents: Record<string, Tally>;
  /** Today's (UTC), every agent's. */
  today: Tally;
  budgets: Budgets;
}
