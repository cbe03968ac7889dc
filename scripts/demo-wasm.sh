#!/usr/bin/env bash
# Builds the demo's wasm cut into modules (issue 45): the chat's module, which the page
# loads first, and one module per part a first visit does not open (the World, the
# Guild, Settings: `ui::part`), fetched when first opened or when its button is
# hovered or focused. Trunk runs this before each build (Trunk.toml) and copies
# target/demo-site/ into dist/ after it (the same names as before at the root:
# familiar-demo.js, familiar-demo_bg.wasm; beside them __wasm_split.js, which loads
# the parts, split_*.wasm and the chunks the parts share, chunk_*.wasm).
#
# The steps: cargo builds the demo with feature `split` and its relocations kept
# (--emit-relocs, so wasm-split can follow every call); wasm-split cuts the module at
# the parts' entries, each part taking what only it reaches; wasm-bindgen binds the
# chat's module (--keep-lld-exports: the parts call into it); wasm-opt -Oz shrinks
# every module, as Trunk did the one module before.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

OUT=target/demo-site
SPLIT=target/demo-split
WASM=target/wasm32-unknown-unknown/release/familiar-demo.wasm

command -v wasm-split-cli >/dev/null ||
  die "wasm-split-cli is not installed: run scripts/setup.sh demo"
# The relocations are the linker's: asked of the demo's own link only (cargo rustc's
# flags after `--` reach the last crate alone), so the dependencies are the ones every
# other wasm build of target/ compiled, not built a second time.
cargo rustc --quiet --release --target wasm32-unknown-unknown --bin familiar-demo \
  --features split -- -Clink-args=--emit-relocs
[ -f "$OUT/.built" ] && [ "$OUT/.built" -nt "$WASM" ] && [ "$OUT/.built" -nt "$0" ] && exit 0

rm -rf "$SPLIT" "$OUT"
mkdir -p "$SPLIT" "$OUT"
wasm-split-cli "$WASM" "$SPLIT" --out-name familiar-demo
wasm-bindgen --target web --no-typescript --keep-lld-exports \
  --out-dir "$OUT" --out-name familiar-demo "$SPLIT/familiar-demo.wasm"
for module in "$OUT/familiar-demo_bg.wasm" "$SPLIT"/split_*.wasm "$SPLIT"/chunk_*.wasm; do
  [ -f "$module" ] || continue
  node_modules/.bin/wasm-opt -Oz "$module" --output "$OUT/$(basename "$module").opt"
  mv "$OUT/$(basename "$module").opt" "$OUT/$(basename "$module")"
done
cp "$SPLIT/__wasm_split.js" "$OUT/"
touch "$OUT/.built"
