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

# Each bench's time, printed as the next one starts and in a table at the end.
times=() began= name=
bench() {
  [ -z "$name" ] || times+=("$(printf '%4ds  %s' $((SECONDS - began)) "$name")")
  name=$* began=$SECONDS
  [ -z "$name" ] || printf '\n--> %s\n' "$name"
}

bench "bench/ui (bench/ui.mjs, bench/startup.mjs, one run each; then bench/size)"
RUNS=1 bench/ui --no-build

bench "bench/events.mjs, marks 10 and 20"
MARKS=10,20 WINDOW=5 node bench/events.mjs

bench "bench/frames.mjs, one NPC, three events"
NPCS=1 EVENTS=3 node bench/frames.mjs

bench "bench/local_model.sh (the local model's native speed beside llama.cpp's)"
bench/local_model.sh

# One task proves both paths run (ours and llama-cpp-python's); each took ~25 s here.
bench "bench/tool_calls.sh, one of its tasks"
python3 - bench/tool_calls/tasks.json "$work/tool_calls_short.json" <<'PY'
import json, sys
tasks = json.load(open(sys.argv[1]))
tasks["tasks"] = [t for t in tasks["tasks"] if t["split"] == "tune"][:1]
json.dump(tasks, open(sys.argv[2], "w"))
PY
TOOL_CALLS_TASKS="$work/tool_calls_short.json" bench/tool_calls.sh

# Every row still runs (each build of ours, wllama, llama.cpp); reading the ~300-token
# prompt was most of each row's time, so the short run reads one paragraph of it.
bench "bench/local_model.mjs, a one-paragraph prompt, 4 tokens"
PARAGRAPHS=1 GENERATE=4 node bench/local_model.mjs

if rustup target list --installed | grep -qx wasm32-wasip1; then
  bench "bench/wasm agent_loop"
  bench/wasm agent_loop
else
  not_run+=("bench/wasm: the wasm32-wasip1 target is not installed (rustup target add wasm32-wasip1 needs the network)")
fi
not_run+=("bench/json_repair/run.sh: fetches the oracles' test suites from GitHub and their packages from npm and PyPI")

bench
printf '\nthe time of each bench:\n'
printf '%s\n' "${times[@]}"
printf '\nbenches run in short mode; not run:\n'
printf '  %s\n' "${not_run[@]}"
[ "${BENCH_STRICT:-}" != 1 ] || die "${#not_run[@]} bench(es) not run"
