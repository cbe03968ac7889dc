# Shared by the project's scripts: paths, logging, and the tool versions we pin.
# Sourced, not run.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TRUNK_VERSION=0.21.14
LITELLM_VERSION=1.106.2
POSTRUST_VERSION=3.1.0
LITELLM_VENV="${XDG_CACHE_HOME:-$HOME/.cache}/familiar/litellm-$LITELLM_VERSION"
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
