// Starts the demo: loads the wasm module Trunk built. A file of its own, in place of
// the inline loader Trunk writes by default (Trunk.toml `pattern_script`), so the page
// runs under a Content-Security-Policy that allows no inline script.
import init from './familiar-demo.js';

await init({ module_or_path: new URL('./familiar-demo_bg.wasm', import.meta.url) });
