#!/usr/bin/env bash
# Sets up what is missing, then serves the demo at http://127.0.0.1:8080: the agent,
# its rules model and its tools all run in the page; nothing behind it, no key.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" demo
step "serving the demo at http://127.0.0.1:8080 (Ctrl+C stops it)"
exec trunk serve --release --offline
