#!/usr/bin/env bash
# Issue 44's tool-call measure: the share of requests answered with the right tool, and
# with the right tool and arguments, by our local model (shortlist, template, grammar:
# the worker's path) and by llama-cpp-python's own tool handling (chatml-function-calling)
# on the same SmolLM2 file, over bench/tool_calls/tasks.json; greedy on both.
#   bench/tool_calls.sh [model.gguf]
# Prints each tuning task's answers, then the table side by side (held-out tasks only in
# the table: pass --show-held through TOOL_CALLS_ARGS to see them). The peer's answers
# are kept in target/tool_calls/peer.json; TOOL_CALLS_PEER=keep reuses them.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
MODEL=${1:-$(smollm2_file)}
PYTHON=${FAMILIAR_LLAMA_PYTHON:-$LLAMA_VENV/bin/python}
[ -f "$MODEL" ] || { echo "no model file (pass one or set FAMILIAR_SMOLLM2)" >&2; exit 1; }
# TOOL_CALLS_TASKS: another tasks file (bench/short.sh gives a few tasks of this one).
TASKS=${TOOL_CALLS_TASKS:-bench/tool_calls/tasks.json}
# Another tasks file keeps its answers apart, so a later TOOL_CALLS_PEER=keep reuses the
# full file's.
OUT=target/tool_calls${TOOL_CALLS_TASKS:+/$(basename "$TASKS" .json)}
PEER=$OUT/peer.json
mkdir -p "$OUT"

if [ "${TOOL_CALLS_PEER:-}" != keep ] || [ ! -f "$PEER" ]; then
    "$PYTHON" bench/tool_calls/peer.py "$TASKS" "$MODEL" "$PEER"
fi
flock /tmp/familiar-build.lock cargo build -q -p familiar-local --release --example tool_calls
# shellcheck disable=SC2086
./target/release/examples/tool_calls "$TASKS" "$MODEL" "$PEER" \
    --save="$OUT/ours.json" ${TOOL_CALLS_ARGS:-}
