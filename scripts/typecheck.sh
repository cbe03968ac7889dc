#!/usr/bin/env bash
# Type-checks the TypeScript examples (examples/*.ts) against the JS API's
# declarations: pkg/familiar.d.ts from scripts/headless.sh, and src/js_api/api.d.ts.
# Rebuilds pkg/ first unless it is newer than every source file.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

[ -x node_modules/.bin/tsc ] || die "node_modules/.bin/tsc is missing: run npm ci"
stale=$(find src crates/json crates/json-derive crates/page Cargo.toml Cargo.lock -newer pkg/familiar.d.ts -print -quit 2>/dev/null || true)
if [ ! -f pkg/familiar.d.ts ] || [ ! -f pkg/familiar_bg.wasm ] || [ ! -f pkg/familiar.js ] || [ -n "$stale" ]; then
  "$ROOT/scripts/headless.sh"
else
  step "pkg/ is newer than every source file: not rebuilt"
fi
step "tsc -p examples/tsconfig.json ($(node_modules/.bin/tsc --version))"
node_modules/.bin/tsc -p examples/tsconfig.json
step "examples type-check"
