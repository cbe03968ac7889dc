#!/usr/bin/env bash
# Sets up what is missing, then serves the demo at http://127.0.0.1:8080: the agent,
# its rules model and its tools all run in the page; nothing behind it, no key.
# `--check-headers` serves it on a free port instead, checks the page carries the
# headers that stop other sites framing it (Trunk.toml's [serve.headers]), and stops.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
"$ROOT/scripts/setup.sh" demo
if [ "${1:-}" = "--check-headers" ]; then
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  headers=$(mktemp)
  trunk serve --release --offline --port "$port" >"$headers.log" 2>&1 &
  server=$!
  trap 'kill "$server" 2>/dev/null; rm -f "$headers" "$headers.log"' EXIT
  for _ in $(seq 900); do
    curl -sf -D "$headers" -o /dev/null "http://127.0.0.1:$port/" && break
    kill -0 "$server" 2>/dev/null || { cat "$headers.log"; die "trunk serve stopped"; }
    sleep 1
  done
  grep -qi "^content-security-policy: frame-ancestors 'self'" "$headers" \
    || die "the demo page lacks Content-Security-Policy: frame-ancestors 'self': $(cat "$headers")"
  grep -qi "^x-frame-options: sameorigin" "$headers" || die "the demo page lacks X-Frame-Options"
  echo "the demo page is served with frame-ancestors 'self' and X-Frame-Options: SAMEORIGIN"
  exit 0
fi
step "serving the demo at http://127.0.0.1:8080 (Ctrl+C stops it)"
exec trunk serve --release --offline
