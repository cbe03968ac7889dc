#!/usr/bin/env python3
"""A suite that shrinks fails: checks the test logs against tests/counts.txt.

    counts.py check COUNTS LOG...   every suite in COUNTS ran, none ran fewer tests than
                                    recorded, none ignored or skipped a test, and every
                                    suite that ran is recorded; prints the table
    counts.py write COUNTS LOG...   records what the logs hold (raising a floor is part
                                    of adding tests; lowering one is a decision to state)

A LOG is `KIND=PATH`: KIND `native` or `browser` for a `cargo test` log (suites are its
test binaries: `tests/app.rs`, a crate's unit tests as `familiar_page src/lib.rs`,
doc-tests), `e2e` for a directory of `node --test` spec logs, one per test file
(suites are the files), or `sql` for psql's output, where each SQL test file ends with
`tests/sql/FILE.sql: N checks passed` (its raising checks that ran, tests/sql/preamble.sql).

A `figure NAME N` line is a floor a test reads from this file itself and holds its own
figure to (the CommonMark examples counted, the JSON corpus's cases, the framework tasks
the assistant does): not a suite in the logs, but a floor the ratchet guards all the
same, and `write` keeps it.

A floor lowered, or a suite's line removed, needs a reason line in the same change
(`lowered SUITE to N: why`, scripts/ratchet.py checks it); `write` keeps those lines.
"""

import os
import re
import sys

import ratchet

# `Running unittests src/lib.rs (target/debug/deps/familiar_page-0f3c…)`: unit tests are
# named by their crate, so each crate keeps its own floor; integration tests by file.
RUNNING = re.compile(r"^\s+(?:Running (unittests )?(\S+) \(([^)]*)\)|Doc-tests (\S+))")
# The crate in a test binary's path: `…/deps/familiar_page-0f3c….wasm` → familiar_page.
BINARY = re.compile(r"([A-Za-z0-9_]+)(?:-[0-9a-f]{6,})?(?:\.\w+)?$")
RESULT = re.compile(
    r"test result: (\w+)\. (\d+) passed; (\d+) failed; (\d+) ignored"
)
NODE = re.compile(r"^[ℹ#] (pass|fail|cancelled|skipped|todo) (\d+)\s*$")
SQL = re.compile(r"^\s*(tests/sql/\S+\.sql): (\d+) checks passed\s*$")
FIGURE = "figure "


def sql_suites(path):
    """(suite, passed, 0, 0) for each SQL test file whose closing line the log holds."""
    suites = []
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            found = SQL.match(line)
            if found:
                suites.append((f"sql {found.group(1)}", int(found.group(2)), 0, 0))
    return suites


def cargo_suites(kind, path):
    """(suite, passed, failed, ignored) for each test binary a cargo log ran."""
    suites, current = [], None
    with open(path, encoding="utf-8", errors="replace") as log:
        for line in log:
            running = RUNNING.match(line)
            if running:
                unit, source, binary, doc = running.groups()
                if doc:
                    current = f"doc-tests {doc}"
                else:
                    crate = BINARY.search(binary)
                    current = f"{crate.group(1)} {source}" if unit and crate else source
                continue
            result = RESULT.search(line)
            if result and current:
                _, passed, failed, ignored = result.groups()
                suites.append((f"{kind} {current}", int(passed), int(failed), int(ignored)))
                current = None
    return suites


def e2e_suites(directory):
    suites = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".log"):
            continue
        figures = {}
        with open(os.path.join(directory, name), encoding="utf-8", errors="replace") as log:
            for line in log:
                found = NODE.match(line.strip())
                if found:
                    figures[found.group(1)] = int(found.group(2))
        suite = "e2e " + name[: -len(".log")]
        not_run = figures.get("skipped", 0) + figures.get("todo", 0) + figures.get("cancelled", 0)
        suites.append((suite, figures.get("pass", 0), figures.get("fail", 0), not_run))
    return suites


