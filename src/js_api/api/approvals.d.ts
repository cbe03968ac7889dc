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
  /**
   * The values that carry the call's consequence (the tool's `consequential`
   * arguments; for a page action the text typed, the option chosen, the button
   * pressed, a link's destination elsewhere), each with where it came from. A value
   * from others' text, or chosen by the model after it read others' text, is why a
   * call asks whatever was granted (`always_asks` says so). Absent when none.
   */
  values?: TracedValue[];
}

/** A consequential value and its source. */
export interface TracedValue {
  /** What it is to the call: `"recipient"`, `text typed into "To"`. */
  means: string;
  value: string;
  source:
    | { kind: "person" }
    | { kind: "owner" }
    | { kind: "own" }
    | { kind: "others"; from: string; site?: string }
    | { kind: "model" };
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
