#!/usr/bin/env bash
# Agreement of Familiar's JSON repair with the intended values of the corpus
# (tests/fixtures/json-repair/), beside two widely used repairers as oracles: the
# `jsonrepair` npm package and the `json_repair` PyPI package. Both are installed here,
# in a temporary directory (never in package.json or the test command).
#   bench/json_repair/run.sh        # the table
#   bench/json_repair/run.sh -v     # and every case Familiar gets wrong
# Timing on adversarial input: `cargo run --release --example json_repair_speed`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ORACLE_DIR="${ORACLE_DIR:-${TMPDIR:-/tmp}/familiar-json-repair-oracles}"
export ORACLE_DIR
if [ ! -e "$ORACLE_DIR/npm/node_modules/jsonrepair" ]; then
  npm install --silent --no-audit --no-fund --prefix "$ORACLE_DIR/npm" jsonrepair@3.15.0 >&2
fi
if [ ! -x "$ORACLE_DIR/venv/bin/python" ]; then
  python3 -m venv "$ORACLE_DIR/venv"
  "$ORACLE_DIR/venv/bin/pip" install --quiet json_repair==0.64.6 >&2
fi
"$ORACLE_DIR/venv/bin/python" "$here/compare.py" "$@"
