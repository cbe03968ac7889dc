#!/usr/bin/env bash
# The local model's native speed beside llama.cpp's (llama-cpp-python), both on one
# thread, on the same 300-token prompt and 64 greedy tokens.
#   bench/local_model.sh [model.gguf]
# Prints both sets of figures and the ratios (llama.cpp ÷ ours: 2.0 means we are twice
# as slow). The prompt's tokens are speed.rs's fixed sequence, so no tokenizer is needed.
set -euo pipefail
source "$(dirname "$0")/../scripts/lib.sh"
cd "$ROOT"
# Where scripts/setup.sh installs them (scripts/lib.sh's smollm2_file), for any user.
MODEL=${1:-$(smollm2_file)}
PYTHON=${FAMILIAR_LLAMA_PYTHON:-$LLAMA_VENV/bin/python}
[ -f "$MODEL" ] || { echo "no model file (pass one or set FAMILIAR_SMOLLM2)" >&2; exit 1; }

flock /tmp/familiar-build.lock cargo build -q -p familiar-local --release --example speed
ours=$(./target/release/examples/speed "$MODEL")
echo "== familiar-local"
echo "$ours"

theirs=$("$PYTHON" - "$MODEL" <<'PY'
import sys, time
import numpy as np
from llama_cpp import Llama
PROMPT, GENERATE, FOLLOW_UP = 300, 64, 40
tokens = lambda a, n: [100 + i * 7919 % 40000 for i in range(a, a + n)]
llm = Llama(model_path=sys.argv[1], n_ctx=2048, n_threads=1, n_threads_batch=1, n_batch=64, logits_all=False, verbose=False)
logits = lambda: np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),))
t = time.perf_counter(); llm.eval(tokens(0, PROMPT)); nxt = int(np.argmax(logits())); first = time.perf_counter() - t
t = time.perf_counter()
for _ in range(GENERATE):
    llm.eval([nxt]); nxt = int(np.argmax(logits()))
gen = time.perf_counter() - t
t = time.perf_counter(); llm.eval(tokens(PROMPT, FOLLOW_UP)); follow = time.perf_counter() - t
print(f"prompt               {PROMPT / first:8.1f} tokens/s ({PROMPT} tokens)")
print(f"time to first token  {first * 1e3:8.1f} ms")
print(f"generation           {GENERATE / gen:8.1f} tokens/s ({GENERATE} tokens)")
print(f"follow-up turn       {follow * 1e3:8.1f} ms ({FOLLOW_UP} new tokens)")
PY
)
echo "== llama.cpp (llama-cpp-python, n_threads=1)"
echo "$theirs"

rate() { echo "$1" | grep "^$2" | grep -oE '[0-9]+\.[0-9]+' | head -1; }
echo "== ratio (llama.cpp / ours; lower is better for us)"
for what in prompt generation; do
    awk -v a="$(rate "$theirs" "$what")" -v b="$(rate "$ours" "$what")" -v w="$what" \
        'BEGIN { printf "%-20s %8.2f×\n", w " tokens/s", a / b }'
done
