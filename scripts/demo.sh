#!/usr/bin/env bash
# Sets up what is missing, then serves the demo at http://127.0.0.1:8080: the agent,
# its rules model and its tools all run in the page; nothing behind it, no key.
# FAMILIAR_DEMO_PORT serves it on another port (e2e/served.test.mjs opens what this
# script serves: its headers, zero console errors, an answer).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" demo
port=${FAMILIAR_DEMO_PORT:-8080}
step "serving the demo at http://127.0.0.1:$port (Ctrl+C stops it)"
exec trunk serve --release --offline --port "$port"
