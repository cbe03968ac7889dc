// N simulated players on one shared world, over loopback: each signs in anonymously at
// the Supabase Auth stand-in, enters the world, claims its three agents, then plays for
// a bounded time, back to back (no think time: this measures what the database and
// postrust give, not a human's pace). Each step is one of the page's own requests —
// the data tools' look-ups as src/world/data.rs makes them through the PostgREST store,
// the actions as src/world/actions.rs calls them (`rpc/<action>` for the player,
// `rpc/act_as` for an agent, always with a ledger key) — and one step in twenty sends
// the same keyed action twice at once, as a client retrying on a timeout would.
//
//   node bench/world_load/players.mjs setup N OUT.json     sign in N players
//   node bench/world_load/players.mjs run OUT.json SECONDS DIR
//
// `run` prints throughput, p50/p95/p99 per request kind and the errors by kind, and
// writes DIR/applied.csv (ledger owner, key, tool of every action that answered ok)
// for the SQL invariants (invariants.sql). It exits non-zero when a request failed
// other than by a rule's refusal (P0001): a deadlock, a duplicate ledger key, a 5xx,
// a retry that answered differently from its first.
import { readFileSync, writeFileSync } from "node:fs";

const rest = process.env.FAMILIAR_POSTGREST_URL;
const auth = process.env.FAMILIAR_SUPABASE_URL;
const anon = process.env.FAMILIAR_ANON_KEY;
if (!rest || !auth || !anon) throw new Error("source the backend's env first");

const headers = (token, body) => ({
  apikey: anon,
  authorization: `Bearer ${token}`,
  accept: "application/json",
  ...(body ? { "content-type": "application/json" } : {}),
});

// One request, timed; the answer as {ok, status, body, ms}.
async function call(token, method, path, body, prefer) {
  const started = performance.now();
  let status = 0;
  let text = "";
  try {
    const h = headers(token, body);
    if (prefer) h.prefer = prefer;
    const response = await fetch(`${rest}/${path}`, {
      method,
      headers: h,
      body: body ? JSON.stringify(body) : undefined,
    });
    status = response.status;
    text = await response.text();
  } catch (error) {
    text = JSON.stringify({ code: "network", message: String(error) });
  }
  const ms = performance.now() - started;
  let parsed = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = { code: "unparsable", message: text.slice(0, 200) };
  }
  return { ok: status >= 200 && status < 300, status, body: parsed, text, ms };
}

async function setup(n, out) {
  const players = [];
  const one = async (i) => {
    const signed = await fetch(`${auth}/auth/v1/signup`, {
      method: "POST",
      headers: { apikey: anon, "content-type": "application/json" },
      body: "{}",
    }).then((r) => r.json());
    const token = signed.access_token;
    const sub = signed.user.id;
    const entered = await call(token, "POST", "rpc/enter_world", { username: `load-${i}` });
    const claimed = await call(token, "POST", "rpc/claim_agents", {});
    if (!entered.ok || !claimed.ok) throw new Error(`player ${i}: ${entered.text} ${claimed.text}`);
    players.push({ token, sub, me: entered.body.id, agents: claimed.body.map((a) => a.agent_id) });
  };
  // Sign-ups ten at a time: the auth stand-in is a small threaded server.
  for (let i = 0; i < n; i += 10) {
    await Promise.all(Array.from({ length: Math.min(10, n - i) }, (_, j) => one(i + j)));
  }
  writeFileSync(out, JSON.stringify(players));
  console.log(`${players.length} players signed in, each with ${players[0].agents.length} agents`);
}

const pick = (list) => list[Math.floor(Math.random() * list.length)];
const words = ["battle", "bread", "lantern", "gold", "hill", "promise", "market"];

// The page's requests (bench/world_load/requests.json): the look-ups of src/world/data.rs
// as the runtime's store client sends them, and its actions' rpc calls;
// tests/world_load_requests.rs holds the file to the client, so none is copied by hand.
const requests = JSON.parse(readFileSync(new URL("./requests.json", import.meta.url), "utf8"));
const fill = (template, values) => template.replace(/\{(\w+)\}/g, (_, name) => String(values[name]));
const reads = Object.fromEntries(Object.entries(requests.reads).map(([name, read]) => [
  name,
  (p, me, others) => fill(read.path, {
    me,
    other: pick(others).me,
    community: pick([1, 2]),
    word: pick(words),
  }),
]));

// The actions: [name, args for this actor] (the key is added by the caller).
function action(player, actor, others) {
  const agent = actor !== player.me;
  const roll = Math.random();
  if (roll < 0.2) return ["do_work", { job: pick(["farming", "farming", "trading", "mining"]) }];
  if (roll < 0.35) return ["buy_item", { item_name: "bread", quantity: 10 }];
  if (roll < 0.5) return ["consume_item", { item_name: "bread", quantity: 10 }];
  if (roll < 0.65 && agent) return ["join_battle", { battle_id: pick([1, 2, 3]), energy: 5 }];
  if (roll < 0.72 && agent) return ["vote_on_proposal", { proposal_id: pick([1, 2, 3, 4]), in_favour: Math.random() < 0.5 }];
  if (roll < 0.85) return ["create_post", { content: "" }];
  return ["send_message", { user_id: pick(others).me, content: "" }];
}

