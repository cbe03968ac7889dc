#!/usr/bin/env bash
# Builds the page assistant: the lean runtime plus the page tools (feature `page`),
# into pkg-page/ (familiar.js, familiar_bg.wasm, familiar.d.ts), as scripts/headless.sh
# builds the lean runtime into pkg/; then its widget (js/page-assistant/widget.js) and
# the one-script-tag loader (assistant.js) beside them. scripts/extension.sh packs the
# same files as a Manifest V3 extension.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
FAMILIAR_FEATURES=page FAMILIAR_PKG_OUT=pkg-page "$ROOT/scripts/headless.sh" "$@"
# The widget goes out without its comments (esbuild transforms it, nothing bundled or
# renamed): a page pays for every byte of it before a person opens the assistant.
[ -x "$ROOT/node_modules/.bin/esbuild" ] ||
  die "node_modules/.bin/esbuild is missing: run npm ci (or scripts/setup.sh demo)"
"$ROOT/node_modules/.bin/esbuild" "$ROOT/js/page-assistant/widget.js" --log-level=warning --outfile="$ROOT/pkg-page/widget.js"
cp "$ROOT/js/page-assistant/assistant.js" "$ROOT/pkg-page/"
step "pkg-page/: assistant.js (the tag's loader) and widget.js added"