def read_logs(specs):
    suites = []
    for spec in specs:
        kind, _, path = spec.partition("=")
        if kind in ("native", "browser"):
            suites += cargo_suites(kind, path)
        elif kind == "e2e":
            suites += e2e_suites(path)
        elif kind == "sql":
            suites += sql_suites(path)
        else:
            sys.exit(f"counts.py: unknown log kind in {spec!r}")
    merged = {}
    for suite, passed, failed, ignored in suites:
        p, f, i = merged.get(suite, (0, 0, 0))
        merged[suite] = (p + passed, f + failed, i + ignored)
    return merged


def read_counts(path):
    counts = {}
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            line = line.split("#", 1)[0].strip()
            if not line or ratchet.is_reason(line):
                continue
            *suite, count = line.split()
            if not suite or not count.isdigit():
                sys.exit(f"{path}:{number}: expected `KIND SUITE COUNT`, got {line!r}")
            counts[" ".join(suite)] = int(count)
    return counts


HEADER = (
    "# The fewest tests each suite may run (scripts/counts.py). A run with fewer,\n"
    "# or with an ignored or skipped test, fails. Raise a count when adding tests.\n"
    "# A floor lowered, or a line removed, needs a reason line in the same change,\n"
    "# `lowered SUITE to N: why` (scripts/ratchet.py; the test command checks).\n"
)


def write(path, ran):
    """Records the logs' counts, keeping the file's reason lines; says which floors
    went down, each of which needs its reason line before the test command passes."""
    old, reasons = {}, []
    if os.path.exists(path):
        old = read_counts(path)
        with open(path, encoding="utf-8") as file:
            reasons = [line for line in file if ratchet.is_reason(line.split("#", 1)[0])]
    new = {suite: figures[0] for suite, figures in ran.items() if figures[0]}
    new.update({name: floor for name, floor in old.items() if name.startswith(FIGURE)})
    with open(path, "w", encoding="utf-8") as file:
        file.write(HEADER)
        for suite in sorted(new):
            file.write(f"{suite} {new[suite]}\n")
        file.writelines(reasons)
    for suite, floor in sorted(old.items()):
        if new.get(suite, 0) < floor:
            print(f"counts.py: {suite} went from {floor} to {new.get(suite, 0)}: add "
                  f"`lowered {suite} to {new.get(suite, 0)}: <why>` to {path}",
                  file=sys.stderr)


def check(path, ran):
    counts = read_counts(path)
    problems = []
    for suite, expected in sorted(counts.items()):
        if suite.startswith(FIGURE):  # the test holding it reads it (see above)
            continue
        passed, failed, ignored = ran.get(suite, (0, 0, 0))
        if suite not in ran:
            problems.append(f"{suite}: did not run (expected {expected} tests)")
        elif passed < expected:
            problems.append(f"{suite}: {passed} tests passed, {expected} recorded")
    for suite, (passed, failed, ignored) in sorted(ran.items()):
        if failed:
            problems.append(f"{suite}: {failed} failed")
        if ignored:
            problems.append(f"{suite}: {ignored} ignored or skipped")
        if passed and suite not in counts:
            problems.append(f"{suite}: {passed} tests not recorded in {path}")
    width = max((len(s) for s in ran), default=10)
    for suite in sorted(set(ran) | set(counts)):
        passed = ran.get(suite, (0, 0, 0))[0]
        if suite.startswith(FIGURE) or (not passed and suite not in counts):
            continue
        print(f"  {suite:<{width}}  {passed:>4}  (recorded {counts.get(suite, '-')})")
    for problem in problems:
        print(f"counts.py: {problem}", file=sys.stderr)
    return 1 if problems else 0


def main(argv):
    if len(argv) < 3 or argv[0] not in ("check", "write"):
        sys.exit(__doc__)
    verb, path, logs = argv[0], argv[1], argv[2:]
    ran = read_logs(logs)
    if verb == "write":
        write(path, ran)
        return 0
    return check(path, ran)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