const stats = new Map(); // kind -> {ms: [], ok, refused, failed}
const errors = new Map(); // "kind: sentence" -> count
const applied = []; // [owner, key, tool]
let unexpected = 0;
let retries = 0;
let retryMismatches = 0;

function count(kind, answer) {
  let s = stats.get(kind);
  if (!s) stats.set(kind, (s = { ms: [], ok: 0, refused: 0, failed: 0 }));
  s.ms.push(answer.ms);
  if (answer.ok) {
    s.ok += 1;
    return;
  }
  const code = answer.body?.code ?? `http ${answer.status}`;
  const sentence = String(answer.body?.message ?? answer.text).replace(/\d+/g, "N").slice(0, 90);
  if (code === "P0001") s.refused += 1;
  else {
    s.failed += 1;
    unexpected += 1;
  }
  const label = `${code === "P0001" ? "refused" : `FAILED ${code}`}: ${sentence}`;
  errors.set(label, (errors.get(label) ?? 0) + 1);
}

async function play(player, others, until, counter) {
  const actors = [player.me, ...player.agents];
  while (performance.now() < until) {
    const actor = pick(actors);
    if (Math.random() < 0.45) {
      const [kind, path] = pick(Object.entries(reads));
      count(kind, await call(player.token, "GET", path(player, actor, others)));
      continue;
    }
    const [name, args] = action(player, actor, others);
    const key = `load-${player.me}-${counter.n++}`;
    if ("content" in args) args.content = `${name} ${key}`;
    const owner = actor === player.me ? player.sub : `agent:${actor}`;
    const path = actor === player.me
      ? fill(requests.actions.player.path, { action: name })
      : requests.actions.agent.path;
    const body = actor === player.me ? { ...args, key } : { agent: actor, action: name, args, key };
    const kind = actor === player.me ? name : `act_as ${name}`;
    const twice = Math.random() < 0.05;
    const answers = await Promise.all(
      (twice ? [0, 1] : [0]).map(() => call(player.token, "POST", path, body)),
    );
    for (const answer of answers) count(twice ? `${kind} (retried)` : kind, answer);
    if (twice) {
      retries += 1;
      const [a, b] = answers;
      if (a.ok && b.ok && JSON.stringify(a.body) !== JSON.stringify(b.body)) retryMismatches += 1;
    }
    if (answers.some((a) => a.ok)) applied.push([owner, key, name]);
  }
}

const percentile = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];

async function run(file, seconds, dir) {
  const players = JSON.parse(readFileSync(file, "utf8"));
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(players.map((p) => play(p, players.filter((o) => o !== p), until, { n: 0 })));
  const elapsed = (performance.now() - started) / 1000;
  let total = 0;
  const rows = [...stats.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([kind, s]) => {
    s.ms.sort((x, y) => x - y);
    total += s.ms.length;
    return [kind, s.ms.length, s.ok, s.refused, s.failed, ...[50, 95, 99].map((p) => percentile(s.ms, p).toFixed(1))];
  });
  console.log(`${players.length} players, ${elapsed.toFixed(1)} s: ${total} requests, ${(total / elapsed).toFixed(0)} requests/s`);
  const head = ["request", "n", "ok", "refused", "failed", "p50 ms", "p95 ms", "p99 ms"];
  const width = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  for (const r of [head, ...rows]) console.log(r.map((c, i) => (i ? String(c).padStart(width[i]) : String(c).padEnd(width[i]))).join("  "));
  console.log("\nerrors by kind:");
  for (const [label, n] of [...errors.entries()].sort((a, b) => b[1] - a[1])) console.log(`  ${String(n).padStart(6)}  ${label}`);
  console.log(`\nretried keys: ${retries}, answered differently: ${retryMismatches}`);
  const slowest = rows.filter((r) => r[0] in reads).sort((a, b) => b[6] - a[6])[0];
  writeFileSync(`${dir}/applied.csv`, applied.map((r) => r.join(",")).join("\n") + "\n");
  writeFileSync(`${dir}/slowest.txt`, slowest ? slowest[0] : "");
  if (unexpected || retryMismatches) {
    console.log(`FAILED: ${unexpected} request(s) failed other than by a rule, ${retryMismatches} retry(s) answered differently`);
    process.exit(1);
  }
}

const [command, ...args] = process.argv.slice(2);
if (command === "setup") await setup(Number(args[0]), args[1]);
else if (command === "run") await run(args[0], Number(args[1]), args[2]);
else throw new Error("usage: players.mjs setup N OUT.json | run OUT.json SECONDS DIR");
