#!/usr/bin/env bash
# Packs the page assistant as a Manifest V3 extension into pkg-extension/, loadable
# unpacked (chrome://extensions → Developer mode → Load unpacked, or
# `chromium --load-extension=pkg-extension`): the side panel (panel.html, panel.js with
# pkg-page/'s runtime and widget.js), the service worker that opens it, the options
# page, and the content script with its frame reader (frame/: the familiar-page crate
# built alone, feature `frame`). Builds pkg-page/ first unless --no-build is given (the
# test command has just built it).
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
if [ "${1:-}" != "--no-build" ]; then
  scripts/page-assistant.sh
fi
for file in widget.js familiar.js familiar_bg.wasm; do
  [ -s "pkg-page/$file" ] || die "pkg-page/$file is missing: run scripts/page-assistant.sh"
done

FRAME_WASM=target/wasm32-unknown-unknown/release/familiar_page.wasm
step "cargo rustc -p familiar-page --features frame --crate-type cdylib (the content script's frame reader)"
cargo rustc --quiet -p familiar-page --lib --release --target wasm32-unknown-unknown \
  --features frame --crate-type cdylib
[ -f "$FRAME_WASM" ] || die "cargo built no $FRAME_WASM"

rm -rf pkg-extension
mkdir -p pkg-extension/frame
wasm-bindgen --target web --no-typescript --out-dir pkg-extension/frame --out-name familiar_page "$FRAME_WASM"
node_modules/.bin/wasm-opt -Oz pkg-extension/frame/familiar_page_bg.wasm --output pkg-extension/frame/familiar_page_bg.opt.wasm
mv pkg-extension/frame/familiar_page_bg.opt.wasm pkg-extension/frame/familiar_page_bg.wasm
for file in manifest.json background.js content.js panel.html panel.css panel.js providers.js options.html options.css options.js; do
  cp "extension/$file" pkg-extension/
done
cp pkg-page/widget.js pkg-page/familiar.js pkg-page/familiar_bg.wasm pkg-extension/
python3 -c 'import json,sys; json.load(open("pkg-extension/manifest.json"))' ||
  die "extension/manifest.json is not valid JSON"
step "pkg-extension/: $(ls pkg-extension | tr '\n' ' ') frame/: $(ls pkg-extension/frame | tr '\n' ' ')"
