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
  /**
   * The arguments whose values carry consequence, each with what it is for the card:
   * `{to: "recipient", amount: "amount"}` (a key may be a JSON pointer, `"/gift/to"`),
   * or a list of argument names. A tool that says them is judged by where those
   * values came from rather than by what the conversation has read: under
   * `"ask_if_untrusted"` (or `"auto"`) it runs unasked while they came from the
   * person, the agent's instructions or its own records, and asks, whatever was
   * granted, when one came from text another party wrote (or was chosen by the model
   * after reading such text). Unsaid: the action is judged as a whole by `approval`.
   */
  consequential?: Record<string, string> | string[];
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
  /**
   * For a target only: `true` sends it every call of one executor step as one
   * `function_calls` message (a step's look-ups run together; an action is a step of
   * its own), which it answers with one `function_results` message or a
   * `function_result` for each. Every tool of one target says the same. Default
   * `false`: a `function_call` message a call.
   */
  batch?: boolean;
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
  postMessage(message: FunctionCallMessage | FunctionCallsMessage, ...rest: any[]): void;
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

/** What a target that asked for batches (`batch: true`) is sent: one step's calls. */
export interface FunctionCallsMessage {
  type: "function_calls";
  calls: { request_id: string; function: string; arguments: JsonValue }[];
}

/**
 * What a message-target tool sends back (or the host hands to `receive`): one
 * result (a failure's `result` is its error message), a batch of them, or
 * `disconnect` — the host behind the target is gone, so every call waiting on it
 * fails at once (saying its outcome is unknown) instead of at its timeout. A port's
 * own closing is not watched: say `disconnect` before it goes.
 */
export type FunctionResultMessage =
  | { type: "function_result"; request_id: string; success: boolean; result?: unknown }
  | {
      type: "function_results";
      results: { request_id: string; success: boolean; result?: unknown }[];
    }
  | { type: "disconnect"; reason?: string };
