#!/usr/bin/env bash
# Agreement of Familiar's JSON repair with intended values, beside two widely used
# repairers as oracles: the `jsonrepair` npm package and the `json_repair` PyPI package.
# Two tables: our corpus (tests/fixtures/json-repair/), per class; and the object/array
# repairs of both libraries' own test suites (their union), per test group.
# Everything is installed here, in a temporary directory (never in package.json or the
# test command): the two packages, esbuild and pytest (to read the suites' expectations),
# and the two suites' sources, fetched from GitHub at the commits below (jsonrepair
# v3.14.1; json_repair just past v0.61.7) — or, where GitHub is out of reach, taken
# from local git directories holding those commits, given as JSONREPAIR_GIT and
# JSON_REPAIR_GIT. The oracles are the packages' newer releases: the best each offers.
#   bench/json_repair/run.sh                 # both tables
#   bench/json_repair/run.sh -v              # and every case Familiar gets wrong
#   bench/json_repair/run.sh --only-suites   # the suites' table alone
# Timing on adversarial input: `cargo run --release --example json_repair_speed`.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
ORACLE_DIR="${ORACLE_DIR:-${TMPDIR:-/tmp}/familiar-json-repair-oracles}"
export ORACLE_DIR
if [ ! -e "$ORACLE_DIR/npm/node_modules/esbuild" ]; then
  npm install --silent --no-audit --no-fund --prefix "$ORACLE_DIR/npm" \
    jsonrepair@3.15.0 esbuild@0.25.12 >&2
fi
if [ ! -x "$ORACLE_DIR/venv/bin/pytest" ]; then
  python3 -m venv "$ORACLE_DIR/venv"
  "$ORACLE_DIR/venv/bin/pip" install --quiet json_repair==0.64.6 pytest==8.4.2 >&2
fi

# suite NAME REPO COMMIT GIT_DIR: the suite's sources at COMMIT in $ORACLE_DIR/suites/NAME.
suite() {
  local dir="$ORACLE_DIR/suites/$1"
  [ -d "$dir" ] && return 0
  rm -rf "$dir.tmp" && mkdir -p "$dir.tmp"
  local git_dir="$4"
  if [ -z "$git_dir" ]; then
    git_dir="$ORACLE_DIR/suites/$1.git"
    git init --quiet --bare "$git_dir"
    git --git-dir="$git_dir" fetch --quiet --depth 1 "https://github.com/$2.git" "$3"
  fi
  git --git-dir="$git_dir" archive "$3" | tar x -C "$dir.tmp"
  mv "$dir.tmp" "$dir"
}
suite jsonrepair josdejong/jsonrepair 72ccb43aa612b9c38144ed66b23648a253713216 "${JSONREPAIR_GIT:-}"
suite json_repair mangiucugna/json_repair 600ede6be7d125d14812be3bbd7ef3e0b526a84e "${JSON_REPAIR_GIT:-}"
cases="$ORACLE_DIR/suite-cases.jsonl"
{
  node "$here/suites/jsonrepair_cases.mjs" "$ORACLE_DIR/suites/jsonrepair"
  "$ORACLE_DIR/venv/bin/python" "$here/suites/json_repair_cases.py" "$ORACLE_DIR/suites/json_repair"
} > "$cases"
"$ORACLE_DIR/venv/bin/python" "$here/compare.py" --suites "$cases" "$@"
