#!/usr/bin/env bash
# Packs the page assistant as a Manifest V3 extension into pkg-extension/, loadable
# unpacked (chrome://extensions → Developer mode → Load unpacked, or
# `chromium --load-extension=pkg-extension`): extension/ (manifest and content
# script) with pkg-page/'s widget and runtime. Builds pkg-page/ first unless
# --no-build is given (the test command has just built it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if [ "${1:-}" != "--no-build" ]; then
  scripts/page-assistant.sh
fi
for file in widget.js familiar.js familiar_bg.wasm; do
  [ -s "pkg-page/$file" ] || die "pkg-page/$file is missing: run scripts/page-assistant.sh"
done
rm -rf pkg-extension
mkdir -p pkg-extension
cp extension/manifest.json extension/content.js extension/options.html extension/options.css extension/options.js pkg-extension/
cp pkg-page/widget.js pkg-page/familiar.js pkg-page/familiar_bg.wasm pkg-extension/
python3 -c 'import json,sys; json.load(open("pkg-extension/manifest.json"))' ||
  die "extension/manifest.json is not valid JSON"
step "pkg-extension/: $(ls pkg-extension | tr '\n' ' ')"
