#!/usr/bin/env bash
# Builds the page assistant: the lean runtime plus the page tools (feature `page`),
# into pkg-page/ (familiar.js, familiar_bg.wasm, familiar.d.ts), as scripts/headless.sh
# builds the lean runtime into pkg/. The widget and its one-script-tag loader are not
# in it yet (issue 27).
set -euo pipefail
FAMILIAR_FEATURES=page FAMILIAR_PKG_OUT=pkg-page exec "$(dirname "$0")/headless.sh" "$@"
