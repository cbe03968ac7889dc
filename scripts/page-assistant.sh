#!/usr/bin/env bash
# Builds the page assistant: the lean runtime plus the page tools (feature `page`),
# into pkg-page/ (familiar.js, familiar_bg.wasm, familiar.d.ts), as scripts/headless.sh
# builds the lean runtime into pkg/; then its widget (js/page-assistant/widget.js) and
# the one-script-tag loader (assistant.js) beside them. scripts/extension.sh packs the
# same files as a Manifest V3 extension.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
FAMILIAR_FEATURES=page FAMILIAR_PKG_OUT=pkg-page "$ROOT/scripts/headless.sh" "$@"
cp "$ROOT/js/page-assistant/widget.js" "$ROOT/js/page-assistant/assistant.js" "$ROOT/pkg-page/"
step "pkg-page/: assistant.js (the tag's loader) and widget.js added"
