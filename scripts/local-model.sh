#!/usr/bin/env bash
# Builds the local model's worker (crates/local, issue 29): its own wasm, built for
# speed (opt-level 3, wasm SIMD) rather than bytes, so the page's builds and their
# budgets never carry it; it loads only when an agent names a local model. Leaves
# target/local-site/local/ (worker.js, familiar_local.js, familiar_local_bg.wasm),
# which Trunk copies to dist/local/, and target/local-site/models/ holding the test
# model, SmolLM2-135M-Instruct, linked when scripts/setup.sh test or
# scripts/demo.sh --with-model installed it (the demo's Settings name it; without it,
# Settings say so and take any GGUF address or file).
# Trunk runs this before each build (Trunk.toml); it is quick when nothing changed.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

OUT=target/local-site
WASM=target/worker/wasm32-unknown-unknown/release/familiar_local.wasm

# Its own target directory: the SIMD flag would otherwise rebuild the page's crates.
# Feature gpu: the forward pass on WebGPU, chosen at load where there is an adapter.
RUSTFLAGS="-C target-feature=+simd128" \
  cargo build --quiet -p familiar-local --lib --release --features gpu --target wasm32-unknown-unknown --target-dir target/worker
mkdir -p "$OUT/local" "$OUT/models"
if [ ! -f "$OUT/local/familiar_local_bg.wasm" ] || [ "$WASM" -nt "$OUT/local/familiar_local_bg.wasm" ]; then
  wasm-bindgen --target web --no-typescript --out-dir "$OUT/local" --out-name familiar_local "$WASM"
  node_modules/.bin/wasm-opt -O3 --enable-simd --enable-bulk-memory --enable-nontrapping-float-to-int \
    --enable-sign-ext --enable-mutable-globals \
    "$OUT/local/familiar_local_bg.wasm" --output "$OUT/local/familiar_local_bg.opt.wasm"
  mv "$OUT/local/familiar_local_bg.opt.wasm" "$OUT/local/familiar_local_bg.wasm"
fi
cp js/local-worker.js "$OUT/local/worker.js"

model=$(smollm2_file)
if [ -n "$model" ]; then
  ln -f "$model" "$OUT/models/$(basename "$model")" 2>/dev/null || cp -f "$model" "$OUT/models/"
fi
