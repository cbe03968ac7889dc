// Starts the demo: loads the chat's wasm module (scripts/demo-wasm.sh; the parts' own
// modules come when first opened). A file of its own, not an inline loader, so the
// page runs under a Content-Security-Policy that allows no inline script.
import init from './familiar-demo.js';

await init({ module_or_path: new URL('./familiar-demo_bg.wasm', import.meta.url) });
