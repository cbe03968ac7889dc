#!/usr/bin/env bash
# Sets up what is missing, then runs every test: formatting, clippy (native and wasm),
# native unit tests, browser tests in headless Chromium, and the end-to-end suite
# against the release build. Exits non-zero on the first failure.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
# FAMILIAR_TEST_LOGS keeps the logs there (scripts/counts.py write reads them).
log=${FAMILIAR_TEST_LOGS:-$(mktemp -d)}
mkdir -p "$log"
servers=()
backend=$(mktemp -d -t familiar-backend.XXXXXX)
# Stops a background job started in a process group of its own (its pid is the group's),
# and everything of that group, before its files are deleted: SIGTERM, SIGKILL to what is
# left 10 s later.
stop_group() {
  kill -- "-$1" 2>/dev/null || return 0
  local _
  for _ in $(seq 100); do
    kill -0 -- "-$1" 2>/dev/null || break
    sleep 0.1
  done
  kill -KILL -- "-$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}
stop_servers() {
  local pid
  for pid in "${servers[@]}"; do kill -- "-$pid" 2>/dev/null || true; done
  [ -z "${sql_job:-}" ] || stop_group "$sql_job"
  "$ROOT/scripts/backend.sh" stop "$backend"
  [ -n "${FAMILIAR_TEST_LOGS:-}" ] || rm -rf "$log"
}
trap 'stage_times; stop_servers' EXIT

# Each stage's time: `step` (scripts/lib.sh's, redefined here) closes the stage before it
# with its time, and the run ends with the table of them, green or not.
stages=()
stage= stage_began=$SECONDS run_began=$SECONDS
stage_done() {
  [ -n "$stage" ] || return 0
  local took=$((SECONDS - stage_began))
  printf '    (%dm%02ds)\n' $((took / 60)) $((took % 60))
  stages+=("$(printf '%4dm%02ds  %s' $((took / 60)) $((took % 60)) "${stage:0:110}")")
  stage=
}
step() {
  stage_done
  stage=$* stage_began=$SECONDS
  printf '\n==> %s\n' "$*"
}
stage_times() {
  stage_done
  local took=$((SECONDS - run_began))
  printf '\n==> the time of each stage\n'
  printf '%s\n' "${stages[@]}"
  printf '%4dm%02ds  in all\n' $((took / 60)) $((took % 60))
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# The model-client browser tests need a fault-injecting server and a LiteLLM proxy on
# loopback, the real-model tests SmolLM2 behind llama-cpp-python. They start now, so
# their slow starts overlap the checks below.
start_servers() {
  setsid python3 tests/servers/fault_server.py 0 >"$log/fault" 2>&1 & servers+=($!)
  local port=
  for _ in $(seq 50); do
    port=$(awk '/^listening on/ { print $3 }' "$log/fault")
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$log/fault"; die "the fault server did not start"; }
  export FAMILIAR_FAULT_URL="http://127.0.0.1:$port"
  port=$(free_port)
  # The proxy's master key, new each run and given to no test: the browser tests hold
  # only the token tests/servers/litellm/browser_auth.py checks.
  LITELLM_MASTER_KEY="sk-$(python3 -c 'import secrets; print(secrets.token_hex(32))')" \
  PYTHONPATH="$ROOT/tests/servers/litellm" LITELLM_LOCAL_MODEL_COST_MAP=True setsid \
    "$LITELLM_VENV/bin/litellm" --config "$ROOT/tests/servers/litellm/config.yaml" \
    --host 127.0.0.1 --port "$port" >"$log/litellm" 2>&1 & servers+=($!)
  export FAMILIAR_LITELLM_URL="http://127.0.0.1:$port"
  # Two loopback origins that record every request: a sign-in's tokens and our headers
  # must never reach the one they were not meant for (tests/login.rs, tests/web.rs).
  setsid python3 tests/servers/capture_server.py >"$log/capture" 2>&1 & servers+=($!)
  local ports=
  for _ in $(seq 50); do
    ports=$(awk '/^listening on/ { print $3, $4 }' "$log/capture")
    [ -n "$ports" ] && break
    sleep 0.1
  done
  [ -n "$ports" ] || { cat "$log/capture"; die "the capture server did not start"; }
  export FAMILIAR_CAPTURE_URL="http://127.0.0.1:${ports% *}"
  export FAMILIAR_CAPTURE_OTHER_URL="http://127.0.0.1:${ports#* }"
  start_model_server "$log/model"
  servers+=("$MODEL_SERVER")
}

wait_for_litellm() {
  for _ in $(seq 180); do
    curl -sf "$FAMILIAR_LITELLM_URL/health/liveliness" >/dev/null && return
    kill -0 "${servers[1]}" 2>/dev/null || break
    sleep 1
  done
  tail -n 30 "$log/litellm"
  die "the LiteLLM proxy did not start"
}

# Sums libtest's "N passed" lines in a log.
passed() { grep -Eo 'test result: ok\. [0-9]+ passed' "$1" | awk '{ n += $4 } END { print n + 0 }'; }

"$ROOT/scripts/setup.sh" test
start_servers

step "floors rise and budgets fall, or the change says why (scripts/ratchet.py: tests/counts.txt, bench/budgets.txt; and the ratchet's own tests)"
python3 scripts/ratchet.py --self-test
python3 scripts/ratchet.py check tests/counts.txt bench/budgets.txt

step "the README and docs/ say what the code and benches say: links resolve, named scripts and paths exist, quoted budgets and test counts are bench/budgets.txt's and tests/counts.txt's (scripts/check_docs.py, and its own self-test)"
python3 scripts/check_docs.py --self-test
python3 scripts/check_docs.py

step "every test scripts/claims.md names exists and the test command runs it (scripts/claims.py, and its own tests)"
python3 scripts/claims.py --self-test
python3 scripts/claims.py

step "PostgreSQL + postrust + the Supabase Auth stand-in on loopback, migrations applied"
"$ROOT/scripts/backend.sh" start "$backend" tests/sql/conformance.sql
source "$backend/env"
# The SQL checks and the world load bench wait on PostgreSQL, sleeps and races more than
# they compute (68 s here, ~20 s of it CPU), so they run beside the CPU-bound fmt and
# clippy stages below, their output kept in a log printed when they are waited for.
# One SQL file against the test database, its output kept in the log the counts read.
sql() {
  psql -X -q -v ON_ERROR_STOP=1 -h 127.0.0.1 -p "$FAMILIAR_PG_PORT" -U postgres -f "$1" | tee -a "$log/sql"
}
sql_checks() {
  stage=
  local before=${#stages[@]}
  step "row-level security and the game's rules under Supabase's default grants (SQL against the real database)"
  # Each run counts its own SQL checks: a log kept from an earlier run would add to them.
  : > "$log/sql"
  sql tests/sql/rls.sql
  step "what anon and authenticated may call under Supabase's own default grants: the API and policy helpers only, no database action forged into a ledger (SQL, a database of its own)"
  tests/sql/grants.sh
  step "agents a player owns: one player cannot act as another's agent (SQL, default grants)"
  sql tests/sql/agents.sql
  step "standing orders: only the owner sets an agent's; act_as outside its actions, communities, battles, recipients, daily gold and energy is refused, inside goes through (SQL, default grants)"
  sql tests/sql/standing_orders.sql
  step "one person, many accounts: votes, damage, writes and joins limited per account and for newcomers (SQL, default grants)"
  sql tests/sql/abuse.sql
  step "the same limits when requests race: concurrent sessions get no more than one vote, 3 newcomer votes, 500 newcomer damage, 30 posts, 60 blows; a day-old account 20 works, 500 damage, 20 votes an hour (SQL, parallel psql)"
  tests/sql/abuse_concurrent.sh
  step "a day's posts, messages and proposals per account, 1000 memories per user, a retried key answers the first result (SQL, default grants)"
  sql tests/sql/load_limits.sql
  step "caps per account whatever its age: a day-old account's work, buy, eat, fight (blows and damage) and votes held an hour and a day (SQL, default grants)"
  sql tests/sql/caps.sql
  step "the world's own races: the last gold and the same energy spent once, one battle counting each blow once, a retried key answering the first result, two players messaging each other without deadlock (SQL, parallel psql)"
  tests/sql/load_races.sh
  step "the shared world under load: 20 players and their agents for 20 s over postrust; every ledger key once, gold, bread and blows conserved, one vote per account, no deadlock (bench/world_load)"
  bench/world_load/run.sh 20 20
  stage_done
  printf '%s\n' "${stages[@]:$before}" >"$log/sql-stages"
}
# In a process group of its own (set -m), like the servers (setsid), so that stopping it
# stops the psql, the race scripts and the bench it runs, not the subshell alone; its
# stdin is /dev/null, as a job's is without job control.
set -m
( set -e; sql_checks ) </dev/null >"$log/sql-run" 2>&1 & sql_job=$!
set +m

step "cargo fmt --check"
cargo fmt --all --check

step "cargo clippy (native) -D warnings"
cargo clippy --quiet --workspace --all-targets -- -D warnings

step "cargo clippy (wasm32) -D warnings"
cargo clippy --quiet --workspace --all-targets --target wasm32-unknown-unknown -- -D warnings

step "cargo clippy (wasm32, the extension's frame reader: crates/page with feature frame) -D warnings"
cargo clippy --quiet -p familiar-page --target wasm32-unknown-unknown --features frame -- -D warnings

step "cargo clippy (wasm32, the local model's WebGPU kernels: crates/local with feature gpu) -D warnings"
cargo clippy --quiet -p familiar-local --features gpu --lib --tests --target wasm32-unknown-unknown -- -D warnings

step "cargo clippy (wasm32, the local model's relaxed-SIMD build: its flag, in the target directory its browser test builds in) -D warnings"
RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" \
  cargo clippy --quiet -p familiar-local --features gpu --lib --tests --target wasm32-unknown-unknown --target-dir target/wasm-relaxed -- -D warnings

step "cargo clippy (wasm32, the demo cut into modules: feature split) -D warnings"
cargo clippy --quiet --lib --target wasm32-unknown-unknown --features split -- -D warnings

step "cargo clippy (wasm32, headless: no ui feature) -D warnings"
cargo clippy --quiet --lib --target wasm32-unknown-unknown --no-default-features -- -D warnings

step "each feature alone builds (wasm32): a build per use takes any subset"
for feature in markdown store world workflows supabase guild page supervisor local; do
  cargo check --quiet --lib --target wasm32-unknown-unknown --no-default-features --features "$feature"
done

step "the SQL checks and the world load bench (run beside the stages above since the backend started; this stage's time is the wait for them)"
sql_status=0
wait "$sql_job" || sql_status=$?
sql_job=
cat "$log/sql-run"
[ "$sql_status" = 0 ] || die "the SQL checks or the world load bench failed (their output above)"
# Their own times join the table, marked as run beside the others.
while IFS= read -r line; do stages+=("$line (beside)"); done <"$log/sql-stages"

step "native tests"
# Under CI the property tests draw the same cases every run, so a run's colour depends
# on the change alone (Hypothesis's `derandomize` for CI); elsewhere each run draws new
# ones, and a failure found is kept in the test's .proptest-regressions file, which
# every run replays first.
if [ "${CI:-}" = true ] && [ -z "${PROPTEST_RNG_SEED:-}" ]; then export PROPTEST_RNG_SEED=4242; fi
if [ -n "${PROPTEST_RNG_SEED:-}" ]; then
  echo "property tests: the cases of seed $PROPTEST_RNG_SEED"
else
  echo "property tests: new cases drawn at random"
fi
# A stuck native test fails the run rather than hanging it, and is named: cargo runs each
# native binary under scripts/native_runner.py, which stops a test still running 5
# minutes after it started (stable libtest has no limit per test, but names a test that
# runs past 60 s, and the runner reads that), and a binary that runs 20 minutes in all
# (a hang outside any test). The slowest native test takes well under a minute here.
python3 scripts/native_runner.py --self-test
export NATIVE_TEST_LIMIT=300 NATIVE_BINARY_LIMIT=1200
export CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUNNER="python3 $ROOT/scripts/native_runner.py"
rm -f target/otlp/scripted-run.json
cargo test 2>&1 | tee "$log/native"

step "the native tests' OTLP export (src/trace), sent to a real OTLP/HTTP receiver on loopback that decodes with the OpenTelemetry project's own definitions"
"$OTLP_VENV/bin/python" scripts/otlp_receiver.py selftest target/otlp/scripted-run.json

step "WebMCP on and off: the offline page assistant's tasks with the page's declared tools and without, done, model steps and prompt tokens each (bench/webmcp.rs, short)"
cargo run --quiet --example webmcp -- --short

step "the page reader's and the JSON reader's native tests (crates/page, crates/json)"
cargo test -p familiar-page -p familiar-json 2>&1 | tee -a "$log/native"

step "the local model's native tests (crates/local, release: its tests run real models)"
cargo test --release -p familiar-local 2>&1 | tee -a "$log/native"

step "browser tests (wasm-bindgen-test, headless Chromium; LiteLLM at $FAMILIAR_LITELLM_URL, faults at $FAMILIAR_FAULT_URL, capture at $FAMILIAR_CAPTURE_URL and $FAMILIAR_CAPTURE_OTHER_URL)"
wait_for_litellm
# wasm-bindgen-test-runner gives each test binary 20 s unless told: the model client's
# fault matrix waits out 1 s timeouts and retries on purpose (12-15 s alone), which a
# loaded 2-core machine pushes past 20. A stuck binary still fails, after 5 minutes.
export WASM_BINDGEN_TEST_TIMEOUT=300
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test ui --test web --test page --test page_reach --test login --test api --test store_conformance 2>&1 | tee "$log/browser"
# The model client's suite prints its fault matrix (the table of every fault's outcome).
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test --target wasm32-unknown-unknown --test model_client -- --nocapture 2>&1 | tee -a "$log/browser"
wait_for_model_server "$log/model"
run_real_model_tests 2>&1 | tee -a "$log/browser"
# The local model's WebGPU kernels (feature gpu) against its CPU code, each kernel and
# the forward pass, and the worker's own path choosing its backend at load and answering
# on WebGPU as on the CPU, in a dedicated worker on SwiftShader's adapter
# (crates/local/webdriver.json adds --enable-unsafe-webgpu; the runner reads it from the
# crate's directory). --nocapture prints each one's worst error.
CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p familiar-local --features gpu --target wasm32-unknown-unknown --test webgpu --test webgpu_forward \
  --test webgpu_worker -- --nocapture 2>&1 | tee -a "$log/browser"
# The products of the worker's relaxed-SIMD build (scripts/local-model.sh builds it
# beside the plain one): every format's exact integer sums, with the build's flag, in a
# target directory of its own (the flag rebuilds every crate under it).
RUSTFLAGS="-C target-feature=+simd128,+relaxed-simd" CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUNNER=wasm-bindgen-test-runner \
  cargo test -p familiar-local --target wasm32-unknown-unknown --target-dir target/wasm-relaxed --test integer_products \
  2>&1 | tee -a "$log/browser"

step "release build (trunk, offline; scripts/demo-wasm.sh cuts the demo into modules)"
trunk build --release --offline

step "headless runtime (pkg/) and the TypeScript example against its declarations (tsc)"
"$ROOT/scripts/typecheck.sh"

step "page assistant (pkg-page/: the lean runtime plus the page tools, its widget and script-tag loader) and its extension (pkg-extension/)"
"$ROOT/scripts/page-assistant.sh"
"$ROOT/scripts/extension.sh" --no-build

step "byte budgets (bench/budgets.txt: gzip -9 of what each build's page loads)"
python3 scripts/budgets.py bench/budgets.txt

step "every bench the docs cite, in a short mode so none rots unseen (bench/short.sh; bench/world_load runs above)"
bench/short.sh

step "no provider key or service-role JWT in the repository or the built bundles"
python3 scripts/scan-secrets.py --self-test
python3 scripts/scan-secrets.py dist pkg pkg-page pkg-extension

step "end-to-end tests (Playwright, headless Chromium, release build)"
mkdir -p "$log/e2e"
node e2e/fixtures/frameworks/build.mjs # React, Vue, Svelte and Lit apps for e2e/frameworks.test.mjs
# Each test has its own limit (e2e/harness.mjs's `test`: 2 minutes unless it names
# more), so a stuck test fails; --test-timeout (node 20: the whole file) backs up the
# hooks.
# e2e/telemetry starts the real OTLP/HTTP receiver (scripts/otlp_receiver.py) from
# this venv, on a free loopback port, and asserts what it decoded.
export OTLP_VENV
for file in e2e/*.test.mjs; do
  node --test --test-timeout=1800000 --test-reporter=spec "$file" 2>&1 | tee "$log/e2e/$(basename "$file" .test.mjs).log"
done

step "every suite ran at least the tests recorded in tests/counts.txt, none ignored or skipped"
python3 scripts/counts.py check tests/counts.txt \
  native="$log/native" browser="$log/browser" e2e="$log/e2e" sql="$log/sql" ||
  die "a suite shrank or skipped tests (scripts/counts.py write tests/counts.txt … records new ones)"

native=$(passed "$log/native")
browser=$(passed "$log/browser")
e2e=$(cat "$log"/e2e/*.log | grep -Eo '(ℹ|#) pass [0-9]+' | awk '{ n += $3 } END { print n + 0 }')
printf '\n==> all green: %s native, %s browser, %s end-to-end tests passed\n' "$native" "$browser" "$e2e"
