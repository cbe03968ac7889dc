#!/usr/bin/env bash
# Sets up what is missing, then runs every test: formatting, clippy (native and wasm),
# native unit tests, browser tests in headless Chromium, and the end-to-end suite
# against the release build. Exits non-zero on the first failure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
log=$(mktemp -d)
trap 'rm -rf "$log"' EXIT

# Sums libtest's "N passed" lines in a log.
passed() { grep -Eo 'test result: ok\. [0-9]+ passed' "$1" | awk '{ n += $4 } END { print n + 0 }'; }

"$ROOT/scripts/setup.sh" test

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (native) -D warnings"
cargo clippy --quiet --all-targets -- -D warnings

step "cargo clippy (wasm32) -D warnings"
cargo clippy --quiet --all-targets --target wasm32-unknown-unknown -- -D warnings

step "native tests"
cargo test 2>&1 | tee "$log/native"

step "browser tests (wasm-bindgen-test, headless Chromium)"
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test ui --test web 2>&1 | tee "$log/browser"

step "release build (trunk, offline)"
trunk build --release --offline

step "end-to-end tests (Playwright, headless Chromium, release build)"
node --test --test-reporter=spec e2e/ 2>&1 | tee "$log/e2e"

native=$(passed "$log/native")
browser=$(passed "$log/browser")
e2e=$(grep -Eo '(ℹ|#) pass [0-9]+' "$log/e2e" | awk '{ n += $3 } END { print n + 0 }')
printf '\n==> all green: %s native, %s browser, %s end-to-end tests passed\n' "$native" "$browser" "$e2e"
for count in "$native" "$browser" "$e2e"; do
  [ "$count" -gt 0 ] || die "a suite ran no tests"
done
