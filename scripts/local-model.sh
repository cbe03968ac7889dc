#!/usr/bin/env bash
# Builds the local model's worker (crates/local, issue 29): its own wasm, built for
# speed (opt-level 3, wasm SIMD) rather than bytes, so the page's builds and their
# budgets never carry it; it loads only when an agent names a local model. Twice: with
# plain SIMD and with relaxed SIMD, the worker's script choosing at load. Leaves
# target/local-site/local/ (worker.js, team.js, familiar_local.js, familiar_local_bg.wasm, and
# familiar_local_relaxed.js, familiar_local_relaxed_bg.wasm),
# which Trunk copies to dist/local/, and target/local-site/models/ holding the test
# model, SmolLM2-135M-Instruct, linked when scripts/setup.sh test or
# scripts/demo.sh --with-model installed it (the demo's Settings name it; without it,
# Settings say so and take any GGUF address or file).
# Trunk runs this before each build (Trunk.toml); it is quick when nothing changed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

OUT=target/local-site

# Builds the worker's wasm with RUSTFLAGS `$1` into its own target directory `$2` (a
# flag would otherwise rebuild the page's crates, or the other build's), then binds it
# as `$3`.js/_bg.wasm in $OUT/local and optimizes it with wasm-opt's features `$4`.
# Feature gpu: the forward pass on WebGPU, chosen at load where there is an adapter.
build_worker() {
  local flags=$1 dir=$2 name=$3 features=$4
  local wasm=$dir/wasm32-unknown-unknown/release/familiar_local.wasm
  RUSTFLAGS="$flags" \
    cargo build --quiet -p familiar-local --lib --release --features gpu --target wasm32-unknown-unknown --target-dir "$dir"
  if [ ! -f "$OUT/local/${name}_bg.wasm" ] || [ "$wasm" -nt "$OUT/local/${name}_bg.wasm" ]; then
    wasm-bindgen --target web --no-typescript --out-dir "$OUT/local" --out-name "$name" "$wasm"
    # shellcheck disable=SC2086 # one word per feature
    node_modules/.bin/wasm-opt -O3 $features --enable-bulk-memory --enable-nontrapping-float-to-int \
      --enable-sign-ext --enable-mutable-globals \
      "$OUT/local/${name}_bg.wasm" --output "$OUT/local/${name}_bg.opt.wasm"
    mv "$OUT/local/${name}_bg.opt.wasm" "$OUT/local/${name}_bg.wasm"
  fi
}

mkdir -p "$OUT/local" "$OUT/models"
# Every browser with WebAssembly SIMD runs this one.
build_worker "-C target-feature=+simd128" target/worker familiar_local --enable-simd
# Relaxed SIMD's 8-bit dot product (Chrome and Edge 114+; Firefox and Safari do not
# ship it yet), for the quantized products: js/local-worker.js loads this one where
# the browser validates a relaxed-SIMD instruction, the one above elsewhere.
build_worker "-C target-feature=+simd128,+relaxed-simd" target/worker-relaxed familiar_local_relaxed \
  "--enable-simd --enable-relaxed-simd"
cp js/local-worker.js "$OUT/local/worker.js"
cp js/local-team.js "$OUT/local/team.js"
cp js/local-weights.js "$OUT/local/weights.js"

model=$(smollm2_file)
if [ -n "$model" ]; then
  ln -f "$model" "$OUT/models/$(basename "$model")" 2>/dev/null || cp -f "$model" "$OUT/models/"
fi
