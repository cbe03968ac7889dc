#!/usr/bin/env bash
# Builds the headless runtime for the browser: the library without the `ui` feature
# (no Leptos), its JS API bound by wasm-bindgen and shrunk by wasm-opt as Trunk does
# for the demo. Leaves pkg/familiar.js, pkg/familiar_bg.wasm and pkg/familiar.d.ts,
# an ES module a page or a bundler imports: `import init, { createAgent } from
# './pkg/familiar.js'; await init();`.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

WASM=target/wasm32-unknown-unknown/release/familiar.wasm
# scripts/page-assistant.sh builds the page assistant (lean + `page`) into pkg-page/.
OUT=${FAMILIAR_PKG_OUT:-pkg}
FEATURES=${FAMILIAR_FEATURES:-}
NAME=familiar

# The tools must already be there (scripts/setup.sh demo installs them); say which
# one is missing rather than build with the wrong one.
rustup target list --installed | grep -qx wasm32-unknown-unknown ||
  die "the wasm32-unknown-unknown target is missing: run scripts/setup.sh demo"
want=$(wasm_bindgen_version)
[ -n "$want" ] || die "no wasm-bindgen in Cargo.lock"
have=$(wasm-bindgen --version 2>/dev/null) ||
  die "wasm-bindgen is not installed: run scripts/setup.sh demo"
[ "$have" = "wasm-bindgen $want" ] ||
  die "$have does not match Cargo.lock's wasm-bindgen $want: run scripts/setup.sh demo"
# binaryen from npm, never Debian's (v108 makes a module that fails at load).
[ -x node_modules/.bin/wasm-opt ] ||
  die "node_modules/.bin/wasm-opt is missing: run npm ci (or scripts/setup.sh demo)"

step "cargo build --lib --release --target wasm32-unknown-unknown --no-default-features ${FEATURES:+--features $FEATURES}"
cargo build --lib --release --target wasm32-unknown-unknown --no-default-features ${FEATURES:+--features "$FEATURES"}
[ -f "$WASM" ] || die "cargo built no $WASM"

step "wasm-bindgen --target web → $OUT/"
rm -rf "$OUT"
wasm-bindgen --target web --out-dir "$OUT" --out-name "$NAME" "$WASM"

# As Trunk runs it for the demo's data-wasm-opt="z": -Oz and no feature flags.
step "wasm-opt -Oz $OUT/${NAME}_bg.wasm"
node_modules/.bin/wasm-opt -Oz "$OUT/${NAME}_bg.wasm" --output "$OUT/${NAME}_bg.opt.wasm"
mv "$OUT/${NAME}_bg.opt.wasm" "$OUT/${NAME}_bg.wasm"

for file in "$NAME.js" "${NAME}_bg.wasm" "$NAME.d.ts"; do
  [ -s "$OUT/$file" ] || die "$OUT/$file was not produced"
done
grep -q 'createAgent' "$OUT/$NAME.d.ts" || die "$OUT/$NAME.d.ts does not declare createAgent"
step "built $OUT/: $(cd "$OUT" && ls -l "$NAME.js" "${NAME}_bg.wasm" "$NAME.d.ts" | awk '{ printf "%s %s B  ", $NF, $5 }')"
