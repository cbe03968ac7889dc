#!/usr/bin/env bash
# Every bench the docs cite, in a short mode, so none rots unseen: scripts/test.sh runs
# this after the release builds (dist/, pkg/, pkg-page/, the local model's worker). A
# bench that fails to run fails the test command. The figures of a short run (one run,
# small marks, few tokens) are not the docs' figures: run each bench alone for those.
# bench/world_load/run.sh runs in the test command at full length (its own step).
#
# Not run here, each for a reason printed at the end (and failing when BENCH_STRICT=1):
# bench/wasm needs the wasm32-wasip1 target (rustup installs it from the network), and
# bench/json_repair/run.sh fetches its oracles' test suites from GitHub.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
export PATH="$ROOT/node_modules/.bin:$PATH"
work=$(mktemp -d -t familiar-bench-short.XXXXXX)
trap 'rm -rf "$work"' EXIT
not_run=()

bench() { printf '\n--> %s\n' "$*"; }

bench "bench/ui (bench/ui.mjs, bench/startup.mjs, one run each; then bench/size)"
RUNS=1 bench/ui --no-build

bench "bench/events.mjs, marks 10 and 20"
MARKS=10,20 WINDOW=5 node bench/events.mjs

bench "bench/frames.mjs, one NPC, three events"
NPCS=1 EVENTS=3 node bench/frames.mjs

bench "bench/local_model.sh (the local model's native speed beside llama.cpp's)"
bench/local_model.sh

bench "bench/tool_calls.sh, three of its tasks"
python3 - bench/tool_calls/tasks.json "$work/tool_calls_short.json" <<'PY'
import json, sys
tasks = json.load(open(sys.argv[1]))
tasks["tasks"] = [t for t in tasks["tasks"] if t["split"] == "tune"][:2] + \
                 [t for t in tasks["tasks"] if t["split"] == "held"][:1]
json.dump(tasks, open(sys.argv[2], "w"))
PY
TOOL_CALLS_TASKS="$work/tool_calls_short.json" bench/tool_calls.sh

bench "bench/local_model.mjs, 4 tokens"
GENERATE=4 node bench/local_model.mjs

if rustup target list --installed | grep -qx wasm32-wasip1; then
  bench "bench/wasm agent_loop"
  bench/wasm agent_loop
else
  not_run+=("bench/wasm: the wasm32-wasip1 target is not installed (rustup target add wasm32-wasip1 needs the network)")
fi
not_run+=("bench/json_repair/run.sh: fetches the oracles' test suites from GitHub and their packages from npm and PyPI")

printf '\nbenches run in short mode; not run:\n'
printf '  %s\n' "${not_run[@]}"
[ "${BENCH_STRICT:-}" != 1 ] || die "${#not_run[@]} bench(es) not run"
